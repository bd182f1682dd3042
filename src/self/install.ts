/**
 * `install-self`, `status-self` and `uninstall-self`: the manager inside the cluster.
 *
 * Every step is idempotent. Install applies every object (server-side apply) and says for each
 * whether it was created, changed or already right, so a half-installed state (an interrupted
 * install, an object deleted by hand) is named and repaired by running it again. Status names
 * what is missing. Uninstall refuses while extensions are installed unless forced; forced, it
 * deletes them first and gives the running manager time to uninstall them, then removes the
 * manager and its APIs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../api/types.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { objectKey, type KubeObject } from '../kube/types.js';
import { BinnacleError } from '../util/errors.js';
import { ANNOTATION_RELEASE_VERSION, DEFAULT_SELF_NAMESPACE, MANAGER_NAME, PROTECTION_POLICY, selfManifests, type SelfOptions } from './manifests.js';

export type ObjectState = 'created' | 'configured' | 'unchanged' | 'skipped';

export interface SelfObjectResult {
  kind: string;
  name: string;
  namespace?: string;
  state: ObjectState;
  note?: string;
}

export interface InstallSelfResult {
  namespace: string;
  image: string;
  /** The release installed (`--version`); absent for this binary's own manifests. */
  version?: string;
  objects: SelfObjectResult[];
  /** Objects that were missing although others were there: the half-installed state repaired. */
  repaired: string[];
}

function label(o: Pick<KubeObject, 'kind' | 'metadata'>): string {
  return `${o.kind} ${o.metadata.namespace === undefined ? '' : `${o.metadata.namespace}/`}${o.metadata.name ?? ''}`;
}

function ref(o: KubeObject): { apiVersion: string; kind: string; name: string; namespace?: string } {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '', ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) };
}

async function waitEstablished(client: KubeClient, names: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const live = await client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
      const conds = (live?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new BinnacleError('CRD_NOT_ESTABLISHED', `CRD ${name} was not Established within ${Math.round(timeoutMs / 1000)}s`);
      await sleep(200);
    }
  }
}

/** Whether OLM (or anyone but Binnacle) owns a CRD Binnacle would otherwise install. */
function ownedByOthers(live: KubeObject | undefined, obj: KubeObject): boolean {
  return obj.kind === 'CustomResourceDefinition' && !(obj.metadata.name ?? '').endsWith('.binnacle.dev') && live !== undefined && live.metadata.labels?.['app.kubernetes.io/part-of'] !== 'binnacle';
}

/** What to install: this binary's manifests (`selfManifests`), or a release's (`fetchRelease`). */
export interface InstallSelfOptions extends SelfOptions {
  timeoutMs?: number;
  /** A released installation's objects and version, instead of this binary's manifests. */
  release?: { version: string; objects: KubeObject[] };
}

/**
 * Objects of the installation that are being deleted (an uninstall-self still finishing):
 * applying them now would be undone by their deletion. Waits until they are gone.
 */
async function waitTerminating(client: KubeClient, objects: readonly KubeObject[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const terminating: string[] = [];
    for (const obj of objects) {
      const live = await client.find(ref(obj));
      if (live?.metadata.deletionTimestamp !== undefined) terminating.push(label(obj));
    }
    if (terminating.length === 0) return;
    if (Date.now() > deadline) {
      throw new BinnacleError(
        'SELF_TERMINATING',
        `${terminating.join(', ')} ${terminating.length === 1 ? 'is' : 'are'} still being deleted after ${Math.round(timeoutMs / 1000)}s (an uninstall-self not finished?): see what holds ${terminating.length === 1 ? 'it' : 'them'} (finalizers) with \`kubectl get KIND NAME -o yaml\`, then run install-self again`,
      );
    }
    await sleep(500);
  }
}

/** The manager container's image in a set of installation objects. */
function imageOf(objects: readonly KubeObject[]): string {
  const deployment = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === MANAGER_NAME);
  return (deployment?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)?.template?.spec?.containers?.[0]?.image ?? '';
}

export async function installSelf(client: KubeClient, o: InstallSelfOptions = {}): Promise<InstallSelfResult> {
  const objects = o.release?.objects ?? selfManifests(o);
  const timeoutMs = o.timeoutMs ?? 60_000;
  await waitTerminating(client, objects, timeoutMs);
  const results: SelfObjectResult[] = [];
  for (const obj of objects) {
    const live = await client.find(ref(obj));
    if (ownedByOthers(live, obj)) {
      results.push({ kind: obj.kind, name: obj.metadata.name ?? '', state: 'skipped', note: 'installed by someone else (OLM?); left as it is' });
      continue;
    }
    const applied = await client.apply(obj, { force: true });
    const state: ObjectState = live === undefined ? 'created' : live.metadata.resourceVersion === applied.metadata.resourceVersion ? 'unchanged' : 'configured';
    results.push({ kind: obj.kind, name: obj.metadata.name ?? '', ...(obj.metadata.namespace === undefined ? {} : { namespace: obj.metadata.namespace }), state });
  }
  await waitEstablished(client, objects.filter((x) => x.kind === 'CustomResourceDefinition').map((x) => x.metadata.name ?? ''), timeoutMs);
  client.invalidateDiscovery(API_VERSION);
  const created = results.filter((r) => r.state === 'created');
  const repaired = created.length > 0 && created.length < results.length ? created.map((r) => label({ kind: r.kind, metadata: { name: r.name, ...(r.namespace === undefined ? {} : { namespace: r.namespace }) } })) : [];
  const namespace = objects.find((x) => x.kind === 'Namespace')?.metadata.name ?? o.namespace ?? DEFAULT_SELF_NAMESPACE;
  return { namespace, image: imageOf(objects), ...(o.release === undefined ? {} : { version: o.release.version }), objects: results, repaired };
}

export interface SelfStatus {
  namespace: string;
  /** 'installed', 'not-installed' or 'partial' (some objects missing: run install-self to repair). */
  state: 'installed' | 'not-installed' | 'partial';
  objects: { kind: string; name: string; namespace?: string; present: boolean }[];
  missing: string[];
  image?: string;
  /** The release installed (`install-self --version`), from the Deployment's annotation. */
  version?: string;
  /** The Deployment's Available condition, and its replicas ready. */
  available: boolean;
  readyReplicas: number;
  /** Who holds the leader-election Lease. */
  leader?: string;
  extensions: string[];
}

/** Who holds the manager's leader-election Lease, if anyone. */
async function leaderOf(client: KubeClient, ns: string): Promise<string | undefined> {
  const lease = await client.find({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: MANAGER_NAME }).catch(() => undefined);
  const holder = (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
  return holder === '' ? undefined : holder;
}

/** The manager Deployment's image and, when installed from a release, its version. */
function deploymentFacts(deployment: KubeObject | undefined): { image?: string; version?: string } {
  const image = (deployment?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)?.template?.spec?.containers?.[0]?.image;
  const version = deployment?.metadata.annotations?.[ANNOTATION_RELEASE_VERSION];
  return { ...(image === undefined ? {} : { image }), ...(version === undefined ? {} : { version }) };
}

export async function statusSelf(client: KubeClient, o: SelfOptions = {}): Promise<SelfStatus> {
  const ns = o.namespace ?? DEFAULT_SELF_NAMESPACE;
  const objects: SelfStatus['objects'] = [];
  let deployment: KubeObject | undefined;
  for (const obj of selfManifests(o)) {
    const live = await client.find(ref(obj)).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (obj.kind === 'Deployment') deployment = live;
    objects.push({ kind: obj.kind, name: obj.metadata.name ?? '', ...(obj.metadata.namespace === undefined ? {} : { namespace: obj.metadata.namespace }), present: live !== undefined && live.metadata.deletionTimestamp === undefined });
  }
  const missing = objects.filter((x) => !x.present).map((x) => label({ kind: x.kind, metadata: { name: x.name, ...(x.namespace === undefined ? {} : { namespace: x.namespace }) } }));
  const state = missing.length === 0 ? 'installed' : missing.length === objects.length ? 'not-installed' : 'partial';
  const st = deployment?.status as { readyReplicas?: number; conditions?: { type: string; status: string }[] } | undefined;
  const { image, version } = deploymentFacts(deployment);
  const leader = await leaderOf(client, ns);
  return {
    namespace: ns,
    state,
    objects,
    missing,
    ...(image === undefined ? {} : { image }),
    ...(version === undefined ? {} : { version }),
    available: (st?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True'),
    readyReplicas: st?.readyReplicas ?? 0,
    ...(leader === undefined ? {} : { leader }),
    extensions: await installedExtensions(client),
  };
}

/** Names of the ClusterExtensions (and PlatformOperators) in the cluster; none when Binnacle's APIs are not served. */
export async function installedExtensions(client: KubeClient): Promise<string[]> {
  const out: string[] = [];
  for (const kind of ['PlatformOperator', 'ClusterExtension', 'HelmOperator']) {
    try {
      for (const x of (await client.list(API_VERSION, kind)).items) out.push(`${kind} ${objectKey(x.metadata)}`);
    } catch (err) {
      if (!(isNotFound(err) || (err instanceof BinnacleError && /not served|no resource|unknown/i.test(err.message)))) throw err;
    }
  }
  return out;
}

export interface UninstallSelfResult {
  deleted: string[];
  /** Extensions removed with --force (the manager uninstalled them unless `orphaned`). */
  extensions: string[];
  /** Binnacle objects whose finalizers were removed because no manager finished them in time. */
  orphaned: string[];
}

/** Deletes every extension, gives a running manager time to uninstall them, then drops what finalizers are left; answers those. */
async function removeExtensions(client: KubeClient, timeoutMs: number): Promise<string[]> {
  const orphaned: string[] = [];
  // Extensions first, while the manager runs: it uninstalls what they installed.
  for (const kind of ['PlatformOperator', 'ClusterExtension', 'HelmOperator']) {
    for (const x of (await client.list(API_VERSION, kind).catch(() => ({ items: [] as KubeObject[] }))).items) await client.delete({ apiVersion: API_VERSION, kind, name: x.metadata.name ?? '' });
  }
  const deadline = Date.now() + timeoutMs;
  // The extensions go at once; what they installed goes with their BundleDeployments.
  const remaining = async (): Promise<number> => (await installedExtensions(client)).length + (await client.list(API_VERSION, 'BundleDeployment').catch(() => ({ items: [] as KubeObject[] }))).items.length;
  while (Date.now() < deadline && (await remaining()) > 0) await sleep(1000);
  // Whatever is left has no manager to finish it: drop the finalizers so the APIs can go.
  for (const kind of ['PlatformOperator', 'ClusterExtension', 'HelmOperator', 'BundleDeployment', 'ClusterCatalog']) {
    for (const x of (await client.list(API_VERSION, kind).catch(() => ({ items: [] as KubeObject[] }))).items) {
      if ((x.metadata.finalizers ?? []).length === 0) continue;
      await client.patch({ apiVersion: API_VERSION, kind, name: x.metadata.name ?? '' }, { metadata: { finalizers: null } });
      orphaned.push(`${kind} ${x.metadata.name ?? ''}`);
    }
  }
  return orphaned;
}

export async function uninstallSelf(client: KubeClient, o: SelfOptions & { force?: boolean; timeoutMs?: number } = {}): Promise<UninstallSelfResult> {
  const extensions = await installedExtensions(client);
  if (extensions.length > 0 && o.force !== true) {
    throw new BinnacleError(
      'SELF_EXTENSIONS_INSTALLED',
      `refusing to uninstall Binnacle while extensions are installed:\n${extensions.map((e) => `  ${e}`).join('\n')}\nremove them first (\`binnacle uninstall PACKAGE\` or kubectl delete), or run \`binnacle uninstall-self --force\` to uninstall them and Binnacle together`,
    );
  }
  const orphaned = extensions.length > 0 ? await removeExtensions(client, o.timeoutMs ?? 120_000) : [];
  const deleted: string[] = [];
  const objects = selfManifests(o);
  // The manager first (so it stops reconciling), the namespace last.
  const order = [...objects.filter((x) => x.kind === 'Deployment'), ...objects.filter((x) => x.kind !== 'Deployment' && x.kind !== 'Namespace'), ...objects.filter((x) => x.kind === 'Namespace')];
  const policies: KubeObject[] = ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy'].map((kind) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: PROTECTION_POLICY } }));
  for (const obj of [...order.slice(0, 1), ...policies, ...order.slice(1)]) {
    const live = await client.find(ref(obj)).catch(() => undefined);
    if (live === undefined || ownedByOthers(live, obj)) continue;
    if (obj.kind === 'CustomResourceDefinition') {
      // Custom resources left without a manager would keep their finalizers and hold the CRD.
      const spec = obj.spec as { group: string; names: { kind: string }; versions: { name: string }[] };
      const apiVersion = `${spec.group}/${spec.versions[0]?.name ?? 'v1'}`;
      for (const x of (await client.list(apiVersion, spec.names.kind).catch(() => ({ items: [] as KubeObject[] }))).items) {
        if ((x.metadata.finalizers ?? []).length > 0) {
          await client.patch({ apiVersion, kind: spec.names.kind, name: x.metadata.name ?? '', ...(x.metadata.namespace === undefined ? {} : { namespace: x.metadata.namespace }) }, { metadata: { finalizers: null } });
          orphaned.push(`${spec.names.kind} ${objectKey(x.metadata)}`);
        }
      }
    }
    await client.delete(ref(obj));
    deleted.push(label(obj));
  }
  return { deleted, extensions, orphaned };
}
