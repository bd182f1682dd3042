import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ObjectDrift } from '../apply/index.js';
import { driftOutcome } from './drift-report.js';

const replicas: ObjectDrift = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'op', namespace: 'ops', state: 'changed', fields: [{ path: 'spec.replicas', manifest: 1, live: 3 }] };
const secret: ObjectDrift = { apiVersion: 'v1', kind: 'Secret', name: 'creds', namespace: 'ops', state: 'changed', fields: [{ path: 'data.password', hidden: true }] };
const gone: ObjectDrift = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: 'ops', state: 'missing', fields: [] };

test('Warn: Drifted=True naming object and field, and one Event per new finding', () => {
  const out = driftOutcome({ revision: 2, drift: { mode: 'Warn', drifted: [replicas, secret] } }, { mode: 'Warn' }, undefined);
  assert.equal(out.condition?.status, true);
  assert.equal(out.condition?.reason, 'DriftDetected');
  assert.equal(out.condition?.message, 'drift left in place (spec.drift.mode Warn): Deployment ops/op: spec.replicas (manifest 1, live 3); Secret ops/creds: data.password (values hidden)');
  assert.deepEqual(out.events, [{ type: 'Warning', reason: 'DriftDetected', message: out.condition?.message }]);
  // The same finding on the next resync: no second Event.
  assert.deepEqual(driftOutcome({ revision: 2, drift: { mode: 'Warn', drifted: [replicas, secret] } }, { mode: 'Warn' }, out.condition?.message).events, []);
});

test('Repair: Drifted=False saying what was repaired, with an Event each time', () => {
  const out = driftOutcome({ revision: 1, drift: { mode: 'Repair', drifted: [replicas, gone] } }, undefined, 'drift repaired: x');
  assert.deepEqual(out.condition, { status: false, reason: 'DriftRepaired', message: 'drift repaired: Deployment ops/op: spec.replicas (manifest 1, live 3); ConfigMap ops/cfg: missing' });
  assert.equal(out.events[0]?.reason, 'DriftRepaired');
});

test('no drift, a new revision, and Off', () => {
  assert.equal(driftOutcome({ revision: 1, drift: { mode: 'Repair', drifted: [] } }, undefined, undefined).condition?.reason, 'NoDrift');
  assert.deepEqual(driftOutcome({ revision: 3 }, { mode: 'Warn' }, undefined), { condition: { status: false, reason: 'Applied', message: 'revision 3 applied' }, events: [] });
  assert.deepEqual(driftOutcome({ revision: 3 }, { mode: 'Off' }, 'whatever'), { condition: undefined, events: [] });
});
