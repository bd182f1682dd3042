/**
 * Crash safety: the manager is killed with SIGKILL at many points while it installs, upgrades
 * and uninstalls an operator, and restarted each time. Whatever the interleaving, it must
 * converge: the operator installed at the right version, every object the release records
 * present and labelled, nothing labelled that the release does not record (no orphans), no
 * revision left pending, and after uninstall nothing left at all.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseAllDocuments } from 'yaml';
import { publishPackages } from '../../src/catalog/publish.js';
import { ensureCrds } from '../../src/controllers/crds.js';
import { bundleDeploymentName } from '../../src/controllers/cluster-extension.js';
import { ReleaseStore } from '../../src/apply/release-store.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import { adminInstaller, e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CORPUS = join(ROOT, '..', 'shared', 'corpus', 'operatorhub-2021');
const KILLS_PER_PHASE = Number(process.env.BINNACLE_CRASH_KILLS ?? 6);

let client: KubeClient;
let dataDir: string;
let proc: ChildProcess | undefined;
let kills = 0;
const name = uniqueName('crash');
const ns = uniqueName('crash');
const catalogName = uniqueName('crashcat');
const bdName = bundleDeploymentName(name, 'poison-pill-operator');

function startManager(): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'manager', '--kubeconfig', e2eKubeconfig(), '--data-dir', dataDir, '--metrics-bind-address', '127.0.0.1:0', '--catalog-bind-address', '127.0.0.1:0', '--health-timeout', '60'],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, BINNACLE_LOG_LEVEL: 'error' } },
  );
  proc = child;
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  kills++;
}

/** Kills the manager at spread-out moments while `phase` is under way, restarting it each time. */
async function withCrashes(delaysMs: number[]): Promise<void> {
  for (const delay of delaysMs) {
    const child = startManager();
    await sleep(delay);
    await killHard(child);
  }
  startManager();
}

async function extension(): Promise<ClusterExtension | undefined> {
  return client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
}

async function installedAt(version: string): Promise<void> {
  await eventually(
    `${name} installed at ${version}`,
    async () => {
      const ce = await extension();
      const ok =
        ce?.status?.observedGeneration === ce?.metadata.generation &&
        findCondition(ce?.status?.conditions, 'Installed')?.status === 'True' &&
        findCondition(ce?.status?.conditions, 'Progressing')?.status === 'False' &&
        ce?.status?.install?.bundle.version === version;
      return ok ? true : undefined;
    },
    240_000,
    500,
  );
}

const KINDS: [string, string, boolean][] = [
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

/** `kind/namespace/name` of every live object labelled as this release's. */
async function labelledObjects(): Promise<string[]> {
  const out: string[] = [];
  for (const [apiVersion, kind, namespaced] of KINDS) {
    const list = await client.list(apiVersion, kind, { labelSelector: `binnacle.dev/owner-name=${bdName}`, ...(namespaced ? { namespace: ns } : {}) });
    for (const o of list.items) out.push(`${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
  }
  return out.sort();
}

/** The same for the objects the deployed revision's manifest records (of the kinds above). */
async function recordedObjects(): Promise<{ objects: string[]; pending: number; deployed: number }> {
  const history = await new ReleaseStore(client).history({ name: bdName, namespace: ns });
  const deployed = history.filter((r) => r.status === 'deployed');
  const pending = history.filter((r) => r.status.startsWith('pending')).length;
  const current = deployed[deployed.length - 1];
  const kinds = new Set(KINDS.map(([, k]) => k));
  const objects = (current === undefined ? [] : parseAllDocuments(current.manifest).map((d) => d.toJS() as KubeObject | null))
    .filter((o): o is KubeObject => o !== null && kinds.has(o.kind))
    .map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`)
    .sort();
  return { objects, pending, deployed: deployed.length };
}

async function assertConsistent(): Promise<void> {
  const recorded = await recordedObjects();
  assert.equal(recorded.pending, 0, 'no revision left pending');
  assert.equal(recorded.deployed, 1, 'exactly one deployed revision');
  assert.deepEqual(await labelledObjects(), recorded.objects, 'live objects are exactly what the release records');
}

before(async () => {
  client = await e2eClient();
  // The manager installs the CRDs when it starts; the test writes a ClusterCatalog before that.
  await ensureCrds(client);
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-crash-'));
  const published = await publishPackages({ packages: [join(CORPUS, 'poison-pill-operator')], registry: e2eRegistry(), repository: catalogName });
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
  await adminInstaller(client, ns);
});

after(async () => {
  if (proc !== undefined) await killHard(proc);
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName });
  await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${ns}-installer` });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  client.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('SIGKILLed during install, upgrade and uninstall, the manager always converges with nothing lost or orphaned', async () => {
  const delays = Array.from({ length: KILLS_PER_PHASE }, (_, i) => 700 + i * 450);

  // Install 0.0.6.
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name },
    spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version: '0.0.6', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } },
  });
  await withCrashes(delays);
  await installedAt('0.0.6');
  await assertConsistent();
  if (proc !== undefined) await killHard(proc);

  // Upgrade to 0.1.0 along the catalog's edges.
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.1.0' } } } });
  await withCrashes(delays);
  await installedAt('0.1.0');
  await assertConsistent();
  if (proc !== undefined) await killHard(proc);

  // Uninstall.
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  await withCrashes(delays.slice(0, 3));
  await eventually('extension gone', async () => ((await extension()) === undefined ? true : undefined), 180_000, 500);
  // Deletion is asynchronous (a CRD waits for its custom resources to go): wait for it to finish.
  await eventually('every installed object deleted', async () => ((await labelledObjects()).length === 0 ? true : undefined), 120_000, 500).catch(async (err: unknown) => {
    assert.deepEqual(await labelledObjects(), [], `nothing the release installed is left (${err instanceof Error ? err.message : String(err)})`);
  });
  const secrets = await client.list('v1', 'Secret', { namespace: ns, labelSelector: `owner=helm,name=${bdName}` });
  assert.deepEqual(secrets.items.map((s) => s.metadata.name), [], 'no release records left');
  assert.ok(kills >= KILLS_PER_PHASE * 2 + 3, `the manager was killed ${kills} times`);
});

test('a first install killed before it recorded status.revision is still removed when its extension is deleted', async () => {
  const first = uniqueName('first');
  const firstNs = uniqueName('first');
  const firstBd = bundleDeploymentName(first, 'poison-pill-operator');
  await adminInstaller(client, firstNs);
  const bdOf = (): Promise<KubeObject | undefined> => client.find({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: firstBd });
  const records = async (): Promise<string[]> =>
    (await client.list('v1', 'Secret', { namespace: firstNs, labelSelector: `owner=helm,name=${firstBd}` })).items.map((x) => `${x.metadata.name ?? ''}:${x.metadata.labels?.status ?? ''}`);
  const labelled = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const [apiVersion, kind, namespaced] of KINDS) {
      const list = await client.list(apiVersion, kind, { labelSelector: `binnacle.dev/owner-name=${firstBd}`, ...(namespaced ? { namespace: firstNs } : {}) });
      for (const o of list.items) out.push(`${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
    }
    return out.sort();
  };
  if (proc !== undefined) await killHard(proc);
  try {
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'ClusterExtension',
      metadata: { name: first },
      spec: { namespace: firstNs, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version: '0.0.6', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } },
    });
    // Kill the manager the moment the first install has a release record but no status.revision yet.
    const child = startManager();
    const startedAt = Date.now();
    const caught = await eventually(
      'a first install under way (release record written, status.revision not yet)',
      async () => {
        const bd = await bdOf();
        // A refused install (say, objects left by another run) never records: say so rather than wait.
        const blocked = findCondition((bd?.status as { conditions?: Parameters<typeof findCondition>[0] } | undefined)?.conditions, 'Progressing');
        if (blocked?.reason === 'Blocked') throw new Error(`the first install was refused: ${blocked.message}`);
        const recs = await records();
        if (recs.length === 0) return undefined;
        const revision = (bd?.status as { revision?: number } | undefined)?.revision;
        if (revision !== undefined) return { recs, afterMs: Date.now() - startedAt, missed: true };
        await killHard(child);
        return { recs, afterMs: Date.now() - startedAt, missed: false };
      },
      240_000,
      20,
    );
    assert.equal(caught.missed, false, 'the kill came before status.revision was written');
    const bd = await bdOf();
    assert.equal((bd?.status as { revision?: number } | undefined)?.revision, undefined, 'killed before status.revision was written');
    const left = await labelled();
    process.stdout.write(`# first-install kill point: killed ${caught.afterMs} ms after start with records [${caught.recs.join(', ')}], ${left.length} labelled objects live, status.revision unset\n`);

    // Deleted, extension and BundleDeployment, while no manager runs: the next manager meets a
    // BundleDeployment being deleted whose status names no revision, and must clean up from the
    // release records alone (it must not first finish the install and so set a revision).
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: first });
    await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: firstBd });
    startManager();
    await eventually('extension and BundleDeployment gone', async () => ((await bdOf()) === undefined && (await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: first })) === undefined ? true : undefined), 180_000, 500);
    await eventually('every installed object deleted', async () => ((await labelled()).length === 0 ? true : undefined), 120_000, 500).catch(async (err: unknown) => {
      assert.deepEqual(await labelled(), [], `nothing the first install applied is left (${err instanceof Error ? err.message : String(err)})`);
    });
    assert.deepEqual(await records(), [], 'no release records left');
  } finally {
    if (proc !== undefined) await killHard(proc);
    await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${firstNs}-installer` });
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: firstNs });
  }
});
