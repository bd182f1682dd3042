import { test } from 'node:test';
import assert from 'node:assert/strict';
import { durationMs, formatDuration, goDurationMs } from './duration.js';

test('durations: Go units and sums; a bare number is seconds for flags only', () => {
  assert.equal(durationMs('1m30s'), 90_000);
  assert.equal(durationMs('250ms'), 250);
  assert.equal(durationMs('1.5h'), 5_400_000);
  assert.equal(durationMs('30'), 30_000);
  assert.equal(goDurationMs('30'), undefined);
  assert.equal(goDurationMs('2h'), 7_200_000);
  assert.equal(goDurationMs('1m'), 60_000);
  assert.equal(goDurationMs('5'), undefined, 'a reconcile period is a Go duration: a bare number is not one');
  assert.equal(goDurationMs('soon'), undefined);
  assert.equal(goDurationMs(''), undefined);
  assert.equal(goDurationMs('1m junk'), undefined);
});

test('formatDuration writes what Go prints', () => {
  assert.equal(formatDuration(60_000), '1m0s');
  assert.equal(formatDuration(1), '1ms');
  assert.equal(formatDuration(3_690_000), '1h1m30s');
  assert.equal(formatDuration(1500), '1.5s');
});
