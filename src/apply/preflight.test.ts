/** Preflight's own cases: what it refuses, and that nothing it starts is left rejecting unhandled. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeCluster, faults } from '../kube/fake-cluster.test-helper.js';
import { KubeApiError } from '../kube/errors.js';
import { actionConfig } from './action-config.js';
import { preflight } from './preflight.js';
import { ReleaseStore } from './release-store.js';

const logger = pino({ level: 'silent' });
const owner = { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' };
const release = { name: 'pg', namespace: 'team-a' };
const SA = 'system:serviceaccount:team-a:releaser';

test("a tenant's namespace going away mid-reconcile: the read of the namespace refused and an object's check failing at once reject once, handled (the manager's unhandled rejection)", async () => {
  const cluster = new FakeCluster();
  const client = cluster.client({ user: SA });
  // The deleted ServiceAccount may read nothing any more; the dry run of an object fails first, with a 503.
  cluster.inject({ verb: 'get', kind: 'Namespace', identity: SA, error: faults.forbidden, times: Infinity });
  cluster.inject({ verb: 'dry-run', error: faults.unavailable, times: Infinity });
  let unhandled: unknown;
  const onUnhandled = (reason: unknown): void => {
    unhandled = reason;
  };
  process.on('unhandledRejection', onUnhandled);
  try {
    const cfg = actionConfig({ client, history: new ReleaseStore(client).bind(release), logger });
    // Whichever fails first is the answer; the other is handled, not left rejecting.
    await assert.rejects(preflight(cfg, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team-a' } }], owner, release), (err: unknown) => err instanceof KubeApiError && [403, 503].includes(err.statusCode));
    // Let every microtask and timer of the failed run settle.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(unhandled, undefined, `nothing rejected unhandled: ${String(unhandled)}`);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('an object that exists and is not this release\'s is refused naming its owner; nothing is written', async () => {
  const cluster = new FakeCluster();
  cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  cluster.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team-a', labels: { 'binnacle.dev/owner-kind': 'Pushgateway', 'binnacle.dev/owner-name': 'other', 'binnacle.dev/owner-namespace': 'team-a' } } });
  const client = cluster.client();
  const cfg = actionConfig({ client, history: new ReleaseStore(client).bind(release), logger });
  await assert.rejects(preflight(cfg, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team-a' } }], owner, release), /ConfigMap team-a\/c already exists and belongs to Pushgateway team-a\/other/);
  assert.deepEqual(cluster.writes, []);
});
