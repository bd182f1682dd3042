import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ReleaseRecords, ReleaseStore, RECORD_OWNER_UID_LABEL, type RecordOwner } from '../apply/index.js';
import type { ReleaseRevision } from '../apply/types.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { KubeApiError } from '../kube/errors.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { collectRecordsEvery, ReleaseRecordsCollector } from './records-gc.js';

const logger = pino({ level: 'silent' });
const SYSTEM = 'binnacle-system';
const GRACE = 60_000;

function revision(name: string, namespace: string, owner: RecordOwner): ReleaseRevision {
  return { name, namespace, revision: 1, status: 'deployed', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name, version: '1.0.0' }, config: {}, manifest: '', owner: { kind: owner.kind, name: owner.name, ...(owner.namespace === undefined ? {} : { namespace: owner.namespace }) } };
}

/** A cluster with one Pushgateway kind and records for each owner given; the clock is the test's. */
async function world(owners: { owner: RecordOwner; live?: boolean }[]): Promise<{ cluster: FakeCluster; records: ReleaseRecords; collector: ReleaseRecordsCollector; clock: { now: number }; uids: () => string[] }> {
  const cluster = new FakeCluster();
  for (const ns of [SYSTEM, 'team-a']) cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  cluster.put(crdOf({ group: 'example.com', kind: 'Pushgateway', plural: 'pushgateways' }, {}));
  const client = cluster.client({ user: 'manager' });
  const records = new ReleaseRecords({ client, namespace: SYSTEM, logger });
  for (const { owner, live } of owners) {
    if (live === true) cluster.put({ apiVersion: owner.apiVersion, kind: owner.kind, metadata: { name: owner.name, namespace: owner.namespace, uid: owner.uid } });
    await records.bind(owner, { name: owner.name, namespace: 'team-a' }, new ReleaseStore(client)).create(revision(owner.name, 'team-a', owner));
  }
  const clock = { now: 0 };
  const collector = new ReleaseRecordsCollector({ records, client, logger, graceMs: GRACE, now: () => clock.now });
  const uids = (): string[] => [...new Set(cluster.all('Secret', SYSTEM).map((s) => s.metadata.labels?.[RECORD_OWNER_UID_LABEL] ?? ''))].sort();
  return { cluster, records, collector, clock, uids };
}

const pg = (name: string, uid: string): RecordOwner => ({ apiVersion: 'example.com/v1', kind: 'Pushgateway', name, namespace: 'team-a', uid });

test('records of a live owner stay; those of a deleted owner go once it has been gone for the grace period, not before', async () => {
  const w = await world([{ owner: pg('live', 'u-live'), live: true }, { owner: pg('gone', 'u-gone') }]);
  assert.deepEqual(w.uids(), ['u-gone', 'u-live']);
  assert.deepEqual(await w.collector.sweep(), { kept: 2, removed: 0 }, 'the first sweep that sees an owner gone only notes it');
  w.clock.now = GRACE - 1;
  assert.deepEqual(await w.collector.sweep(), { kept: 2, removed: 0 });
  w.clock.now = GRACE;
  assert.deepEqual(await w.collector.sweep(), { kept: 1, removed: 1 });
  assert.deepEqual(w.uids(), ['u-live']);
  // Helm's mirror in the release namespace is the release's, not the collector's.
  assert.ok(w.cluster.all('Secret', 'team-a').some((s) => s.metadata.name === 'sh.helm.release.v1.gone.v1'), 'the mirror record stays');
});

test("an owner deleted and re-created under its name is a new owner: the old UID's records go, the new one's stay", async () => {
  const w = await world([{ owner: pg('pg', 'u-old') }, { owner: pg('pg', 'u-new'), live: true }]);
  await w.collector.sweep();
  w.clock.now = GRACE;
  assert.deepEqual(await w.collector.sweep(), { kept: 1, removed: 1 });
  assert.deepEqual(w.uids(), ['u-new']);
});

test('an owner seen gone and then back (a discovery hiccup, a restore in flight) keeps its records and starts its grace again', async () => {
  const w = await world([{ owner: pg('pg', 'u-1') }]);
  await w.collector.sweep();
  w.cluster.put({ apiVersion: 'example.com/v1', kind: 'Pushgateway', metadata: { name: 'pg', namespace: 'team-a', uid: 'u-1' } });
  w.clock.now = GRACE;
  assert.deepEqual(await w.collector.sweep(), { kept: 1, removed: 0 });
  w.cluster.remove({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: 'team-a', name: 'pg' });
  w.clock.now = GRACE + 1;
  assert.deepEqual(await w.collector.sweep(), { kept: 1, removed: 0 }, 'gone again: the grace starts over');
  w.clock.now = 2 * GRACE + 1;
  assert.deepEqual(await w.collector.sweep(), { kept: 0, removed: 1 });
});

test('an owner whose kind is no longer served (its CRD deleted) is gone', async () => {
  const w = await world([{ owner: { apiVersion: 'example.com/v1', kind: 'Gone', name: 'x', namespace: 'team-a', uid: 'u-x' } }]);
  await w.collector.sweep();
  w.clock.now = GRACE;
  assert.deepEqual(await w.collector.sweep(), { kept: 0, removed: 1 });
  assert.deepEqual(w.uids(), []);
});

test('an owner that cannot be read (the API server refuses or fails) keeps its records', async () => {
  const w = await world([{ owner: pg('pg', 'u-1') }]);
  w.cluster.inject({ verb: 'get', kind: 'Pushgateway', times: Infinity, error: () => new KubeApiError(500, 'InternalError', 'etcdserver: request timed out') });
  await w.collector.sweep();
  w.clock.now = 10 * GRACE;
  assert.deepEqual(await w.collector.sweep(), { kept: 1, removed: 0 });
  assert.deepEqual(w.uids(), ['u-1']);
});

test("helm-operator run's timer: each tick sweeps (records of a gone owner go after the grace), a failing sweep is logged, never thrown, and the abort stops it", async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const w = await world([{ owner: pg('gone', 'u-gone') }]);
  const stop = new AbortController();
  collectRecordsEvery(w.collector, GRACE, stop.signal);
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
  };
  t.mock.timers.tick(GRACE); // first seen gone
  await settle();
  assert.deepEqual(w.uids(), ['u-gone']);
  w.clock.now += GRACE;
  t.mock.timers.tick(GRACE); // gone for the grace: removed
  await settle();
  assert.deepEqual(w.uids(), []);

  const lines: string[] = [];
  const failing = new ReleaseRecordsCollector({ records: { owners: () => Promise.reject(new Error('the API server is away')), removeOwner: () => Promise.resolve(0) }, client: { find: () => Promise.resolve(undefined) }, logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }) });
  collectRecordsEvery(failing, GRACE, stop.signal);
  t.mock.timers.tick(GRACE);
  await settle();
  assert.equal(lines.filter((l) => l.includes('release records collection failed') && l.includes('the API server is away')).length, 1);
  stop.abort();
  t.mock.timers.tick(GRACE * 3);
  await settle();
  assert.equal(lines.length, 1, 'no sweep after the abort');
});
