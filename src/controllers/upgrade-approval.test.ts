import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BundlePlan, Plan } from '../actions/plan.js';
import { decideApproval, plannedFromPlan } from './upgrade-approval.js';

const bundlePlan = (over: Partial<BundlePlan> = {}): BundlePlan => ({
  bundle: { name: 'op.v2.0.0', package: 'op', version: '2.0.0', image: 'reg/op@sha256:aa', catalog: 'c', installed: false, dependsOn: [], provides: [] },
  bundleDeployment: 'op',
  from: '1.0.0',
  objects: [
    { action: 'update', kind: 'Deployment', name: 'op', namespace: 'ns', changes: ['spec.template'] },
    { action: 'unchanged', kind: 'ServiceAccount', name: 'op', namespace: 'ns' },
  ],
  crdSafety: [{ crd: 'things.example.com', safe: true, problems: [] }],
  missingPermissions: [],
  imageDigest: 'sha256:aa',
  manifestDigest: 'sha256:m1',
  ...over,
});
const plan = (b: BundlePlan): Plan => ({ bundles: [b], warnings: [] });

test('the plan digest covers the chosen digests, the rendered manifests and the CRD verdicts, not the live diff or RBAC', () => {
  const base = plannedFromPlan(plan(bundlePlan()));
  assert.match(base.digest, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(base.objects, { create: 0, update: 1, delete: 0, unchanged: 1, changed: ['~ Deployment ns/op'] });
  assert.deepEqual(base.changes, [{ name: 'op.v2.0.0', package: 'op', from: '1.0.0', to: '2.0.0', ref: 'reg/op@sha256:aa', digest: 'sha256:aa' }]);
  // Live drift: the object diff and what the ServiceAccount lacks change, the digest does not.
  const drifted = plannedFromPlan(plan(bundlePlan({ objects: [{ action: 'create', kind: 'Deployment', name: 'op', namespace: 'ns' }], missingPermissions: ['create deployments.apps in namespace ns'] })));
  assert.equal(drifted.digest, base.digest);
  assert.deepEqual(drifted.missingPermissions, ['create deployments.apps in namespace ns']);
  // What the upgrade would do: each changes the digest.
  for (const other of [{ manifestDigest: 'sha256:m2' }, { imageDigest: 'sha256:bb' }, { from: '1.5.0' }, { crdSafety: [{ crd: 'things.example.com', safe: false, problems: [{ rule: 'r', message: 'm' }] }] }]) {
    assert.notEqual(plannedFromPlan(plan(bundlePlan(other))).digest, base.digest, JSON.stringify(other));
  }
});

test('decideApproval: only the exact digest goes ahead; a changed digest supersedes, keeping the chain to the last unapproved one', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  const planned = { digest: 'sha256:b', changes: [] };
  const args = { planned, now, what: 'the upgrade to op.v2', approveCommand: 'binnacle approve op' };
  assert.equal(decideApproval({ ...args, approved: 'sha256:b', previous: undefined }).approved, true);
  const first = decideApproval({ ...args, approved: undefined, previous: { digest: 'sha256:a', changes: [], since: 'earlier', message: '' } });
  assert.equal(first.approved, false);
  assert.equal(first.pending?.supersedes, 'sha256:a');
  assert.equal(first.pending?.since, now.toISOString());
  const again = decideApproval({ ...args, approved: 'sha256:a', previous: first.pending, now: new Date('2026-11-26T13:00:00Z') });
  assert.equal(again.pending?.since, now.toISOString(), 'the same plan keeps its time');
  assert.equal(again.pending?.supersedes, 'sha256:a');
  assert.match(again.message, /the approval of sha256:a is not applied: that plan was superseded before it was applied/);
});
