import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { isDependentChange, releaseKeyOf } from './helm-dependents.js';

const dep = (rv: string, extra: Partial<KubeObject> & { status?: unknown; spec?: unknown } = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', namespace: 'ns', resourceVersion: rv, annotations: { 'meta.helm.sh/release-name': 'pg', 'meta.helm.sh/release-namespace': 'apps' } },
  spec: { replicas: 1 },
  ...extra,
});

test('a dependent re-queues on changes its release controls, not on status or resyncs', () => {
  assert.equal(isDependentChange(dep('1'), dep('1')), false, 'a resync delivers the same object');
  assert.equal(isDependentChange(dep('1', { status: { replicas: 0 } }), dep('2', { status: { replicas: 1 } })), false, 'status only');
  assert.equal(isDependentChange(dep('1'), { ...dep('2'), metadata: { ...dep('2').metadata, managedFields: [{ manager: 'x' }] } }), false, 'bookkeeping only');
  assert.equal(isDependentChange(dep('1'), dep('2', { spec: { replicas: 5 } })), true, 'scaled by hand');
  const relabelled = dep('2');
  relabelled.metadata.labels = { app: 'other' };
  assert.equal(isDependentChange(dep('1'), relabelled), true, 'labels changed');
});

test('the CR a dependent belongs to comes from Helm’s release annotations', () => {
  assert.equal(releaseKeyOf(dep('1')), 'apps/pg');
  assert.equal(releaseKeyOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), undefined);
});
