/**
 * `binnacle helm rollback`: a Helm operator's release goes back to an earlier revision's values
 * through its custom resource's spec (the manager makes the revision), read from the history the
 * engine trusts (the manager's namespace), never from Helm's records in the release namespace;
 * over the one fake cluster, the records written by the trusted store itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ReleaseRecords, ReleaseStore, type Owner, type ReleaseRevision } from '../apply/index.js';
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

type Rev = [revision: number, status: ReleaseRevision['status'], chartVersion: string, config: Record<string, unknown>, owner: Owner | undefined, ownerValues?: Record<string, unknown>, movedOver?: boolean];

const SYSTEM = 'binnacle-system';
const logger = pino({ level: 'silent' });
const opts = { release, kindOf, systemNamespace: SYSTEM, logger };

/**
 * The resource at the upgrade's values and its history as the manager keeps it (trusted records
 * and their Helm mirror): Helm 3's install moved over, Binnacle's adoption and an upgrade, unless
 * `revs` says otherwise. An owner of undefined writes Helm's record alone (a release `helm` made).
 */
async function world(revs: Rev[] = [[1, 'superseded', '3.0.0', { replicaCount: 1, podLabels: { h3: 'yes' } }, OWNER], [2, 'superseded', '3.0.0', { replicaCount: 1, podLabels: { h3: 'yes' } }, OWNER], [3, 'deployed', '3.1.0', { replicaCount: 2 }, OWNER]]): Promise<FakeCluster> {
  const c = new FakeCluster({ objects: [CRD] });
  const cr = c.put({ apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, metadata: { name: 'h3', namespace: 'ns' }, spec: { replicaCount: 2 } });
  const client = c.client();
  const store = new ReleaseStore(client);
  const at = '2026-12-01T00:00:00Z';
  for (const [version, status, chartVersion, config, owner, ownerValues, movedOver] of revs) {
    const rev = { name: 'h3', namespace: 'ns', revision: version, status, description: 'x', firstDeployed: at, lastDeployed: at, chart: { name: 'prometheus-pushgateway', version: chartVersion }, config, manifest: '', owner, ...(ownerValues === undefined ? {} : { ownerValues }), ...(movedOver === true ? { movedOver } : {}) };
    if (owner === undefined) await store.create({ ...rev, version }, undefined);
    else await new ReleaseRecords({ client, namespace: SYSTEM, logger }).bind({ ...owner, uid: cr.metadata.uid ?? '', apiVersion: `${KIND.group}/${KIND.version}` }, release, store).create(rev);
  }
  return c;
}

const spec = (c: FakeCluster): unknown => c.get({ apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, namespace: 'ns', name: 'h3' })?.spec;

test("the resource's spec becomes the previous good revision's own values, on the resource as read; the chart versions are told", async () => {
  const c = await world([[1, 'superseded', '3.0.0', { replicaCount: 1, podLabels: { h3: 'yes', source: 'configmap' } }, OWNER, { replicaCount: 1, podLabels: { h3: 'yes' } }], [2, 'deployed', '3.1.0', { replicaCount: 2 }, OWNER, { replicaCount: 2 }]]);
  const writesBefore = c.writes.length;
  const res = await rollbackHelmRelease(c.client(), opts);
  assert.deepEqual([res.from.revision, res.to.revision, res.to.chart.version, res.from.chart.version, res.values], [2, 1, '3.0.0', '3.1.0', 'owner']);
  // The resource's own values, not Helm's config (which holds what the kind's valuesFrom added).
  assert.deepEqual(spec(c), { replicaCount: 1, podLabels: { h3: 'yes' } });
  assert.deepEqual(res.kind, KIND);
  assert.equal(c.writes.length - writesBefore, 1, 'the resource only: no record written, the manager makes the revision');
});

test('--dry-run answers the spec it would write and writes nothing; its refusals are the same', async () => {
  const c = await world([[1, 'superseded', '3.0.0', { replicaCount: 1, podLabels: { source: 'configmap' } }, OWNER, { replicaCount: 1 }], [2, 'deployed', '3.1.0', { replicaCount: 2 }, OWNER, { replicaCount: 2 }]]);
  const writesBefore = c.writes.length;
  const res = await rollbackHelmRelease(c.client(), { ...opts, dryRun: true });
  assert.deepEqual([res.from.revision, res.to.revision, res.values, res.spec], [2, 1, 'owner', { replicaCount: 1 }]);
  assert.deepEqual(spec(c), { replicaCount: 2 }, 'the resource is as it was');
  assert.equal(c.writes.length, writesBefore, 'nothing written');
  await assert.rejects(rollbackHelmRelease(c.client(), { ...opts, dryRun: true, toRevision: 2 }), /revision 2 is the current one/);
});

test("Helm's records in the release namespace are never the source: a forged one changes nothing, and without the manager's history (or leave to read it) nothing is written", async () => {
  const c = await world([[1, 'superseded', '1', { a: 1 }, OWNER, { a: 1 }], [2, 'deployed', '1', { a: 2 }, OWNER, { a: 2 }]]);
  // A tenant who may write Secrets in ns plants revision 3 with values of their choosing.
  await new ReleaseStore(c.client()).create({ name: 'h3', namespace: 'ns', version: 3, status: 'deployed', description: 'x', firstDeployed: 'x', lastDeployed: 'x', chart: { name: 'p', version: '1' }, config: { evil: true }, manifest: '', ownerValues: { evil: true } }, OWNER);
  const res = await rollbackHelmRelease(c.client(), { ...opts, toRevision: 1 });
  assert.deepEqual([res.from.revision, res.to.revision], [2, 1], "the planted revision is not in the manager's history");
  assert.deepEqual(spec(c), { a: 1 });

  const mirrorOnly = await world([[1, 'superseded', '1', { a: 1 }, undefined], [2, 'deployed', '1', { evil: true }, undefined]]);
  for (const s of (await mirrorOnly.client().list('v1', 'Secret', { namespace: 'ns' })).items) {
    await mirrorOnly.client().update({ ...s, metadata: { ...s.metadata, labels: { ...s.metadata.labels, 'binnacle.dev/owner-kind': 'Pushgateway', 'binnacle.dev/owner-name': 'h3', 'binnacle.dev/owner-namespace': 'ns' } } });
  }
  await assert.rejects(rollbackHelmRelease(mirrorOnly.client(), { ...opts, acceptConfig: true }), /the manager keeps no history for Pushgateway ns\/h3 \(UID .+\) in binnacle-system/);
  assert.deepEqual(spec(mirrorOnly), { replicaCount: 2 });

  const denied = await world();
  const client = denied.client();
  const list = client.list.bind(client);
  client.list = ((apiVersion: string, kind: string, o?: { namespace?: string }) => (o?.namespace === SYSTEM ? Promise.reject(new KubeApiError(403, 'Forbidden', 'secrets is forbidden')) : list(apiVersion, kind, o)));
  await assert.rejects(rollbackHelmRelease(client, { ...opts, acceptConfig: true }), /read from the manager's namespace binnacle-system, where you may not list Secrets; Helm's records in ns are not used instead/);
  assert.deepEqual(spec(denied), { replicaCount: 2 });
});

test("a revision moved over from Helm's records is not taken as the resource's own values, whatever it claims: refused unless Helm's config is accepted", async () => {
  const c = await world([[1, 'superseded', '1', { a: 1 }, OWNER, { planted: true }, true], [2, 'deployed', '1', { a: 2 }, OWNER, { a: 2 }]]);
  await assert.rejects(rollbackHelmRelease(c.client(), opts), /revision 1 was moved over from Helm's records in ns, which anyone who may write Secrets there could have written: .+--accept-config/);
  assert.deepEqual(spec(c), { replicaCount: 2 });
  const res = await rollbackHelmRelease(c.client(), { ...opts, acceptConfig: true });
  assert.deepEqual([res.values, spec(c)], ['config', { a: 1 }]);
});

test("the manager's history is never read from the release's own namespace; a recorded kind is only a kind's name, and --kind goes without the records' word", async () => {
  const c = await world();
  await assert.rejects(rollbackHelmRelease(c.client(), { ...opts, systemNamespace: 'ns' }), /read from ns, the release's own namespace/);
  const mangled = await world();
  for (const s of (await mangled.client().list('v1', 'Secret', { namespace: 'ns' })).items) {
    await mangled.client().update({ ...s, metadata: { ...s.metadata, labels: { ...s.metadata.labels, 'binnacle.dev/owner-kind': 'Secret.v1.' } } });
  }
  await assert.rejects(rollbackHelmRelease(mangled.client(), { ...opts, acceptConfig: true }), /name the owner kind "Secret\.v1\.", not a kind's name: give --kind/);
  assert.deepEqual(spec(mangled), { replicaCount: 2 });
  const given = await rollbackHelmRelease(mangled.client(), { ...opts, acceptConfig: true, kind: KIND, kindOf: () => Promise.reject(new Error('not asked')) });
  assert.equal(given.to.revision, 2);
});

test("a revision named goes back to that one's values; a failed revision is skipped by default; a revision without recorded own values is refused unless Helm's config is accepted", async () => {
  const c = await world();
  await assert.rejects(rollbackHelmRelease(c.client(), { ...opts, toRevision: 1 }), /revision 1 did not record the resource's own values apart .+ run again with --accept-config/);
  assert.deepEqual(spec(c), { replicaCount: 2 });
  const res = await rollbackHelmRelease(c.client(), { ...opts, toRevision: 1, acceptConfig: true });
  assert.equal(res.values, 'config');
  assert.deepEqual(spec(c), { replicaCount: 1, podLabels: { h3: 'yes' } });
  const failedBetween = await world([[1, 'superseded', '1', { a: 1 }, OWNER, { a: 1 }], [2, 'failed', '1', { a: 2 }, OWNER, { a: 2 }], [3, 'deployed', '1', { a: 3 }, OWNER, { a: 3 }]]);
  assert.equal((await rollbackHelmRelease(failedBetween.client(), opts)).to.revision, 1);
  assert.deepEqual(spec(failedBetween), { a: 1 });
});

test('refused, naming why, with nothing written: no such revision, the current one, nothing good before it, a release no resource holds, no resource', async () => {
  const cases: [string, () => Promise<FakeCluster>, number | undefined, RegExp][] = [
    ['no such revision', () => world(), 7, /release ns\/h3 has no revision 7 \(it has 1, 2, 3\)/],
    ['the current one', () => world(), 3, /revision 3 is the current one/],
    ['nothing good before', () => world([[1, 'failed', '1', {}, OWNER], [2, 'deployed', '1', {}, OWNER]]), undefined, /no good revision \(deployed or superseded\) before revision 2/],
    ["helm's own release", () => world([[1, 'superseded', '1', {}, undefined], [2, 'deployed', '1', {}, undefined]]), undefined, /Helm records name no owner\): adopt it first \(binnacle helm adopt\)/],
    ['no records', () => world([]), undefined, /Helm records name no owner/],
  ];
  for (const [name, make, toRevision, message] of cases) {
    const c = await make();
    const before = spec(c);
    await assert.rejects(rollbackHelmRelease(c.client(), { ...opts, acceptConfig: true, ...(toRevision === undefined ? {} : { toRevision }) }), message, name);
    assert.deepEqual(spec(c), before, name);
  }
  const gone = await world();
  await gone.client().delete({ apiVersion: `${KIND.group}/${KIND.version}`, kind: KIND.kind, namespace: 'ns', name: 'h3' });
  await assert.rejects(rollbackHelmRelease(gone.client(), opts), /there is no Pushgateway ns\/h3 \(e2e\.example\.com\/v1alpha1\) holding it/);
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
  await assert.rejects(rollbackHelmRelease(client, { ...opts, acceptConfig: true }), (err: unknown) => err instanceof KubeApiError && err.statusCode === 409);
  assert.deepEqual(spec(c), { replicaCount: 5 });
});
