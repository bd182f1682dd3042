/**
 * `cleanup PACKAGE`: removes an operator (its ClusterExtension, and what `run bundle` made for
 * it: catalog, ConfigMaps, installer account). Its CRDs, and so every custom resource of them,
 * stay unless `--delete-crds` (or `--delete-all`, which also removes the namespace `run bundle`
 * made). The plan, with each CRD's count of custom resources, is worked out and shown first.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { neededByLabel } from '../installed/index.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import { BinnacleError } from '../util/errors.js';
import { namePart } from './configmaps.js';
import { LABEL_RUN_BUNDLE, requireBinnacle, runBundleNames } from './run-bundle.js';

export interface CleanupPlan {
  package: string;
  extensions: string[];
  /** Objects `run bundle` made (catalog, ConfigMaps, installer account and binding). */
  runBundleObjects: ObjectRef[];
  crds: { name: string; customResources: number }[];
  deleteCrds: boolean;
  /** The namespace, when `--delete-all` removes it. */
  namespace?: string;
  /**
   * Extensions of other packages that resolve from the `run bundle` catalog (an index image's
   * other packages, `run bundle --index-image`): that catalog, its ConfigMaps and (under
   * `--delete-all`) their namespace stay for them.
   */
  catalogUsers: string[];
  /** The namespace `--delete-all` would have removed, kept for `catalogUsers`. */
  keptNamespace?: string;
}

interface CrdObject extends KubeObject {
  spec: { group: string; names: { kind: string; plural: string }; versions?: { name: string; storage?: boolean }[] };
}

const CRD_API = 'apiextensions.k8s.io/v1';

/** What `run bundle` made for a package (found by its label); the catalog and its ConfigMaps left out when `keepCatalog`. */
async function runBundleObjectsOf(client: KubeClient, o: { label: string; catalog: string; keepCatalog: boolean }): Promise<ObjectRef[]> {
  const out: ObjectRef[] = [];
  const live = (x: KubeObject | undefined): x is KubeObject => x !== undefined && x.metadata.deletionTimestamp === undefined;
  const catalogPart = (x: KubeObject): boolean => x.metadata.labels?.['binnacle.dev/run-bundle-catalog'] === o.catalog;
  if (!o.keepCatalog && live(await client.find({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: o.catalog }))) out.push({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: o.catalog });
  for (const kind of ['ConfigMap', 'ServiceAccount'] as const) {
    for (const x of (await client.list('v1', kind, { labelSelector: o.label })).items.filter(live)) {
      if (o.keepCatalog && catalogPart(x)) continue;
      out.push({ apiVersion: 'v1', kind, name: x.metadata.name ?? '', ...(x.metadata.namespace === undefined ? {} : { namespace: x.metadata.namespace }) });
    }
  }
  for (const x of (await client.list('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', { labelSelector: o.label })).items.filter(live)) {
    out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: x.metadata.name ?? '' });
  }
  return out;
}

export async function planCleanup(client: KubeClient, pkg: string, o: { deleteCrds: boolean; deleteAll: boolean }): Promise<CleanupPlan> {
  await requireBinnacle(client);
  const all = (await client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')).items.filter((c) => c.metadata.deletionTimestamp === undefined);
  const extensions = all.filter((c) => c.spec.source.catalog.packageName === pkg);
  const label = `${LABEL_RUN_BUNDLE}=${namePart(pkg, 63)}`;
  const names = runBundleNames(pkg);
  const catalogUsers = all
    .filter((c) => c.spec.source.catalog.packageName !== pkg && c.spec.source.catalog.selector?.matchLabels?.['olm.operatorframework.io/metadata.name'] === names.catalog)
    .map((c) => `${c.metadata.name ?? ''} (package ${c.spec.source.catalog.packageName})`);
  const keepCatalog = catalogUsers.length > 0;
  const runBundleObjects = await runBundleObjectsOf(client, { label, catalog: names.catalog, keepCatalog });
  if (extensions.length === 0 && runBundleObjects.length === 0) {
    throw new BinnacleError('input', 'CLEANUP_NOT_FOUND', `no operator of package ${pkg} is installed (no ClusterExtension asks for it): see \`binnacle status\``);
  }
  const crds = await crdsOf(client, await appliedCrdNames(client, extensions, pkg));
  // The install namespace; after a cleanup that kept the catalog, the one its ConfigMaps are in.
  const namespace = extensions[0]?.spec.namespace ?? runBundleObjects.find((r) => r.kind === 'ConfigMap')?.namespace;
  const dropNamespace = o.deleteAll && namespace !== undefined;
  return {
    package: pkg,
    extensions: extensions.map((c) => c.metadata.name ?? ''),
    runBundleObjects,
    crds,
    deleteCrds: o.deleteCrds || o.deleteAll,
    catalogUsers,
    // The catalog's ConfigMaps live in the install namespace: it stays while others resolve from them.
    ...(dropNamespace && !keepCatalog ? { namespace } : {}),
    ...(dropNamespace && keepCatalog ? { keptNamespace: namespace } : {}),
  };
}

/** The CRDs the package's BundleDeployments (of these extensions) applied. */
async function appliedCrdNames(client: KubeClient, extensions: readonly ClusterExtension[], pkg: string): Promise<Set<string>> {
  const crdNames = new Set<string>();
  for (const ce of extensions) {
    for (const bd of (await client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: neededByLabel(ce.metadata.name ?? '') })).items) {
      if (bd.metadata.labels?.['binnacle.dev/package'] !== pkg) continue;
      for (const r of bd.status?.appliedObjects ?? []) if (r.kind === 'CustomResourceDefinition') crdNames.add(r.name);
    }
  }
  return crdNames;
}

/** The named CRDs still there, by name, with how many custom resources each holds. */
async function crdsOf(client: KubeClient, names: ReadonlySet<string>): Promise<CleanupPlan['crds']> {
  const crds: CleanupPlan['crds'] = [];
  for (const name of [...names].sort()) {
    const crd = await client.find<CrdObject>({ apiVersion: CRD_API, kind: 'CustomResourceDefinition', name });
    if (crd === undefined) continue;
    crds.push({ name, customResources: await countCustomResources(client, crd) });
  }
  return crds;
}

async function countCustomResources(client: KubeClient, crd: CrdObject): Promise<number> {
  const version = crd.spec.versions?.find((v) => v.storage === true)?.name ?? crd.spec.versions?.[0]?.name;
  if (version === undefined) return 0;
  try {
    return (await client.list(`${crd.spec.group}/${version}`, crd.spec.names.kind)).items.length;
  } catch {
    return 0;
  }
}

/** The plan in words: what goes, and what stays. */
export function describePlan(p: CleanupPlan): string[] {
  const lines = [`cleanup of ${p.package} will delete:`];
  for (const e of p.extensions) lines.push(`  ClusterExtension ${e} (and the operator it installed)`);
  for (const r of p.runBundleObjects) lines.push(`  ${r.kind} ${r.namespace === undefined ? '' : `${r.namespace}/`}${r.name}`);
  if (p.deleteCrds) for (const c of p.crds) lines.push(`  CustomResourceDefinition ${c.name} with its ${c.customResources} custom resource${c.customResources === 1 ? '' : 's'}`);
  if (p.namespace !== undefined) lines.push(`  Namespace ${p.namespace} and everything in it`);
  const keep: string[] = [];
  if (!p.deleteCrds) for (const c of p.crds) keep.push(`  CustomResourceDefinition ${c.name} (${c.customResources} custom resource${c.customResources === 1 ? '' : 's'}; --delete-crds removes them)`);
  if (p.catalogUsers.length > 0) {
    keep.push(
      `  ClusterCatalog ${runBundleNames(p.package).catalog} and its ConfigMaps${p.keptNamespace === undefined ? '' : `, and Namespace ${p.keptNamespace} they are in`}: ClusterExtension ${p.catalogUsers.join(', ')} resolve${p.catalogUsers.length === 1 ? 's' : ''} from it (remove ${p.catalogUsers.length === 1 ? 'it' : 'them'} first to remove the catalog)`,
    );
  }
  if (keep.length > 0) lines.push('and keep:', ...keep);
  return lines;
}

async function waitGone(client: KubeClient, ref: ObjectRef, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await client.find(ref)) !== undefined) {
    if (Date.now() >= deadline) throw new BinnacleError('transient', 'CLEANUP_TIMEOUT', `${ref.kind} ${ref.name} is still there after ${Math.round(timeoutMs / 1000)}s: is a Binnacle manager running (\`binnacle manager\`)? It removes what the extension installed`);
    await sleep(500);
  }
}

export async function runCleanup(client: KubeClient, p: CleanupPlan, o: { timeoutMs: number; progress: (line: string) => void }): Promise<void> {
  // Kept CRDs leave the release first, so uninstalling it does not take them (and their data) along.
  if (!p.deleteCrds) {
    for (const c of p.crds) {
      await client.patch(
        { apiVersion: CRD_API, kind: 'CustomResourceDefinition', name: c.name },
        { metadata: { labels: { 'binnacle.dev/owner-kind': null, 'binnacle.dev/owner-name': null, 'app.kubernetes.io/managed-by': null }, annotations: { 'meta.helm.sh/release-name': null, 'meta.helm.sh/release-namespace': null } } },
      );
    }
  }
  for (const e of p.extensions) {
    const ref = { apiVersion: API_VERSION, kind: 'ClusterExtension', name: e };
    await client.delete(ref);
    await waitGone(client, ref, o.timeoutMs);
    o.progress(`• ClusterExtension ${e} removed`);
  }
  if (p.deleteCrds) {
    for (const c of p.crds) {
      const ref = { apiVersion: CRD_API, kind: 'CustomResourceDefinition', name: c.name };
      if (await client.delete(ref)) o.progress(`• CustomResourceDefinition ${c.name} deleted (${c.customResources} custom resources)`);
      await waitGone(client, ref, o.timeoutMs);
    }
  }
  for (const r of p.runBundleObjects) await client.delete(r);
  // The catalog's finalizer lets the manager drop what it serves; wait for it.
  for (const r of p.runBundleObjects.filter((x) => x.kind === 'ClusterCatalog')) await waitGone(client, r, o.timeoutMs);
  if (p.runBundleObjects.length > 0) o.progress(`• ${p.runBundleObjects.length} objects of run bundle deleted`);
  if (p.namespace !== undefined) {
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: p.namespace });
    o.progress(`• Namespace ${p.namespace} deleted`);
  }
}
