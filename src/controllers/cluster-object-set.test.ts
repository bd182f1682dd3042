/**
 * OLM v1's ClusterObjectSet over the one fake cluster, the real reconciler: phases in order behind
 * their probes, objects from immutable Secrets pinned by digest, collisions, archiving, the
 * progress deadline, and who writes (the installer, never the manager itself).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { loadOlmv1Crd } from '../api/olmv1/crds.js';
import { OBJECT_SET_FINALIZER, OWNER_NAME_LABEL, type ClusterObjectSet } from '../api/olmv1/object-set.js';
import { OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { FakeCluster, WRITE_VERBS } from '../kube/fake-cluster.test-helper.js';
import type { Condition, KubeObject } from '../kube/types.js';
import { ClusterObjectSetReconciler, MAX_REF_BYTES } from './cluster-object-set.js';

const logger = pino({ level: 'silent' });
const ctx = (): { logger: typeof logger; signal: AbortSignal } => ({ logger, signal: new AbortController().signal });
const NS = 'ns-1';
const INSTALLER = { namespace: 'olmv1-system', name: 'installer' };
const INSTALLER_USER = 'system:serviceaccount:olmv1-system:installer';
const COS_REF = (name = 'cos') => ({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterObjectSet', name });

function world(o: { installer?: boolean; now?: () => Date } = {}): { cluster: FakeCluster; reconcile: (name?: string) => Promise<unknown> } {
  const cluster = new FakeCluster({ objects: [loadOlmv1Crd('ClusterObjectSet')], ...(o.now === undefined ? {} : { now: o.now }) });
  cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const r = new ClusterObjectSetReconciler({ client: cluster.client({ user: 'manager' }), ...(o.installer === false ? {} : { installer: INSTALLER }), ...(o.now === undefined ? {} : { clock: o.now }) });
  return { cluster, reconcile: (name = 'cos') => r.reconcile({ key: name, name }, ctx()) };
}

const cm = (name: string, data: Record<string, string>, labels?: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, ...(labels === undefined ? {} : { labels }) }, data });
const pvc: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'claim', namespace: NS }, spec: { resources: { requests: { storage: '1Mi' } } } };
const boundProbe = { selector: { type: 'GroupKind' as const, groupKind: { group: '', kind: 'PersistentVolumeClaim' } }, assertions: [{ type: 'FieldValue' as const, fieldValue: { fieldPath: 'status.phase', value: 'Bound' } }] };

function objectSet(spec: Partial<ClusterObjectSet['spec']>, meta: Partial<KubeObject['metadata']> = {}): ClusterObjectSet {
  return { apiVersion: OLMV1_API_VERSION, kind: 'ClusterObjectSet', metadata: { name: 'cos', uid: 'cos-uid', generation: 1, creationTimestamp: '2026-12-04T00:00:00Z', ...meta }, spec: { lifecycleState: 'Active', collisionProtection: 'Prevent', revision: 1, ...spec } };
}

function condition(c: FakeCluster, type: string, name = 'cos'): Condition | undefined {
  return ((c.get(COS_REF(name))?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((x) => x.type === type);
}

function secret(name: string, data: Record<string, string | Buffer>, immutable = true): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, type: 'olm.operatorframework.io/object-data', ...(immutable ? { immutable: true } : {}), data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
}

describe('ClusterObjectSet', () => {
  test('a phase whose probe fails halts the next one, with the object and the probe named; once it passes, the rest roll out', async () => {
    const { cluster, reconcile } = world();
    // A claim that is Pending (the fake cluster binds the claims it creates at once), taken over as collisionProtection None allows.
    cluster.put({ ...pvc, status: { phase: 'Pending' } });
    cluster.put(objectSet({ progressionProbes: [boundProbe], phases: [{ name: 'pvc', objects: [{ object: pvc, collisionProtection: 'None' }] }, { name: 'configmap', objects: [{ object: cm('after', { a: '1' }) }] }] }));
    const first = await reconcile();
    assert.deepEqual(first, { requeueAfterMs: 5000 }, 'looked at again while rolling out');
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NS, name: 'claim' })?.metadata.ownerReferences?.[0]?.uid, 'cos-uid');
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'after' }), undefined, 'the second phase waits');
    const available = condition(cluster, 'Available');
    assert.deepEqual([available?.status, available?.reason], ['False', 'ProbeFailure']);
    assert.equal(available?.message, `Object PersistentVolumeClaim.v1 ${NS}/claim: value at key "status.phase" != "Bound"; expected: "Bound" got: "Pending"`);
    assert.deepEqual([condition(cluster, 'Progressing')?.status, condition(cluster, 'Progressing')?.reason, condition(cluster, 'Progressing')?.message], ['True', 'RollingOut', 'Revision  is rolling out.']);

    cluster.put({ ...(cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NS, name: 'claim' }) as KubeObject), status: { phase: 'Bound' } });
    assert.equal(await reconcile(), undefined);
    const after = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'after' });
    assert.deepEqual(after?.data, { a: '1' });
    assert.deepEqual(after?.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [['ClusterObjectSet', 'cos', 'cos-uid', true]]);
    assert.equal(after?.metadata.labels?.[OWNER_NAME_LABEL], '', "the revision's owner label, empty when it has none");
    assert.deepEqual([condition(cluster, 'Progressing')?.reason, condition(cluster, 'Available')?.reason, condition(cluster, 'Succeeded')?.status], ['Succeeded', 'ProbesSucceeded', 'True']);
    assert.ok(cluster.get(COS_REF())?.metadata.finalizers?.includes(OBJECT_SET_FINALIZER));
    const phases = (cluster.get(COS_REF())?.status as { observedPhases?: { name: string; digest: string }[] }).observedPhases;
    assert.deepEqual(phases?.map((p) => p.name), ['pvc', 'configmap']);
    assert.ok(phases?.every((p) => /^sha256:[0-9a-f]{64}$/.test(p.digest)));
    const writers = new Set(cluster.log.filter((r) => WRITE_VERBS.has(r.verb) && r.kind !== 'ClusterObjectSet').map((r) => r.identity));
    assert.deepEqual([...writers], [INSTALLER_USER], 'the objects are written as the installer, never as the manager');
  });

  test('a revision looked at again writes nothing when its objects are as it says, and repairs one someone changed', async () => {
    const { cluster, reconcile } = world();
    cluster.put({ ...pvc, status: { phase: 'Pending' } });
    cluster.put(objectSet({ progressionProbes: [boundProbe], phases: [{ name: 'p', objects: [{ object: pvc, collisionProtection: 'None' }, { object: cm('c', { a: '1' }) }] }] }));
    await reconcile();
    const applies = (): number => cluster.log.filter((r) => r.verb === 'apply' && r.kind !== 'ClusterObjectSet').length;
    const before = applies();
    await reconcile();
    await reconcile();
    assert.equal(applies(), before, 'nothing written while nothing changed');
    cluster.put({ ...(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'c' }) as KubeObject), data: { a: 'changed by hand' } });
    await reconcile();
    assert.equal(applies(), before + 1);
    assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'c' })?.data, { a: '1' });
  });

  test('objects from Secrets: a mutable Secret blocks; an immutable one is applied and pinned; content changed under the same name blocks until restored', async () => {
    const { cluster, reconcile } = world();
    const obj = (value: string): string => JSON.stringify(cm('from-ref', { key: value }));
    cluster.put(secret('mutable', { configmap: obj('v') }, false));
    cluster.put(objectSet({ phases: [{ name: 'resources', objects: [{ ref: { name: 'mutable', namespace: NS, key: 'configmap' } }] }] }));
    await reconcile();
    assert.deepEqual([condition(cluster, 'Progressing')?.status, condition(cluster, 'Progressing')?.reason, condition(cluster, 'Progressing')?.message], ['False', 'Blocked', `the following secrets are not immutable (referenced secrets must have immutable set to true): ${NS}/mutable`]);
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'from-ref' }), undefined);

    cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: 'mutable' });
    // gzipped content is read too
    cluster.put(secret('mutable', { configmap: gzipSync(obj('original')) }));
    await reconcile();
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Succeeded');
    assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'from-ref' })?.data, { key: 'original' });

    cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: 'mutable' });
    cluster.put(secret('mutable', { configmap: obj('TAMPERED') }));
    await reconcile();
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Blocked');
    assert.match(condition(cluster, 'Progressing')?.message ?? '', /^resolved content of 1 phase\(s\) has changed: phase "resources" \(expected digest sha256:[0-9a-f]{64}, got sha256:[0-9a-f]{64}\)/);
    assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'from-ref' })?.data, { key: 'original' }, 'the tampered content is not applied');

    cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: 'mutable' });
    cluster.put(secret('mutable', { configmap: gzipSync(obj('original')) }));
    await reconcile();
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Succeeded');
  });

  test('a gzipped object past 10 MiB is refused by name, unread past its bound; a key that is not there is named', async () => {
    const { cluster, reconcile } = world();
    cluster.put(secret('bomb', { configmap: gzipSync(Buffer.alloc(MAX_REF_BYTES + 1, 0x20)) }));
    cluster.put(objectSet({ phases: [{ name: 'resources', objects: [{ ref: { name: 'bomb', namespace: NS, key: 'configmap' } }, { ref: { name: 'bomb', namespace: NS, key: 'nope' } }] }] }));
    await assert.rejects(reconcile(), /decompressed data for key "configmap" in Secret ns-1\/bomb exceeds maximum size \(10485760 bytes\)/);
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
    cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: 'bomb' });
    cluster.put(secret('bomb', { configmap: JSON.stringify(cm('x', {})) }));
    await assert.rejects(reconcile(), /key "nope" not found in Secret ns-1\/bomb/);
    // A key that is not JSON (someone's password) is refused without its content in the status.
    cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: 'bomb' });
    cluster.put(secret('bomb', { configmap: 'hunter2-not-json', nope: '{}' }));
    await assert.rejects(reconcile(), /unmarshaling object from key "configmap" in Secret ns-1\/bomb: not valid JSON$/);
    assert.doesNotMatch(JSON.stringify(cluster.get(COS_REF())?.status), /hunter2/);
    // Secrets are read as the installer, never as the manager.
    assert.deepEqual(new Set(cluster.log.filter((r) => r.kind === 'Secret').map((r) => r.identity)), new Set([INSTALLER_USER]));
  });

  test("an object someone else has is a collision under Prevent, and nothing of that phase is written; IfNoController takes one without a controller, never one with", async () => {
    const { cluster, reconcile } = world();
    cluster.put(cm('theirs', { owner: 'them' }));
    cluster.put({ ...cm('controlled', { owner: 'deploy' }), metadata: { ...cm('controlled', {}).metadata, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'd-uid', controller: true }] } });
    cluster.put(objectSet({ phases: [{ name: 'p', objects: [{ object: cm('mine', { a: '1' }) }, { object: cm('theirs', { owner: 'us' }) }] }] }));
    assert.deepEqual(await reconcile(), { requeueAfterMs: 10_000 });
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
    assert.match(condition(cluster, 'Progressing')?.message ?? '', /^revision object collisions in phase 0\nConfigMap\.v1 ns-1\/theirs: exists and is not owned by this revision \(collisionProtection Prevent\)$/);
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'mine' }), undefined, 'nothing of the phase written');
    assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'theirs' })?.data, { owner: 'them' });

    cluster.remove(COS_REF());
    cluster.put(objectSet({ collisionProtection: 'IfNoController', phases: [{ name: 'p', objects: [{ object: cm('theirs', { owner: 'us' }) }, { object: cm('controlled', { owner: 'us' }) }] }] }));
    await reconcile();
    assert.match(condition(cluster, 'Progressing')?.message ?? '', /ConfigMap\.v1 ns-1\/controlled: controlled by Deployment d \(controller reference\) \(collisionProtection IfNoController\)$/);
    cluster.remove(COS_REF());
    cluster.put(objectSet({ collisionProtection: 'IfNoController', phases: [{ name: 'p', objects: [{ object: cm('theirs', { owner: 'us' }) }] }] }));
    await reconcile();
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Succeeded');
    assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'theirs' })?.data, { owner: 'us' });
  });

  test("archived: the objects it controls are deleted, one another revision took over stays, then it says Archived and lets go", async () => {
    const { cluster, reconcile } = world();
    cluster.put(objectSet({ phases: [{ name: 'p', objects: [{ object: cm('a', { x: '1' }) }, { object: cm('b', { x: '1' }) }] }] }));
    await reconcile();
    const b = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'b' }) as KubeObject;
    cluster.put({ ...b, metadata: { ...b.metadata, ownerReferences: [{ apiVersion: OLMV1_API_VERSION, kind: 'ClusterObjectSet', name: 'cos-2', uid: 'cos-2-uid', controller: true }] } });
    const live = cluster.get(COS_REF()) as ClusterObjectSet;
    cluster.put({ ...live, spec: { ...live.spec, lifecycleState: 'Archived' } });
    await reconcile();
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' }), undefined);
    assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'b' }), "the other revision's object stays");
    // the deletes landed within this reconcile (no finalizers): the next one says Archived, the one after lets go
    await reconcile();
    assert.deepEqual([condition(cluster, 'Progressing')?.status, condition(cluster, 'Progressing')?.reason, condition(cluster, 'Available')?.status, condition(cluster, 'Available')?.reason], ['False', 'Archived', 'Unknown', 'Archived']);
    assert.ok(cluster.get(COS_REF())?.metadata.finalizers?.includes(OBJECT_SET_FINALIZER));
    await reconcile();
    assert.equal(cluster.get(COS_REF())?.metadata.finalizers?.includes(OBJECT_SET_FINALIZER), false);
  });

  test('past its progress deadline a revision still rolling out says ProgressDeadlineExceeded, and recovers to Succeeded when its probes pass', async () => {
    let now = Date.parse('2026-12-04T00:00:30Z');
    const { cluster, reconcile } = world({ now: () => new Date(now) });
    cluster.put({ ...pvc, status: { phase: 'Pending' } });
    cluster.put(objectSet({ progressDeadlineMinutes: 1, progressionProbes: [boundProbe], phases: [{ name: 'pvc', objects: [{ object: pvc, collisionProtection: 'None' }] }] }));
    await reconcile();
    assert.equal(condition(cluster, 'Progressing')?.reason, 'RollingOut');
    now += 60_000;
    await reconcile();
    const p = condition(cluster, 'Progressing');
    assert.deepEqual([p?.status, p?.reason], ['False', 'ProgressDeadlineExceeded']);
    assert.equal(p?.message, 'Revision has not rolled out for 1 minute(s). Last status: Revision  is rolling out.');
    cluster.put({ ...(cluster.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NS, name: 'claim' }) as KubeObject), status: { phase: 'Bound' } });
    await reconcile();
    assert.deepEqual([condition(cluster, 'Progressing')?.status, condition(cluster, 'Progressing')?.reason], ['True', 'Succeeded']);
  });

  test('without an installer identity nothing is applied, and the condition says how to give one', async () => {
    const { cluster, reconcile } = world({ installer: false });
    cluster.put(objectSet({ phases: [{ name: 'p', objects: [{ object: cm('a', {}) }] }] }));
    await reconcile();
    assert.deepEqual([condition(cluster, 'Progressing')?.reason, condition(cluster, 'Progressing')?.message], ['Blocked', 'no identity to apply ClusterObjectSets as: start the manager with --olmv1-installer=<namespace>/<service account>']);
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' }), undefined);
  });

  test("an object another release holds (Binnacle's or Helm's labels, no controller) is not taken under IfNoController; None takes one with a controller and keeps that owner as a non-controller", async () => {
    const { cluster, reconcile } = world();
    cluster.put({ ...cm('released', { owner: 'helm' }), metadata: { name: 'released', namespace: NS, labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { 'meta.helm.sh/release-name': 'other' } } });
    cluster.put(objectSet({ collisionProtection: 'IfNoController', phases: [{ name: 'p', objects: [{ object: cm('released', { owner: 'us' }) }] }] }));
    await reconcile();
    assert.match(condition(cluster, 'Progressing')?.message ?? '', /ConfigMap\.v1 ns-1\/released: held by Helm release \/other \(collisionProtection IfNoController\)$/);
    assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'released' })?.data, { owner: 'helm' });

    cluster.put({ ...cm('controlled', { owner: 'deploy' }), metadata: { name: 'controlled', namespace: NS, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'd-uid', controller: true }] } });
    cluster.remove(COS_REF());
    cluster.put(objectSet({ collisionProtection: 'None', phases: [{ name: 'p', objects: [{ object: cm('controlled', { owner: 'us' }) }] }] }));
    await reconcile();
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Succeeded');
    const live = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'controlled' });
    assert.deepEqual(live?.metadata.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['Deployment', 'd-uid', false], ['ClusterObjectSet', 'cos-uid', true]]);
    assert.equal(live?.metadata.annotations?.['olm.operatorframework.io/revision'], '1');
    assert.equal(live?.metadata.labels?.['app.kubernetes.io/managed-by'], 'olm.operatorframework.io');
    // Looked at again: nothing to write, and the other owner stays.
    const writes = cluster.log.filter((r) => WRITE_VERBS.has(r.verb) && r.kind === 'ConfigMap').length;
    await reconcile();
    assert.equal(cluster.log.filter((r) => WRITE_VERBS.has(r.verb) && r.kind === 'ConfigMap').length, writes);
    cluster.put({ ...(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'controlled' }) as KubeObject), data: { owner: 'hand' } });
    await reconcile();
    assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'controlled' })?.metadata.ownerReferences?.map((r) => [r.kind, r.controller]), [['Deployment', false], ['ClusterObjectSet', true]], 'a repair keeps the other owner');
  });

  test('an object in two phases, or with metadata only the server sets, is refused before anything is written', async () => {
    const { cluster, reconcile } = world();
    cluster.put(objectSet({ phases: [{ name: 'a', objects: [{ object: cm('twice', { v: '1' }) }] }, { name: 'b', objects: [{ object: cm('twice', { v: '2' }) }, { object: { ...cm('rv', {}), metadata: { name: 'rv', namespace: NS, resourceVersion: '7' } } }] }] }));
    assert.deepEqual(await reconcile(), { requeueAfterMs: 10_000 });
    assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
    assert.equal(condition(cluster, 'Progressing')?.message, 'revision validation error: ConfigMap.v1 ns-1/twice is in phase "a" and again in phase "b"; phase 1 validation error: ConfigMap.v1 ns-1/rv sets metadata.resourceVersion, which only the API server or an owner sets');
    assert.equal(cluster.log.filter((r) => WRITE_VERBS.has(r.verb) && r.kind === 'ConfigMap').length, 0);
  });

  test('an object from a Secret nested past 256 levels is refused by name (nothing recursive walks it)', async () => {
    const { cluster, reconcile } = world();
    const deep = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","namespace":"${NS}"},"data":{},"x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    cluster.put(secret('deep', { configmap: deep }));
    cluster.put(objectSet({ phases: [{ name: 'p', objects: [{ ref: { name: 'deep', namespace: NS, key: 'configmap' } }] }] }));
    await assert.rejects(reconcile(), /the object at key "configmap" in Secret ns-1\/deep nests deeper than 256 levels/);
  });

  test('archiving tears down the last phase first, and the earlier one only once it is gone', async () => {
    const { cluster, reconcile } = world();
    cluster.put(objectSet({ phases: [{ name: 'operator', objects: [{ object: cm('operator', {}) }] }, { name: 'cr', objects: [{ object: cm('cr', {}) }] }] }));
    await reconcile();
    const cr = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'cr' }) as KubeObject;
    // The operator's finalizer holds its CR until the operator removes it.
    cluster.put({ ...cr, metadata: { ...cr.metadata, finalizers: ['operator.example.com/cleanup'] } });
    const live = cluster.get(COS_REF()) as ClusterObjectSet;
    cluster.put({ ...live, spec: { ...live.spec, lifecycleState: 'Archived' } });
    await reconcile();
    assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'cr' })?.metadata.deletionTimestamp, 'the CR is being deleted');
    assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'operator' }), 'the operator stays while its CR is there');
    assert.equal(condition(cluster, 'Progressing')?.message, 'removing revision resources that are not owned by another revision');
    const going = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'cr' }) as KubeObject;
    cluster.put({ ...going, metadata: { ...going.metadata, finalizers: [] } });
    cluster.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'cr' });
    await reconcile();
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'operator' }), undefined);
  });

  test('an older revision looked at again leaves what a newer one took over (only probing it), and archiving it deletes none of it', async () => {
    const { cluster, reconcile } = world();
    const owner = { labels: { [OWNER_NAME_LABEL]: 'ext' } };
    cluster.put(objectSet({ revision: 1, phases: [{ name: 'p', objects: [{ object: cm('a', { v: '1' }) }] }] }, { name: 'rev-1', uid: 'uid-1', ...owner }));
    await reconcile('rev-1');
    // rev-2 takes `a` over and is still rolling out (its second phase's probe fails).
    cluster.put(
      objectSet(
        { revision: 2, progressionProbes: [{ selector: { type: 'Label', label: { matchLabels: { gate: 'yes' } } }, assertions: [{ type: 'FieldValue', fieldValue: { fieldPath: 'data.ready', value: 'yes' } }] }], phases: [{ name: 'p', objects: [{ object: cm('a', { v: '2' }) }] }, { name: 'q', objects: [{ object: cm('gate', { ready: 'no' }, { gate: 'yes' }) }] }] },
        { name: 'rev-2', uid: 'uid-2', ...owner },
      ),
    );
    await reconcile('rev-2');
    const taken = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' });
    assert.deepEqual([taken?.data, taken?.metadata.ownerReferences?.find((r) => r.controller === true)?.uid], [{ v: '2' }, 'uid-2']);
    await reconcile('rev-1');
    const still = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' });
    assert.deepEqual([still?.data, still?.metadata.ownerReferences?.find((r) => r.controller === true)?.uid], [{ v: '2' }, 'uid-2'], 'the older revision does not take it back');
    const old = cluster.get(COS_REF('rev-1')) as ClusterObjectSet;
    cluster.put({ ...old, spec: { ...old.spec, lifecycleState: 'Archived' } });
    await reconcile('rev-1');
    await reconcile('rev-1');
    assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' }), "archiving the older revision leaves the newer one's object");
  });

  test('a completed revision archives the older active revisions of the same owner', async () => {
    const { cluster, reconcile } = world();
    const owner = { labels: { [OWNER_NAME_LABEL]: 'ext' } };
    cluster.put(objectSet({ revision: 1, phases: [{ name: 'p', objects: [{ object: cm('a', { v: '1' }) }] }] }, { name: 'rev-1', uid: 'uid-1', ...owner }));
    await reconcile('rev-1');
    cluster.put(objectSet({ revision: 2, phases: [{ name: 'p', objects: [{ object: cm('a', { v: '2' }) }] }] }, { name: 'rev-2', uid: 'uid-2', ...owner }));
    await reconcile('rev-2');
    const a = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' });
    assert.deepEqual(a?.data, { v: '2' }, 'the sibling hands its object over');
    assert.equal(a?.metadata.labels?.[OWNER_NAME_LABEL], 'ext');
    assert.equal((cluster.get(COS_REF('rev-1')) as ClusterObjectSet).spec.lifecycleState, 'Archived');
    await reconcile('rev-1');
    await reconcile('rev-1');
    assert.ok(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' }), 'archiving the old revision leaves what the new one controls');
  });
});
