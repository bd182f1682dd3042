import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { readAhead } from './read-ahead.js';

/** Collects what readAhead yields, and the order items were started in and how many ran at once. */
async function run(items: number[], ahead: number, delayOf: (n: number) => number, failAt?: number): Promise<{ got: number[]; startedOrder: number[]; maxRunning: number; error?: unknown }> {
  const startedOrder: number[] = [];
  let running = 0;
  let maxRunning = 0;
  const got: number[] = [];
  try {
    for await (const v of readAhead(items, ahead, async (n) => {
      startedOrder.push(n);
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(delayOf(n));
      running--;
      if (n === failAt) throw new Error(`item ${n} failed`);
      return n * 10;
    })) {
      got.push(v);
    }
  } catch (error) {
    return { got, startedOrder, maxRunning, error };
  }
  return { got, startedOrder, maxRunning };
}

describe('readAhead', () => {
  it('yields in the items order however long each takes, with at most ahead + 1 running', async () => {
    const r = await run([1, 2, 3, 4, 5, 6], 2, (n) => (n % 2 === 0 ? 1 : 15));
    assert.deepEqual(r.got, [10, 20, 30, 40, 50, 60]);
    assert.deepEqual(r.startedOrder, [1, 2, 3, 4, 5, 6]);
    assert.equal(r.maxRunning, 3);
  });

  it('with ahead 0 runs one at a time', async () => {
    const r = await run([1, 2, 3], 0, () => 2);
    assert.deepEqual(r.got, [10, 20, 30]);
    assert.equal(r.maxRunning, 1);
  });

  it('throws a failure at its turn, after the items before it, and leaves no rejection unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Item 2 fails at once while item 1 is still running; items 3 and 4 were started ahead and fail too.
      const r = await run([1, 2, 3, 4], 3, (n) => (n === 1 ? 20 : 1), 2);
      assert.deepEqual(r.got, [10]);
      assert.match(String(r.error), /item 2 failed/);
      const r2 = await run([1, 2, 3, 4], 3, () => 1, 3);
      assert.deepEqual(r2.got, [10, 20]);
      assert.match(String(r2.error), /item 3 failed/);
      await sleep(30);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('an empty list yields nothing', async () => {
    assert.deepEqual((await run([], 4, () => 1)).got, []);
  });
});
