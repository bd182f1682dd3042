import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIELD_MANAGER } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { releaseEngine } from './engine.test-helper.js';
import { handOverHelmFields, heldByHelm, helmFieldsHandedOver, HELM_FIELD_MANAGER, unionFields } from './helm-fields.js';

const release = { name: 'pg', namespace: 'team-a' };
const owner = { kind: 'HelmRelease', name: 'pg', namespace: 'team-a', uid: 'u1' };
const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } };
const cmRef = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'pg' };
const cm = (data: Record<string, string>, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pg', namespace: 'team-a', labels }, data });

interface Entry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: Record<string, unknown>;
}
const managers = (o: KubeObject | undefined): string[] => ((o?.metadata.managedFields ?? []) as Entry[]).map((e) => `${e.manager ?? ''}/${e.operation ?? ''}`).sort();

test('a field the helm CLI set is removed once a revision of Binnacle leaves it out; one another manager set stays; without the hand-over it would stay', async () => {
  const run = async (handOver: boolean): Promise<KubeObject | undefined> => {
    const cluster = new FakeCluster();
    cluster.put(ns);
    // `helm install` (Helm 4, server-side) set data.a, data.b and a label; someone else an annotation.
    cluster.putApplied(cm({ a: '1', b: '2' }, { 'by-helm': 'yes' }), HELM_FIELD_MANAGER);
    cluster.putApplied({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pg', namespace: 'team-a', annotations: { note: 'kept' } } }, 'kubectl-annotate');
    assert.equal(heldByHelm(cluster.get(cmRef) as KubeObject), true);
    if (handOver) {
      // Adopted, then upgraded by Binnacle without data.b and the label.
      const res = await releaseEngine(cluster).apply({ owner, release, objects: [cm({ a: '1' })], adopt: true, healthTimeoutMs: 200 });
      assert.equal(res.status, 'deployed', res.message);
    } else {
      await cluster.client().apply(cm({ a: '1' }), { force: true });
    }
    return cluster.get(cmRef);
  };
  const after = await run(true);
  assert.deepEqual(after?.data, { a: '1' }, 'data.b, set by the helm CLI only, is gone');
  assert.equal(after?.metadata.labels?.['by-helm'], undefined, 'the helm CLI’s label is gone');
  assert.equal(after?.metadata.annotations?.note, 'kept', 'another manager’s field stays');
  assert.deepEqual(managers(after), [`${FIELD_MANAGER}/Apply`, 'kubectl-annotate/Apply']);
  // The same apply without the hand-over: server-side apply leaves what the helm CLI holds.
  const without = await run(false);
  assert.deepEqual(without?.data, { a: '1', b: '2' });
  assert.ok(managers(without).includes(`${HELM_FIELD_MANAGER}/Apply`));
});

test("helmFieldsHandedOver: Helm 3's Update and Helm 4's Apply entries merged into Binnacle's Apply entry; status and other managers' entries kept; nothing to do without the helm CLI", () => {
  const live: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'd',
      managedFields: [
        { manager: HELM_FIELD_MANAGER, operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:metadata': { 'f:labels': { 'f:a': {} } } } } } },
        { manager: HELM_FIELD_MANAGER, operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:template': { 'f:metadata': { 'f:labels': { 'f:b': {} } } } } } },
        { manager: HELM_FIELD_MANAGER, operation: 'Update', subresource: 'status', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:x': {} } } },
        { manager: FIELD_MANAGER, operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:selector': {} } } },
        { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:replicas': {} } } },
      ],
    },
  };
  const out = helmFieldsHandedOver(live, new Date('2026-12-03T12:00:00.000Z')) as Entry[];
  assert.deepEqual(out.map((e) => `${e.manager ?? ''}/${e.operation ?? ''}/${e.subresource ?? ''}`), ['helm/Update/status', 'kube-controller-manager/Update/status', `${FIELD_MANAGER}/Apply/`]);
  assert.deepEqual(out.at(-1), {
    manager: FIELD_MANAGER,
    operation: 'Apply',
    apiVersion: 'apps/v1',
    time: '2026-12-03T12:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:selector': {}, 'f:replicas': {}, 'f:template': { 'f:metadata': { 'f:labels': { 'f:a': {}, 'f:b': {} } } } } },
  });
  assert.equal(helmFieldsHandedOver({ ...live, metadata: { name: 'd', managedFields: (live.metadata.managedFields ?? []).slice(2) } }), undefined);
  assert.deepEqual(unionFields({ 'f:a': { '.': {}, 'f:x': {} } }, { 'f:a': { 'f:y': {} }, 'f:b': {} }), { 'f:a': { '.': {}, 'f:x': {}, 'f:y': {} }, 'f:b': {} });
});

test('handOverHelmFields: a write in between (409 on the resourceVersion it read) is read again and handed over anew; another error is thrown', async () => {
  const cluster = new FakeCluster();
  cluster.put(ns);
  cluster.putApplied(cm({ a: '1' }), HELM_FIELD_MANAGER);
  const real = cluster.client();
  let refusals = 1;
  const racing: Parameters<typeof handOverHelmFields>[0] = {
    find: real.find.bind(real),
    patch: ((...args: Parameters<typeof real.patch>) => {
      if (refusals-- > 0) return Promise.reject(new KubeApiError(409, 'Conflict', 'the object has been modified'));
      return real.patch(...args);
    }) as typeof real.patch,
  };
  assert.equal(await handOverHelmFields(racing, cm({ a: '1' })), true);
  assert.deepEqual(managers(cluster.get(cmRef)), [`${FIELD_MANAGER}/Apply`]);
  assert.equal(await handOverHelmFields(real, cm({ a: '1' })), false, 'nothing left to hand over');
  cluster.putApplied(cm({ a: '2' }), HELM_FIELD_MANAGER);
  const refusing: Parameters<typeof handOverHelmFields>[0] = { ...racing, patch: (() => Promise.reject(new KubeApiError(403, 'Forbidden', 'no'))) as typeof real.patch };
  await assert.rejects(handOverHelmFields(refusing, cm({ a: '1' })), /no/);
});

test('a repair (a `helm upgrade --force-conflicts` by hand, its record put back) hands the helm CLI’s fields over too: what only the hand upgrade set is gone', async () => {
  const cluster = new FakeCluster();
  cluster.put(ns);
  const engine = releaseEngine(cluster);
  const req = { owner, release, objects: [cm({ a: '1' })], healthTimeoutMs: 200, inputDigest: 'd1' };
  assert.equal((await engine.apply(req)).status, 'deployed');
  // Helm applies the release's marks as they are (it renders them), and its own values.
  const marks = cluster.get(cmRef)?.metadata;
  cluster.putApplied({ ...cm({ a: '3', byhand: 'yes' }), metadata: { name: 'pg', namespace: 'team-a', labels: marks?.labels ?? {}, annotations: marks?.annotations ?? {} } }, HELM_FIELD_MANAGER);
  const res = await engine.apply(req);
  assert.equal(res.revision, 1, 'a repair, no new revision');
  assert.deepEqual(cluster.get(cmRef)?.data, { a: '1' });
  assert.deepEqual(managers(cluster.get(cmRef)), [`${FIELD_MANAGER}/Apply`]);
});

test('an object of another release the helm CLI holds fields of is refused, and nothing of it changes hands; taken over (adopt, as `--take-ownership`), its fields are handed over with it', async () => {
  const cluster = new FakeCluster();
  cluster.put(ns);
  // Another release's ConfigMap, `helm install`ed (its marks name release "other").
  const theirs = { ...cm({ a: '1' }), metadata: { ...cm({ a: '1' }).metadata, labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: { 'meta.helm.sh/release-name': 'other', 'meta.helm.sh/release-namespace': 'team-a' } } };
  cluster.putApplied(theirs, HELM_FIELD_MANAGER);
  const before = cluster.get(cmRef);
  await assert.rejects(releaseEngine(cluster).apply({ owner, release, objects: [cm({ a: '2' })], healthTimeoutMs: 200 }), /refusing to apply, nothing was changed[\s\S]*other/);
  assert.deepEqual(cluster.get(cmRef)?.metadata.managedFields, before?.metadata.managedFields, 'its fields are the helm CLI’s still');
  assert.deepEqual(cluster.get(cmRef)?.data, { a: '1' });
  assert.equal(cluster.patched.length, 0, 'no patch was sent');
  const res = await releaseEngine(cluster).apply({ owner, release, objects: [cm({ a: '2' })], adopt: true, healthTimeoutMs: 200 });
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(managers(cluster.get(cmRef)), [`${FIELD_MANAGER}/Apply`]);
  assert.deepEqual(cluster.get(cmRef)?.data, { a: '2' });
});
