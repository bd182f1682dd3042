import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExponentialBackoff, WorkQueue } from './workqueue.js';

test('a key added many times waits in the queue once', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.add('b');
  q.add('a');
  q.add('a');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.length, 0);
});

test('a key being processed is not handed out twice, and is re-queued on done if added meanwhile', async () => {
  const q = new WorkQueue();
  q.add('a');
  const first = await q.get();
  assert.equal(first, 'a');
  q.add('a'); // an update arrives while a worker holds 'a'
  assert.equal(q.length, 0, 'not queued while processing');
  let second: string | undefined;
  const waiting = q.get().then((k) => (second = k));
  await sleep(5);
  assert.equal(second, undefined, 'no second worker gets the key');
  q.done('a');
  await waiting;
  assert.equal(second, 'a', 'the update is processed after done');
});

test('backoff doubles per key and forget resets it', () => {
  const b = new ExponentialBackoff({ baseDelayMs: 5, maxDelayMs: 40 });
  assert.deepEqual([b.next('x'), b.next('x'), b.next('x'), b.next('x'), b.next('x')], [5, 10, 20, 40, 40]);
  assert.equal(b.next('y'), 5, 'keys back off independently');
  assert.equal(b.retries('x'), 5);
  b.forget('x');
  assert.equal(b.next('x'), 5);
});

test('addRateLimited delays by the backoff and addAfter keeps the earliest time', async () => {
  const q = new WorkQueue({ baseDelayMs: 30, maxDelayMs: 1000 });
  const t0 = Date.now();
  q.addRateLimited('k');
  assert.equal(q.length, 0);
  assert.equal(await q.get(), 'k');
  assert.ok(Date.now() - t0 >= 25, 'waited about one base delay');
  q.done('k');
  q.addAfter('j', 10_000);
  q.addAfter('j', 10);
  const t1 = Date.now();
  assert.equal(await q.get(), 'j');
  assert.ok(Date.now() - t1 < 5_000, 'the earlier time wins');
});

test('shutDown wakes waiting workers with undefined and drops timers', async () => {
  const q = new WorkQueue();
  const waiting = q.get();
  q.addAfter('later', 50);
  q.shutDown();
  assert.equal(await waiting, undefined);
  q.add('ignored');
  assert.equal(await q.get(), undefined);
});

test('shutDownWithDrain waits for in-flight keys', async () => {
  const q = new WorkQueue();
  q.add('a');
  const key = await q.get();
  let drained = false;
  const draining = q.shutDownWithDrain().then(() => (drained = true));
  await sleep(5);
  assert.equal(drained, false);
  q.done(key ?? '');
  await draining;
  assert.equal(drained, true);
});
