/**
 * Moving Helm's records into the trusted history (release-records.ts): what a record claims as
 * the owner's own values is whoever wrote it's, so it does not move over. Over the one fake cluster.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { ReleaseRecords } from './release-records.js';
import { ReleaseStore } from './release-store.js';

test("a record moved over from Helm's records keeps its config, not the owner's own values it claims", async () => {
  const c = new FakeCluster();
  const client = c.client();
  const release = { name: 'web', namespace: 'team' };
  const owner = { kind: 'Widget', name: 'web', namespace: 'team', uid: 'uid-web', apiVersion: 'example.com/v1' };
  const at = '2026-12-01T00:00:00Z';
  // Planted by whoever may write Secrets in the namespace, labelled as the owner's.
  await new ReleaseStore(client).create({ name: 'web', namespace: 'team', version: 1, status: 'deployed', description: 'x', firstDeployed: at, lastDeployed: at, chart: { name: 'w', version: '1' }, config: { a: 1 }, manifest: '', ownerValues: { planted: true } }, owner);
  const history = new ReleaseRecords({ client, namespace: 'binnacle-system', logger: pino({ level: 'silent' }) }).bind(owner, release, new ReleaseStore(client), () => Promise.resolve([]));
  const read = await history.read();
  assert.deepEqual(read.migrated, [1]);
  assert.deepEqual(read.revisions.map((r) => [r.movedOver, r.config, 'ownerValues' in r]), [[true, { a: 1 }, false]]);
  const recorded = await history.readRecorded();
  assert.deepEqual(recorded.revisions.map((r) => [r.movedOver, 'ownerValues' in r]), [[true, false]], 'as the trusted record holds it');
});
