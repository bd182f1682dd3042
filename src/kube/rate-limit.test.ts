import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RETRY_AFTER_S, RateLimiters, retryAfterSeconds, retryDelayMs, RETRY_BACKOFF_MAX_MS, RETRY_JITTER, TokenBucket } from './rate-limit.js';
import { FakeClock } from './fake-clock.test-helper.js';

describe('TokenBucket', () => {
  it('lets a burst through at once, then one request per 1/qps seconds', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 5, burst: 3 }, clock);
    for (let i = 0; i < 3; i++) assert.equal(await bucket.take(), 0);
    // Empty: the next token comes in 200 ms; waiting for it moves the clock.
    assert.equal(await bucket.take(), 200);
    assert.equal(await bucket.take(), 200);
    assert.deepEqual(clock.slept, [200, 200]);
  });

  it('refills with time, never above the burst', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 10, burst: 2 }, clock);
    bucket.reserve();
    bucket.reserve();
    assert.equal(bucket.reserve(), 100); // the third waits a tenth of a second
    clock.t += 10_000; // long idle: full again, but only to the burst
    assert.ok(bucket.isFull());
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 100);
  });

  it('queues waiters in order: each one reserved waits one interval longer than the one before', () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 4, burst: 1 }, clock);
    assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 250, 500, 750]);
  });

  it('gives back the token of a wait that was aborted', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket({ qps: 1, burst: 1 }, clock);
    await bucket.take();
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(bucket.take(ac.signal));
    // The aborted waiter's token came back: the next waits one interval, not two.
    assert.equal(bucket.reserve(), 1000);
  });

  it('refuses a limit that is no limit', () => {
    assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }, new FakeClock()), RangeError);
    assert.throws(() => new TokenBucket({ qps: 1, burst: 0 }, new FakeClock()), RangeError);
    assert.throws(() => new RateLimiters({ qps: Number.NaN, burst: 1 }, new FakeClock()), RangeError);
  });
});

describe('RateLimiters', () => {
  it('has one bucket per identity: one emptied does not hold back another', () => {
    const limiters = new RateLimiters({ qps: 1, burst: 2 }, new FakeClock());
    const a = limiters.for('a');
    a.reserve();
    a.reserve();
    assert.equal(a.reserve(), 1000);
    assert.equal(limiters.for('b').reserve(), 0);
    assert.equal(limiters.for('a'), a);
  });

  it('forgets buckets that are full again once it holds many identities', () => {
    const clock = new FakeClock();
    const limiters = new RateLimiters({ qps: 1, burst: 1 }, clock);
    for (let i = 0; i < 256; i++) limiters.for(`sa-${i}`).reserve();
    limiters.for('busy').reserve();
    assert.equal(limiters.size, 257); // every bucket is still empty: none is forgotten
    clock.t += 5_000;
    limiters.for('busy').reserve();
    limiters.for('new').reserve();
    assert.ok(limiters.size <= 2, `kept ${limiters.size}`);
  });
});

describe('retries the API server asks for', () => {
  it("reads Retry-After as client-go does: whole seconds, held to API Priority and Fairness' largest", () => {
    assert.equal(retryAfterSeconds('1'), 1);
    assert.equal(retryAfterSeconds(['3']), 3);
    assert.equal(retryAfterSeconds('600'), MAX_RETRY_AFTER_S);
    assert.equal(retryAfterSeconds('-2'), 0);
    assert.equal(retryAfterSeconds('Wed, 21 Oct 2026 07:28:00 GMT'), undefined);
    assert.equal(retryAfterSeconds(undefined), undefined);
  });

  it('retries a 429 or a 5xx with Retry-After, nothing else', () => {
    const none = (): number => 0;
    assert.equal(retryDelayMs(429, '1', 1, none), 1000);
    assert.equal(retryDelayMs(503, '2', 1, none), 2000);
    assert.equal(retryDelayMs(500, '1', 1, none), 1000);
    assert.equal(retryDelayMs(429, undefined, 1, none), undefined);
    assert.equal(retryDelayMs(500, undefined, 1, none), undefined);
    assert.equal(retryDelayMs(409, '1', 1, none), undefined);
    assert.equal(retryDelayMs(404, '1', 1, none), undefined);
  });

  it('waits the larger of Retry-After and a backoff that doubles to a bound, lengthened by jitter', () => {
    const none = (): number => 0;
    const waits = Array.from({ length: 10 }, (_, i) => retryDelayMs(429, '1', i + 1, none));
    assert.deepEqual(waits, [1000, 1000, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000]);
    assert.equal(retryDelayMs(429, '0', 1, none), 250);
    assert.equal(retryDelayMs(429, '20', 9, none), 20_000);
    assert.ok(RETRY_BACKOFF_MAX_MS < MAX_RETRY_AFTER_S * 1000);
    const most = retryDelayMs(429, '1', 1, () => 0.999_999) ?? 0;
    assert.ok(most > 1000 && most < 1000 * (1 + RETRY_JITTER), String(most));
  });
});
