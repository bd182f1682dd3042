import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { BinnacleError, InputError, TerminalError, ValidationError, ValidationResult, type ErrorClass } from '../util/errors.js';
import { Controller, failureAction, reconcilerFunc, sleepStretch, WorkerPermits, type ControllerOptions, type ReconcileRequest, type Reconciler } from './controller.js';
import { sleepWithoutWorker } from './reconcile-context.js';
import { apiErrorFromResponse } from './errors.js';
import { ControllerMetrics } from './metrics.js';
import { Informer, type ListWatcher } from './informer.js';

const logger = pino({ level: 'silent' });

/** A controller named t that logs nothing, reconciling with fn; more sets the rest. */
function testController(fn: Reconciler['reconcile'], more: Partial<ControllerOptions> = {}): Controller {
  return new Controller({ name: 't', logger, ...more, reconciler: reconcilerFunc(fn) });
}

/** A controller of `workers` workers whose reconciles take 30 ms each: it counts them, and the most running at once. */
function slowController(workers: number): { c: Controller; seen: { calls: number; maxActive: number } } {
  const seen = { calls: 0, maxActive: 0 };
  let active = 0;
  const c = testController(
    async () => {
      seen.calls++;
      active++;
      seen.maxActive = Math.max(seen.maxActive, active);
      await sleep(30);
      active--;
      return undefined;
    },
    { workers },
  );
  return { c, seen };
}

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
  const c = testController(
    () => {
      calls.push(Date.now());
      if (failuresLeft-- > 0) return Promise.reject(new Error('transient'));
      return Promise.resolve(undefined);
    },
    { backoff: { baseDelayMs: 10, maxDelayMs: 100 } },
  );
  c.enqueue('ns/a');
  await runFor(c, 300);
  assert.equal(calls.length, 4, 'three failures then one success');
  // The delays themselves (10, 20, 40 ms) are the backoff's, checked without a clock in workqueue.test.ts.
  assert.equal(c.queue.backoff.retries('ns/a'), 0, 'forgotten after success');
});

test('a TerminalError is not retried', async () => {
  let calls = 0;
  const c = testController(
    () => {
      calls++;
      return Promise.reject(new TerminalError('BadSpec', 'spec.packageName is required'));
    },
    { backoff: { baseDelayMs: 5, maxDelayMs: 10 } },
  );
  c.enqueue('x');
  await runFor(c, 100);
  assert.equal(calls, 1);
});

test('requeueAfterMs looks at the key again after that long', async () => {
  const seen: ReconcileRequest[] = [];
  const c = testController((req) => {
    seen.push(req);
    return Promise.resolve(seen.length < 3 ? { requeueAfterMs: 20 } : undefined);
  });
  c.enqueue('default/poller');
  await runFor(c, 200);
  assert.equal(seen.length, 3);
  assert.deepEqual(seen[0], { key: 'default/poller', namespace: 'default', name: 'poller' });
});

test('one key is never reconciled by two workers at once, and updates during a reconcile are not lost', async () => {
  const { c, seen } = slowController(4);
  const stop = new AbortController();
  const running = c.run(stop.signal);
  c.enqueue('k');
  await sleep(5);
  c.enqueue('k'); // arrives mid-reconcile
  c.enqueue('k'); // deduplicated with the previous one
  await sleep(150);
  stop.abort();
  await running;
  assert.equal(seen.maxActive, 1);
  assert.equal(seen.calls, 2, 'the mid-reconcile update causes exactly one more reconcile');
});

test('different keys are reconciled in parallel by N workers', async () => {
  const { c, seen } = slowController(3);
  for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) c.enqueue(k);
  await runFor(c, 150);
  assert.equal(seen.maxActive, 3);
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
  const c = testController(() => Promise.resolve(failed ? { failed: true, requeueAfterMs: 5 } : undefined));
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

test('a failed reconcile with retryCapMs backs off from 1 s but never waits longer than the cap', async () => {
  const c = testController(() => Promise.resolve({ failed: true, retryCapMs: 3000 }));
  const stop = new AbortController();
  const delays: number[] = [];
  const addAfter = c.queue.addAfter.bind(c.queue);
  c.queue.addAfter = (key: string, ms: number) => {
    delays.push(ms);
    addAfter(key, ms);
  };
  for (let i = 0; i < 4; i++) await c.processOne('ns/a', stop.signal);
  assert.deepEqual(delays, [1000, 2000, 3000, 3000]);
  c.queue.shutDown();
});

test('failureAction: the one rule from an error class to what the runner does next', () => {
  // Only a TerminalError (the reconciler's verdict on the object as written) waits for a change.
  const byClass: Record<ErrorClass, ReturnType<typeof failureAction>> = { transient: 'retry', internal: 'retry-as-bug', input: 'retry', terminal: 'retry' };
  for (const [cls, action] of Object.entries(byClass)) assert.equal(failureAction(new BinnacleError(cls as ErrorClass, 'X', 'x')), action, cls);
  assert.equal(failureAction(new TerminalError('BadSpec', 'x')), 'wait-for-change');
  // Corrupt content from a registry is terminal for that pull, but the registry may be mended: retried.
  assert.equal(failureAction(new BinnacleError('terminal', 'OCI_DIGEST_MISMATCH', 'blob: content digest sha256:b does not match')), 'retry');
  assert.equal(failureAction(new InputError('BAD_FIELD', 'x', { field: 'spec.x' })), 'retry');
  assert.equal(failureAction(new ValidationError(new ValidationResult('bundle').error('r', 'm'))), 'retry');
  assert.equal(failureAction(apiErrorFromResponse(503, '', 'get X')), 'retry');
  // The cluster's own refusal may end without the object changing (a role granted, a CRD installed): retried.
  assert.equal(failureAction(apiErrorFromResponse(422, '', 'create X')), 'retry');
  assert.equal(failureAction(apiErrorFromResponse(403, '', 'create X')), 'retry');
  assert.equal(failureAction(new BinnacleError('input', 'APPLY', 'apply failed', { cause: apiErrorFromResponse(404, '', 'get X') })), 'retry');
  // Not ours: a dropped connection may pass; anything else is a bug Binnacle did not classify.
  assert.equal(failureAction(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), 'retry');
  assert.equal(failureAction(new TypeError("cannot read properties of undefined (reading 'spec')")), 'retry-as-bug');
  assert.equal(failureAction('a string'), 'retry-as-bug');
  // A wrapper that adds context keeps a transient cause retryable.
  assert.equal(failureAction(new BinnacleError('input', 'HELM_RENDER', 'lookup failed', { cause: apiErrorFromResponse(503, '', 'get ConfigMap') })), 'retry');
});

test('a reconcile that throws is requeued or not by its class; a bug is logged with its stack', async () => {
  const lines: { level: number; msg: string; stack?: string; code?: string }[] = [];
  const captured = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) });
  const cases: { err: Error; retries: number; level: number; msg: RegExp; stack: boolean }[] = [
    { err: new BinnacleError('transient', 'OCI_UNREACHABLE', 'registry away'), retries: 1, level: 40, msg: /retrying with backoff/, stack: false },
    { err: new BinnacleError('input', 'BUNDLE_NO_NAMESPACE', 'an install namespace is required'), retries: 1, level: 40, msg: /retrying with backoff/, stack: false },
    { err: new BinnacleError('terminal', 'OCI_DIGEST_MISMATCH', 'corrupt'), retries: 1, level: 40, msg: /retrying with backoff/, stack: false },
    { err: new TerminalError('InvalidSpec', 'spec.x cannot work'), retries: 0, level: 50, msg: /not retrying until the object changes/, stack: false },
    { err: new BinnacleError('internal', 'HELM_ENGINE_PROTOCOL', 'not JSON'), retries: 1, level: 50, msg: /a bug in Binnacle/, stack: true },
    { err: new TypeError('x is undefined'), retries: 1, level: 50, msg: /a bug in Binnacle/, stack: true },
  ];
  for (const [i, k] of cases.entries()) {
    const c = new Controller({ name: 'classes', logger: captured, backoff: { baseDelayMs: 60_000, maxDelayMs: 60_000 }, reconciler: reconcilerFunc(() => Promise.reject(k.err)) });
    lines.length = 0;
    await c.processOne(`k${i}`, new AbortController().signal);
    c.queue.shutDown();
    assert.equal(c.queue.backoff.retries(`k${i}`), k.retries, `case ${i}: requeued with backoff or not`);
    const line = lines.find((l) => k.msg.test(l.msg));
    assert.ok(line !== undefined, `case ${i}: logged ${String(k.msg)}: ${JSON.stringify(lines)}`);
    assert.equal(line.level, k.level, `case ${i}: log level`);
    assert.equal(typeof line.stack === 'string' && line.stack.length > 0, k.stack, `case ${i}: stack logged`);
  }
});

/** Waits until `cond` holds, looking every 5 ms; the test's timeout bounds it. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await sleep(5);
}

test('a reconcile asleep without its worker lets other keys run; its own key is never reconciled twice at once', { timeout: 30_000 }, async () => {
  const order: string[] = [];
  let aMayFinish = false;
  let runningA = 0;
  let maxRunningA = 0;
  let awake = 0;
  let maxAwake = 0;
  const c = testController(
    async (req) => {
      awake++;
      maxAwake = Math.max(maxAwake, awake);
      order.push(`start ${req.key}`);
      if (req.key === 'ns/a') {
        runningA++;
        maxRunningA = Math.max(maxRunningA, runningA);
        // As a hook wait does on its first run: look, sleep without the worker, look again.
        const first = order.filter((x) => x === 'start ns/a').length === 1;
        while (first && !aMayFinish) {
          awake--;
          await sleepWithoutWorker(5);
          awake++;
        }
        runningA--;
      }
      order.push(`end ${req.key}`);
      awake--;
      return undefined;
    },
    { workers: 1 },
  );
  const stop = new AbortController();
  const running = c.run(stop.signal);
  c.enqueue('ns/a');
  await until(() => order.includes('start ns/a'));
  await sleep(20); // a sleeps and wakes while the queue is empty: it must get its worker back
  c.enqueue('ns/b');
  c.enqueue('ns/a'); // changed again while its reconcile waits: looked at after, not beside it
  await until(() => order.includes('end ns/b'));
  assert.ok(!order.includes('end ns/a'), 'b ran to its end on the one worker while a slept');
  assert.equal(order.filter((x) => x === 'start ns/a').length, 1, 'a is in flight: not started again');
  aMayFinish = true;
  await until(() => order.filter((x) => x === 'end ns/a').length === 2);
  stop.abort();
  await running;
  assert.equal(maxRunningA, 1);
  assert.equal(maxAwake, 1, 'never more reconciles awake than workers');
});

test('the permits: one given back serves a reconcile coming back before a new key; sleeps of one reconcile give back one permit', async () => {
  const p = new WorkerPermits(1);
  await p.acquire();
  const got: string[] = [];
  const starting = p.acquire().then(() => got.push('new key'));
  const returning = p.acquire(true).then(() => got.push('returning'));
  p.release();
  await returning;
  assert.deepEqual(got, ['returning']);
  p.release();
  await starting;
  assert.deepEqual(got, ['returning', 'new key']);

});

test('two concurrent sleeps of one reconcile give back one worker; a sleep it leaves behind takes none', { timeout: 30_000 }, async () => {
  let awake = 0;
  let maxAwake = 0;
  const done: string[] = [];
  const c = testController(
    async (req) => {
      if (req.key === 'ns/a') {
        await Promise.all([sleepWithoutWorker(40), sleepWithoutWorker(40)]);
        void sleepWithoutWorker(5); // outlives the reconcile
      } else {
        awake++;
        maxAwake = Math.max(maxAwake, awake);
        await sleep(15);
        awake--;
      }
      done.push(req.key);
      return undefined;
    },
    { workers: 1 },
  );
  const stop = new AbortController();
  const running = c.run(stop.signal);
  c.enqueue('ns/a');
  await sleep(5);
  for (const k of ['ns/b', 'ns/c', 'ns/d']) c.enqueue(k);
  await until(() => done.length === 4);
  await sleep(20); // a's left-behind sleep is over
  for (const k of ['ns/e', 'ns/f']) c.enqueue(k);
  await until(() => done.length === 6);
  stop.abort();
  await running;
  assert.equal(maxAwake, 1, 'one worker: b, c, d, e and f one at a time');
});

test('many reconciles asleep without their workers look again less often, together about as often as the workers would', () => {
  assert.equal(sleepStretch(1000, 1, 16), 1000);
  assert.equal(sleepStretch(1000, 16, 16), 1000);
  assert.equal(sleepStretch(1000, 160, 16), 10_000);
  // Never past 30 s, nor past what is left of the caller's deadline; never shorter than asked.
  assert.equal(sleepStretch(1000, 1600, 16), 30_000);
  assert.equal(sleepStretch(1000, 1600, 16, 5000), 5000);
  assert.equal(sleepStretch(1000, 1600, 16, 200), 1000);
});

test('the reconciles asleep without a worker are bounded, 8 a worker: past that a sleep keeps its worker, and a free worker always takes the next key', { timeout: 30_000 }, async () => {
  let inFlight = 0;
  let most = 0;
  let release = false;
  let done = 0;
  let otherDone = false;
  const c = testController(
    async (req) => {
      if (req.key === 'other/x') {
        otherDone = true;
        return undefined;
      }
      inFlight++;
      most = Math.max(most, inFlight);
      while (!release) await sleepWithoutWorker(5);
      inFlight--;
      done++;
      return undefined;
    },
    { workers: 2 },
  );
  const stop = new AbortController();
  const running = c.run(stop.signal);
  for (let i = 0; i < 17; i++) c.enqueue(`ns/k${i}`);
  await until(() => inFlight >= 17);
  await sleep(50);
  // Sixteen asleep without their workers, the seventeenth asleep holding one: the other worker is free.
  assert.equal(most, 17);
  c.enqueue('other/x');
  await until(() => otherDone);
  for (let i = 17; i < 100; i++) c.enqueue(`ns/k${i}`);
  await sleep(50);
  assert.equal(most, 18, 'the second worker too sleeps holding itself: sixteen asleep without, two with');
  release = true;
  await until(() => done === 100);
  stop.abort();
  await running;
});

test('reconciles coming back from their sleeps go first, but a new key is served soon all the same', { timeout: 30_000 }, async () => {
  const order: string[] = [];
  const c = testController(
    async (req) => {
      order.push(`start ${req.key}`);
      if (req.key !== 'ns/new') {
        for (let i = 0; i < 40; i++) {
          await sleepWithoutWorker(2);
          await sleep(5); // work done holding the worker
        }
      }
      order.push(`end ${req.key}`);
      return undefined;
    },
    { workers: 1 },
  );
  const stop = new AbortController();
  const running = c.run(stop.signal);
  c.enqueue('ns/a');
  c.enqueue('ns/b');
  await until(() => order.includes('start ns/b'));
  c.enqueue('ns/new');
  await until(() => order.includes('end ns/a') && order.includes('end ns/b') && order.includes('end ns/new'));
  stop.abort();
  await running;
  const at = (x: string): number => order.indexOf(x);
  assert.ok(at('end ns/new') < at('end ns/a') || at('end ns/new') < at('end ns/b'), `the new key waited for both: ${order.join(', ')}`);
});

test('stopped before its caches synced, a controller returns at once and reconciles nothing (a follower that wins the lease at once)', async () => {
  let calls = 0;
  // An informer whose list never answers: its cache never syncs.
  const hanging: ListWatcher = {
    list: () => new Promise<never>(() => undefined),
    watch: async function* () {
      yield await new Promise<never>(() => undefined);
    },
  };
  const neverSyncs = new Informer(hanging, 'v1', 'ConfigMap', { logger });
  const c = testController(() => {
    calls++;
    return Promise.resolve(undefined);
  }).watch(neverSyncs);
  c.enqueue('a');
  const stop = new AbortController();
  const running = c.run(stop.signal);
  await sleep(50);
  stop.abort();
  const ended = await Promise.race([running.then(() => 'returned'), sleep(5_000).then(() => 'still running')]);
  assert.equal(ended, 'returned');
  assert.equal(calls, 0);
  // Already stopped when run: returns too.
  assert.equal(await Promise.race([c.run(stop.signal).then(() => 'returned'), sleep(5_000).then(() => 'still running')]), 'returned');
});

test('dropQueuedOnStop: stopped, a controller finishes the reconcile in flight and drops what is queued; by default it drains the queue', async () => {
  for (const drop of [true, false]) {
    const done: string[] = [];
    const c = testController(
      async (req) => {
        await sleep(50);
        done.push(req.name);
        return undefined;
      },
      { workers: 1, dropQueuedOnStop: drop },
    );
    for (const k of ['a', 'b', 'c', 'd']) c.enqueue(k);
    const stop = new AbortController();
    const running = c.run(stop.signal);
    await sleep(20);
    stop.abort();
    await running;
    assert.deepEqual(done, drop ? ['a'] : ['a', 'b', 'c', 'd'], `dropQueuedOnStop ${String(drop)}`);
  }
});
