/**
 * What the crash and fault tests check once the dust settles: the extension installed at the
 * right version, every object the deployed release revision records live and labelled, nothing
 * labelled that the revision does not record (no orphans), no revision left pending, and after
 * an uninstall nothing at all. Also the seeded random numbers those tests draw kill points from.
 */
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { ReleaseStore } from '../../src/apply/release-store.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/types.js';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import { eventually } from './env.js';
import { installedAt as extensionInstalledAt } from './extensions.js';

/** One release: the BundleDeployment that owns it and the namespace its records live in. */
export interface ReleaseUnderTest {
  client: KubeClient;
  /** The ClusterExtension's name. */
  extension: string;
  /** The BundleDeployment's name (the release's). */
  bundleDeployment: string;
  namespace: string;
}

/** The kinds the corpus operators used here ship: `[apiVersion, kind, namespaced]`. */
export const KINDS: [string, string, boolean][] = [
  ['apps/v1', 'Deployment', true],
  ['v1', 'ServiceAccount', true],
  ['v1', 'Service', true],
  ['v1', 'ConfigMap', true],
  ['rbac.authorization.k8s.io/v1', 'Role', true],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding', true],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', false],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', false],
];

export async function findExtension(r: ReleaseUnderTest): Promise<ClusterExtension | undefined> {
  return r.client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: r.extension });
}

/**
 * Waits until the extension reports itself installed at `version`, settled (not progressing); answers how long it
 * took. On a timeout the error carries the extension's and its BundleDeployments' conditions (extensions.ts).
 */
export async function installedAt(r: ReleaseUnderTest, version: string, timeoutMs = 240_000): Promise<number> {
  const start = Date.now();
  await extensionInstalledAt(r.client, r.extension, version, timeoutMs);
  return Date.now() - start;
}

/** `kind/namespace/name` of every live object labelled as this release's. */
export async function labelledObjects(r: ReleaseUnderTest): Promise<string[]> {
  const out: string[] = [];
  for (const [apiVersion, kind, namespaced] of KINDS) {
    const list = await r.client.list(apiVersion, kind, { labelSelector: `binnacle.dev/owner-name=${r.bundleDeployment}`, ...(namespaced ? { namespace: r.namespace } : {}) });
    for (const o of list.items) out.push(`${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
  }
  return out.sort();
}

/** The same for the objects the deployed revision's manifest records (of the kinds above), and the revision counts. */
export async function recordedObjects(r: ReleaseUnderTest): Promise<{ objects: string[]; pending: number; deployed: number; version: string | undefined }> {
  const history = await new ReleaseStore(r.client).history({ name: r.bundleDeployment, namespace: r.namespace });
  const deployed = history.filter((x) => x.status === 'deployed');
  const pending = history.filter((x) => x.status.startsWith('pending')).length;
  const current = deployed[deployed.length - 1];
  const kinds = new Set(KINDS.map(([, k]) => k));
  const objects = (current === undefined ? [] : parseAllDocuments(current.manifest).map((d) => d.toJS() as KubeObject | null))
    .filter((o): o is KubeObject => o !== null && kinds.has(o.kind))
    .map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`)
    .sort();
  return { objects, pending, deployed: deployed.length, version: current?.chart.version };
}

/**
 * Nothing pending, exactly one deployed revision (of `version`, when given), and the live
 * labelled objects exactly what it records.
 */
export async function assertConsistent(r: ReleaseUnderTest, version?: string): Promise<void> {
  const recorded = await recordedObjects(r);
  assert.equal(recorded.pending, 0, 'no revision left pending');
  assert.equal(recorded.deployed, 1, 'exactly one deployed revision');
  if (version !== undefined) assert.match(recorded.version ?? '', new RegExp(`^v?${version.replace(/\./g, '\\.')}$`), `the deployed revision is of ${version}`);
  assert.ok(recorded.objects.length > 0, 'the deployed revision records objects');
  assert.deepEqual(await labelledObjects(r), recorded.objects, 'live objects are exactly what the release records');
}

/** After the extension is deleted: it, every object it installed and every release record are gone. */
export async function assertRemoved(r: ReleaseUnderTest, timeoutMs = 180_000): Promise<void> {
  await eventually('extension gone', async () => ((await findExtension(r)) === undefined ? true : undefined), timeoutMs, 500);
  // Deletion is asynchronous (a CRD waits for its custom resources to go): wait for it to finish.
  await eventually('every installed object deleted', async () => ((await labelledObjects(r)).length === 0 ? true : undefined), 120_000, 500).catch(async (err: unknown) => {
    assert.deepEqual(await labelledObjects(r), [], `nothing the release installed is left (${err instanceof Error ? err.message : String(err)})`);
  });
  const secrets = await r.client.list('v1', 'Secret', { namespace: r.namespace, labelSelector: `owner=helm,name=${r.bundleDeployment}` });
  assert.deepEqual(secrets.items.map((s) => s.metadata.name), [], 'no release records left');
}

/** A small seeded generator (mulberry32): the same seed, the same kill points. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
