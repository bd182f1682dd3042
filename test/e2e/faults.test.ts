/**
 * Faults around a working manager, on a control plane of this file's own (restarting its
 * components must not disturb other e2e files): one extension of poison-pill-operator walks
 * 0.0.5 → 0.0.6 → 0.1.0 → back to 0.0.6, each step under a fault —
 *   - kube-apiserver SIGKILLed in the middle of the install, restarted by `cluster up`'s recovery;
 *   - the registry (a proxy in front of it) serving the upgrade's bundle layers truncated, then
 *     with a changed byte: the extension names the digest problem, the installed version is
 *     untouched and nothing is half-applied; once the registry is fixed it converges;
 *   - etcd SIGKILLed in the middle of the next upgrade, restarted the same way;
 *   - kube-apiserver stopped (SIGSTOP) for 30 s in the middle of a rollback, then continued.
 * Every case ends converged: installed at the right version, exactly the objects the release
 * records live and labelled (nothing orphaned, nothing lost), no revision pending, and the
 * manager still running. Then the extension is removed and nothing is left. Each case prints
 * how long convergence took after the fault ended.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { API_VERSION } from '../../src/api/types.js';
import { ReleaseStore } from '../../src/apply/release-store.js';
import { publishPackages, type PublishResult } from '../../src/publish/packages.js';
import { clusterDown, clusterStatus, clusterUp, type Component, type UpResult } from '../../src/cluster/index.js';
import { bundleDeploymentName } from '../../src/api/names.js';
import { cacheDir, clusterLayout } from '../../src/cluster/layout.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { findCondition } from '../../src/kube/types.js';
import { assertConsistent, assertRemoved, findExtension, installedAt, type ReleaseUnderTest } from './convergence.js';
import { adminInstaller, eventually, uniqueName } from './env.js';
import { managerLogger, managerLogNote } from './manager-log.js';
import { CORPUS } from './operators.js';
import { startRegistryProxy, type RegistryProxy } from './registry-proxy.js';

const logger = pino({ level: process.env.BINNACLE_E2E_LOG ?? 'silent' });
const clusterName = `${process.env.BINNACLE_E2E_CLUSTER ?? 'e2e'}-faults`;
const PACKAGE = 'poison-pill-operator';
const OUTAGE_MS = 30_000;

let up: UpResult;
let client: KubeClient;
let managerClient: KubeClient;
let manager: RunningManager;
let managerEnded: string | undefined;
let dataDir: string;
let proxy: RegistryProxy;
let published: PublishResult;
const name = uniqueName('faults');
const ns = uniqueName('faults');
const catalogName = uniqueName('faultcat');
let release: ReleaseUnderTest;
const figures: string[] = [];

function figure(line: string): void {
  figures.push(line);
  console.log(`# faults: ${line}`);
}

async function pidOf(c: Component): Promise<number> {
  const status = await clusterStatus({ name: clusterName });
  const pid = status.components.find((x) => x.name === c)?.pid;
  assert.ok(pid !== undefined && status.components.find((x) => x.name === c)?.running === true, `${c} of cluster ${clusterName} is running`);
  return pid;
}

/** `cluster up`'s own recovery: components found dead (or not answering) are started again. */
async function recover(): Promise<void> {
  const r = await clusterUp({ name: clusterName, logger, timeoutMs: 240_000, progress: () => undefined });
  assert.equal(r.outcome, 'recovered', 'cluster up found something to restart');
  const status = await clusterStatus({ name: clusterName });
  assert.ok(status.components.every((c) => c.running && c.healthy), `every component back: ${JSON.stringify(status.components)}`);
}

function assertManagerRunning(): void {
  assert.equal(managerEnded, undefined, `the manager is still running (it ended: ${managerEnded ?? ''})`);
}

/**
 * Waits until the release has a revision pending for `version` (the manager is applying it),
 * and answers whether it caught it; if the step finished before a poll saw it, answers false
 * (the fault then hits a manager that has just finished, which must converge all the same).
 */
async function midway(version: string): Promise<boolean> {
  return eventually(
    `the manager at work on ${version}`,
    async () => {
      const history = await new ReleaseStore(client).history({ name: release.bundleDeployment, namespace: ns });
      if (history.some((r) => r.status.startsWith('pending') && r.chart.version === version)) return true;
      if (history.some((r) => r.status === 'deployed' && r.chart.version === version)) return false;
      return undefined;
    },
    240_000,
    25,
  );
}

async function moveTo(version: string): Promise<void> {
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version } } } });
}

async function convergedAt(version: string, fault: string, faultEnded: number): Promise<void> {
  await installedAt(release, version).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${managerLogNote('faults')}`, { cause: err });
  });
  await assertConsistent(release, version);
  assertManagerRunning();
  figure(`${fault}: converged at ${version} ${Date.now() - faultEnded} ms after the fault ended`);
}

/** Every condition of the extension, as `Type=Status Reason: message`. */
async function conditionMessages(): Promise<string[]> {
  const ce = await findExtension(release);
  return (ce?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`);
}

/**
 * Nothing of a refused blob is kept: every file in the manager's data dir named after one of
 * `digests` holds exactly those bytes, and no unpack is left half-done in a `tmp` dir.
 */
async function assertNoBadBlobCached(digests: string[]): Promise<void> {
  const hexes = new Map(digests.map((d) => [d.slice('sha256:'.length), d]));
  const tmpDirs: string[] = [];
  // The manager keeps retrying meanwhile: a work dir may vanish under the walk.
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === 'tmp') tmpDirs.push(path);
        await walk(path);
      } else if (entry.isFile() && hexes.has(entry.name)) {
        const bytes = await readFile(path).catch(() => undefined);
        if (bytes === undefined) continue;
        assert.equal(`sha256:${createHash('sha256').update(bytes).digest('hex')}`, hexes.get(entry.name), `${path} holds the bytes of its digest`);
      }
    }
  };
  await walk(dataDir);
  // An unpack in flight right now has a work dir; a refused one must not stay.
  for (const path of tmpDirs) await eventually(`${path} empty`, async () => ((await readdir(path).catch(() => [])).length === 0 ? true : undefined), 60_000, 100);
}

/** The layer digests of the published bundle image of `version`, read from the real registry. */
async function bundleLayers(version: string): Promise<string[]> {
  const image = published.bundles.find((b) => b.version === version)?.image;
  assert.ok(image !== undefined, `${PACKAGE} ${version} was published`);
  const m = /^[^/]+\/(.+)@(sha256:[0-9a-f]{64})$/.exec(image);
  assert.ok(m !== null, `bundle image ${image} is pinned by digest`);
  const res = await fetch(`http://${up.registry}/v2/${m[1] ?? ''}/manifests/${m[2] ?? ''}`, {
    headers: { accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json' },
  });
  assert.equal(res.status, 200, `manifest of ${image}`);
  const manifest = (await res.json()) as { layers?: { digest: string }[] };
  const layers = (manifest.layers ?? []).map((l) => l.digest);
  assert.ok(layers.length > 0, `${image} has layers`);
  return layers;
}

before(async () => {
  up = await clusterUp({ name: clusterName, logger, timeoutMs: 240_000, progress: () => undefined });
  client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
  managerClient = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-faults-'));
  // Every image goes through the proxy: it passes everything through until a case breaks it.
  proxy = await startRegistryProxy(up.registry);
  published = await publishPackages({ packages: [join(CORPUS, PACKAGE)], registry: proxy.host, repository: catalogName });
  // The manager logs to a file kept after the run; a case that does not converge quotes its last warnings.
  manager = await startManager({ client: managerClient, logger: managerLogger('faults'), dataDir, healthTimeoutMs: 120_000, workers: 2 });
  manager.done.then(
    () => (managerEnded = 'stopped'),
    (err: unknown) => (managerEnded = err instanceof Error ? err.message : String(err)),
  );
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
  await adminInstaller(client, ns);
  release = { client, extension: name, bundleDeployment: bundleDeploymentName(name, PACKAGE), namespace: ns };
});

after(async () => {
  console.log(`# faults summary:\n${figures.map((f) => `#   ${f}`).join('\n')}`);
  await manager?.stop();
  managerClient?.close();
  client?.close();
  await proxy?.close();
  // The control plane's own logs, kept beside the manager's: a fault the cluster did not recover from shows there.
  await cp(clusterLayout(clusterName).logs, join(cacheDir(), 'test-artifacts', 'faults-cluster-logs'), { recursive: true }).catch(() => undefined);
  await clusterDown({ name: clusterName, logger });
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('faults around a working manager', () => {
  test('kube-apiserver killed in the middle of an install and restarted: it converges', async () => {
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'ClusterExtension',
      metadata: { name },
      spec: {
        namespace: ns,
        serviceAccount: { name: 'installer' },
        // The versions are walked up and down; no upgrade graph is under test here.
        source: { sourceType: 'Catalog', catalog: { packageName: PACKAGE, version: '0.0.5', upgradeConstraintPolicy: 'SelfCertified', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } },
      },
    });
    const caught = await midway('0.0.5');
    process.kill(await pidOf('kube-apiserver'), 'SIGKILL');
    await sleep(3_000);
    await recover();
    const ended = Date.now();
    figure(`kube-apiserver killed ${caught ? 'with the install pending' : 'just after the install finished'}, restarted`);
    await convergedAt('0.0.5', 'kube-apiserver restart (install)', ended);
  });

  test('a registry serving the upgrade bundle truncated, then with a wrong digest: a clear failure, nothing applied, then it converges', async () => {
    // 0.0.6 has not been pulled yet: its layers come through the proxy.
    const layers = await bundleLayers('0.0.6');
    for (const l of layers) proxy.faultyBlobs.add(l);
    const started = Date.now();
    try {
      for (const [fault, expect] of [
        ['truncate', /bytes, but its descriptor declares/],
        ['corrupt', /does not match the expected/],
      ] as const) {
        proxy.fault = fault;
        const tamperedBefore = proxy.tampered;
        if (fault === 'truncate') await moveTo('0.0.6');
        // The extension itself says why it is not progressing, naming the blob.
        const message = await eventually(
          `a condition of the extension naming the ${fault}d layer`,
          async () => (proxy.tampered > tamperedBefore ? (await conditionMessages()).find((m) => /^Progressing=True Retrying/.test(m) && expect.test(m) && layers.some((l) => m.includes(l))) : undefined),
          240_000,
          250,
        );
        figure(`registry ${fault}s a layer: reported ${Date.now() - started} ms after the upgrade began: ${message.slice(0, 400)}`);
        // Nothing of 0.0.6 applied: 0.0.5 is what is installed, recorded and live.
        const ce = await findExtension(release);
        assert.equal(ce?.status?.install?.bundle.version, '0.0.5', 'the installed version is untouched');
        assert.equal(findCondition(ce?.status?.conditions, 'Installed')?.status, 'True', 'the extension is still installed (at 0.0.5)');
        await assertConsistent(release, '0.0.5');
        await assertNoBadBlobCached(layers);
        assertManagerRunning();
      }
    } finally {
      proxy.fault = 'none';
    }
    await convergedAt('0.0.6', 'registry fixed (upgrade)', Date.now());
  });

  test('etcd killed in the middle of an upgrade and restarted: it converges', async () => {
    await moveTo('0.1.0');
    const caught = await midway('0.1.0');
    process.kill(await pidOf('etcd'), 'SIGKILL');
    await sleep(3_000);
    await recover();
    const ended = Date.now();
    figure(`etcd killed ${caught ? 'with the upgrade pending' : 'just after the upgrade finished'}, restarted`);
    await convergedAt('0.1.0', 'etcd restart (upgrade)', ended);
  });

  test('the API server unreachable for 30 s in the middle of a rollback: it converges', async () => {
    await moveTo('0.0.6');
    const caught = await midway('0.0.6');
    const pid = await pidOf('kube-apiserver');
    process.kill(pid, 'SIGSTOP');
    try {
      await sleep(OUTAGE_MS);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const ended = Date.now();
    figure(`kube-apiserver stopped for ${OUTAGE_MS / 1000} s ${caught ? 'with the rollback pending' : 'just after the rollback finished'}`);
    await convergedAt('0.0.6', '30 s API outage (rollback)', ended);
  });

  test('after the faults, uninstall leaves nothing', async () => {
    const started = Date.now();
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
    await assertRemoved(release);
    assertManagerRunning();
    figure(`uninstall: nothing left after ${Date.now() - started} ms`);
  });
});
