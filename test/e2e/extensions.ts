/**
 * What e2e tests of installs share: the corpus of real operators, ServiceAccounts to install
 * through, ClusterExtensions created against one catalog, waiting for them to settle (with
 * every condition in the failure message), and removing them.
 */
import { neededByLabel } from '../../src/installed/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type Condition, type KubeObject } from '../../src/kube/types.js';
import type { DeclarativeConfig } from '../../src/declcfg/index.js';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../../src/api/types.js';
import { eventually } from './env.js';
import { operatorCorpusDir } from '../corpus/corpus.test-helper.js';

/** The community-operators corpus (2021) of real bundles. */
/** The operator corpus (a missing corpus fails with its path, never skips). */
export const CORPUS = operatorCorpusDir();

/** Things to undo after the tests, in reverse order. */
export type Cleanup = (() => Promise<unknown>)[];

/** A namespace with a ServiceAccount, bound to cluster-admin when `admin`. */
export async function serviceAccount(client: KubeClient, cleanup: Cleanup, namespace: string, name: string, admin: boolean): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await client.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  if (admin) {
    const binding = `${namespace}-${name}-admin`;
    await client.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: binding },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    });
    cleanup.push(() => client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: binding }));
  }
  cleanup.push(() => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }));
}

/** A ClusterExtension resolving only from the catalog `catalogName`. */
export async function createExtension(
  client: KubeClient,
  catalogName: string,
  name: string,
  namespace: string,
  catalog: ClusterExtension['spec']['source']['catalog'],
  sa = 'installer',
  extra: Partial<ClusterExtension['spec']> = {},
): Promise<void> {
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name },
    spec: { namespace, serviceAccount: { name: sa }, source: { sourceType: 'Catalog', catalog: { ...catalog, selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } }, ...extra },
  });
}

export async function getExtension(client: KubeClient, name: string): Promise<ClusterExtension> {
  return client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
}

/** The extension's and its BundleDeployments' conditions, for failure messages. */
export async function describeExtension(client: KubeClient, name: string): Promise<string> {
  const ce = await client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  const lines = (ce?.status?.conditions ?? []).map((c) => `  ${name} ${c.type}=${c.status} ${c.reason}: ${c.message}`);
  const bds = await client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: neededByLabel(name) });
  for (const bd of bds.items) for (const c of bd.status?.conditions ?? []) lines.push(`  ${bd.metadata.name ?? ''} ${c.type}=${c.status} ${c.reason}: ${c.message}`);
  return lines.join('\n');
}

/** Waits until the extension is Installed at `version` and settled. */
export async function installedAt(client: KubeClient, name: string, version: string, timeoutMs = 180_000): Promise<ClusterExtension> {
  try {
    return await eventually(
      `${name} installed at ${version}`,
      async () => {
        const ce = await getExtension(client, name);
        const ok =
          ce.status?.observedGeneration === ce.metadata.generation &&
          findCondition(ce.status?.conditions, 'Installed')?.status === 'True' &&
          findCondition(ce.status?.conditions, 'Progressing')?.status === 'False' &&
          ce.status?.install?.bundle.version === version;
        return ok ? ce : undefined;
      },
      timeoutMs,
      500,
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await describeExtension(client, name)}`, { cause: err });
  }
}

/** Deletes the extension and waits until it (and so everything it installed) is gone. */
export async function removeExtension(client: KubeClient, name: string, timeoutMs = 120_000): Promise<void> {
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  await eventually(`${name} removed`, async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name })) === undefined ? true : undefined), timeoutMs);
}

export async function deploymentAvailable(client: KubeClient, namespace: string, name: string): Promise<boolean> {
  const d = await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name });
  const conds = (d?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
  return conds.some((c) => c.type === 'Available' && c.status === 'True');
}

/** The corpus poison-pill package cut to 0.0.5, then 0.0.6 which replaces it: an upgrade along the catalog's edge. */
export function poisonPillTwoVersions(cfg: DeclarativeConfig): void {
  const keep = new Set(['poison-pill.v0.0.5', 'poison-pill.v0.0.6']);
  cfg.bundles = cfg.bundles.filter((b) => keep.has(b.name));
  for (const ch of cfg.channels) ch.entries = [{ name: 'poison-pill.v0.0.5' }, { name: 'poison-pill.v0.0.6', replaces: 'poison-pill.v0.0.5' }];
}

/** An object's conditions in one line, for a failure message. */
export function conditionsLine(obj: KubeObject | undefined): string {
  return ((obj?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).map((c) => `${c.type}=${c.status} (${c.reason}): ${c.message}`).join('; ');
}
