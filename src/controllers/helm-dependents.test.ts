import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { isDependentChange, isOwnWrite, releaseKeyOf } from './helm-dependents.js';

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

test("Binnacle's own writes (an upgrade's patch) do not re-queue; anyone else's do, and so does a change no entry explains", () => {
  const entry = (manager: string, time: string, operation = 'Apply'): Record<string, unknown> => ({ manager, operation, time, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
  const at = (rv: string, replicas: number, managedFields: Record<string, unknown>[]): KubeObject => {
    const d = dep(rv, { spec: { replicas } });
    (d.metadata as { managedFields?: unknown }).managedFields = managedFields;
    return d;
  };
  const before = at('1', 1, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update')]);
  const ours = at('2', 4, [entry('binnacle', '2026-11-27T07:01:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update')]);
  assert.equal(isOwnWrite(before, ours), true);
  assert.equal(isDependentChange(before, ours), false, "the release's own upgrade");
  const handover = at('2', 4, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update'), entry('binnacle-drift-ignored', '2026-11-27T07:01:00Z')]);
  assert.equal(isDependentChange(before, handover), false, 'the drift handover is Binnacle too');
  const byHand = at('2', 5, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update'), entry('kubectl-edit', '2026-11-27T07:01:00Z', 'Update')]);
  assert.equal(isDependentChange(before, byHand), true, 'kubectl edit');
  const both = at('2', 5, [entry('binnacle', '2026-11-27T07:01:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update'), entry('kubectl-edit', '2026-11-27T07:01:00Z', 'Update')]);
  assert.equal(isDependentChange(before, both), true, 'ours and someone else in one event');
  const patchedByABinnacleClient = at('2', 5, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update'), entry('binnacle', '2026-11-27T07:01:00Z', 'Update')]);
  assert.equal(isDependentChange(before, patchedByABinnacleClient), true, "a plain patch under Binnacle's user agent may be anyone's edit");
  const unexplained = at('2', 5, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update')]);
  assert.equal(isDependentChange(before, unexplained), true, 'no entry changed: not proven ours');
  const controller = at('2', 1, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:01:00Z', 'Update')]);
  controller.metadata.annotations = { ...controller.metadata.annotations, 'deployment.kubernetes.io/revision': '2' };
  assert.equal(isDependentChange(before, controller), true, "another controller's write still re-queues");
});
