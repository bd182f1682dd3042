import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { TerminalError } from '../util/errors.js';
import { Controller, reconcilerFunc, type ReconcileRequest } from './controller.js';
import { ControllerMetrics } from './metrics.js';

const logger = pino({ level: 'silent' });

function runFor(controller: Controller, ms: number): Promise<void> {
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  return sleep(ms).then(() => {
    stop.abort();
    return running;
  });
}

test('a failing reconcile is retried with backoff until it succeeds, then forgotten', async () => {
  const calls: number[] = [];
  let failuresLeft = 3;
  const c = new Controller({
    name: 't',
    logger,
    backoff: { baseDelayMs: 10, maxDelayMs: 100 },
    reconciler: reconcilerFunc(() => {
      calls.push(Date.now());
      if (failuresLeft-- > 0) return Promise.reject(new Error('transient'));
      return Promise.resolve(undefined);
    }),
  });
  c.enqueue('ns/a');
  await runFor(c, 300);
  assert.equal(calls.length, 4, 'three failures then one success');
  // The delays themselves (10, 20, 40 ms) are the backoff's, checked without a clock in workqueue.test.ts.
  assert.equal(c.queue.backoff.retries('ns/a'), 0, 'forgotten after success');
});

test('a TerminalError is not retried', async () => {
  let calls = 0;
  const c = new Controller({
    name: 't',
    logger,
    backoff: { baseDelayMs: 5, maxDelayMs: 10 },
    reconciler: reconcilerFunc(() => {
      calls++;
      return Promise.reject(new TerminalError('BadSpec', 'spec.packageName is required'));
    }),
  });
  c.enqueue('x');
  await runFor(c, 100);
  assert.equal(calls, 1);
});

test('requeueAfterMs looks at the key again after that long', async () => {
  const seen: ReconcileRequest[] = [];
  const c = new Controller({
    name: 't',
    logger,
    reconciler: reconcilerFunc((req) => {
      seen.push(req);
      return Promise.resolve(seen.length < 3 ? { requeueAfterMs: 20 } : undefined);
    }),
  });
  c.enqueue('default/poller');
  await runFor(c, 200);
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[0], { key: 'default/poller', namespace: 'default', name: 'poller' });
});

test('one key is never reconciled by two workers at once, and updates during a reconcile are not lost', async () => {
  let active = 0;
  let maxActive = 0;
  let calls = 0;
  const c = new Controller({
    name: 't',
    logger,
    workers: 4,
    reconciler: reconcilerFunc(async () => {
      calls++;
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(30);
      active--;
      return undefined;
    }),
  });
  const stop = new AbortController();
  const running = c.run(stop.signal);
  c.enqueue('k');
  await sleep(5);
  c.enqueue('k'); // arrives mid-reconcile
  c.enqueue('k'); // deduplicated with the previous one
  await sleep(150);
  stop.abort();
  await running;
  assert.equal(maxActive, 1);
  assert.equal(calls, 2, 'the mid-reconcile update causes exactly one more reconcile');
});

test('different keys are reconciled in parallel by N workers', async () => {
  let active = 0;
  let maxActive = 0;
  const c = new Controller({
    name: 't',
    logger,
    workers: 3,
    reconciler: reconcilerFunc(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(30);
      active--;
      return undefined;
    }),
  });
  for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) c.enqueue(k);
  await runFor(c, 150);
  assert.equal(maxActive, 3);
});

test('metrics count reconciles by result', async () => {
  const registry = new Registry();
  const c = new Controller({
    name: 'm',
    logger,
    metrics: new ControllerMetrics(registry),
    backoff: { baseDelayMs: 1000, maxDelayMs: 1000 },
    reconciler: reconcilerFunc((req) => (req.name === 'bad' ? Promise.reject(new Error('no')) : Promise.resolve(undefined))),
  });
  c.enqueue('good');
  c.enqueue('bad');
  await runFor(c, 50);
  const text = await registry.metrics();
  assert.match(text, /binnacle_reconcile_total\{controller="m",result="success"\} 1/);
  assert.match(text, /binnacle_reconcile_total\{controller="m",result="error"\} 1/);
  assert.match(text, /binnacle_reconcile_errors_total\{controller="m"\} 1/);
});

test("with controller-runtime's names (helm-operator run): reconciles, workqueue adds and retries, workers", async () => {
  const registry = new Registry();
  const c = new Controller({
    name: 'memcached-controller',
    logger,
    workers: 2,
    metrics: new ControllerMetrics(registry, 'controller-runtime'),
    backoff: { baseDelayMs: 1000, maxDelayMs: 1000 },
    reconciler: reconcilerFunc((req) => (req.name === 'bad' ? Promise.reject(new Error('no')) : Promise.resolve(undefined))),
  });
  c.enqueue('good');
  c.enqueue('good'); // already waiting: not another add
  c.enqueue('bad');
  await runFor(c, 50);
  const text = await registry.metrics();
  assert.match(text, /controller_runtime_reconcile_total\{controller="memcached-controller",result="success"\} 1/);
  assert.match(text, /controller_runtime_reconcile_errors_total\{controller="memcached-controller"\} 1/);
  assert.match(text, /workqueue_adds_total\{name="memcached-controller",controller="memcached-controller"\} 2/);
  assert.match(text, /workqueue_retries_total\{name="memcached-controller",controller="memcached-controller"\} 1/);
  assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="memcached-controller"\} 2/);
  assert.match(text, /controller_runtime_active_workers\{controller="memcached-controller"\} 0/);
  assert.doesNotMatch(text, /binnacle_/);
});

test('a reconcile that returns failed is retried with backoff from 1 s, counted, and forgotten after a success', async () => {
  let failed = true;
  const c = new Controller({ name: 't', logger, reconciler: reconcilerFunc(() => Promise.resolve(failed ? { failed: true, requeueAfterMs: 5 } : undefined)) });
  const stop = new AbortController();
  await c.processOne('ns/a', stop.signal);
  await sleep(30);
  assert.equal(c.queue.length, 0, 'not back after requeueAfterMs (5 ms): the backoff (1 s) decides');
  await c.processOne('ns/a', stop.signal);
  assert.equal(c.queue.backoff.retries('ns/a'), 2, 'each failure counts');
  assert.equal(c.queue.backoff.next('probe', 1000), 1000, 'the first retry of a failed reconcile waits 1 s, not the queue\'s 5 ms base');
  assert.equal(c.queue.backoff.next('probe', 1000), 2000);
  failed = false;
  await c.processOne('ns/a', stop.signal);
  assert.equal(c.queue.backoff.retries('ns/a'), 0);
  c.queue.shutDown();
});
