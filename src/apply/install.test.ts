import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { isTransient, KubeApiError } from '../kube/errors.js';
import { BinnacleError, ValidationError } from '../util/errors.js';
import { releaseEngine } from './engine.test-helper.js';
import { ApplyRefusedError, ObjectTerminatingError } from './errors.js';
import { revisionRecordSecret, revisionFromSecret } from './release.js';
import { crdOf, WIDGET } from './crd.test-helper.js';
import { FakeCluster, faults } from '../kube/fake-cluster.test-helper.js';
import type { ApplyRequest } from './types.js';
import { validateRequest } from './request.js';
import { uninstall } from './uninstall.js';

const owner = { kind: 'ClusterExtension', name: 'op' };
const release = { name: 'op', namespace: 'ops' };

const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } };
const sa: KubeObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'op' } };
const cm = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
const dep = (name: string, image = 'op:1'): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { replicas: 1, template: { spec: { containers: [{ image }] } } } });
const crdObj = (props: Record<string, unknown>): KubeObject => crdOf(WIDGET, props);

function setup(): { cluster: FakeCluster; applier: ReturnType<typeof releaseEngine>; req: (objects: KubeObject[], extra?: Partial<ApplyRequest>) => ApplyRequest } {
  const cluster = new FakeCluster();
  const applier = releaseEngine(cluster);
  const req = (objects: KubeObject[], extra: Partial<ApplyRequest> = {}): ApplyRequest => ({ owner, release, objects, healthTimeoutMs: 200, ...extra });
  return { cluster, applier, req };
}

test('install applies in phase order, defaults namespaces, stamps ownership and records revision 1', async () => {
  const { cluster, applier, req } = setup();
  const res = await applier.apply(req([dep('op'), cm('cfg'), sa, ns]));
  assert.equal(res.status, 'deployed', res.message);
  assert.equal(res.revision, 1);
  assert.deepEqual(cluster.writes, [
    'apply Namespace ops',
    'create Secret ops/sh.helm.release.v1.op.v1',
    'apply ServiceAccount ops/op',
    'apply ConfigMap ops/cfg',
    'apply Deployment ops/op',
    'update Secret ops/sh.helm.release.v1.op.v1',
  ]);
  const live = cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' });
  assert.equal(live?.metadata.labels?.['binnacle.dev/owner-kind'], 'ClusterExtension');
  assert.equal(live?.metadata.annotations?.['meta.helm.sh/release-namespace'], 'ops');
  const [rev] = await applier.history(release);
  assert.equal(rev?.status, 'deployed');
  assert.equal(rev?.description, 'Install complete');
  assert.deepEqual(rev?.chart, { name: 'op', version: '0.0.0' });
});

test('upgrade prunes only what is still ours, applies owned objects with force', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa, cm('keep'), cm('drop'), cm('stolen'), dep('op')]));
  // Someone else takes over `stolen`: it must survive the prune.
  const stolen = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'stolen' });
  assert.ok(stolen !== undefined);
  cluster.put({ ...stolen, metadata: { ...stolen.metadata, labels: { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'other' } } });
  cluster.writes.length = 0;
  const res = await applier.apply(req([ns, sa, cm('keep'), dep('op', 'op:2')]));
  assert.equal(res.status, 'deployed');
  assert.deepEqual(res.pruned.map((r) => r.name), ['drop']);
  assert.ok(cluster.writes.includes('apply Deployment ops/op (force)'));
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'stolen' }) !== undefined);
  assert.deepEqual((await applier.history(release)).map((r) => r.status), ['superseded', 'deployed']);
});

test("a revision without the release's own Namespace does not prune it (it holds the records and everything else there); another Namespace it no longer has is pruned", async () => {
  const { cluster, applier, req } = setup();
  const other: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops-extra' } };
  assert.equal((await applier.apply(req([ns, other, sa, cm('cfg')]))).status, 'deployed');
  const res = await applier.apply(req([sa, cm('cfg'), cm('more')]));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(res.pruned.map((r) => `${r.kind}/${r.name}`), ['Namespace/ops-extra']);
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'ops' }) !== undefined, 'the release namespace stays');
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'more' }) !== undefined);
});

test('refusal collects every foreign object and writes nothing; adopt takes them over', async () => {
  const { cluster, applier, req } = setup();
  cluster.put({ ...ns });
  cluster.put({ ...cm('theirs'), metadata: { name: 'theirs', namespace: 'ops', annotations: { 'meta.helm.sh/release-name': 'x', 'meta.helm.sh/release-namespace': 'y' } } });
  await assert.rejects(applier.apply(req([ns, sa, cm('theirs')])), (err: unknown) => {
    assert.ok(err instanceof ApplyRefusedError);
    assert.deepEqual(err.result.errors().map((p) => p.field), ['Namespace ops', 'ConfigMap ops/theirs']);
    assert.match(err.message, /ConfigMap ops\/theirs already exists and belongs to Helm release y\/x/);
    assert.match(err.message, /nothing was changed/);
    return true;
  });
  assert.equal(cluster.writes.length, 0, `no writes, got ${cluster.writes.join(", ")}`);
  const res = await applier.apply(req([ns, sa, cm('theirs')], { adopt: true }));
  assert.equal(res.status, 'deployed');
  assert.ok(cluster.writes.includes('apply ConfigMap ops/theirs (force)'));
});

test('an unsafe CRD change and a server rejection are both reported; nothing is written', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, crdObj({ spec: { type: 'object', properties: { a: { type: 'string' } } } })]));
  cluster.writes.length = 0;
  cluster.rejectNames.add('bad');
  await assert.rejects(applier.apply(req([ns, crdObj({ spec: { type: 'object' } }), cm('bad')])), (err: unknown) => {
    assert.ok(err instanceof ApplyRefusedError);
    assert.deepEqual(err.result.errors().map((p) => p.rule).sort(), ['apply.rejected', 'crd.field-removed']);
    return true;
  });
  assert.equal(cluster.writes.length, 0, `no writes, got ${cluster.writes.join(", ")}`);
});

test("crdUpgradeSafety None (OLM v1's enforcement None) applies a CRD change the check would refuse; Strict, the default, refuses it", async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, crdObj({ spec: { type: 'object', properties: { a: { type: 'string' } } } })]));
  const narrowed = crdObj({ spec: { type: 'object' } });
  await assert.rejects(applier.apply(req([ns, narrowed], { crdUpgradeSafety: 'Strict' })), /crd\.field-removed|field/);
  const res = await applier.apply(req([ns, narrowed], { crdUpgradeSafety: 'None' }));
  assert.equal(res.status, 'deployed', res.message);
  const live = cluster.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: narrowed.metadata.name ?? '' });
  assert.deepEqual(JSON.stringify(live?.spec).includes('"a"'), false, 'the narrowed schema is applied');
});

test('custom resources of a CRD in the same release are accepted; unknown kinds are refused', async () => {
  const { cluster, applier, req } = setup();
  cluster.unknownKinds.add('Widget');
  const widget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
  await assert.rejects(applier.apply(req([ns, widget])), /the cluster serves no Widget in example.com\/v1 and no CRD in this release defines it/);
  cluster.unknownKinds.clear();
  const res = await applier.apply(req([ns, crdObj({}), widget]));
  assert.equal(res.status, 'deployed', res.message);
  assert.equal(cluster.get({ apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'ops', name: 'w' })?.metadata.namespace, 'ops');
});

test('a malformed request lists every problem, something that is no object at all among them', async () => {
  const { cluster, applier } = setup();
  const owner = { kind: 'ClusterExtension', name: 'x'.repeat(70) };
  const release = { name: 'Bad_Name', namespace: 'ops' };
  const generated: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'a-' } };
  await assert.rejects(applier.apply({ owner, release, objects: [ns, ns, generated] }), (err: unknown) => {
    assert.ok(err instanceof ValidationError);
    assert.deepEqual(err.result.errors().map((p) => p.field), ['release.name', 'owner.name', 'objects[1]', 'objects[2].metadata.name']);
    return true;
  });
  assert.deepEqual(cluster.writes, [], 'nothing written');
  // What a renderer may hand over is checked as it comes: here, no Kubernetes object.
  const notAnObject: unknown = { kind: 'x' };
  assert.throws(() => validateRequest({ owner, release, objects: [ns, ns, notAnObject, generated] }), (err: unknown) => {
    assert.ok(err instanceof ValidationError);
    assert.deepEqual(err.result.errors().map((p) => p.field), ['release.name', 'owner.name', 'objects[1]', 'objects[2]', 'objects[3].metadata.name']);
    assert.match(err.result.errors()[3]?.message ?? '', /not a Kubernetes object: needs apiVersion, kind and metadata/);
    return true;
  });
});

test('a failed upgrade rolls back to the last deployed revision and says so', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa, dep('op')]));
  cluster.unhealthyNames.add('op2');
  const res = await applier.apply(req([ns, sa, dep('op'), dep('op2')]));
  assert.equal(res.status, 'rolled-back');
  assert.equal(res.revision, 3);
  assert.match(res.message, /revision 2 failed \(not healthy after 200 ms: Deployment ops\/op2: 0 of 1 replicas available\); rolled back to revision 1 as revision 3/);
  assert.equal(cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op2' }), undefined, 'rollback pruned it');
  const history = await applier.history(release);
  assert.deepEqual(history.map((r) => [r.revision, r.status, r.description]), [
    [1, 'superseded', 'Install complete'],
    [2, 'failed', 'not healthy after 200 ms: Deployment ops/op2: 0 of 1 replicas available'],
    [3, 'deployed', 'Rollback to 1'],
  ]);
});

test("waitForHealth false (Helm without --wait, helm-operator's install): a workload not yet available is deployed once applied, on install, upgrade and repair", async () => {
  const { cluster, applier, req } = setup();
  cluster.unhealthyNames.add('op');
  const install = await applier.apply(req([ns, sa, dep('op')], { waitForHealth: false }));
  assert.equal(install.status, 'deployed', install.message);
  const upgrade = await applier.apply(req([ns, sa, dep('op', 'op:2')], { waitForHealth: false }));
  assert.deepEqual([upgrade.status, upgrade.revision], ['deployed', 2], upgrade.message);
  const repair = await applier.apply(req([ns, sa, dep('op', 'op:2')], { waitForHealth: false }));
  assert.deepEqual([repair.status, repair.revision, repair.health.healthy], ['deployed', 2, true], repair.message);
  assert.deepEqual((await applier.history(release)).map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'deployed']]);
  // The same upgrade waiting for health fails and rolls back: what the flag turns off.
  const waited = await applier.apply(req([ns, sa, dep('op', 'op:3')]));
  assert.notEqual(waited.status, 'deployed');
  assert.match(waited.message, /revision 3 failed \(not healthy after 200 ms: Deployment ops\/op: 0 of 1 replicas available\)/);
});

test('autoRollback false leaves the failed revision; an apply error fails the revision', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa]));
  cluster.unhealthyNames.add('op');
  const res = await applier.apply(req([ns, sa, dep('op')], { autoRollback: false }));
  assert.equal(res.status, 'failed');
  assert.equal(res.revision, 2);
  assert.equal((await applier.history(release)).findLast((r) => r.status === 'deployed')?.revision, 1, 'revision 1 is still the deployed one');

  // The server accepts the dry run but fails the real apply: the revision is failed, then rolled back.
  const disarm = cluster.inject({ verb: 'apply', kind: 'ConfigMap', error: () => new KubeApiError(422, 'Invalid', 'admission webhook "x" denied the request'), times: Infinity });
  const res2 = await applier.apply(req([ns, sa, cm('x')]));
  disarm();
  assert.equal(res2.status, 'rolled-back');
  assert.match(res2.message, /apply failed: admission webhook "x" denied the request/);
  assert.deepEqual((await applier.history(release)).map((r) => r.status), ['superseded', 'failed', 'failed', 'deployed']);
});

test('rollback re-applies an older manifest; uninstall removes objects and records', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa, cm('v1-only')]));
  await applier.apply(req([ns, sa, crdObj({})]));
  const back = await applier.rollback({ release });
  assert.equal(back.status, 'deployed');
  assert.equal(back.revision, 3);
  assert.deepEqual(back.pruned.map((r) => r.kind), ['CustomResourceDefinition']);
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'v1-only' }) !== undefined);
  await assert.rejects(applier.rollback({ release, toRevision: 9 }), (err: unknown) => err instanceof BinnacleError && err.code === 'ROLLBACK_NO_TARGET');

  await assert.rejects(applier.uninstall({ owner: { kind: 'ClusterExtension', name: 'someone' }, release }), (err: unknown) => err instanceof BinnacleError && err.code === 'RELEASE_NOT_OWNED');
  const gone = await applier.uninstall({ owner, release });
  assert.deepEqual(gone.deleted.map((r) => r.kind), ['ConfigMap', 'ServiceAccount', 'Namespace']);
  assert.equal(cluster.objects.size, 0, 'objects and release Secrets are gone');
  assert.deepEqual(await applier.uninstall({ owner, release }), { deleted: [] });
});

test('another owner cannot upgrade the release', async () => {
  const { applier, req } = setup();
  await applier.apply(req([ns]));
  await assert.rejects(applier.apply({ ...req([ns]), owner: { kind: 'ClusterExtension', name: 'intruder' } }), /release ops\/op: the release belongs to ClusterExtension op, not ClusterExtension intruder/);
});

test('a release namespace that does not exist and is not created is refused up front', async () => {
  const { cluster, applier, req } = setup();
  await assert.rejects(applier.apply(req([sa])), (err: unknown) => {
    assert.ok(err instanceof ApplyRefusedError);
    assert.deepEqual(err.result.errors().map((p) => p.rule), ['apply.release-namespace']);
    return true;
  });
  assert.equal(cluster.writes.length, 0);
});

test('a revision recorded concurrently by another run is a conflict, not a failure to roll back', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa]));
  // The other run creates revision 2 between our history read and our record.
  const first = (await applier.history(release))[0];
  assert.ok(first !== undefined);
  cluster.inject({
    verb: 'create',
    kind: 'Secret',
    name: 'sh.helm.release.v1.op.v2',
    error: () => {
      const { revision: _r, owner: _o, ...rest } = first;
      cluster.put(revisionRecordSecret({ ...rest, version: 2, status: 'pending-upgrade' }, owner, new Date(), 'created'));
      return new KubeApiError(409, 'AlreadyExists', 'secrets "sh.helm.release.v1.op.v2" already exists');
    },
  });
  await assert.rejects(applier.apply(req([ns, sa, cm('x')])), (err: unknown) => err instanceof BinnacleError && err.code === 'RELEASE_CONFLICT');
  assert.deepEqual((await applier.history(release)).map((r) => r.status), ['deployed', 'pending-upgrade']);
});

test('applying the deployed revision again repairs drift without a new revision', async () => {
  const { cluster, applier, req } = setup();
  const first = await applier.apply(req([ns, sa, dep('op')], { values: { a: 1, b: 2 } }));
  assert.equal(first.revision, 1);
  cluster.objects.delete(cluster.key({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }));
  // Same objects in another order and values with another key order: the same revision.
  const again = await applier.apply(req([dep('op'), sa, ns], { values: { b: 2, a: 1 } }));
  assert.equal(again.status, 'deployed');
  assert.equal(again.revision, 1);
  assert.match(again.message, /revision 1 unchanged and healthy/);
  assert.ok(cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }) !== undefined, 'deleted Deployment re-created');
  assert.equal((await applier.history(release)).length, 1);
  // A real change still makes a revision.
  assert.equal((await applier.apply(req([ns, sa, dep('op', 'op:2')], { values: { a: 1, b: 2 } }))).revision, 2);
});

test('history is trimmed to maxHistory, never dropping the deployed revision', async () => {
  const cluster = new FakeCluster();
  const applier = releaseEngine(cluster, { maxHistory: 3 });
  for (let i = 1; i <= 5; i++) {
    const res = await applier.apply({ owner, release, objects: [ns, cm(`c${i}`)] });
    assert.equal(res.revision, i);
  }
  const history = await applier.history(release);
  assert.deepEqual(history.map((r) => [r.revision, r.status]), [[3, 'superseded'], [4, 'superseded'], [5, 'deployed']]);
});

test('an API server that answers 503 mid-install is retried, not a failed release: nothing is removed, the next run settles and installs', async () => {
  const { cluster, applier, req } = setup();
  const first = await applier.apply(req([ns, sa, cm('a')]));
  assert.equal(first.status, 'deployed', first.message);
  cluster.unavailableNames.add('b');
  await assert.rejects(applier.apply(req([ns, sa, cm('a'), cm('b')])), (err: Error & { statusCode?: number }) => err.statusCode === 503);
  // Revision 1's objects are untouched: no rollback, no removal.
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'a' }) !== undefined);
  cluster.unavailableNames.clear();
  const again = await applier.apply(req([ns, sa, cm('a'), cm('b')]));
  assert.equal(again.status, 'deployed', again.message);
  const history = await applier.history(release);
  assert.deepEqual(history.map((r) => r.status), ['superseded', 'failed', 'deployed'], 'the interrupted revision is settled as failed, then a new one deployed');
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'b' }) !== undefined);
});

test('a dry run answered 503 refuses nothing: the caller retries', async () => {
  const { applier, req } = setup();
  const cluster = new FakeCluster();
  const flaky = releaseEngine(cluster);
  cluster.inject({ verb: 'dry-run', error: faults.unavailable, times: Infinity });
  await assert.rejects(flaky.apply(req([ns, sa, cm('a')])), (err: unknown) => !(err instanceof ApplyRefusedError) && (err as { statusCode?: number }).statusCode === 503);
  assert.equal((await applier.history(release)).length, 0);
});

test('a first install interrupted by a 503 is not removed as a failed install', async () => {
  const { cluster, applier, req } = setup();
  cluster.unavailableNames.add('b');
  await assert.rejects(applier.apply(req([ns, sa, cm('a'), cm('b')])), (err: Error & { statusCode?: number }) => err.statusCode === 503);
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'a' }) !== undefined, 'what was applied stays for the retry');
  cluster.unavailableNames.clear();
  const again = await applier.apply(req([ns, sa, cm('a'), cm('b')]));
  assert.equal(again.status, 'deployed', again.message);
});

test('an object that is being deleted (another release uninstalling it) is waited for, not refused and not applied', async () => {
  const { cluster, applier, req } = setup();
  cluster.put({ ...ns });
  cluster.put({ ...cm('going'), metadata: { name: 'going', namespace: 'ops', deletionTimestamp: '2026-01-01T00:00:00Z', labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'earlier' } } });
  await assert.rejects(applier.apply(req([ns, sa, cm('going')], { adopt: true })), (err: unknown) => {
    assert.ok(!(err instanceof ApplyRefusedError), 'a retry, not a refusal');
    assert.ok(err instanceof BinnacleError && err.code === 'OBJECT_TERMINATING', String(err));
    assert.match(err.message, /ConfigMap ops\/going \(BundleDeployment earlier\) is being deleted; applying once it is gone/);
    assert.ok(err instanceof ObjectTerminatingError);
    assert.deepEqual(err.refs, [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'going' }], 'names what it waits for, so the retry can be woken when it goes');
    return true;
  });
  assert.equal(cluster.writes.length, 0, `no writes, got ${cluster.writes.join(', ')}`);
  cluster.objects.delete(cluster.key({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'going' }));
  assert.equal((await applier.apply(req([ns, sa, cm('going')], { adopt: true }))).status, 'deployed');
});

test('force: an object deleted to be replaced but held by a finalizer fails the upgrade naming it and its finalizers; the rollback waits for it, then the upgrade goes through', async () => {
  const cluster = new FakeCluster();
  const applier = releaseEngine(cluster, { replaceTimeoutMs: 50 });
  const req = (objects: KubeObject[], extra: Partial<ApplyRequest> = {}): ApplyRequest => ({ owner, release, objects, healthTimeoutMs: 200, ...extra });
  assert.equal((await applier.apply(req([ns, sa, dep('op')]))).status, 'deployed');
  cluster.immutableNames.add('op');
  cluster.heldNames.add('op');
  await assert.rejects(applier.apply(req([ns, sa, dep('op', 'op:2')], { force: true })), (err: unknown) => {
    assert.ok(err instanceof BinnacleError && err.code === 'OBJECT_TERMINATING', String(err));
    assert.match(err.message, /^revision 2 failed \(.*Deployment ops\/op: deleted to be replaced, but still there after 50 ms \(held by finalizers example\.com\/hold\)\); the rollback to revision 1 waits: .*Deployment ops\/op \(ClusterExtension op\) is being deleted/);
    assert.ok(err instanceof ObjectTerminatingError);
    assert.deepEqual(err.refs, [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }], "the rollback's wait names what it waits for");
    return true;
  });
  assert.ok(cluster.writes.includes('delete Deployment ops/op (held)'), cluster.writes.join(', '));
  assert.deepEqual((await applier.history(release)).map((r) => [r.revision, r.status]), [[1, 'deployed'], [2, 'failed']]);
  // The finalizer goes: the next reconcile's upgrade creates the Deployment anew.
  cluster.objects.delete(cluster.key({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }));
  cluster.heldNames.clear();
  const again = await applier.apply(req([ns, sa, dep('op', 'op:2')], { force: true }));
  assert.equal(again.status, 'deployed', again.message);
  const live = cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' });
  assert.equal((live?.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]?.image, 'op:2');
});

test('helm.sh/resource-policy: keep leaves an object in place when an upgrade drops it and when the release is uninstalled, as Helm does', async () => {
  const { cluster, applier, req } = setup();
  const kept = (name: string, policy: string): KubeObject => ({ ...cm(name), metadata: { name, annotations: { 'helm.sh/resource-policy': policy } } });
  // The namespace is not the release's: deleting it would take everything in it, kept or not.
  cluster.put(ns);
  await applier.apply(req([kept('kept-on-upgrade', 'keep'), cm('dropped'), kept('kept-on-uninstall', ' Keep '), kept('not-kept', 'delete')]));
  const upgraded = await applier.apply(req([kept('kept-on-uninstall', ' Keep '), kept('not-kept', 'delete')]));
  assert.equal(upgraded.status, 'deployed', upgraded.message);
  assert.deepEqual(upgraded.pruned.map((r) => r.name).sort(), ['dropped'], 'the upgrade prunes only what is not kept');
  const configMap = (name: string): KubeObject | undefined => cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name });
  assert.ok(configMap('kept-on-upgrade') !== undefined);
  const gone = await applier.uninstall({ owner, release });
  assert.deepEqual(gone.deleted.map((r) => `${r.kind} ${r.name}`).sort(), ['ConfigMap not-kept']);
  assert.ok(configMap('kept-on-uninstall') !== undefined, 'kept at uninstall (the policy in any case, trimmed)');
  assert.equal(configMap('not-kept'), undefined);
});

test('a run given the release history it would read (one list per reconcile) lists no release Secrets: install, upgrade and repair', async () => {
  const { cluster, applier, req } = setup();
  const count = (what: string): number => cluster.requests.filter((r) => r === what).length;
  const lists = async (objects: KubeObject[]): Promise<number> => {
    const history = await applier.history(release);
    cluster.requests.length = 0;
    const res = await applier.reconcile(req(objects, { inputDigest: objects.map((o) => o.metadata.name).join() }), history);
    assert.equal(res.status, 'deployed');
    return count('list Secret');
  };
  assert.equal(await lists([ns, dep('op')]), 0, 'install');
  assert.equal(await lists([ns, dep('op'), cm('c')]), 0, 'upgrade');
  assert.equal(await lists([ns, dep('op'), cm('c')]), 0, 'repair');
  assert.deepEqual((await applier.history(release)).map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'deployed']]);
  // Without it, the applier reads the history itself, once.
  cluster.requests.length = 0;
  await applier.apply(req([ns, dep('op'), cm('c'), cm('d')], { inputDigest: 'other' }));
  assert.equal(count('list Secret'), 1);
  assert.deepEqual((await applier.history(release)).map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'superseded'], [3, 'deployed']]);
});

test('a repair reads each object once, puts none to a dry run, and applies only what drifted', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa, dep('op')], { inputDigest: 'd1' }));
  const history = await applier.history(release);
  cluster.requests.length = 0;
  cluster.writes.length = 0;
  const same = await applier.reconcile(req([ns, sa, dep('op')], { inputDigest: 'd1', waitForHealth: false }), history);
  assert.equal(same.status, 'deployed');
  assert.equal(same.revision, 1);
  assert.deepEqual(cluster.requests.filter((r) => !r.startsWith('list')).sort(), ['get Deployment', 'get Namespace', 'get ServiceAccount']);
  assert.deepEqual(cluster.writes, []);
  assert.deepEqual(same.applied.map((r) => r.kind).sort(), ['Deployment', 'Namespace', 'ServiceAccount'], 'every object is still what the release holds');
  // Drift: that object alone is applied again.
  const key = cluster.key({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' });
  const live = cluster.objects.get(key);
  assert.ok(live !== undefined);
  cluster.put({ ...live, spec: { replicas: 5, template: { spec: { containers: [{ image: 'evil:1' }] } } } });
  cluster.requests.length = 0;
  const repaired = await applier.reconcile(req([ns, sa, dep('op')], { inputDigest: 'd1', waitForHealth: false }), history);
  assert.equal(repaired.revision, 1);
  assert.deepEqual(cluster.writes, ['apply Deployment ops/op (force)']);
  assert.equal(cluster.requests.filter((r) => r.startsWith('dry-run')).length, 0);
  assert.deepEqual((cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' })?.spec as { replicas: number }).replicas, 1);
});

test('a repair judges from what a watch holds: no read of a watched object, a read of one it lacks, drift in the watched copy applied', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa, dep('op')], { inputDigest: 'd1' }));
  const history = await applier.history(release);
  // The watch holds the Deployment and the ServiceAccount as they are live; not the Namespace.
  const held = new Map<string, KubeObject>();
  for (const ref of [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }, { apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'ops', name: 'op' }]) {
    const live = cluster.get(ref);
    assert.ok(live !== undefined);
    held.set(cluster.key(ref), structuredClone(live));
  }
  const watched = (ref: ObjectRef): KubeObject | undefined => held.get(cluster.key(ref));
  cluster.requests.length = 0;
  cluster.writes.length = 0;
  const same = await applier.reconcile(req([ns, sa, dep('op')], { inputDigest: 'd1', waitForHealth: false, watched }), history);
  assert.deepEqual([same.status, same.revision], ['deployed', 1], same.message);
  assert.deepEqual(cluster.requests.filter((r) => !r.startsWith('list')), ['get Namespace'], 'only the object the watch lacks is read');
  assert.deepEqual(cluster.writes, []);
  // The watch saw a hand edit: repaired, written as ever (the read it saved is the only difference).
  const depKey = cluster.key({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' });
  const edited = held.get(depKey);
  assert.ok(edited !== undefined);
  held.set(depKey, { ...edited, spec: { replicas: 5 } });
  cluster.requests.length = 0;
  const repaired = await applier.reconcile(req([ns, sa, dep('op')], { inputDigest: 'd1', waitForHealth: false, watched }), history);
  assert.equal(repaired.status, 'deployed', repaired.message);
  assert.deepEqual(cluster.writes, ['apply Deployment ops/op (force)']);
  assert.deepEqual(cluster.requests.filter((r) => r.startsWith('get')), ['get Namespace']);
});

test("an upgrade reads what it changes even when a watch holds it; what it applies as before is judged from the watch", async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, cm('same'), dep('op')]));
  const watched = (ref: ObjectRef): KubeObject | undefined => structuredClone(cluster.get(ref));
  cluster.requests.length = 0;
  cluster.writes.length = 0;
  // Without waiting for health: the health probe reads every object, watched or not.
  const res = await applier.apply(req([ns, cm('same'), dep('op', 'op:2')], { watched, waitForHealth: false }));
  assert.equal(res.status, 'deployed', res.message);
  const reads = cluster.requests.filter((r) => r.startsWith('get') && r !== 'get Secret');
  assert.deepEqual(reads, ['get Deployment'], 'the changed Deployment is read; the ConfigMap and Namespace applied as before are judged from the watch');
  assert.deepEqual(cluster.writes.filter((w) => w.startsWith('apply ')), ['apply Deployment ops/op (force)']);
});

test("a record rewritten to hold what the release may not is refused when a repair or a rollback would apply it: nothing is written", async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, cm('a')], { inputDigest: 'd1' }));
  const outside = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-config\n  namespace: kube-system\n';
  // The release records are Secrets in the release's namespace: whoever may write Secrets there can rewrite them.
  const forged = (await applier.history(release)).map((r) => ({ ...r, manifest: r.manifest + outside }));
  const confine = (objects: readonly KubeObject[]): Promise<string[]> =>
    Promise.resolve(objects.filter((o) => o.metadata.namespace === 'kube-system').map((o) => `${o.kind} kube-system/${o.metadata.name ?? ''} is in namespace kube-system`));
  cluster.writes.length = 0;
  await assert.rejects(applier.reconcile(req([ns, cm('a')], { inputDigest: 'd1', confine }), forged), (err: unknown) => {
    assert.ok(err instanceof ApplyRefusedError);
    assert.match(err.message, /revision 1 as recorded: ConfigMap kube-system\/cluster-config is in namespace kube-system/);
    return true;
  });
  assert.deepEqual(cluster.writes, []);
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'cluster-config' }), undefined);
  // Without the check (an unconfined caller), the same record is re-applied as it says: the check is what refuses it.
  await applier.reconcile(req([ns, cm('a')], { inputDigest: 'd1' }), forged);
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'cluster-config' }) !== undefined);
});

test('an upgrade that fails is not rolled back to a recorded revision holding what the release may not', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, cm('a')], { inputDigest: 'd1' }));
  const record = cluster.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'ops', name: 'sh.helm.release.v1.op.v1' });
  assert.ok(record !== undefined);
  const { revision, owner: _owner, ...rev } = revisionFromSecret(record);
  // Rewritten in place, as the release store reads it back for the rollback.
  const outside = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-config\n  namespace: kube-system\n';
  cluster.put(revisionRecordSecret({ ...rev, version: revision, manifest: rev.manifest + outside }, owner, new Date(), 'modified'));
  const confine = (objects: readonly KubeObject[]): Promise<string[]> => Promise.resolve(objects.filter((o) => o.metadata.namespace === 'kube-system').map(() => 'in namespace kube-system'));
  cluster.unhealthyNames.add('broken');
  const res = await applier.apply(req([ns, cm('a'), dep('broken')], { inputDigest: 'd2', confine, healthTimeoutMs: 50 }));
  assert.equal(res.status, 'failed', res.message);
  assert.match(res.message, /rollback failed: .*revision 1 as recorded: in namespace kube-system/s);
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'cluster-config' }), undefined);
});

test("a new revision's preflight reads and dry-runs the objects side by side, and reports their problems in the objects' order", async () => {
  const cluster = new FakeCluster();
  let inFlight = 0;
  let most = 0;
  cluster.latency = async (verb) => {
    if (verb !== 'get' && verb !== 'dry-run') return;
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((r) => setImmediate(r));
    inFlight--;
  };
  const applier = releaseEngine(cluster);
  cluster.put({ ...ns, metadata: { name: 'ops' } });
  for (const name of ['a', 'b', 'c']) cluster.put({ ...cm(name), metadata: { name, namespace: 'ops', labels: { other: 'owner' } } });
  await assert.rejects(
    applier.apply({ owner, release, objects: [cm('a'), cm('b'), cm('c'), cm('d')] }),
    (err: unknown) => {
      assert.ok(err instanceof ApplyRefusedError);
      assert.deepEqual(
        err.result.errors().map((p) => p.field),
        ['ConfigMap ops/a', 'ConfigMap ops/b', 'ConfigMap ops/c'],
      );
      return true;
    },
  );
  assert.ok(most >= 4, `objects checked side by side (most in flight: ${most})`);
});

test('objects of one kind are applied side by side, kinds one after another in apply order', async () => {
  const cluster = new FakeCluster();
  let inFlight = 0;
  const most = new Map<string, number>();
  const order: string[] = [];
  cluster.latency = async (verb, kind) => {
    if (verb !== 'apply') return;
    inFlight++;
    most.set(kind, Math.max(most.get(kind) ?? 0, inFlight));
    order.push(kind);
    await new Promise((r) => setImmediate(r));
    inFlight--;
  };
  const applier = releaseEngine(cluster);
  const res = await applier.apply({ owner, release, objects: [dep('d1'), cm('c1'), ns, cm('c2'), dep('d2'), cm('c3')], waitForHealth: false });
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(order, ['Namespace', 'ConfigMap', 'ConfigMap', 'ConfigMap', 'Deployment', 'Deployment']);
  assert.deepEqual(Object.fromEntries(most), { Namespace: 1, ConfigMap: 3, Deployment: 2 }, 'a kind waits for the one before it');
  assert.deepEqual(res.applied.map((r) => r.name), ['ops', 'c1', 'c2', 'c3', 'd1', 'd2']);
});

test('a CRD the API server has not Established yet (names pending) is retried, not a failed install; names it refused fail the install', async () => {
  const cluster = new FakeCluster();
  const applier = releaseEngine(cluster, { crdTimeoutMs: 50 });
  const req = (objects: KubeObject[]): ApplyRequest => ({ owner, release, objects, healthTimeoutMs: 200 });
  const crd = crdObj({ size: { type: 'string' } });
  const name = crd.metadata.name ?? '';
  // The server's naming controller lags (after a restart, under load): Established=False, reason Installing.
  cluster.crdConditions.set(name, [{ type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have not been accepted' }]);
  await assert.rejects(applier.apply(req([ns, sa, crd, cm('a')])), (err: unknown) => isTransient(err) && err instanceof BinnacleError && err.code === 'CRD_NOT_ESTABLISHED');
  assert.ok(cluster.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name }) !== undefined, 'the CRD stays for the retry: the install is not removed');
  cluster.crdConditions.delete(name);
  const again = await applier.apply(req([ns, sa, crd, cm('a')]));
  assert.equal(again.status, 'deployed', again.message);
  assert.deepEqual((await applier.history(release)).map((r) => r.status), ['failed', 'deployed'], 'the interrupted revision is settled as failed, then a new one deployed');

  // A name conflict is the server's verdict: the upgrade fails and is rolled back.
  const other = crdOf({ group: 'example.com', kind: 'Gadget', plural: 'gadgets' }, {});
  cluster.crdConditions.set(other.metadata.name ?? '', [{ type: 'NamesAccepted', status: 'False', reason: 'ListKindConflict', message: '"GadgetList" is already in use' }]);
  const refused = await applier.apply(req([ns, sa, crd, other, cm('a')]));
  assert.equal(refused.status, 'rolled-back', refused.message);
  assert.match(refused.message, /names not accepted: .*already in use/);
});

test('an upgrade leaves alone what it would apply as the deployed revision did and finds unchanged live: no dry run, no apply', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, sa, cm('same'), cm('edited'), cm('shrinks'), dep('op')]));
  // Someone edits one object the next revision applies as before: that one is drift, re-applied.
  const edited = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'edited' });
  assert.ok(edited !== undefined);
  cluster.put({ ...edited, data: { a: 'changed by hand' } });
  cluster.writes.length = 0;
  cluster.requests.length = 0;
  // `shrinks` loses a field: applying it (server-side apply) is how the field goes.
  const shrunk: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shrinks' }, data: {} };
  const res = await applier.apply(req([ns, sa, cm('same'), cm('edited'), shrunk, dep('op', 'op:2')]));
  assert.equal(res.status, 'deployed', res.message);
  const writes = cluster.writes.filter((w) => w.startsWith('apply '));
  assert.deepEqual(writes, ['apply ConfigMap ops/edited (force)', 'apply ConfigMap ops/shrinks (force)', 'apply Deployment ops/op (force)']);
  assert.equal(cluster.requests.filter((r) => r.startsWith('dry-run')).length, 3, `dry runs: ${cluster.requests.join(', ')}`);
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'edited' })?.data, { a: '1' });
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'shrinks' })?.data, {});
  // Left alone, still the release's: listed as applied, kept by the prune, healthy.
  const names = res.applied.map((r) => `${r.kind}/${r.name}`);
  for (const n of ['Namespace/ops', 'ServiceAccount/op', 'ConfigMap/same', 'Deployment/op']) assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
  assert.deepEqual(res.pruned, []);
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'same' }) !== undefined);
});

test('an object another field manager last applied is applied again, even as the deployed revision had it', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, cm('taken'), dep('op')]));
  const live = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'taken' });
  assert.ok(live !== undefined);
  cluster.put({ ...live, metadata: { ...live.metadata, managedFields: [{ manager: 'kubectl', operation: 'Apply' }] } });
  cluster.writes.length = 0;
  await applier.apply(req([ns, cm('taken'), dep('op', 'op:2')]));
  assert.ok(cluster.writes.includes('apply ConfigMap ops/taken (force)'), cluster.writes.join(', '));
});

test("an uninstall runs no recorded delete hook holding what the release may not, and still removes the release's objects", async () => {
  const hook = (namespace: string) => ({
    name: 'cleanup',
    kind: 'ConfigMap',
    path: 'templates/cleanup.yaml',
    manifest: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cleanup\n  namespace: ${namespace}\n  annotations:\n    helm.sh/hook: pre-delete\n`,
    events: ['pre-delete'],
    last_run: { started_at: '', completed_at: '', phase: '' },
    weight: 0,
  });
  const confine = (objects: readonly KubeObject[]): Promise<string[]> => Promise.resolve(objects.filter((o) => o.metadata.namespace === 'kube-system').map(() => 'in namespace kube-system'));
  const cleanup = (cluster: FakeCluster, namespace: string): KubeObject | undefined => cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'cleanup' });
  for (const [namespace, runs] of [['kube-system', false], ['ops', true]] as const) {
    const { cluster, applier, req } = setup();
    // The recorded hooks are the record's (a tenant may rewrite it): here one in kube-system, and a control in the release's own namespace.
    await applier.apply(req([ns, cm('a')], { content: { chart: {}, manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: '1'\n", hooks: [hook(namespace)] } }));
    const gone = await applier.uninstall({ owner, release, confine });
    assert.equal(cleanup(cluster, namespace) !== undefined, runs, `the pre-delete hook in ${namespace} ${runs ? 'runs' : 'does not run'}`);
    assert.ok(gone.deleted.some((r) => r.kind === 'ConfigMap' && r.name === 'a'), 'the uninstall goes on');
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ops', name: 'a' }), undefined);
  }
});

test('an uninstall in a namespace being deleted runs no delete hooks (nothing can be created there) and still removes the release', async () => {
  const hook = { name: 'cleanup', kind: 'ConfigMap', path: 'templates/cleanup.yaml', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cleanup\n  annotations:\n    helm.sh/hook: pre-delete\n', events: ['pre-delete'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 };
  for (const terminating of [false, true]) {
    const { cluster, applier, req } = setup();
    await applier.apply(req([ns, cm('a')], { content: { chart: {}, manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: '1'\n", hooks: [hook] } }));
    if (terminating) {
      const live = cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'ops' });
      assert.ok(live !== undefined);
      cluster.put({ ...live, metadata: { ...live.metadata, deletionTimestamp: '2026-12-03T00:00:00Z' } });
    }
    const gone = await applier.uninstall({ owner, release });
    const ran = cluster.log.some((r) => r.verb === 'apply' && r.name === 'cleanup');
    assert.equal(ran, !terminating, terminating ? 'the hook is not tried in a namespace being deleted' : 'the hook runs otherwise');
    assert.ok(gone.deleted.some((r) => r.kind === 'ConfigMap' && r.name === 'a'), 'the uninstall goes on');
  }
  // An identity that may not read Namespaces learns nothing of it: its hooks run, and the uninstall finishes.
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, cm('a')], { content: { chart: {}, manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: '1'\n", hooks: [hook] } }));
  cluster.inject({ match: (r) => r.verb === 'get' && r.kind === 'Namespace', error: (r) => faults.forbidden(r) });
  const gone = await applier.uninstall({ owner, release });
  assert.ok(cluster.log.some((r) => r.verb === 'apply' && r.name === 'cleanup'), 'the hook ran');
  assert.ok(gone.deleted.some((r) => r.kind === 'ConfigMap' && r.name === 'a'));
});

test("the wait strategy (Helm 4's --wait): hookOnly deploys a workload not yet available; watcher waits for a claim to be Bound, which legacy does not", async () => {
  {
    const { cluster, applier, req } = setup();
    cluster.unhealthyNames.add('op');
    const res = await applier.apply(req([ns, sa, dep('op')], { waitStrategy: 'hookOnly' }));
    assert.equal(res.status, 'deployed', res.message);
    // The same upgrade under the default (watcher) waits, and fails.
    const waited = await applier.apply(req([ns, sa, dep('op', 'op:2')]));
    assert.match(waited.message, /not healthy after 200 ms: Deployment ops\/op: 0 of 1 replicas available/);
  }
  const claim: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'ops' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Pending' } };
  for (const [strategy, deployed] of [['watcher', false], ['legacy', true]] as const) {
    const { cluster, applier, req } = setup();
    // No provisioner binds it: the claim stays Pending (the fake binds only a claim without a status).
    cluster.put(claim);
    const res = await applier.apply(req([ns, claim], { waitStrategy: strategy, adopt: true }));
    assert.equal(res.status === 'deployed', deployed, `${strategy}: ${res.message}`);
    if (!deployed) assert.match(res.message, /PersistentVolumeClaim ops\/data: not Bound \(phase Pending\)/);
  }
});

test("an uninstall runs no delete hook of a revision that moved over from Helm's records (nothing is applied from one), and still removes the release", async () => {
  const hook = { name: 'cleanup', kind: 'ConfigMap', path: 'templates/cleanup.yaml', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cleanup\n  annotations:\n    helm.sh/hook: pre-delete\n', events: ['pre-delete'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 };
  for (const movedOver of [false, true]) {
    const { cluster, applier, req } = setup();
    await applier.apply(req([ns, cm('a')], { content: { chart: {}, manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: '1'\n", hooks: [hook] } }));
    const cfg = applier.cfg(release);
    const history = cfg.history;
    // The history as the trusted store reads it back after a move: each revision marked.
    const read = async (): ReturnType<typeof history.read> => {
      const r = await history.read();
      return { ...r, revisions: r.revisions.map((x) => ({ ...x, movedOver })) };
    };
    const gone = await uninstall({ ...cfg, history: Object.assign(Object.create(history) as typeof history, { read }) }, { owner, release });
    assert.equal(cluster.log.some((r) => r.verb === 'apply' && r.name === 'cleanup'), !movedOver, movedOver ? 'a moved-over record’s hook does not run' : 'the control: it runs');
    assert.ok(gone.deleted.some((r) => r.kind === 'ConfigMap' && r.name === 'a'), 'the uninstall goes on');
  }
});
