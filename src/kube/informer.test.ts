import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from './informer.js';
import type { KubeClient } from './client.js';
import type { KubeObject } from './types.js';

/**
 * An API server that lists one unchanged object each time, and whose first watch breaks (the
 * server was killed) or ends normally (its timeout); later watches stay open until the informer stops.
 */
function oneObjectServer(firstWatch: 'breaks' | 'ends'): { client: KubeClient; lists: () => number; watches: () => number } {
  let lists = 0;
  let watches = 0;
  const obj = (): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '7' } });
  const client = {
    list: () => {
      lists++;
      return Promise.resolve({ items: [obj()], metadata: { resourceVersion: '7' } });
    },
    watch: async function* (_apiVersion: string, _kind: string, opts: { signal?: AbortSignal }): AsyncGenerator<never> {
      watches++;
      if (watches === 1 && firstWatch === 'breaks') throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
      if (watches === 1) return;
      await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve(), { once: true }));
      yield* []; // no events
    },
  } as unknown as KubeClient;
  return { client, lists: () => lists, watches: () => watches };
}

/** Runs an informer over client until `until` holds (or 10 s pass); the adds and updates it delivered. */
async function deliveredUntil(client: KubeClient, until: () => boolean): Promise<string[]> {
  const informer = new Informer(client, 'v1', 'ConfigMap');
  const seen: string[] = [];
  informer.addHandlers({ add: (o) => seen.push(`add ${o.metadata.name ?? ''}`), update: (_old, o) => seen.push(`update ${o.metadata.name ?? ''}`) });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  const deadline = Date.now() + 10_000;
  while (!until() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  stop.abort();
  await running;
  return seen;
}

test('after the server was away, the relist delivers every object again, unchanged ones too', async () => {
  const { client, lists } = oneObjectServer('breaks');
  const seen = await deliveredUntil(client, () => lists() >= 2);
  assert.equal(lists(), 2, 'listed again after the watch broke');
  // Before: only `add a` — a key waiting out a long backoff was not reconciled until it ran out.
  assert.deepEqual(seen, ['add a', 'update a']);
});

test('a watch that ends normally (its timeout) is resumed without delivering unchanged objects again', async () => {
  const { client, lists, watches } = oneObjectServer('ends');
  const seen = await deliveredUntil(client, () => watches() >= 2);
  assert.equal(lists(), 1, 'the watch resumed from its resourceVersion, without a relist');
  assert.deepEqual(seen, ['add a']);
});

test('the cache says when it has caught up with a resourceVersion (a write it must show), and times out when it has not', async () => {
  // Lists at 10, then delivers one event at 12 once told to.
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const client = {
    list: () => Promise.resolve({ items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '10' } }], metadata: { resourceVersion: '10' } }),
    watch: async function* (_apiVersion: string, _kind: string, opts: { signal?: AbortSignal }): AsyncGenerator<{ type: string; object: KubeObject }> {
      await released;
      yield { type: 'MODIFIED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '12' } } };
      await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve(), { once: true }));
    },
  } as unknown as KubeClient;
  const informer = new Informer(client, 'v1', 'ConfigMap');
  assert.equal(informer.hasSeen('1'), false, 'nothing is seen before the first list');
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  assert.equal(informer.hasSeen('9'), true);
  assert.equal(informer.hasSeen('10'), true);
  assert.equal(informer.hasSeen('12'), false);
  assert.equal(informer.hasSeen('not-a-number'), false, 'an opaque resourceVersion is never taken as seen');
  assert.equal(await informer.waitForResourceVersion('12', 50), false, 'timed out before the event');
  const waiting = informer.waitForResourceVersion('12', 10_000);
  release();
  assert.equal(await waiting, true);
  assert.equal(informer.get('ns/a')?.metadata.resourceVersion, '12', 'the cache holds the write once it says so');
  assert.equal(await informer.waitForResourceVersion('x1', 10_000), false, 'never waits for what it cannot compare');
  stop.abort();
  await running;
});

test('a version too deep to read: the cache keeps the old one, but says it is not current and tells handlers; a readable version makes it current again', async () => {
  // Lists version 1; the watch then sends a refused version 2 (its stub), then a readable version 3.
  const cm = (rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: rv } });
  // Two gates opened by the test in turn; made up front, so opening one never races the watch.
  const opens: (() => void)[] = [];
  const gates = [0, 1].map(() => new Promise<void>((resolve) => opens.push(resolve)));
  const step = (): void => opens.shift()?.();
  const client = {
    list: () => Promise.resolve({ items: [cm('1')], metadata: { resourceVersion: '1' } }),
    watch: async function* (_apiVersion: string, _kind: string, opts: { signal?: AbortSignal }): AsyncGenerator<{ type: string; object: KubeObject; refused?: boolean }> {
      await gates[0];
      yield { type: 'MODIFIED', object: cm('2'), refused: true };
      await gates[1];
      yield { type: 'MODIFIED', object: cm('3') };
      await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve(), { once: true }));
    },
  } as unknown as KubeClient;
  const informer = new Informer(client, 'v1', 'ConfigMap');
  const refused: string[] = [];
  informer.addHandlers({ refused: (stub) => refused.push(stub.metadata.resourceVersion ?? '') });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  assert.equal(informer.current('ns/a')?.metadata.resourceVersion, '1');
  step();
  assert.equal(await informer.waitForResourceVersion('2', 5_000), true);
  assert.equal(informer.get('ns/a')?.metadata.resourceVersion, '1', 'the cache keeps the version it had');
  assert.equal(informer.current('ns/a'), undefined, 'but it is not current: a reader goes to the server');
  assert.deepEqual(refused, ['2']);
  step();
  assert.equal(await informer.waitForResourceVersion('3', 5_000), true);
  assert.equal(informer.current('ns/a')?.metadata.resourceVersion, '3');
  stop.abort();
  await running;
});
