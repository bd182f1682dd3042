/**
 * Crash safety: the manager is killed with SIGKILL at points chosen at random while it installs,
 * upgrades, rolls back, follows a catalog update and uninstalls an operator, and restarted each
 * time. Whatever the interleaving, it must converge: the operator installed at the right version,
 * every object the release records present and labelled, nothing labelled that the release does
 * not record (no orphans), no revision left pending, and after uninstall nothing left at all.
 *
 * The same for Helm operator CRs: a HelmOperator serves the corpus pushgateway chart as a kind;
 * two CRs (a PVC and an extra ConfigMap each) are installed, upgraded (replicas, a changed and an
 * added ConfigMap), reverted (the spec changed back), given a change the API server refuses in
 * place (a Service's clusterIP: the upgrade fails and is rolled back) and uninstalled, the
 * manager SIGKILLed at seeded points in each phase. After each: every CR Deployed with the
 * objects of its desired revision live (replicas and data as desired), nothing of the release
 * that the desired revision lacks, its PVC the one first made (never deleted and re-created),
 * its namespace not deleted, no revision left pending; after uninstall nothing left.
 *
 * The kill points come from BINNACLE_CRASH_SEED (printed; default a fixed seed, so CI runs the
 * same points every time): replay a failure with the seed it printed. BINNACLE_CRASH_KILLS is
 * the number per phase (default 2, five phases each campaign: 10 kills; 40 gives 200).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { publishPackages } from '../../src/publish/packages.js';
import { freePort } from '../../src/util/ports.js';
import { ensureCrds } from '../../src/controllers/crds.js';
import { bundleDeploymentName } from '../../src/api/names.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { API_VERSION, type ClusterCatalog } from '../../src/api/types.js';
import { assertConsistent, assertRemoved, installedAt, KINDS, seededRandom, type ReleaseUnderTest } from './convergence.js';
import { adminInstaller, e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';
import { CORPUS } from './extensions.js';
import { applyPushgatewayOperator, pushPushgateway } from './pushgateway.js';
import { parseAllDocuments } from 'yaml';
import { HELM_RELEASE_NAME_ANNOTATION } from '../../src/apply/ownership.js';
import type { HelmOperator } from '../../src/api/types.js';

const ROOT = join(import.meta.dirname, '..', '..');
const KILLS_PER_PHASE = Number(process.env.BINNACLE_CRASH_KILLS ?? 2);
/** The Helm CR campaign's kills per phase: one in CI (its phases are long), BINNACLE_CRASH_KILLS on demand (40 gives 200). */
const HELM_KILLS_PER_PHASE = Number(process.env.BINNACLE_CRASH_KILLS ?? 1);
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
 * Kills the manager at `count` random moments (after it is ready) while `phase` is
 * under way, restarting it each time; then leaves one running.
 */
async function withCrashes(phase: string, draw: () => number = random, count = KILLS_PER_PHASE): Promise<void> {
  const delays = Array.from({ length: count }, () => Math.round(draw() * KILL_WINDOW_MS));
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

/** A Helm operator CR as the campaign reads it. */
interface HelmCr extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Parameters<typeof findCondition>[0]; deployedRelease?: { name: string; manifest: string } };
}

/** What one CR's release should hold: replicas, the extra ConfigMaps' data, the Service headless or not. */
interface HelmDesired {
  replicas: number;
  configMaps: Record<string, string>;
  /** The phase's own wait: the CR says what it should (Deployed, or ReleaseFailed after a rollback). */
  failed?: RegExp;
}

test('SIGKILLed at random points during install, upgrade, revert, rollback and uninstall of Helm operator CRs, every CR converges with nothing of its desired state lost', async () => {
  const started = Date.now();
  const hns = uniqueName('crash-helm');
  const hop = uniqueName('crash-hop');
  const group = `${uniqueName('crash')}.e2e.binnacle.dev`;
  const api = `${group}/v1alpha1`;
  const crs = ['pa', 'pb'];
  const work = await mkdtemp(join(tmpdir(), 'binnacle-crash-helm-'));
  const killsBefore = kills;
  // Its own draw from the seed: the same kill points whether or not the other campaign ran first.
  const helmRandom = seededRandom(SEED + 1);
  const crRef = (name: string) => ({ apiVersion: api, kind: 'Pushgateway', namespace: hns, name });
  const extra = (suffix: string, v: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: '{{ .Release.Name }}-${suffix}'\ndata:\n  v: ${v}\n`;
  const valuesA = { replicaCount: 1, persistentVolume: { enabled: true }, extraManifests: [extra('extra', 'a')] };
  const valuesB = { replicaCount: 2, persistentVolume: { enabled: true }, extraManifests: [extra('extra', 'b'), extra('extra-b', 'b')] };
  const valuesRefused = { ...valuesA, service: { clusterIP: 'None' } };
  const desiredA = (name: string): HelmDesired => ({ replicas: 1, configMaps: { [`${name}-extra`]: 'a' } });
  const desiredB = (name: string): HelmDesired => ({ replicas: 2, configMaps: { [`${name}-extra`]: 'b', [`${name}-extra-b`]: 'b' } });
  const applyAll = async (values: Record<string, unknown>): Promise<void> => {
    for (const cr of crs) await client.apply({ apiVersion: api, kind: 'Pushgateway', metadata: { name: cr, namespace: hns }, spec: values }, { force: true, fieldManager: 'crash-e2e' });
  };
  const pvcUids = new Map<string, string>();
  const nsUid = async (): Promise<string | undefined> => (await client.find({ apiVersion: 'v1', kind: 'Namespace', name: hns }))?.metadata.uid;

  /** `kind/name` of every live object of the release `name` (by Helm's release annotation) of the chart's kinds. */
  const releaseObjects = async (name: string): Promise<string[]> => {
    const out: string[] = [];
    for (const [apiVersion, kind] of [['apps/v1', 'Deployment'], ['v1', 'Service'], ['v1', 'ServiceAccount'], ['v1', 'ConfigMap'], ['v1', 'PersistentVolumeClaim']] as const) {
      for (const o of (await client.list(apiVersion, kind, { namespace: hns })).items) {
        if (o.metadata.annotations?.[HELM_RELEASE_NAME_ANNOTATION] === name && o.metadata.deletionTimestamp === undefined) out.push(`${kind}/${o.metadata.name ?? ''}`);
      }
    }
    return out.sort();
  };
  const mirrorRecords = async (name: string): Promise<string[]> =>
    (await client.list('v1', 'Secret', { namespace: hns, labelSelector: `owner=helm,name=${name}` })).items.map((x) => `${x.metadata.name ?? ''}:${x.metadata.labels?.status ?? ''}`);

  /** Waits until `name` is as `want` says, then checks everything the campaign promises of it. */
  const helmConverged = async (name: string, want: HelmDesired, timeoutMs = 240_000): Promise<void> => {
    const cr = await eventually(
      `${name} converged`,
      async () => {
        const c = await client.find<HelmCr>(crRef(name));
        const conditions = c?.status?.conditions;
        if (findCondition(conditions, 'Deployed')?.status !== 'True') return undefined;
        if (want.failed !== undefined && !(findCondition(conditions, 'ReleaseFailed')?.status === 'True' && want.failed.test(findCondition(conditions, 'ReleaseFailed')?.message ?? ''))) return undefined;
        if (want.failed === undefined && findCondition(conditions, 'ReleaseFailed')?.status === 'True') return undefined;
        const dep = await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: hns, name: `${name}-prometheus-pushgateway` });
        if ((dep?.spec as { replicas?: number } | undefined)?.replicas !== want.replicas) return undefined;
        for (const [cm, v] of Object.entries(want.configMaps)) {
          const live = await client.find<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: hns, name: cm });
          if (live?.data?.v !== v) return undefined;
        }
        if ((await mirrorRecords(name)).some((r) => r.includes(':pending'))) return undefined;
        return c;
      },
      timeoutMs,
      500,
    );
    // Every object of the deployed revision live, and nothing of the release it lacks.
    const manifest = cr?.status?.deployedRelease?.manifest ?? '';
    const kinds = new Set(['Deployment', 'Service', 'ServiceAccount', 'ConfigMap', 'PersistentVolumeClaim']);
    const desired = parseAllDocuments(manifest)
      .map((d) => d.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o !== null && kinds.has(o.kind))
      .map((o) => `${o.kind}/${o.metadata.name ?? ''}`)
      .sort();
    assert.ok(desired.includes(`PersistentVolumeClaim/${name}-prometheus-pushgateway`), `${name}'s desired revision holds its PVC`);
    assert.deepEqual(await releaseObjects(name), desired, `${name}: live objects are exactly the desired revision's`);
    assert.deepEqual(Object.keys(want.configMaps).map((cm) => `ConfigMap/${cm}`).filter((x) => !desired.includes(x)), [], `${name}: the desired ConfigMaps are in the revision`);
    const svc = await client.get({ apiVersion: 'v1', kind: 'Service', namespace: hns, name: `${name}-prometheus-pushgateway` });
    assert.notEqual((svc.spec as { clusterIP?: string }).clusterIP, 'None', `${name}: the refused change did not land`);
    // The PVC is the one the first install made: never deleted along the way.
    const pvc = await client.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: hns, name: `${name}-prometheus-pushgateway` });
    const first = pvcUids.get(name);
    if (first === undefined) pvcUids.set(name, pvc.metadata.uid ?? '');
    else assert.equal(pvc.metadata.uid, first, `${name}'s PVC was never deleted and re-created`);
    assert.deepEqual((await mirrorRecords(name)).filter((r) => r.includes(':pending')), [], `${name}: no revision left pending`);
  };
  const allConverged = async (phase: string, want: (name: string) => HelmDesired): Promise<void> =>
    converged(`helm ${phase}`, async () => {
      for (const cr of crs) await helmConverged(cr, want(cr));
    });

  try {
    await pushPushgateway(work, '3.8.0', `oci://${e2eRegistry()}/${hop}`);
    await adminInstaller(client, hns);
    const firstNs = await nsUid();
    await applyPushgatewayOperator(client, { name: hop, repo: `oci://${e2eRegistry()}/${hop}`, group, namespace: hns });
    const port = await freePort();
    await untilReady(startManager(port), port);
    await eventually('HelmOperator Ready', async () => {
      const h = await client.find<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hop });
      return findCondition(h?.status?.conditions, 'Ready')?.status === 'True' ? true : undefined;
    }, 180_000, 500);
    await stopManager();

    await applyAll(valuesA);
    await withCrashes('helm install', helmRandom, HELM_KILLS_PER_PHASE);
    await allConverged('install', desiredA);
    await stopManager();

    await applyAll(valuesB);
    await withCrashes('helm upgrade', helmRandom, HELM_KILLS_PER_PHASE);
    await allConverged('upgrade', desiredB);
    await stopManager();

    // Back to A: the release issue's wipe came from here (a revert after an interrupted upgrade).
    await applyAll(valuesA);
    await withCrashes('helm revert', helmRandom, HELM_KILLS_PER_PHASE);
    await allConverged('revert', desiredA);
    await stopManager();

    // A change the API server refuses in place: the upgrade fails and is rolled back to A's revision.
    await applyAll(valuesRefused);
    await withCrashes('helm rollback', helmRandom, HELM_KILLS_PER_PHASE);
    await allConverged('rollback', (name) => ({ ...desiredA(name), failed: /may not change once set/ }));
    assert.equal(await nsUid(), firstNs, 'the release namespace was never deleted');
    await stopManager();

    for (const cr of crs) await client.delete(crRef(cr));
    await withCrashes('helm uninstall', helmRandom, HELM_KILLS_PER_PHASE);
    await converged('helm uninstall', async () => {
      for (const cr of crs) {
        await eventually(`${cr} gone`, async () => ((await client.find(crRef(cr))) === undefined ? true : undefined), 180_000, 500);
        await eventually(`${cr}'s objects gone`, async () => ((await releaseObjects(cr)).length === 0 ? true : undefined), 120_000, 500).catch(async () => {
          assert.deepEqual(await releaseObjects(cr), [], `nothing of ${cr} left`);
        });
        assert.deepEqual(await mirrorRecords(cr), [], `no Helm records of ${cr} left`);
      }
    });
    const trusted = await client.list('v1', 'Secret', { namespace: 'binnacle-system', labelSelector: `binnacle.dev/release-namespace=${hns}` });
    assert.deepEqual(trusted.items.map((s) => s.metadata.name), [], 'no trusted records left');
    process.stdout.write(`# crash seed ${SEED}: ${kills - killsBefore} kill points in 5 Helm phases, all converged, in ${Math.round((Date.now() - started) / 1000)} s\n`);
    assert.ok(kills - killsBefore >= HELM_KILLS_PER_PHASE * 5, `the manager was killed ${kills - killsBefore} times`);
  } finally {
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) startManager();
    await client.delete({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hop }).catch(() => undefined);
    await eventually('HelmOperator gone', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hop })) === undefined ? true : undefined), 180_000, 500).catch(() => undefined);
    await stopManager();
    await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${hns}-installer` });
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: hns });
    await rm(work, { recursive: true, force: true });
  }
});
