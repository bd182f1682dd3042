/**
 * Crash safety: the manager is killed with SIGKILL at points chosen at random while it installs,
 * upgrades, rolls back, follows a catalog update and uninstalls an operator, and restarted each
 * time. Whatever the interleaving, it must converge: the operator installed at the right version,
 * every object the release records present and labelled, nothing labelled that the release does
 * not record (no orphans), no revision left pending, and after uninstall nothing left at all.
 *
 * The kill points come from BINNACLE_CRASH_SEED (printed; default a fixed seed, so CI runs the
 * same points every time): replay a failure with the seed it printed. BINNACLE_CRASH_KILLS is
 * the number per phase (default 2, five phases: 10 kills; 25 gives 125).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { publishPackages } from '../../src/publish/packages.js';
import { freePort } from '../../src/cluster/ports.js';
import { ensureCrds } from '../../src/controllers/crds.js';
import { bundleDeploymentName } from '../../src/api/names.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { API_VERSION, type ClusterCatalog } from '../../src/api/types.js';
import { assertConsistent, assertRemoved, installedAt, KINDS, seededRandom, type ReleaseUnderTest } from './convergence.js';
import { adminInstaller, e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';
import { CORPUS } from './extensions.js';

const ROOT = join(import.meta.dirname, '..', '..');
const KILLS_PER_PHASE = Number(process.env.BINNACLE_CRASH_KILLS ?? 2);
const SEED = Number(process.env.BINNACLE_CRASH_SEED ?? 20261123);
/**
 * Kill points fall this long after the manager says it is ready (its informers synced: its
 * controllers at work), so they land in the work rather than in the process's start-up.
 */
const KILL_WINDOW_MS = 9_000;

let client: KubeClient;
let dataDir: string;
let proc: ChildProcess | undefined;
let kills = 0;
const name = uniqueName('crash');
const ns = uniqueName('crash');
const catalogName = uniqueName('crashcat');
const bdName = bundleDeploymentName(name, 'poison-pill-operator');
let release: ReleaseUnderTest;
/** The catalog image the ClusterCatalog is moved to in the catalog-update phase. */
let updatedCatalog = '';

function startManager(metricsPort = 0): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'manager', '--kubeconfig', e2eKubeconfig(), '--data-dir', dataDir, '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--catalog-bind-address', '127.0.0.1:0', '--health-timeout', '60'],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, BINNACLE_LOG_LEVEL: 'error' } },
  );
  proc = child;
  return child;
}

/** Waits until the manager on `port` answers /readyz; answers how long that took. */
async function untilReady(child: ChildProcess, port: number): Promise<number> {
  const start = Date.now();
  await eventually(
    'the manager ready',
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the manager exited (${child.exitCode ?? child.signalCode ?? ''}) before it was ready`);
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    },
    120_000,
    100,
  );
  return Date.now() - start;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  kills++;
}

const random = seededRandom(SEED);

/**
 * Kills the manager at `KILLS_PER_PHASE` random moments (after it is ready) while `phase` is
 * under way, restarting it each time; then leaves one running.
 */
async function withCrashes(phase: string): Promise<void> {
  const delays = Array.from({ length: KILLS_PER_PHASE }, () => Math.round(random() * KILL_WINDOW_MS));
  const started = Date.now();
  const startups: number[] = [];
  for (const delay of delays) {
    const port = await freePort();
    const child = startManager(port);
    startups.push(await untilReady(child, port));
    await sleep(delay);
    await killHard(child);
  }
  startManager();
  process.stdout.write(`# crash seed ${SEED}, ${phase}: ${delays.length} kills at [${delays.join(', ')}] ms after ready (start-up took [${startups.join(', ')}] ms; ${Date.now() - started} ms in all)\n`);
}

/** How long the last manager took to converge, printed. */
async function converged(phase: string, wait: () => Promise<unknown>): Promise<void> {
  const start = Date.now();
  await wait();
  process.stdout.write(`# crash seed ${SEED}, ${phase}: converged ${Date.now() - start} ms after the last restart\n`);
}

async function stopManager(): Promise<void> {
  if (proc !== undefined) await killHard(proc);
}

function catalogSource(version: string, policy?: 'SelfCertified'): Record<string, unknown> {
  return { packageName: 'poison-pill-operator', version, ...(policy === undefined ? {} : { upgradeConstraintPolicy: policy }), selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } };
}

before(async () => {
  client = await e2eClient();
  release = { client, extension: name, bundleDeployment: bdName, namespace: ns };
  // The manager installs the CRDs when it starts; the test writes a ClusterCatalog before that.
  await ensureCrds(client);
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-crash-'));
  const pkg = join(CORPUS, 'poison-pill-operator');
  const published = await publishPackages({ packages: [pkg], registry: e2eRegistry(), repository: catalogName });
  // The same package with another description: a new catalog image for the catalog-update phase.
  const updated = await publishPackages({
    packages: [pkg],
    registry: e2eRegistry(),
    repository: catalogName,
    catalogTag: `${e2eRegistry()}/${catalogName}/catalog:updated`,
    transform: (cfg) => {
      for (const p of cfg.packages) p.description = `${p.description ?? ''} (updated)`;
    },
  });
  assert.notEqual(updated.catalog, published.catalog, 'the updated catalog is a different image');
  updatedCatalog = updated.catalog;
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
  await adminInstaller(client, ns);
  process.stdout.write(`# crash seed ${SEED} (BINNACLE_CRASH_SEED), ${KILLS_PER_PHASE} kills per phase (BINNACLE_CRASH_KILLS)\n`);
});

after(async () => {
  await stopManager();
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName });
  await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${ns}-installer` });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  client.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('SIGKILLed at random points during install, upgrade, rollback, catalog update and uninstall, the manager always converges with nothing lost or orphaned', async () => {
  const started = Date.now();
  // Install 0.0.6.
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name },
    spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: catalogSource('0.0.6') } },
  });
  await withCrashes('install');
  await converged('install', () => installedAt(release, '0.0.6'));
  await assertConsistent(release, '0.0.6');
  await stopManager();

  // Upgrade to 0.1.0 along the catalog's edges.
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.1.0' } } } });
  await withCrashes('upgrade');
  await converged('upgrade', () => installedAt(release, '0.1.0'));
  await assertConsistent(release, '0.1.0');
  await stopManager();

  // Roll back to 0.0.6 (no edge leads down: the user self-certifies it).
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.0.6', upgradeConstraintPolicy: 'SelfCertified' } } } });
  await withCrashes('rollback');
  await converged('rollback', () => installedAt(release, '0.0.6'));
  await assertConsistent(release, '0.0.6');
  await stopManager();

  // The catalog moves to a new image: the manager serves the new one and the extension stays.
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName }, { spec: { source: { image: { ref: updatedCatalog } } } });
  await withCrashes('catalog update');
  await converged('catalog update', () =>
    eventually(
      'the ClusterCatalog serving the updated image',
      async () => {
        const cc = await client.find<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName });
        return cc?.status?.resolvedSource?.image.ref === updatedCatalog && findCondition(cc.status.conditions, 'Serving')?.status === 'True' ? true : undefined;
      },
      240_000,
      500,
    ),
  );
  await installedAt(release, '0.0.6');
  await assertConsistent(release, '0.0.6');
  await stopManager();

  // Uninstall.
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  await withCrashes('uninstall');
  await converged('uninstall', () => assertRemoved(release));
  assert.ok(kills >= KILLS_PER_PHASE * 5, `the manager was killed ${kills} times`);
  process.stdout.write(`# crash seed ${SEED}: ${kills} kill points in 5 phases, all converged, in ${Math.round((Date.now() - started) / 1000)} s\n`);
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
