/**
 * `binnacle olmv1 import-history` over the fake cluster, with operator-controller's records as its
 * own storage driver wrote them (apply/testdata/olmv1-chunked-history.json, recorded from
 * helm-operator-plugins v0.9.1: hack/olmv1-history-fixture).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ReleaseStore } from '../apply/release-store.js';
import { revisionRecordSecret } from '../apply/release.js';
import { revisionDigest } from '../apply/release-chunked.js';
import { gzipSync } from 'node:zlib';
import { crdOf } from '../apply/crd.test-helper.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { importOlmv1History } from './olmv1-history.js';

const fixture = JSON.parse(readFileSync(new URL('../apply/testdata/olmv1-chunked-history.json', import.meta.url), 'utf8')) as KubeObject[];
const RELEASE = { namespace: 'argocd', name: 'argocd-argocd-operator' };

function world(uid = 'ce-uid-argocd'): FakeCluster {
  const c = new FakeCluster();
  for (const ns of ['argocd', 'olmv1-system']) c.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  c.put(crdOf({ group: 'olm.operatorframework.io', kind: 'ClusterExtension', plural: 'clusterextensions' }, {}, { scope: 'Cluster', version: 'v1' }));
  c.put({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', metadata: { name: 'argocd', uid }, spec: { namespace: 'argocd', source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator' } } } });
  for (const s of fixture) c.put(s);
  return c;
}

test("operator-controller's revisions become Helm records of the release Binnacle keeps for the extension, labelled as its BundleDeployment's; a second run writes nothing", async () => {
  const c = world();
  const client = c.client({ user: 'admin' });
  assert.deepEqual(await importOlmv1History(client, { dryRun: true }), [{ extension: 'argocd', release: 'argocd-argocd-operator', namespace: 'argocd', imported: [{ revision: 1, status: 'superseded', chart: 'argocd-operator-0.1.0' }, { revision: 2, status: 'deployed', chart: 'argocd-operator-0.2.0' }], present: [], replaced: [], removed: [], refused: [] }]);
  assert.equal(c.all('Secret', 'argocd').length, 0, 'a dry run writes nothing');
  const [first] = await importOlmv1History(client);
  assert.deepEqual(first?.imported.map((r) => r.revision), [1, 2]);
  const records = c.all('Secret', 'argocd');
  assert.deepEqual(records.map((s) => s.metadata.name).sort(), ['sh.helm.release.v1.argocd-argocd-operator.v1', 'sh.helm.release.v1.argocd-argocd-operator.v2']);
  for (const s of records) {
    assert.equal(s.type, 'helm.sh/release.v1');
    assert.deepEqual([s.metadata.labels?.owner, s.metadata.labels?.name, s.metadata.labels?.['binnacle.dev/owner-kind'], s.metadata.labels?.['binnacle.dev/owner-name']], ['helm', 'argocd-argocd-operator', 'BundleDeployment', 'argocd-argocd-operator']);
  }
  const history = await new ReleaseStore(client).history(RELEASE);
  assert.deepEqual(history.map((r) => [r.name, r.revision, r.status, r.chart.version]), [['argocd-argocd-operator', 1, 'superseded', '0.1.0'], ['argocd-argocd-operator', 2, 'deployed', '0.2.0']]);
  assert.match(history[1]?.manifest ?? '', /argocd-operator:v0\.2\.0/, 'the manifest operator-controller applied, as it was');
  assert.equal(c.all('Secret', 'olmv1-system').length, fixture.length, "operator-controller's records are left as they are");
  const pins = JSON.parse(c.get({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'argocd' })?.metadata.annotations?.['binnacle.dev/olmv1-imported-history'] ?? '{}') as Record<string, string>;
  assert.deepEqual(pins, Object.fromEntries(history.map((r) => [String(r.revision), revisionDigest(r)])), 'each revision pinned on the ClusterExtension by what its record says');
  const [again] = await importOlmv1History(client);
  assert.deepEqual([again?.imported, again?.present, again?.replaced, again?.removed], [[], [1, 2], [], []]);
});

test("the release's Helm records become exactly operator-controller's: a record planted there (another manifest under revision 1, an extra revision, a stray name, a bomb) is written over or removed, and said", async () => {
  const c = world();
  const client = c.client({ user: 'admin' });
  const owner = { kind: 'BundleDeployment', name: 'argocd-argocd-operator' };
  const evil = { name: 'argocd-argocd-operator', namespace: 'argocd', description: '', firstDeployed: '', lastDeployed: '', chart: { name: 'argocd-operator', version: '0.1.0' }, config: {}, status: 'superseded' as const, manifest: '---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argocd-operator-controller-manager\n  namespace: argocd\nspec:\n  template:\n    spec:\n      containers:\n      - image: evil\n' };
  c.put(revisionRecordSecret({ ...evil, version: 1 }, owner, new Date(), 'created'));
  c.put(revisionRecordSecret({ ...evil, version: 7, status: 'deployed' }, owner, new Date(), 'created'));
  const stray = revisionRecordSecret({ ...evil, version: 8 }, owner, new Date(), 'created');
  c.put({ ...stray, metadata: { ...stray.metadata, name: 'planted' } });
  const bomb = gzipSync(Buffer.alloc(48 * 1024 * 1024, 0x20)).toString('base64');
  c.put({ ...stray, metadata: { ...stray.metadata, name: 'sh.helm.release.v1.argocd-argocd-operator.v2', labels: { ...stray.metadata.labels, version: '2' } }, data: { release: Buffer.from(bomb).toString('base64') } });
  const [dry] = await importOlmv1History(client, { dryRun: true });
  assert.deepEqual([dry?.imported, dry?.replaced, dry?.removed.sort()], [[], [1, 2], ['planted', 'sh.helm.release.v1.argocd-argocd-operator.v7']]);
  assert.equal(c.all('Secret', 'argocd').length, 4, 'a dry run writes nothing');
  await importOlmv1History(client);
  assert.deepEqual(c.all('Secret', 'argocd').map((s) => s.metadata.name).sort(), ['sh.helm.release.v1.argocd-argocd-operator.v1', 'sh.helm.release.v1.argocd-argocd-operator.v2']);
  const history = await new ReleaseStore(client).history(RELEASE);
  assert.deepEqual(history.map((r) => [r.revision, r.status, r.chart.version]), [[1, 'superseded', '0.1.0'], [2, 'deployed', '0.2.0']]);
  assert.doesNotMatch(history.map((r) => r.manifest).join(''), /image: evil/);
});

test("records whose controller is another ClusterExtension (a namesake made since) are refused by name; an extension Binnacle already keeps a history of is skipped", async () => {
  const c = world('a-namesake-uid');
  const [r] = await importOlmv1History(c.client({ user: 'admin' }));
  assert.deepEqual(r?.imported, []);
  assert.deepEqual(r?.refused.map((x) => x.secret), ['olmv1-system/sh.helm.release.v1.argocd.v1', 'olmv1-system/sh.helm.release.v1.argocd.v2']);
  assert.match(r?.refused[0]?.reason ?? '', /controller owner reference is not ClusterExtension argocd \(uid a-namesake-uid\)/);
  assert.equal(c.all('Secret', 'argocd').length, 0);

  const kept = world();
  kept.put(crdOf({ group: 'binnacle.dev', kind: 'BundleDeployment', plural: 'bundledeployments' }, {}, { scope: 'Cluster', version: 'v1alpha1' }));
  kept.put({ apiVersion: 'binnacle.dev/v1alpha1', kind: 'BundleDeployment', metadata: { name: 'argocd-argocd-operator' }, spec: {}, status: { revision: 1 } });
  const [s] = await importOlmv1History(kept.client({ user: 'admin' }));
  assert.match(s?.skipped ?? '', /Binnacle already keeps the history of BundleDeployment argocd-argocd-operator/);
  assert.equal(kept.all('Secret', 'argocd').length, 0);
});

test('a cluster without OLM v1 says so', async () => {
  const c = new FakeCluster();
  await assert.rejects(importOlmv1History(c.client({ user: 'admin' })), /the cluster serves no olm\.operatorframework\.io\/v1 ClusterExtension: nothing of OLM v1 to bring over/);
});

test("a release `helm install` made under the name Binnacle would keep (records not labelled as its BundleDeployment's) skips the extension, naming them, unless --replace-foreign", async () => {
  const c = world();
  const client = c.client({ user: 'admin' });
  const byHelm = revisionRecordSecret({ name: 'argocd-argocd-operator', namespace: 'argocd', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name: 'mine', version: '1.0.0' }, config: {}, status: 'deployed', manifest: '', version: 1 }, undefined, new Date(), 'created');
  c.put(byHelm);
  const [skipped] = await importOlmv1History(client);
  assert.deepEqual(skipped?.foreign, ['sh.helm.release.v1.argocd-argocd-operator.v1']);
  assert.match(skipped?.skipped ?? '', /not BundleDeployment argocd-argocd-operator's .*--replace-foreign/);
  assert.deepEqual([skipped?.imported, skipped?.replaced, skipped?.removed], [[], [], []]);
  assert.deepEqual(c.all('Secret', 'argocd').map((s) => [s.metadata.name, s.data]), [[byHelm.metadata.name, byHelm.data]], 'nothing written');
  assert.equal((await new ReleaseStore(client).history(RELEASE))[0]?.chart.name, 'mine', "the Helm user's release is as it was");
  assert.equal(c.get({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'argocd' })?.metadata.annotations?.['binnacle.dev/olmv1-imported-history'], undefined, 'nothing pinned');
  const [replaced] = await importOlmv1History(client, { replaceForeign: true });
  assert.deepEqual(replaced?.replaced, [1]);
  assert.deepEqual((await new ReleaseStore(client).history(RELEASE)).map((r) => [r.revision, r.chart.name]), [[1, 'argocd-operator'], [2, 'argocd-operator']]);
});
