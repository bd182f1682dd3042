import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { changedDefaults, describeChangedDefault } from './defaults.js';

const examples = (spec: unknown, kind = 'Beacon'): string => JSON.stringify([{ apiVersion: 'beacon.helm.binnacle.dev/v1alpha1', kind, metadata: { name: 'beacon-sample' }, spec }]);

describe('chart defaults a release changes', () => {
  it('finds changed and removed defaults, nested too, and leaves added ones out', () => {
    const before = examples({ replicaCount: 1, message: 'hello', service: { port: 80, type: 'ClusterIP' }, hosts: ['a'] });
    const after = examples({ replicaCount: 2, message: 'hello', service: { port: 80 }, hosts: ['a', 'b'], greeting: 'hi' });
    assert.deepEqual(changedDefaults(before, after), [
      { kind: 'Beacon', path: 'spec.replicaCount', from: 1, to: 2 },
      { kind: 'Beacon', path: 'spec.service.type', from: 'ClusterIP' },
      { kind: 'Beacon', path: 'spec.hosts', from: ['a'], to: ['a', 'b'] },
    ]);
  });

  it('compares kind with kind, and says nothing for unreadable or missing examples', () => {
    assert.deepEqual(changedDefaults(examples({ a: 1 }, 'Other'), examples({ a: 2 })), []);
    assert.deepEqual(changedDefaults(undefined, examples({ a: 2 })), []);
    assert.deepEqual(changedDefaults('not json', examples({ a: 2 })), []);
  });

  it('says what a changed default does to custom resources', () => {
    assert.equal(describeChangedDefault({ kind: 'Beacon', path: 'spec.replicaCount', from: 1, to: 2 }, 'beacon.v1.1.0'), 'Beacon spec.replicaCount: default 1 → 2 since beacon.v1.1.0: custom resources that leave it unset change with the upgrade');
    assert.match(describeChangedDefault({ kind: 'Beacon', path: 'spec.service.type', from: 'ClusterIP' }, 'beacon.v1.1.0'), /"ClusterIP" is no longer a default/);
  });
});
