import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expandEnv, parseDuration } from './helm-release.js';

describe('helm release reconciler helpers', () => {
  test('overrideValues expand ${ENV} and $ENV as Go os.ExpandEnv (unset is empty)', () => {
    const env = { IMAGE: 'quay.io/x/y', TAG: 'v1' };
    assert.equal(expandEnv('${IMAGE}:$TAG', env), 'quay.io/x/y:v1');
    assert.equal(expandEnv('${UNSET}-x', env), '-x');
    assert.equal(expandEnv('plain', env), 'plain');
  });

  test('reconcile periods are Go durations', () => {
    assert.equal(parseDuration('1m'), 60_000);
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('soon'), undefined);
    assert.equal(parseDuration('5'), undefined);
    assert.equal(parseDuration(''), undefined);
  });
});
