import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { mayI } from '../kube/access-review.js';
import { DependentWatches, isDependentChange, isOwnWrite, leftOwnFieldsAlone, ownerNameKeyOf, releaseKeyOf } from './dependents.js';

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

test("Binnacle's own writes (an upgrade's patch) do not re-queue; a change to what it applied does, and so does any change where it holds no entry", () => {
  const fields = (...names: string[]): Record<string, unknown> => ({ 'f:spec': Object.fromEntries(names.map((n) => [`f:${n}`, {}])) });
  const entry = (manager: string, time: string, operation = 'Apply', owned = fields('replicas')): Record<string, unknown> => ({ manager, operation, time, fieldsType: 'FieldsV1', fieldsV1: owned });
  const at = (rv: string, replicas: number, managedFields: Record<string, unknown>[]): KubeObject => {
    const d = dep(rv, { spec: { replicas } });
    (d.metadata as { managedFields?: unknown }).managedFields = managedFields;
    return d;
  };
  const before = at('1', 1, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused'))]);
  const ours = at('2', 4, [entry('binnacle', '2026-11-27T07:01:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused'))]);
  assert.equal(isOwnWrite(before, ours), true);
  assert.equal(isDependentChange(before, ours), false, "the release's own upgrade");
  const handover = at('2', 4, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused')), entry('binnacle-drift-ignored', '2026-11-27T07:01:00Z')]);
  assert.equal(isDependentChange(before, handover), false, 'the drift handover is Binnacle too');
  // A kubectl edit of a field Binnacle applied takes the field: Binnacle's entry no longer lists it.
  const byHand = at('2', 5, [entry('binnacle', '2026-11-27T07:00:00Z', 'Apply', fields()), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused')), entry('kubectl-edit', '2026-11-27T07:01:00Z', 'Update')]);
  assert.equal(leftOwnFieldsAlone(before, byHand), false);
  assert.equal(isDependentChange(before, byHand), true, 'kubectl edit');
  const both = at('2', 5, [entry('binnacle', '2026-11-27T07:01:00Z'), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused')), entry('kubectl-edit', '2026-11-27T07:01:00Z', 'Update')]);
  assert.equal(isDependentChange(before, both), true, 'ours and someone else in one event');
  const patchedByABinnacleClient = at('2', 5, [entry('binnacle', '2026-11-27T07:00:00Z', 'Apply', fields()), entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused')), entry('binnacle', '2026-11-27T07:01:00Z', 'Update')]);
  assert.equal(isDependentChange(before, patchedByABinnacleClient), true, "a plain patch under Binnacle's user agent may be anyone's edit");
  const entryRemoved = at('2', 5, [entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused')), entry('kubectl-edit', '2026-11-27T07:01:00Z', 'Update')]);
  assert.equal(isDependentChange(before, entryRemoved), true, "Binnacle's entry gone");
  // The Deployment controller's revision annotation on a rollout: another writer, nothing Binnacle applied touched.
  const controller = at('2', 1, [entry('binnacle', '2026-11-27T07:00:00Z'), entry('kube-controller-manager', '2026-11-27T07:01:00Z', 'Update', { ...fields('paused'), 'f:metadata': { 'f:annotations': { 'f:deployment.kubernetes.io/revision': {} } } })]);
  controller.metadata.annotations = { ...controller.metadata.annotations, 'deployment.kubernetes.io/revision': '2' };
  assert.equal(leftOwnFieldsAlone(before, controller), true);
  assert.equal(isDependentChange(before, controller), false, "another controller's write that left Binnacle's fields alone");
  const reordered = at('2', 1, [entry('kube-controller-manager', '2026-11-27T07:01:00Z', 'Update', fields('paused', 'x')), entry('binnacle', '2026-11-27T07:00:00Z')]);
  reordered.metadata.annotations = { ...reordered.metadata.annotations, note: 'added by hand' };
  assert.equal(isDependentChange(before, reordered), false, 'the entries in another order');
  // Where Binnacle holds no entry (objects from before server-side apply, or managedFields cleared), nothing can be told apart: re-queue.
  const noEntries = (rv: string, replicas: number): KubeObject => at(rv, replicas, [entry('kube-controller-manager', '2026-11-27T07:00:00Z', 'Update', fields('paused'))]);
  const unowned = noEntries('2', 1);
  unowned.metadata.annotations = { ...unowned.metadata.annotations, 'deployment.kubernetes.io/revision': '2' };
  assert.equal(isDependentChange(noEntries('1', 1), unowned), true, 'no entry of Binnacle to judge by');
  assert.equal(isDependentChange(dep('1'), dep('2', { spec: { replicas: 5 } })), true, 'no managedFields at all');
});

test("a release's object as the dependent watches hold it: only once its kind's informer has listed, by kind, scope, namespace and name", async () => {
  // The release's Deployment, labelled as Binnacle labels what it applies for a Memcached.
  const cluster = new FakeCluster({ objects: [{ ...dep('1'), metadata: { ...dep('1').metadata, labels: { 'binnacle.dev/owner-kind': 'Memcached' } } }] });
  const listed = (): string[] => cluster.log.filter((r) => r.verb === 'list').map((r) => r.labelSelector ?? '');
  // Lists wait for the gate; after the watch broke, the server stays away: the list never answers.
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  cluster.latency = (verb) => (verb !== 'list' ? Promise.resolve() : listed().length >= 2 ? new Promise<void>(() => undefined) : gate);
  const client = cluster.client();
  const rv = cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ns', name: 'd' })?.metadata.resourceVersion;
  const stop = new AbortController();
  const watches = new DependentWatches({ client, logger: pino({ level: 'silent' }), ownerKind: 'Memcached', enqueue: () => undefined, signal: stop.signal });
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ns', name: 'd' };
  assert.equal(watches.cached(ref), undefined, 'no informer of the kind yet');
  watches.observe([ref, { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'c' }]);
  assert.equal(watches.cached(ref), undefined, 'not listed yet: the caller reads it');
  release();
  for (let i = 0; i < 100 && watches.cached(ref) === undefined; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(watches.cached(ref)?.metadata.resourceVersion, rv);
  assert.deepEqual(listed(), ['binnacle.dev/owner-kind=Memcached', 'binnacle.dev/owner-kind=Memcached'], 'filtered by the owner-kind label');
  assert.equal(watches.cached({ ...ref, name: 'other' }), undefined, 'another name');
  assert.equal(watches.cached({ ...ref, namespace: 'elsewhere' }), undefined, 'another namespace');
  assert.equal(watches.cached({ ...ref, apiVersion: 'apps/v1beta1' }), undefined, 'another version of the kind has no informer');
  assert.equal(watches.cached({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'c' }), undefined, 'listed, but not there (or not labelled)');
  cluster.endWatches({ kind: 'Deployment', error: new Error('connection reset') });
  for (let i = 0; i < 100 && watches.cached(ref) !== undefined; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(watches.cached(ref), undefined, 'its watch failed and the server is away: the copy may be stale, so it is read');
  stop.abort();
  await watches.stopped();
});

test('a kind the manager may not list and watch is not watched (no refused list in a loop); the kinds it may are', async () => {
  // install-self's manager: it may read ConfigMaps cluster-wide, not Deployments.
  const cluster = new FakeCluster();
  cluster.authorize = (req) => !(req.kind === 'Deployment' && (req.verb === 'list' || req.verb === 'watch'));
  const client = cluster.client();
  const stop = new AbortController();
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const watches = new DependentWatches({
    client,
    logger,
    ownerKind: 'BundleDeployment',
    enqueue: () => undefined,
    signal: stop.signal,
    mayWatch: (ref, namespace) => mayI(client, ['list', 'watch'], ref.apiVersion, ref.kind, namespace),
  });
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ns', name: 'd' };
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'c' };
  watches.observe([deployment, configMap]);
  watches.observe([deployment]); // asked once, not again while the answer is pending or after a refusal
  for (let i = 0; i < 100 && watches.watched().length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
  watches.observe([deployment]);
  assert.deepEqual(watches.watched(), ['v1 ConfigMap']);
  assert.deepEqual(cluster.log.filter((r) => r.verb === 'list').map((r) => r.kind), ['ConfigMap'], 'no list of a kind it was refused');
  assert.deepEqual(cluster.reviews.filter((r) => r.resource === 'deployments').map((r) => r.verb).sort(), ['list', 'watch'], 'asked once per verb');
  assert.equal(lines.filter((l) => l.includes('may not list and watch')).length, 1, 'said once');
  assert.match(lines.find((l) => l.includes('may not list and watch')) ?? '', /apps\/v1 Deployment/);
  stop.abort();
  await watches.stopped();
});

test('an owner waiting for objects to be deleted is re-queued when each goes (cluster-scoped or namespaced), once, besides the owner their labels name; waiting for nothing forgets them', async () => {
  const labels = (owner: string): Record<string, string> => ({ 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': owner });
  const terminating = { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['example.com/hold'] };
  const name = 'poisonpillremediationtemplates.poison-pill.medik8s.io';
  // An earlier owner's CRD, its custom resources being cleaned up, and its ConfigMap, held by a finalizer.
  const crd: KubeObject = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name, ...terminating, labels: labels('pp-old') }, spec: { group: 'poison-pill.medik8s.io', names: { kind: 'PoisonPillRemediationTemplate', plural: 'poisonpillremediationtemplates' } } };
  const cm = (n: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: n, ...terminating, labels: labels('pp-old') } });
  const cluster = new FakeCluster({ objects: [crd, cm('settings'), cm('other')] });
  const enqueued: string[] = [];
  const stop = new AbortController();
  const watches = new DependentWatches({ client: cluster.client(), logger: pino({ level: 'silent' }), ownerKind: 'BundleDeployment', keyOf: ownerNameKeyOf, enqueue: (k) => enqueued.push(k), signal: stop.signal });
  const crdRef = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name };
  const cmRef = (n: string): ObjectRef => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: n });
  // Nothing was applied by the waiting owners: their waits start the watches of those kinds.
  watches.waitFor('pp-new', [crdRef, cmRef('settings')]);
  watches.waitFor('other-new', [cmRef('other')]);
  assert.deepEqual(watches.watched(), ['apiextensions.k8s.io/v1 CustomResourceDefinition', 'v1 ConfigMap']);
  const listed = (): boolean => [crdRef, cmRef('settings'), cmRef('other')].every((r) => watches.cached(r) !== undefined);
  for (let i = 0; i < 200 && !listed(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(listed(), 'listed');
  const gone = async (ref: ObjectRef): Promise<string[]> => {
    enqueued.length = 0;
    const live = cluster.get(ref);
    assert.ok(live !== undefined);
    cluster.drop(live);
    for (let i = 0; i < 200 && watches.cached(ref) !== undefined; i++) await new Promise((r) => setTimeout(r, 5));
    return [...enqueued].sort();
  };
  // The API server's cleanup finishes: the CRD is gone.
  assert.deepEqual(await gone(crdRef), ['pp-new', 'pp-old'], 'the waiting owner, besides the gone one its labels name');
  assert.deepEqual([...watches.waiting()], [['pp-new', ['/ConfigMap/team-a/settings']], ['other-new', ['/ConfigMap/team-a/other']]], 'the CRD is no longer waited for; the rest is');
  // A namespaced object, by namespace and name: only the owner waiting for that one.
  assert.deepEqual(await gone(cmRef('settings')), ['pp-new', 'pp-old']);
  assert.deepEqual([...watches.waiting()], [['other-new', ['/ConfigMap/team-a/other']]]);
  // The next reconcile of an owner waits for nothing (it went ahead, or is gone): its wait is forgotten.
  watches.waitFor('other-new', []);
  assert.deepEqual([...watches.waiting()], []);
  assert.deepEqual(await gone(cmRef('other')), ['pp-old'], 'only the owner its labels name');
  stop.abort();
  await watches.stopped();
});
