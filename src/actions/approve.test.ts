import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ANNOTATION_APPROVED_PLAN, type PendingPlan } from '../api/approval.js';
import { ALL_CRDS } from '../api/crds.js';
import { API_VERSION, type ClusterExtension } from '../api/types.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import { approvePlan, planSummary } from './approve.js';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const pending: PendingPlan = {
  digest: D2,
  supersedes: D1,
  changes: [{ name: 'op.v2.0.0', package: 'op', from: '1.0.0', to: '2.0.0' }],
  objects: { create: 1, update: 2, delete: 0, unchanged: 3 },
  crdSafety: [{ crd: 'things.example.com', safe: false, problems: ['m (r)'] }],
  missingPermissions: ['create deployments.apps in namespace ns'],
  since: '2026-11-26T12:00:00Z',
  message: '',
};

/** A cluster holding a ClusterExtension and a HelmOperator `op` with `status`, both read at resourceVersion `rv`. */
function fake(status: ClusterExtension['status']): { cluster: FakeCluster; client: FakeClient; rv: (kind: string) => string | undefined } {
  const cluster = new FakeCluster({ objects: ALL_CRDS });
  for (const kind of ['ClusterExtension', 'HelmOperator']) cluster.put({ apiVersion: API_VERSION, kind, metadata: { name: 'op' }, spec: {}, status });
  return { cluster, client: cluster.client(), rv: (kind) => cluster.get({ apiVersion: API_VERSION, kind, name: 'op' })?.metadata.resourceVersion };
}

test('approve writes the digest shown (or the one given, when it is the one shown) onto the object as read', async () => {
  const f = fake({ pendingPlan: pending });
  const read = f.rv('ClusterExtension');
  const r = await approvePlan(f.client, { kind: 'ClusterExtension', name: 'op' });
  assert.equal(r.digest, D2);
  assert.deepEqual(f.cluster.patched.map((p) => p.patch), [{ metadata: { resourceVersion: read, annotations: { [ANNOTATION_APPROVED_PLAN]: D2 } } }]);
  assert.equal(f.cluster.get({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'op' })?.metadata.annotations?.[ANNOTATION_APPROVED_PLAN], D2);
  await approvePlan(f.client, { kind: 'HelmOperator', name: 'op', digest: D2 });
  assert.deepEqual(f.cluster.log.filter((q) => q.verb === 'get').map((q) => q.kind), ['ClusterExtension', 'HelmOperator']);
  assert.deepEqual(f.cluster.patched.map((p) => p.ref.kind), ['ClusterExtension', 'HelmOperator']);
});

test('approve refuses a superseded digest, a digest not shown, a malformed one, and an object with no pending plan; nothing is written', async () => {
  const f = fake({ pendingPlan: pending });
  await assert.rejects(approvePlan(f.client, { kind: 'ClusterExtension', name: 'op', digest: D1 }), new RegExp(`plan ${D1} is not the one awaiting approval: it was superseded by plan ${D2}`));
  await assert.rejects(approvePlan(f.client, { kind: 'ClusterExtension', name: 'op', digest: `sha256:${'3'.repeat(64)}` }), new RegExp(`the plan awaiting approval is ${D2}`));
  await assert.rejects(approvePlan(f.client, { kind: 'ClusterExtension', name: 'op', digest: 'latest' }), /digest: latest is not a plan digest/);
  await assert.rejects(approvePlan(fake({}).client, { kind: 'ClusterExtension', name: 'op' }), /ClusterExtension op has no plan awaiting approval/);
  assert.deepEqual(f.cluster.writes, []);
});

test('the summary says the versions, the object counts, unsafe CRDs and missing RBAC', () => {
  assert.equal(planSummary(pending), 'op 1.0.0 → 2.0.0; 1 to create, 2 to change, 0 to delete, 3 unchanged; unsafe CRD changes: things.example.com; the ServiceAccount lacks 1 permission(s)');
});
