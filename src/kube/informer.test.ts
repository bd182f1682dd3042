import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from './informer.js';
import { FakeCluster, faults } from './fake-cluster.test-helper.js';
import type { KubeObject } from './types.js';
import { MAX_OBJECT_NESTING } from '../util/nesting.js';

const cm = (data: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data });
const count = (cluster: FakeCluster, verb: 'list' | 'watch'): number => cluster.log.filter((r) => r.verb === verb).length;

/** Runs an informer over the cluster until `until` holds (or 10 s pass), calling `tick` while it waits; the adds and updates it delivered. */
async function deliveredUntil(cluster: FakeCluster, until: () => boolean, tick: () => void = () => undefined): Promise<string[]> {
  const informer = new Informer(cluster.client(), 'v1', 'ConfigMap');
  const seen: string[] = [];
  informer.addHandlers({ add: (o) => seen.push(`add ${o.metadata.name ?? ''}`), update: (_old, o) => seen.push(`update ${o.metadata.name ?? ''}`) });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  const deadline = Date.now() + 10_000;
  while (!until() && Date.now() < deadline) {
    tick();
    await new Promise((r) => setTimeout(r, 20));
  }
  stop.abort();
  await running;
  return seen;
}

test('after the server was away, the relist delivers every object again, unchanged ones too', async () => {
  // One unchanged object; the first watch cannot connect (the server was killed).
  const cluster = new FakeCluster({ objects: [cm()] });
  cluster.inject({ verb: 'watch', error: () => new Error('connect ECONNREFUSED 127.0.0.1:6443') });
  const seen = await deliveredUntil(cluster, () => count(cluster, 'list') >= 2);
  assert.equal(count(cluster, 'list'), 2, 'listed again after the watch broke');
  // Before: only `add a` — a key waiting out a long backoff was not reconciled until it ran out.
  assert.deepEqual(seen, ['add a', 'update a']);
});

test('a watch that ends normally (its timeout) is resumed without delivering unchanged objects again', async () => {
  const cluster = new FakeCluster({ objects: [cm()] });
  let ended = false;
  // The server ends the first watch at its timeout, once it is open.
  const seen = await deliveredUntil(cluster, () => count(cluster, 'watch') >= 2, () => {
    if (!ended && cluster.watching === 1) {
      cluster.endWatches();
      ended = true;
    }
  });
  assert.equal(count(cluster, 'list'), 1, 'the watch resumed from its resourceVersion, without a relist');
  assert.deepEqual(seen, ['add a']);
});

test('the cache says when it has caught up with a resourceVersion (a write it must show), and times out when it has not', async () => {
  const cluster = new FakeCluster({ objects: [cm()] });
  const listed = cluster.resourceVersion;
  const informer = new Informer(cluster.client(), 'v1', 'ConfigMap');
  assert.equal(informer.hasSeen('1'), false, 'nothing is seen before the first list');
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  // The next write's resourceVersion: not seen until its event arrives.
  const next = String(listed + 1);
  assert.equal(informer.hasSeen(String(listed - 1)), true);
  assert.equal(informer.hasSeen(String(listed)), true);
  assert.equal(informer.hasSeen(next), false);
  assert.equal(informer.hasSeen('not-a-number'), false, 'an opaque resourceVersion is never taken as seen');
  assert.equal(await informer.waitForResourceVersion(next, 50), false, 'timed out before the event');
  const waiting = informer.waitForResourceVersion(next, 10_000);
  const written = cluster.put(cm({ k: 'v' }));
  assert.equal(written.metadata.resourceVersion, next);
  assert.equal(await waiting, true);
  assert.equal(informer.get('ns/a')?.metadata.resourceVersion, next, 'the cache holds the write once it says so');
  assert.equal(await informer.waitForResourceVersion('x1', 10_000), false, 'never waits for what it cannot compare');
  stop.abort();
  await running;
});

test('a version too deep to read: the cache keeps the old one, but says it is not current and tells handlers; a readable version makes it current again', async () => {
  let deep: unknown = 'bottom';
  for (let i = 0; i < MAX_OBJECT_NESTING + 5; i++) deep = { d: deep };
  const cluster = new FakeCluster({ objects: [cm()] });
  const first = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a' })?.metadata.resourceVersion;
  const informer = new Informer(cluster.client(), 'v1', 'ConfigMap');
  const refused: string[] = [];
  informer.addHandlers({ refused: (stub) => refused.push(stub.metadata.resourceVersion ?? '') });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  assert.equal(informer.current('ns/a')?.metadata.resourceVersion, first);
  const tooDeep = cluster.put(cm({ deep })).metadata.resourceVersion ?? '';
  assert.equal(await informer.waitForResourceVersion(tooDeep, 5_000), true);
  assert.equal(informer.get('ns/a')?.metadata.resourceVersion, first, 'the cache keeps the version it had');
  assert.equal(informer.current('ns/a'), undefined, 'but it is not current: a reader goes to the server');
  assert.deepEqual(refused, [tooDeep]);
  const readable = cluster.put(cm({ k: 'v' })).metadata.resourceVersion ?? '';
  assert.equal(await informer.waitForResourceVersion(readable, 5_000), true);
  assert.equal(informer.current('ns/a')?.metadata.resourceVersion, readable);
  stop.abort();
  await running;
});

test('a list the API server refuses is retried, and the informer is not synced until one succeeds', async () => {
  const cluster = new FakeCluster({ objects: [cm()] });
  cluster.inject({ verb: 'list', error: faults.unavailable });
  const seen = await deliveredUntil(cluster, () => count(cluster, 'list') >= 2 && count(cluster, 'watch') >= 1);
  assert.deepEqual(seen, ['add a']);
});
