import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapLimit } from './map-limit.js';

test('answers in the order of the items, with at most `limit` calls in flight', async () => {
  let inFlight = 0;
  let most = 0;
  const gates: (() => void)[] = [];
  const run = mapLimit([1, 2, 3, 4, 5], 2, async (n) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise<void>((r) => gates.push(r));
    inFlight--;
    return n * 10;
  });
  // Release the calls last-started first, so answers come back out of order.
  while (gates.length > 0 || inFlight > 0) {
    await new Promise((r) => setImmediate(r));
    gates.pop()?.();
  }
  assert.deepEqual(await run, [10, 20, 30, 40, 50]);
  assert.equal(most, 2);
});

test('the first rejection rejects the whole and starts no more calls', async () => {
  const started: number[] = [];
  await assert.rejects(
    mapLimit([1, 2, 3, 4], 1, (n) => {
      started.push(n);
      return n === 2 ? Promise.reject(new Error('two')) : Promise.resolve(n);
    }),
    /two/,
  );
  assert.deepEqual(started, [1, 2]);
  assert.deepEqual(await mapLimit([], 4, () => Promise.resolve(1)), []);
});
