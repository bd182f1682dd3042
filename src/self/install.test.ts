import { test } from 'node:test';
import assert from 'node:assert/strict';
import { faults, FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { catalogCertificateExpiry } from './catalog-tls.js';
import { installSelf, statusSelf, uninstallSelf, type SelfClient } from './install.js';
import { protectionPolicy, PROTECTION_POLICY_NAME } from '../actions/platform-protection.js';
import { twinPolicy, TWIN_POLICY_NAME } from '../api/olmv1/twin-policy.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { loadOlmv1Crds } from '../api/olmv1/crds.js';
import { SELF_LABELS, selfManifests } from './manifests.js';
import { parseRecord, RECORD_NAME } from './record.js';

const NS = 'binnacle-system';
const IMAGE = 'example.com/binnacle@sha256:0000000000000000000000000000000000000000000000000000000000000000';
const RBAC = 'rbac.authorization.k8s.io/v1';

/** The one fake cluster; uninstall drops finalizers with a merge patch, as it does on a real one. */
function cluster(): { fake: FakeCluster; client: SelfClient } {
  const fake = new FakeCluster();
  return { fake, client: fake.client() };
}

/** A release: this binary's manifests, with `extra` objects (what a later release drops). */
function release(version: string, extra: KubeObject[] = []): { version: string; objects: KubeObject[] } {
  return { version, objects: [...selfManifests({ namespace: NS, image: IMAGE }), ...extra] };
}

const LEGACY_ROLE: KubeObject = { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'binnacle-legacy', labels: { ...SELF_LABELS } }, rules: [] };
const LEGACY_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'legacies.binnacle.dev', labels: { ...SELF_LABELS } },
  spec: { group: 'binnacle.dev', scope: 'Cluster', names: { kind: 'Legacy', plural: 'legacies' }, versions: [{ name: 'v1', served: true, storage: true }] },
};
const LEGACY_CR: KubeObject = { apiVersion: 'binnacle.dev/v1', kind: 'Legacy', metadata: { name: 'keep-me', finalizers: ['binnacle.dev/x'] } };

function record(fake: FakeCluster): ReturnType<typeof parseRecord> {
  const cm = fake.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: RECORD_NAME });
  assert.ok(cm !== undefined, 'install-self wrote its record');
  return parseRecord(cm);
}

const states = (objects: { kind: string; name: string; state: string }[], state: string): string[] => objects.filter((o) => o.state === state).map((o) => `${o.kind} ${o.name}`);

test('an install records its set; the next release prunes what it dropped, keeping a CRD that has custom resources until they are gone', async () => {
  const { fake, client } = cluster();
  const one = await installSelf(client, { release: release('0.0.1', [LEGACY_ROLE, LEGACY_CRD]) });
  assert.equal(one.version, '0.0.1');
  const r1 = record(fake);
  assert.equal(r1.phase, 'installed');
  assert.equal(r1.version, '0.0.1');
  assert.equal(r1.image, IMAGE);
  assert.ok(r1.objects.some((o) => o.kind === 'ClusterRole' && o.name === 'binnacle-legacy'));
  assert.deepEqual(r1.prune, []);
  fake.put(LEGACY_CR);

  const two = await installSelf(client, { release: release('0.0.2') });
  assert.equal(two.previousVersion, '0.0.1');
  assert.deepEqual(states(two.objects, 'pruned'), ['ClusterRole binnacle-legacy']);
  assert.deepEqual(states(two.objects, 'kept'), ['CustomResourceDefinition legacies.binnacle.dev']);
  assert.match(two.objects.find((o) => o.state === 'kept')?.note ?? '', /not in release 0\.0\.2, but 1 custom resource\(s\) remain \(Legacy keep-me\): deleting the CRD would delete them/);
  assert.equal(fake.get({ apiVersion: RBAC, kind: 'ClusterRole', name: 'binnacle-legacy' }), undefined);
  assert.ok(fake.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'legacies.binnacle.dev' }) !== undefined);
  assert.ok(fake.get({ apiVersion: 'v1', kind: 'Namespace', name: NS }) !== undefined, 'the target namespace stays');
  const r2 = record(fake);
  assert.equal(r2.version, '0.0.2');
  assert.deepEqual(r2.prune.map((o) => o.name), ['legacies.binnacle.dev']);

  const st = await statusSelf(client, { namespace: NS });
  assert.equal(st.source, 'record');
  assert.equal(st.state, 'installed');
  assert.equal(st.version, '0.0.2');
  assert.deepEqual(st.leftovers, ['CustomResourceDefinition legacies.binnacle.dev']);
  assert.ok(!st.objects.some((o) => o.name.startsWith('binnacle-legacy') || o.name === 'legacies.binnacle.dev'), 'judged by 0.0.2, which lacks them');

  fake.remove({ apiVersion: LEGACY_CR.apiVersion, kind: LEGACY_CR.kind, name: LEGACY_CR.metadata.name ?? '' });
  const again = await installSelf(client, { release: release('0.0.2') });
  assert.deepEqual(states(again.objects, 'pruned'), ['CustomResourceDefinition legacies.binnacle.dev']);
  assert.deepEqual(record(fake).prune, []);
  assert.deepEqual((await statusSelf(client, { namespace: NS })).leftovers, []);
});

test('moving from a release to --image prunes what the binary\'s manifests lack; an object no longer labelled Binnacle\'s is left alone', async () => {
  const { fake, client } = cluster();
  const foreign: KubeObject = { ...LEGACY_ROLE, metadata: { name: 'binnacle-shared', labels: { ...SELF_LABELS } } };
  await installSelf(client, { release: release('0.0.1', [LEGACY_ROLE, foreign]) });
  const live = fake.get({ apiVersion: RBAC, kind: 'ClusterRole', name: 'binnacle-shared' });
  assert.ok(live !== undefined);
  fake.put({ ...live, metadata: { ...live.metadata, labels: { team: 'platform' } } });
  const r = await installSelf(client, { namespace: NS, image: IMAGE });
  assert.equal(r.version, undefined);
  assert.deepEqual(states(r.objects, 'pruned'), ['ClusterRole binnacle-legacy']);
  assert.match(r.objects.find((o) => o.name === 'binnacle-shared')?.note ?? '', /not in the manifests of this binary .*no longer labelled app\.kubernetes\.io\/part-of=binnacle: left as it is/);
  assert.ok(fake.get({ apiVersion: RBAC, kind: 'ClusterRole', name: 'binnacle-shared' }) !== undefined);
  assert.equal(record(fake).version, undefined);
});

test('an interrupted install leaves its record pending: status says so, and the next install finishes the pruning', async () => {
  const { fake, client } = cluster();
  await installSelf(client, { release: release('0.0.1', [LEGACY_ROLE]) });
  fake.rejectNames.add('binnacle-catalogs');
  await assert.rejects(installSelf(client, { release: release('0.0.2') }), /binnacle-catalogs/);
  const pending = record(fake);
  assert.equal(pending.phase, 'pending');
  assert.equal(pending.version, '0.0.2');
  assert.deepEqual(pending.prune.map((o) => o.name), ['binnacle-legacy']);
  const st = await statusSelf(client, { namespace: NS });
  assert.equal(st.unfinished, true);
  assert.equal(st.state, 'partial');
  assert.deepEqual(st.leftovers, ['ClusterRole binnacle-legacy']);

  fake.rejectNames.clear();
  const r = await installSelf(client, { release: release('0.0.2') });
  assert.deepEqual(states(r.objects, 'pruned'), ['ClusterRole binnacle-legacy'], 'the record of the interrupted install still said what to prune');
  assert.equal(record(fake).phase, 'installed');
  assert.equal((await statusSelf(client, { namespace: NS })).state, 'installed');
});

test('status judges a release by its own objects: one deleted by hand is missing; without a record, by this binary\'s manifests', async () => {
  const { fake, client } = cluster();
  await installSelf(client, { release: release('0.0.1', [LEGACY_ROLE]) });
  fake.remove({ apiVersion: RBAC, kind: 'ClusterRole', name: 'binnacle-legacy' });
  const st = await statusSelf(client, { namespace: NS });
  assert.equal(st.state, 'partial');
  assert.deepEqual(st.missing, ['ClusterRole binnacle-legacy']);

  fake.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: RECORD_NAME });
  const old = await statusSelf(client, { namespace: NS });
  assert.equal(old.source, 'binary');
  assert.equal(old.state, 'installed', 'the binary\'s manifests have no binnacle-legacy');
  assert.equal(old.unfinished, false);
});

test('uninstall removes exactly what the record lists, what it had left to prune, and the record; the namespace last', async () => {
  const { fake, client } = cluster();
  await installSelf(client, { release: release('0.0.1', [LEGACY_ROLE, LEGACY_CRD]) });
  fake.put(LEGACY_CR);
  await installSelf(client, { release: release('0.0.2', [LEGACY_ROLE]) });
  const unrelated: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'default' } };
  fake.put(unrelated);
  // The policies the manager made at start that deny (PlatformOperators' extensions, OLM v1's twins) go too.
  for (const p of [...protectionPolicy(['m']), ...twinPolicy(['m'])]) fake.put(p);
  const r = await uninstallSelf(client, { namespace: NS });
  assert.ok(r.deleted.includes(`ValidatingAdmissionPolicy ${TWIN_POLICY_NAME}`) && r.deleted.includes(`ValidatingAdmissionPolicyBinding ${PROTECTION_POLICY_NAME}`), r.deleted.join(', '));
  assert.ok(r.deleted.includes('ClusterRole binnacle-legacy'));
  assert.ok(r.deleted.includes('CustomResourceDefinition legacies.binnacle.dev'), 'the CRD kept by the upgrade goes with the installation');
  assert.ok(r.deleted.includes(`ConfigMap ${NS}/${RECORD_NAME}`));
  assert.equal(r.deleted.at(-1), `Namespace ${NS}`);
  assert.equal(r.deleted[0], `Deployment ${NS}/binnacle-manager`);
  assert.deepEqual(r.orphaned, ['Legacy keep-me'], 'its custom resource had a finalizer no manager would remove');
  assert.deepEqual(r.terminating, [], 'everything deleted is gone when it returns');
  const left = [...fake.objects.values()].filter((o) => o.metadata.labels?.['app.kubernetes.io/part-of'] === 'binnacle').map((o) => `${o.kind} ${o.metadata.name ?? ''}`);
  assert.deepEqual(left, []);
  assert.ok(fake.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'mine' }) !== undefined);
  assert.deepEqual((await uninstallSelf(client, { namespace: NS })).deleted, [], 'again: nothing left to delete');
});

test('uninstall waits for what it deleted to go, and names what a finalizer still holds when the timeout runs out', async () => {
  const { fake, client } = cluster();
  await installSelf(client, { release: release('0.0.1') });
  // The API server keeps a namespace (Terminating) while its contents go; here, forever.
  fake.heldNames.add(NS);
  const r = await uninstallSelf(client, { namespace: NS, timeoutMs: 1200 });
  assert.ok(r.deleted.includes(`Namespace ${NS}`));
  assert.deepEqual(r.terminating, [`Namespace ${NS}`]);
  assert.notEqual(fake.get({ apiVersion: 'v1', kind: 'Namespace', name: NS })?.metadata.deletionTimestamp, undefined, 'Terminating, held');
});

test('an installation older than records is found by install-self\'s label, and an upgrade from it prunes what the new set dropped', async () => {
  const { fake, client } = cluster();
  await installSelf(client, { release: release('0.0.1', [LEGACY_ROLE]) });
  // As a binary from before records left it: no record.
  fake.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: RECORD_NAME });
  const foreign: KubeObject = { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'someone-elses', labels: { 'app.kubernetes.io/part-of': 'binnacle' } }, rules: [] };
  fake.put(foreign);
  const r = await installSelf(client, { release: release('0.0.2') });
  assert.deepEqual(r.objects.filter((x) => x.state === 'pruned').map((x) => `${x.kind} ${x.name}`), ['ClusterRole binnacle-legacy']);
  assert.equal(fake.get({ apiVersion: RBAC, kind: 'ClusterRole', name: 'binnacle-legacy' }), undefined);
  assert.ok(fake.get({ apiVersion: RBAC, kind: 'ClusterRole', name: 'someone-elses' }) !== undefined, 'only install-self\'s managed-by label counts');
  assert.ok(fake.get({ apiVersion: 'v1', kind: 'Namespace', name: NS }) !== undefined, 'the namespace stays');
  assert.ok(parseRecord(fake.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: RECORD_NAME }) ?? { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }).objects.length > 0, 'a record now');
});

test("the catalog Service's certificate: made by the first install-self before the Deployment that mounts it, kept by the next (nothing changes), recorded and removed by uninstall-self; a release whose manager mounts none gets none", async () => {
  const { fake, client } = cluster();
  const secretRef = { apiVersion: 'v1', kind: 'Secret', namespace: NS, name: 'binnacle-catalogs-tls' };
  const one = await installSelf(client, { namespace: NS, image: IMAGE });
  const row = one.objects.find((o) => o.kind === 'Secret' && o.name === 'binnacle-catalogs-tls');
  assert.equal(row?.state, 'created');
  assert.match(row?.note ?? '', /^the catalog Service's certificate, issued now, valid until \d{4}-/);
  const kinds = one.objects.map((o) => `${o.kind} ${o.name}`);
  assert.ok(kinds.indexOf('Secret binnacle-catalogs-tls') < kinds.indexOf('Deployment binnacle-manager'), 'applied before the Deployment that mounts it');
  const made = fake.get(secretRef);
  assert.equal(made?.type, 'kubernetes.io/tls');
  assert.ok(record(fake).objects.some((o) => o.kind === 'Secret' && o.name === 'binnacle-catalogs-tls'), 'in the record');

  const two = await installSelf(client, { namespace: NS, image: IMAGE });
  const again = two.objects.find((o) => o.kind === 'Secret' && o.name === 'binnacle-catalogs-tls');
  // (The fake cluster writes every apply anew; the API server answers an identical apply as unchanged.)
  assert.match(again?.note ?? '', /, kept, valid until /);
  assert.deepEqual(fake.get(secretRef)?.data, made?.data, 'the same certificate: clients that trust its CA keep working');

  const status = await statusSelf(client, { namespace: NS });
  assert.equal(status.catalogCertificate?.renewDue, false);
  assert.ok(new Date(status.catalogCertificate?.notAfter ?? 0).getTime() > Date.now() + 300 * 24 * 3600 * 1000, JSON.stringify(status.catalogCertificate));
  assert.equal((await catalogCertificateExpiry(client, NS, new Date(Date.now() + 340 * 24 * 3600 * 1000)))?.renewDue, true, 'within 30 days of expiry: due');

  const r = await uninstallSelf(client, { namespace: NS });
  assert.ok(r.deleted.includes(`Secret ${NS}/binnacle-catalogs-tls`), r.deleted.join(', '));
  assert.equal(await catalogCertificateExpiry(client, NS), undefined);
  assert.equal(fake.get(secretRef), undefined);

  // A release made before the manager served HTTPS: its Deployment mounts no certificate, so none is made.
  const older = selfManifests({ namespace: NS, image: IMAGE }).map((o) => {
    if (o.kind !== 'Deployment') return o;
    const copy = structuredClone(o) as KubeObject & { spec: { template: { spec: { volumes: { name: string }[] } } } };
    copy.spec.template.spec.volumes = copy.spec.template.spec.volumes.filter((v) => v.name !== 'catalogs-tls');
    return copy;
  });
  const plain = await installSelf(cluster().client, { release: { version: '0.0.1', objects: older } });
  assert.ok(!plain.objects.some((o) => o.kind === 'Secret'), JSON.stringify(plain.objects.filter((o) => o.kind === 'Secret')));
});

test("an install over a manager Deployment with the API server's rollingUpdate switches it to Recreate; a conflict on the switch (the object written or made again in between) is read again and the switch made anew", async () => {
  const { fake, client } = cluster();
  await installSelf(client, { release: release('0.0.1') });
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: 'binnacle-manager' };
  const installed = fake.get(ref);
  assert.ok(installed !== undefined);
  // As an install made before the manager's Recreate left it: the default strategy the API server fills in.
  fake.put({ ...installed, spec: { ...(installed.spec as Record<string, unknown>), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } } });
  let refused = 0;
  fake.inject({
    verb: 'patch',
    kind: 'Deployment',
    error: () => {
      refused++;
      return faults.conflict();
    },
  });
  const two = await installSelf(client, { release: release('0.0.2') });
  assert.equal(refused, 1, 'the first switch was refused');
  assert.equal(two.version, '0.0.2');
  assert.deepEqual((fake.get(ref)?.spec as Record<string, unknown>).strategy, { type: 'Recreate' });
});

test("uninstall-self --force deletes the OLM v1 objects the manager handles, not their twins, and leaves a PlatformOperator's extension to go with it: the admission policies refuse anyone else deleting them", async () => {
  const { fake, client } = cluster();
  await installSelf(client, { release: release('0.0.1') });
  const CE = 'binnacle.dev/v1alpha1';
  const UID = '33333333-3333-4333-8333-333333333333';
  for (const crd of loadOlmv1Crds()) fake.put(crd);
  const twinRef = { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'twin', uid: UID, controller: true };
  // The manager's finalizer and operator-controller's cache finalizer (moved over), as a twin's OLM v1 object has them.
  fake.put({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name: 'twin', uid: UID, finalizers: ['binnacle.dev/cleanup', 'olm.operatorframework.io/cleanup-unpack-cache'] }, spec: { namespace: 'ops' } });
  fake.put({ apiVersion: CE, kind: 'ClusterExtension', metadata: { name: 'twin', labels: { [LABEL_OLMV1_TWIN_OF]: UID }, ownerReferences: [twinRef] }, spec: { packageName: 'p' } });
  // One the manager handles without a twin (its conversion refused), with someone else's finalizer too.
  fake.put({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name: 'refused', uid: 'refused-uid', finalizers: ['binnacle.dev/cleanup', 'example.com/keep'] }, spec: { namespace: 'ops' } });
  // One the manager never touched (no finalizer of its, no twin): not Binnacle's to delete.
  fake.put({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name: 'untouched', uid: 'other' }, spec: { namespace: 'ops' } });
  fake.put({ apiVersion: CE, kind: 'PlatformOperator', metadata: { name: 'po' }, spec: { packageName: 'q' } });
  fake.put({ apiVersion: CE, kind: 'ClusterExtension', metadata: { name: 'po-ext', ownerReferences: [{ apiVersion: CE, kind: 'PlatformOperator', name: 'po', uid: 'po-uid', controller: true }] }, spec: { packageName: 'q' } });
  fake.put({ apiVersion: CE, kind: 'ClusterExtension', metadata: { name: 'plain' }, spec: { packageName: 'r' } });
  const deletes: string[] = [];
  const del = client.delete.bind(client);
  const watched: SelfClient = Object.assign(Object.create(client) as SelfClient, {
    delete: (ref: Parameters<SelfClient['delete']>[0], opts?: Parameters<SelfClient['delete']>[1]) => {
      if (/ClusterExtension|PlatformOperator/.test(ref.kind)) deletes.push(`${ref.apiVersion} ${ref.kind} ${ref.name}`);
      return del(ref, opts);
    },
  });
  // No manager runs here: what is deleted stays Terminating on its finalizers until the timeout, then they are dropped.
  const r = await uninstallSelf(watched, { namespace: NS, force: true, timeoutMs: 1200 });
  assert.deepEqual(deletes.sort(), [`${CE} ClusterExtension plain`, `${CE} PlatformOperator po`, `${OLMV1_API_VERSION} ClusterExtension refused`, `${OLMV1_API_VERSION} ClusterExtension twin`], 'neither a twin nor a PlatformOperator’s extension is deleted directly');
  assert.ok(r.orphaned.includes('ClusterExtension.olm.operatorframework.io twin'), r.orphaned.join(', '));
  assert.equal(fake.get({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'twin' }), undefined, 'its finalizers dropped, it is gone');
  assert.deepEqual(fake.get({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'refused' })?.metadata.finalizers, ['example.com/keep'], 'only the finalizers Binnacle’s manager would have removed');
  assert.ok(fake.get({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'untouched' }) !== undefined, 'an OLM v1 object Binnacle never handled stays');
});
