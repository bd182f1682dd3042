import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { FakeCluster, type FakeClient } from './fake-cluster.test-helper.js';
import { LeaseLock } from './lease-lock.js';
import type { KubeObject } from './types.js';

/** The one fake cluster (a Lease has the API server's rules: create fails if it exists, update needs the current resourceVersion), each request a little slow. */
class LeaseStore {
  readonly cluster = new FakeCluster();
  private readonly ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'kube-system', name: 'binnacle-installed-state' };

  constructor() {
    this.cluster.latency = () => sleep(1);
  }

  get lease(): KubeObject | undefined {
    return this.cluster.get(this.ref);
  }

  /** Writes that landed. */
  get writes(): number {
    return this.cluster.writes.length;
  }

  client(): FakeClient {
    return this.cluster.client();
  }
}

const logger = pino({ level: 'silent' });
const lock = (store: LeaseStore, identity: string, leaseDurationMs = 15_000): LeaseLock =>
  new LeaseLock({ client: store.client(), namespace: 'kube-system', name: 'binnacle-installed-state', identity, logger, leaseDurationMs, retryMs: 5 });

test('critical sections of two processes and of one process never overlap', async () => {
  const store = new LeaseStore();
  const a = lock(store, 'manager-a');
  const b = lock(store, 'manager-b');
  let inside = 0;
  let most = 0;
  const order: string[] = [];
  const section = (who: string) => async (): Promise<void> => {
    inside++;
    most = Math.max(most, inside);
    order.push(who);
    await sleep(5);
    inside--;
  };
  await Promise.all([
    ...Array.from({ length: 5 }, (_, i) => a.withLock(section(`a${i}`))),
    ...Array.from({ length: 5 }, (_, i) => b.withLock(section(`b${i}`))),
  ]);
  assert.equal(most, 1);
  assert.equal(order.length, 10);
  // Within one process, in the order asked.
  assert.deepEqual(order.filter((x) => x.startsWith('a')), ['a0', 'a1', 'a2', 'a3', 'a4']);
  assert.equal((store.lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity, '', 'given up after');
});

test('a failing section still gives the lock up', async () => {
  const store = new LeaseStore();
  const a = lock(store, 'manager-a');
  await assert.rejects(a.withLock(() => Promise.reject(new Error('boom'))), /boom/);
  assert.equal(await a.withLock(() => Promise.resolve(42)), 42);
});

test('a holder that stopped renewing loses the lock after the lease duration; until then others wait', async () => {
  const store = new LeaseStore();
  const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  const crashed: KubeObject = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'binnacle-installed-state', namespace: 'kube-system' },
    spec: { holderIdentity: 'crashed-manager', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
  };
  store.cluster.put(crashed);
  const started = Date.now();
  await lock(store, 'manager-a', 1_000).withLock(() => Promise.resolve());
  assert.ok(Date.now() - started >= 900, 'waited for the dead holder to expire');
  const busy = new LeaseStore();
  // A live holder, which renews every 100 ms (another process's writes).
  const renewed = (): KubeObject => ({ ...crashed, spec: { ...(crashed.spec as object), holderIdentity: 'live-manager', renewTime: new Date().toISOString() } });
  busy.cluster.put(renewed());
  const keepAlive = setInterval(() => busy.cluster.put(renewed()), 100);
  try {
    await assert.rejects(lock(busy, 'manager-a', 1_000).withLock(() => Promise.resolve(), { timeoutMs: 500 }), (e: unknown) => e instanceof Error && 'code' in e && e.code === 'LOCK_BUSY');
  } finally {
    clearInterval(keepAlive);
  }
});

test('back-to-back sections of one process take the Lease once and give it up once', async () => {
  const store = new LeaseStore();
  const a = lock(store, 'manager-a');
  await Promise.all(Array.from({ length: 10 }, () => a.withLock(() => sleep(2))));
  assert.equal(store.writes, 2, 'one take, one give-up');
  await a.withLock(() => Promise.resolve());
  assert.equal(store.writes, 4);
});

test('holdIdleMs: sections that come within it take the Lease once; it is given up once idle, or at close', async () => {
  const store = new LeaseStore();
  const a = new LeaseLock({ client: store.client(), namespace: 'kube-system', name: 'binnacle-installed-state', identity: 'manager-a', logger, retryMs: 5, holdIdleMs: 150 });
  for (let i = 0; i < 4; i++) {
    await a.withLock(() => sleep(1));
    await sleep(30); // a requeue's gap, shorter than holdIdleMs
  }
  assert.equal(store.writes, 1, 'taken once, not given up between sections');
  assert.equal(a.acquisitions, 1);
  assert.equal((store.lease?.spec as { holderIdentity?: string }).holderIdentity, 'manager-a');
  await sleep(400);
  assert.equal(store.writes, 2, 'given up once idle');
  assert.notEqual((store.lease?.spec as { holderIdentity?: string }).holderIdentity, 'manager-a');
  // Another process takes it at once now.
  await lock(store, 'manager-b').withLock(() => Promise.resolve());
  // Held idle and closed (the process stops): given up now, not when the timer would fire.
  await a.withLock(() => Promise.resolve());
  const before: number = store.writes;
  await a.close();
  assert.equal(store.writes, before + 1);
  assert.notEqual((store.lease?.spec as { holderIdentity?: string }).holderIdentity, 'manager-a');
});

test('holdIdleMs: closed while a section runs, the Lease is given up as that section ends, not held idle', async () => {
  const store = new LeaseStore();
  const a = new LeaseLock({ client: store.client(), namespace: 'kube-system', name: 'binnacle-installed-state', identity: 'manager-a', logger, retryMs: 5, holdIdleMs: 60_000 });
  let release: () => void = () => undefined;
  let entered = (): void => undefined;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const running = a.withLock(() => {
    entered();
    return new Promise<void>((resolve) => (release = resolve));
  });
  // The section has begun (not a fixed wait: a loaded machine may take longer to get the Lease).
  await inside;
  assert.equal((store.lease?.spec as { holderIdentity?: string }).holderIdentity, 'manager-a', 'held by the running section');
  await a.close();
  assert.equal((store.lease?.spec as { holderIdentity?: string }).holderIdentity, 'manager-a', 'the running section still holds it');
  release();
  await running;
  assert.notEqual((store.lease?.spec as { holderIdentity?: string }).holderIdentity, 'manager-a', 'given up as the section ended');
  // Another process takes it at once, not after holdIdleMs or the lease duration.
  await lock(store, 'manager-b').withLock(() => Promise.resolve(), { timeoutMs: 1_000 });
});

test('holdIdleMs: a section that comes as the idle give-up is written waits for it and takes the Lease anew; two processes never overlap', async () => {
  const store = new LeaseStore();
  const mk = (id: string): LeaseLock => new LeaseLock({ client: store.client(), namespace: 'kube-system', name: 'binnacle-installed-state', identity: id, logger, retryMs: 2, holdIdleMs: 5 });
  const a = mk('manager-a');
  const b = mk('manager-b');
  let inside = 0;
  let overlaps = 0;
  const section = async (): Promise<void> => {
    inside++;
    if (inside > 1) overlaps++;
    await sleep(1);
    inside--;
  };
  await Promise.all(
    [a, b].map(async (l) => {
      for (let i = 0; i < 15; i++) {
        await l.withLock(section, { timeoutMs: 30_000 });
        await sleep(i % 3 === 0 ? 8 : 3); // around the idle give-up
      }
    }),
  );
  assert.equal(overlaps, 0);
  await a.close();
  await b.close();
});
