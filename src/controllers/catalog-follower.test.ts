/**
 * The catalog follower over the one fake cluster: it serves what the leader's status resolved,
 * writes nothing, is Ready once it has looked at every catalog there when its cache synced and
 * stays Ready when a catalog is added; stopped, it drops what is queued.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { API_VERSION, type ClusterCatalog } from '../api/types.js';
import { CLUSTER_CATALOG_CRD } from '../api/crds.js';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/index.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { CatalogRegistry } from './catalog-registry.js';
import { followCatalogs, handOver } from './catalog-follower.js';

const logger = pino({ level: 'silent' });
const DIGEST = 'sha256:' + 'd'.repeat(64);
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** A ClusterCatalog the leader resolved and serves. */
function served(name: string): ClusterCatalog {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterCatalog',
    metadata: { name, generation: 1 },
    spec: { source: { type: 'Image', image: { ref: `quay.io/example/${name}:latest` } } },
    status: {
      observedGeneration: 1,
      resolvedSource: { type: 'Image', image: { ref: `quay.io/example/${name}@${DIGEST}` } },
      conditions: [{ type: 'Serving', status: 'True', reason: 'Available', message: '', lastTransitionTime: new Date().toISOString() }],
    },
  };
}

async function eventually(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await sleep(25);
  }
  assert.fail(`never: ${what}`);
}

test('serves what the leader resolved, writes nothing, is Ready once caught up and stays Ready; stopped, it drops what is queued', async () => {
  const storeDir = await mkdtemp(join(tmpdir(), 'follower-'));
  dirs.push(storeDir);
  const cluster = new FakeCluster({ objects: [CLUSTER_CATALOG_CRD, served('a'), served('b')] });
  const registry = new CatalogRegistry();
  const pulls: string[] = [];
  let release: (() => void) | undefined;
  const stop = new AbortController();
  const follower = followCatalogs(
    {
      client: cluster.client(),
      logger,
      registry,
      storeDir,
      serverUrl: 'http://127.0.0.1:8083',
      workers: 1,
      pull: async (ref) => {
        pulls.push(ref);
        // Catalog c's pull waits until released: the follower is stopped meanwhile.
        if (ref.includes('/c@')) await new Promise<void>((resolve) => (release = resolve));
        return { digest: DIGEST, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/fbc/valid' } };
      },
    },
    stop.signal,
  );
  assert.equal(follower.ready(), false, 'not Ready before its cache synced');
  await eventually('Ready', () => follower.ready());
  assert.deepEqual(registry.list().map((c) => c.name), ['a', 'b']);
  assert.deepEqual(pulls.sort(), [`quay.io/example/a@${DIGEST}`, `quay.io/example/b@${DIGEST}`]);
  // A catalog added later: Ready all the same while it is pulled (c's pull hangs), and one queued behind it.
  cluster.put(served('c'));
  await eventually('c pulled', () => release !== undefined);
  assert.equal(follower.ready(), true, 'a new catalog does not make a caught-up follower NotReady');
  cluster.put(served('d'));
  await sleep(100);
  stop.abort();
  release?.();
  await follower.stopped;
  assert.equal(registry.get('c'), undefined, 'stopped in flight: c is not published');
  assert.ok(!pulls.some((p) => p.includes('/d@')), 'd, queued when it stopped, was dropped');
  assert.deepEqual(cluster.writes, [], 'the follower wrote nothing');
});

test('a handover waits for the follower to stop; a reconcile that outlasts the wait is left in flight and publishes nothing; a stop meanwhile ends it', async () => {
  const storeDir = await mkdtemp(join(tmpdir(), 'follower-'));
  dirs.push(storeDir);
  const cluster = new FakeCluster({ objects: [CLUSTER_CATALOG_CRD, served('a')] });
  const registry = new CatalogRegistry();
  let release: (() => void) | undefined;
  const following = new AbortController();
  const follower = followCatalogs(
    {
      client: cluster.client(),
      logger,
      registry,
      storeDir,
      serverUrl: 'http://127.0.0.1:8083',
      // a's pull hangs until released: a pull from a slow registry.
      pull: async () => {
        await new Promise<void>((resolve) => (release = resolve));
        return { digest: DIGEST, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/fbc/valid' } };
      },
    },
    following.signal,
  );
  await eventually('a pulled', () => release !== undefined);
  assert.equal(await handOver(follower, () => following.abort(), 50, new AbortController().signal), 'in-flight');
  assert.ok(following.signal.aborted, 'the follower was told to stop');
  const stopped = new AbortController();
  stopped.abort();
  assert.equal(await handOver(follower, () => undefined, 60_000, stopped.signal), 'aborted', 'the manager stopped meanwhile: no wait');
  release?.();
  assert.equal(await handOver(follower, () => undefined, 60_000, new AbortController().signal), 'stopped');
  assert.equal(registry.get('a'), undefined, 'the reconcile that outlasted the wait published nothing');
  assert.deepEqual(cluster.writes, []);
});
