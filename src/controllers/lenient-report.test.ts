import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DroppedField, SkippedObject } from '../apply/index.js';
import { lenientReport } from './lenient-report.js';

const dep = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'op', namespace: 'ops' };
const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', name: 'op', namespace: 'ops' };
const dropped: DroppedField[] = [
  { object: dep, path: 'spec.template.spec.containers[name="m"].env[name="A"].resources', schema: '/openapi/v3 apis/apps/v1' },
  { object: role, path: 'rules[0].apigroups', schema: '/openapi/v3 apis/rbac.authorization.k8s.io/v1', renamedTo: 'apiGroups' },
];
const skipped: SkippedObject[] = [{ object: { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', name: 'op', namespace: 'ops' }, reason: 'the cluster does not serve monitoring.coreos.com/v1 ServiceMonitor: scrapes' }];

test('dropped and renamed fields become warnings, and an Event each the first time', () => {
  const first = lenientReport({ droppedFields: dropped, skipped: [] }, {});
  assert.deepEqual(first.warnings.map((w) => [w.object, w.field]), [
    ['Deployment ops/op', 'spec.template.spec.containers[name="m"].env[name="A"].resources'],
    ['Role ops/op', 'rules[0].apigroups'],
  ]);
  assert.match(first.warnings[0]?.message ?? '', /not declared by its schema \(\/openapi\/v3 apis\/apps\/v1\); dropped/);
  assert.match(first.warnings[1]?.message ?? '', /applied as apiGroups/);
  assert.deepEqual(first.events.map((e) => [e.type, e.reason]), [
    ['Warning', 'UnknownFieldDropped'],
    ['Warning', 'FieldNameCaseCorrected'],
  ]);
  assert.match(first.events[0]?.message ?? '', /^Deployment ops\/op: spec\.template.*resources is not declared/);
  assert.equal(first.skipped, undefined, 'nothing skipped: no condition');

  const again = lenientReport({ droppedFields: dropped, skipped: [] }, { warnings: first.warnings });
  assert.deepEqual(again.events, [], 'nothing new, no Event');
});

test('skipped objects are named in the condition, with an Event when the set changes', () => {
  const first = lenientReport({ droppedFields: [], skipped }, {});
  assert.equal(first.skipped?.reason, 'APINotServed');
  assert.equal(first.skipped?.message, 'skipped 1 object of optional APIs the cluster does not serve, applied once it does: ServiceMonitor ops/op (the cluster does not serve monitoring.coreos.com/v1 ServiceMonitor: scrapes)');
  assert.deepEqual(first.events.map((e) => e.reason), ['OptionalObjectsSkipped']);
  assert.deepEqual(lenientReport({ droppedFields: [], skipped }, { skippedMessage: first.skipped?.message }).events, []);
});

test('many dropped fields are capped in status and in Events', () => {
  const many: DroppedField[] = Array.from({ length: 150 }, (_, i) => ({ object: dep, path: `spec.f${i}`, schema: 's' }));
  const r = lenientReport({ droppedFields: many }, {});
  assert.equal(r.warnings.length, 100);
  assert.equal(r.warnings.at(-1)?.message, '51 more fields dropped');
  assert.equal(r.events.length, 21);
  assert.match(r.events.at(-1)?.message ?? '', /^130 more undeclared fields/);
});
