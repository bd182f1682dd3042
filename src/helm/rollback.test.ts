/**
 * `binnacle helm rollback`: a Helm operator's release goes back to an earlier revision's values
 * through its custom resource's spec (the manager makes the revision), read from the release's
 * Helm records; over the one fake cluster, the records written by the release store itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReleaseStore, type Owner, type ReleaseRevision } from '../apply/index.js';
import { recordInput } from '../apply/release-store.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { rollbackHelmRelease, type HelmKind } from './rollback.js';

const KIND: HelmKind = { group: 'e2e.example.com', version: 'v1alpha1', kind: 'Pushgateway' };
const CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'pushgateways.e2e.example.com' },
  spec: { group: KIND.group, scope: 'Namespaced', names: { kind: KIND.kind, plural: 'pushgateways' }, versions: [{ name: KIND.version, served: true, storage: true }] },
};
const OWNER: Owner = { kind: 'Pushgateway', name: 'h3', namespace: 'ns' };
const release = { name: 'h3', namespace: 'ns' };
const kindOf = (recorded: string): Promise<HelmKind> => (recorded === KIND.kind ? Promise.resolve(KIND) : Promise.reject(new Error(`no kind ${recorded}`)));

type Rev = [revision: number, status: ReleaseRevision['status'], chartVersion: string, config: Record<string, unknown>, owner: Owner | undefined];

/** Helm 3's install (no owner), Binnacle's adoption and an upgrade, unless `revs` says otherwise; the resource at the upgrade's values. */
async function world(revs: Rev[] = [[1, 'superseded', '3.0.0', { replicaCount: 1, podLabels: { h3: 'yes' } }, undefined], [2, 'superseded', '3.0.0', { replicaCount: 1, podLabels: { h3: 'yes' } }, OWNER], [3, 'deployed', '3.1.0', { replicaCount: 2 }, OWNER]]): Promise<FakeCluster> {
  const c = new FakeCluster({ objects: [CRD] });
  c.put({ apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, metadata: { name: 'h3', namespace: 'ns' }, spec: { replicaCount: 2 } });
  const store = new ReleaseStore(c.client());
  const at = '2026-12-01T00:00:00Z';
  for (const [version, status, chartVersion, config, owner] of revs) {
    await store.create({ name: 'h3', namespace: 'ns', version, status, description: 'x', firstDeployed: at, lastDeployed: at, chart: { name: 'prometheus-pushgateway', version: chartVersion }, config, manifest: '' }, owner);
  }
  return c;
}

const spec = (c: FakeCluster): unknown => c.get({ apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, namespace: 'ns', name: 'h3' })?.spec;

test("the resource's spec becomes the previous good revision's values, on the resource as read; the chart versions are told", async () => {
  const c = await world();
  const writesBefore = c.writes.length;
  const res = await rollbackHelmRelease(c.client(), { release, kindOf });
  assert.deepEqual([res.from.revision, res.to.revision, res.to.chart.version, res.from.chart.version], [3, 2, '3.0.0', '3.1.0']);
  assert.deepEqual(spec(c), { replicaCount: 1, podLabels: { h3: 'yes' } });
  assert.deepEqual(res.kind, KIND);
  assert.equal(c.log.filter((r) => r.verb === 'update').length, 1);
  assert.equal(c.writes.length - writesBefore, 1, 'the resource only: no record written, the manager makes the revision');
});

test("a revision named goes back to that one's values, Helm 3's own record included; a failed revision is skipped by default", async () => {
  const c = await world();
  await rollbackHelmRelease(c.client(), { release, kindOf, toRevision: 1 });
  assert.deepEqual(spec(c), { replicaCount: 1, podLabels: { h3: 'yes' } });
  const failedBetween = await world([[1, 'superseded', '1', { a: 1 }, OWNER], [2, 'failed', '1', { a: 2 }, OWNER], [3, 'deployed', '1', { a: 3 }, OWNER]]);
  assert.equal((await rollbackHelmRelease(failedBetween.client(), { release, kindOf })).to.revision, 1);
  assert.deepEqual(spec(failedBetween), { a: 1 });
});

test("a revision that recorded the resource's own values gets those back, not Helm's config with its operator's layers (valuesFrom, overrideValues); one without them gets the config, and says so", async () => {
  const c = await world([[1, 'superseded', '1', { replicaCount: 1, podLabels: { source: 'configmap' }, image: { tag: 'override' } }, OWNER], [2, 'deployed', '1', { replicaCount: 2 }, OWNER]]);
  const store = new ReleaseStore(c.client());
  // Revision 1 again, as Binnacle records it now: the resource's own values beside Helm's config.
  const [rev1] = await store.history(release);
  assert.ok(rev1 !== undefined);
  await c.client().delete({ apiVersion: 'v1', kind: 'Secret', namespace: 'ns', name: 'sh.helm.release.v1.h3.v1' });
  await store.create({ ...recordInput(rev1), ownerValues: { replicaCount: 1 } }, OWNER);
  const res = await rollbackHelmRelease(c.client(), { release, kindOf });
  assert.deepEqual([res.to.revision, res.values], [1, 'owner']);
  assert.deepEqual(spec(c), { replicaCount: 1 });

  const old = await world([[1, 'superseded', '1', { replicaCount: 1, podLabels: { source: 'configmap' } }, OWNER], [2, 'deployed', '1', { replicaCount: 2 }, OWNER]]);
  const fallback = await rollbackHelmRelease(old.client(), { release, kindOf });
  assert.equal(fallback.values, 'config');
  assert.deepEqual(spec(old), { replicaCount: 1, podLabels: { source: 'configmap' } });
});

test('refused, naming why, with nothing written: no such revision, the current one, nothing good before it, a release no resource holds, another owner, no resource', async () => {
  const cases: [string, () => Promise<FakeCluster>, number | undefined, RegExp][] = [
    ['no such revision', () => world(), 7, /release ns\/h3 has no revision 7 \(it has 1, 2, 3\)/],
    ['the current one', () => world(), 3, /revision 3 is the current one/],
    ['nothing good before', () => world([[1, 'failed', '1', {}, OWNER], [2, 'deployed', '1', {}, OWNER]]), undefined, /no good revision \(deployed or superseded\) before revision 2/],
    ["helm's own release", () => world([[1, 'superseded', '1', {}, undefined], [2, 'deployed', '1', {}, undefined]]), undefined, /names no owner\): adopt it first \(binnacle helm adopt\)/],
    ['another owner', () => world([[1, 'superseded', '1', {}, { ...OWNER, name: 'other' }], [2, 'deployed', '1', {}, { ...OWNER, name: 'other' }]]), undefined, /belongs to Pushgateway ns\/other, not to Pushgateway ns\/h3/],
    ['another namespace', () => world([[1, 'superseded', '1', {}, { ...OWNER, namespace: 'elsewhere' }], [2, 'deployed', '1', {}, { ...OWNER, namespace: 'elsewhere' }]]), undefined, /belongs to Pushgateway elsewhere\/h3/],
    ['no records', () => world([]), undefined, /release ns\/h3 has no revisions/],
  ];
  for (const [name, make, toRevision, message] of cases) {
    const c = await make();
    const before = spec(c);
    await assert.rejects(rollbackHelmRelease(c.client(), { release, kindOf, ...(toRevision === undefined ? {} : { toRevision }) }), message, name);
    assert.deepEqual(spec(c), before, name);
  }
  const gone = await world();
  await gone.client().delete({ apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, namespace: 'ns', name: 'h3' });
  await assert.rejects(rollbackHelmRelease(gone.client(), { release, kindOf }), /there is no Pushgateway ns\/h3 \(e2e\.example\.com\/v1alpha1\) holding it/);
});

test('a change to the resource made between the read and the write is a conflict, not overwritten', async () => {
  const c = await world();
  const client = c.client();
  const find = client.find.bind(client);
  // Someone edits the resource right after it was read.
  client.find = async <T extends KubeObject>(ref: Parameters<typeof find>[0]): Promise<T | undefined> => {
    const got = await find<T>(ref);
    if (ref.kind === KIND.kind) c.put({ ...(got as KubeObject), spec: { replicaCount: 5 } });
    return got;
  };
  await assert.rejects(rollbackHelmRelease(client, { release, kindOf }), (err: unknown) => err instanceof KubeApiError && err.statusCode === 409);
  assert.deepEqual(spec(c), { replicaCount: 5 });
});
