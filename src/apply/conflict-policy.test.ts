/**
 * The conflict policy (a field another field manager holds with another value) and taking
 * ownership, over the fake cluster (which answers conflicts as the API server does: 409, one
 * FieldManagerConflict cause per field) and the real release engine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIELD_MANAGER } from '../kube/client.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { managedFieldsOf, type KubeObject } from '../kube/types.js';
import { releaseEngine } from './engine.test-helper.js';
import type { ApplyRequest } from './types.js';

const release = { name: 'app', namespace: 'team-a' };
const owner = { kind: 'BundleDeployment', name: 'app' };
const cmRef = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'settings' };
const cm = (data: Record<string, string>, metadata: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a', ...metadata }, data });
const request = (data: Record<string, string>, more: Partial<ApplyRequest> = {}): ApplyRequest => ({ owner, release, objects: [cm(data)], healthTimeoutMs: 200, ...more });
const holders = (o: KubeObject | undefined, field: string): string[] => (o === undefined ? [] : managedFieldsOf(o).filter((e) => JSON.stringify(e.fieldsV1 ?? {}).includes(`"f:${field}"`)).map((e) => e.manager ?? ''));

/** Revision 1 deployed with data.a = 1, then `kubectl edit` sets data.a = x (its field now). */
async function editedByHand(): Promise<FakeCluster> {
  const cluster = new FakeCluster();
  cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  const first = await releaseEngine(cluster).apply(request({ a: '1' }));
  assert.equal(first.status, 'deployed', first.message);
  await cluster.client().apply(cm({ a: 'x' }), { fieldManager: 'kubectl-edit', force: true });
  assert.deepEqual(holders(cluster.get(cmRef), 'a'), ['kubectl-edit']);
  return cluster;
}

test('Force (the default): an upgrade takes a field another manager holds, as helm --force-conflicts', async () => {
  const cluster = await editedByHand();
  const res = await releaseEngine(cluster).apply(request({ a: '2' }));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(cluster.get(cmRef)?.data, { a: '2' });
  assert.deepEqual(holders(cluster.get(cmRef), 'a'), [FIELD_MANAGER]);
});

test('Fail: an upgrade that sets a field another manager holds is refused before anything changes, naming the manager and the field; one that leaves it alone goes on', async () => {
  const cluster = await editedByHand();
  const before = cluster.get(cmRef);
  await assert.rejects(releaseEngine(cluster).apply(request({ a: '2' }, { conflictPolicy: 'Fail' })), (err: Error) => {
    assert.match(err.message, /refusing to apply, nothing was changed/);
    assert.match(err.message, /ConfigMap team-a\/settings: .*conflict with "kubectl-edit" using v1: \.data\.a/);
    assert.match(err.message, /conflictPolicy Fail/);
    return true;
  });
  assert.deepEqual(cluster.get(cmRef), before, 'nothing changed');
  assert.deepEqual((await releaseEngine(cluster).history(release)).map((r) => [r.revision, r.status]), [[1, 'deployed']], 'no revision recorded');
  // The same value the other manager set is no conflict; a field it does not hold neither.
  const res = await releaseEngine(cluster).apply(request({ a: 'x', b: '1' }, { conflictPolicy: 'Fail' }));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(cluster.get(cmRef)?.data, { a: 'x', b: '1' });
});

test('Fail: a drift repair does not take a field another manager holds; it fails naming them, the revision stays deployed, and Force repairs it', async () => {
  const cluster = await editedByHand();
  const repair = await releaseEngine(cluster).apply(request({ a: '1' }, { conflictPolicy: 'Fail' }));
  assert.equal(repair.status, 'failed');
  assert.equal(repair.revision, 1);
  assert.match(repair.message ?? '', /revision 1 unchanged; re-applying it failed: .*conflict with "kubectl-edit" using v1: \.data\.a/);
  assert.deepEqual(cluster.get(cmRef)?.data, { a: 'x' });
  assert.deepEqual((await releaseEngine(cluster).history(release)).map((r) => [r.revision, r.status]), [[1, 'deployed']]);
  const forced = await releaseEngine(cluster).apply(request({ a: '1' }));
  assert.equal(forced.status, 'deployed', forced.message);
  assert.deepEqual(cluster.get(cmRef)?.data, { a: '1' });
});

test("take ownership 'unowned' (a HelmOperator's takeOwnership): an object no one holds is taken; one another release, owner or controller holds is refused by name", async () => {
  const marks: [string, Partial<KubeObject['metadata']>, RegExp][] = [
    ['another Helm release', { annotations: { 'meta.helm.sh/release-name': 'other', 'meta.helm.sh/release-namespace': 'team-a' } }, /Helm release team-a\/other/],
    ['another owner', { labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'other' } }, /BundleDeployment other/],
    ['a controller', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }] }, /ReplicaSet rs \(controller reference\)/],
    ['a managed-by label', { labels: { 'app.kubernetes.io/managed-by': 'argocd' } }, /argocd/],
  ];
  for (const [who, metadata, named] of marks) {
    const cluster = new FakeCluster();
    cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    cluster.putApplied(cm({ a: '0' }, metadata), 'kubectl-client-side-apply');
    await assert.rejects(releaseEngine(cluster).apply(request({ a: '1' }, { adopt: 'unowned' })), (err: Error) => {
      assert.match(err.message, named, who);
      assert.match(err.message, /takeOwnership takes only objects no release, owner or controller holds/, who);
      return true;
    });
    assert.deepEqual(cluster.get(cmRef)?.data, { a: '0' }, `${who}: left as it was`);
  }
  const cluster = new FakeCluster();
  cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  cluster.putApplied(cm({ a: '0' }), 'kubectl-client-side-apply');
  await assert.rejects(releaseEngine(cluster).apply(request({ a: '1' })), /no Binnacle owner \(created outside Binnacle\).*adopt to override/s, 'not taken unless asked');
  const res = await releaseEngine(cluster).apply(request({ a: '1' }, { adopt: 'unowned' }));
  assert.equal(res.status, 'deployed', res.message);
  const taken = cluster.get(cmRef);
  assert.deepEqual(taken?.data, { a: '1' });
  assert.equal(taken?.metadata.labels?.['binnacle.dev/owner-name'], 'app');
  assert.equal(taken?.metadata.annotations?.['meta.helm.sh/release-name'], 'app');
  // Never a kind whose deletion deletes data: the release's uninstall would take it with it.
  const data = new FakeCluster();
  data.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  data.putApplied({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'db', namespace: 'team-a' }, spec: { resources: { requests: { storage: '1Gi' } } } }, 'kubectl-client-side-apply');
  await assert.rejects(
    releaseEngine(data).apply({ owner, release, objects: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'db', namespace: 'team-a' }, spec: { resources: { requests: { storage: '1Gi' } } } }], adopt: 'unowned', healthTimeoutMs: 200 }),
    /takeOwnership never takes a PersistentVolumeClaim: uninstalling the release would delete it and its data/,
  );
  // Taken under Fail: the fields its creator set with other values stay refused.
  const strict = new FakeCluster();
  strict.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  strict.putApplied(cm({ a: '0' }), 'kubectl-client-side-apply');
  await assert.rejects(releaseEngine(strict).apply(request({ a: '1' }, { adopt: 'unowned', conflictPolicy: 'Fail' })), /conflict with "kubectl-client-side-apply" using v1: \.data\.a/);
});

test("adopting what another installer made for the same owner (OLM v1's operator-controller): only objects that very controller controls, with its owner labels, are taken over, as they are", async () => {
  const ce = { apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'argocd', uid: 'ce-uid-1' };
  const adopt = { controlledBy: ce, ownerLabels: { 'olm.operatorframework.io/owner-kind': 'ClusterExtension', 'olm.operatorframework.io/owner-name': 'argocd' } };
  const olmMarks = (controller: typeof ce, labels: Record<string, string> = adopt.ownerLabels): Partial<KubeObject['metadata']> => ({
    labels: { ...labels, 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { 'meta.helm.sh/release-name': 'argocd', 'meta.helm.sh/release-namespace': 'team-a' },
    ownerReferences: [{ ...controller, controller: true, blockOwnerDeletion: true }],
  });
  const installed = (metadata: Partial<KubeObject['metadata']>): FakeCluster => {
    const cluster = new FakeCluster();
    cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    cluster.putApplied(cm({ a: '0' }, metadata), 'helm');
    return cluster;
  };
  // The same ClusterExtension's object: taken over in place (same uid), with Binnacle's marks.
  const same = installed(olmMarks(ce));
  const uid = same.get(cmRef)?.metadata.uid;
  const res = await releaseEngine(same).apply(request({ a: '1' }, { adopt }));
  assert.equal(res.status, 'deployed', res.message);
  const taken = same.get(cmRef);
  assert.equal(taken?.metadata.uid, uid, 'not re-created');
  assert.deepEqual(taken?.data, { a: '1' });
  assert.equal(taken?.metadata.labels?.['binnacle.dev/owner-name'], 'app');
  // A namesake ClusterExtension made since (another uid), a missing owner label, or no controller: refused.
  const cases: [string, Partial<KubeObject['metadata']>][] = [
    ['another uid', olmMarks({ ...ce, uid: 'ce-uid-0' })],
    ['no OLM v1 owner labels', olmMarks(ce, {})],
    ['another extension named in the labels', olmMarks(ce, { ...adopt.ownerLabels, 'olm.operatorframework.io/owner-name': 'other' })],
    ['not its controller', { ...olmMarks(ce), ownerReferences: [{ ...ce, controller: false }] }],
  ];
  for (const [why, metadata] of cases) {
    const cluster = installed(metadata);
    await assert.rejects(releaseEngine(cluster).apply(request({ a: '1' }, { adopt })), /already exists and belongs to .*refusing to take it over/, why);
    assert.deepEqual(cluster.get(cmRef)?.data, { a: '0' }, `${why}: left as it was`);
  }
});
