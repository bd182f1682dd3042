import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { BinnacleError } from '../util/errors.js';
import { KubeClient, type WriteFence } from './client.js';
import { FakeCluster, type FakeClient } from './fake-cluster.test-helper.js';
import { LeaderElector } from './leader-election.js';

const logger = pino({ level: 'silent' });

/** The one fake cluster (a Lease has the API server's rules: create fails if it exists, update needs the current resourceVersion), each request a little slow. */
function leaseClient(): { client: FakeClient; writes: () => number } {
  const cluster = new FakeCluster();
  cluster.latency = () => sleep(1);
  return { client: cluster.client(), writes: () => cluster.writes.length };
}

/** Blocks the whole thread, as SIGSTOP or a long pause would: no timer or callback runs meanwhile. */
function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const codeOf = (err: unknown): string | undefined => (err instanceof BinnacleError ? err.code : undefined);

test('a leader frozen past its renew deadline refuses writes the moment it wakes, and reports the loss without waiting for its work', async () => {
  const { client } = leaseClient();
  let fence: WriteFence | undefined;
  let finishWork: () => void = () => undefined;
  const stopped: boolean[] = [];
  let stoppedWhileWorking = false;
  let working = false;
  const elector = new LeaderElector({
    client,
    namespace: 'ns',
    name: 'mgr',
    identity: 'a',
    leaseDurationMs: 600,
    renewDeadlineMs: 300,
    retryPeriodMs: 50,
    logger,
    onStartedLeading: (_signal, f) => {
      fence = f;
      working = true;
      // In-flight work that does not listen to the signal.
      return new Promise<void>((resolve) => {
        finishWork = () => {
          working = false;
          resolve();
        };
      });
    },
    onStoppedLeading: (lost) => {
      stopped.push(lost);
      stoppedWhileWorking = working;
    },
  });
  const run = elector.run(new AbortController().signal);
  while (fence === undefined) await sleep(5);
  const f: WriteFence = fence;
  f.check('update ConfigMap ns/x'); // leading: allowed
  assert.equal(elector.isLeader, true);

  freeze(500);
  // First thing after waking, before any timer or renewal runs: refused.
  assert.throws(() => f.check('update ConfigMap ns/x'), (err) => codeOf(err) === 'LEADERSHIP_LOST');
  assert.equal(f.signal.aborted, true, 'in-flight requests are aborted');
  await sleep(20);
  assert.deepEqual(stopped, [true], 'told at once that leadership was lost');
  assert.equal(stoppedWhileWorking, true, 'without waiting for the in-flight work to finish');
  finishWork();
  await run;
});

test('a renewal that would go out after the renew deadline is not sent', async () => {
  const lease = leaseClient();
  const elector = new LeaderElector({ client: lease.client, namespace: 'ns', name: 'mgr', identity: 'a', leaseDurationMs: 600, renewDeadlineMs: 300, retryPeriodMs: 50, logger, onStartedLeading: () => undefined });
  assert.equal(await elector.tryAcquireOrRenew(), true);
  const before = lease.writes();
  assert.equal(await elector.tryAcquireOrRenew(Date.now() - 1), false);
  assert.equal(lease.writes(), before, 'no write after the deadline');
  assert.equal(await elector.tryAcquireOrRenew(Date.now() + 60_000), true);
  assert.equal(lease.writes(), before + 1);
});

test('a fenced client sends no mutating request once the fence closes, aborts those in flight, and keeps the fence when impersonating', async () => {
  const seen: string[] = [];
  const hanging: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith('/api/v1/namespaces/ns/configmaps/slow') === true) {
      hanging.push(req);
      return; // never answers
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url === '/api/v1') res.end(JSON.stringify({ resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'create', 'update', 'patch', 'delete'] }] }));
    else res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'ns' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const base = await KubeClient.fromKubeConfig(kc);
  const gate = new AbortController();
  let open = true;
  const fence: WriteFence = {
    signal: gate.signal,
    check: (what) => {
      if (!open) throw new BinnacleError('transient', 'LEADERSHIP_LOST', `${what}: refused`);
    },
  };
  const client = base.fenced(fence);
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'ns' } };
  try {
    await client.apply(cm);
    await client.impersonate({ user: 'someone' }).create(cm);
    const inFlight = client.update({ ...cm, metadata: { name: 'slow', namespace: 'ns' } });
    while (hanging.length === 0) await sleep(5);
    const writesBefore = seen.filter((s) => !s.startsWith('GET')).length;

    open = false;
    gate.abort();
    await assert.rejects(inFlight, (err) => codeOf(err) === 'LEADERSHIP_LOST', 'the write in flight is aborted');
    await assert.rejects(client.apply(cm), (err) => codeOf(err) === 'LEADERSHIP_LOST');
    await assert.rejects(client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'x' }), (err) => codeOf(err) === 'LEADERSHIP_LOST');
    await assert.rejects(client.impersonate({ user: 'someone' }).create(cm), (err) => codeOf(err) === 'LEADERSHIP_LOST');
    assert.equal(seen.filter((s) => !s.startsWith('GET')).length, writesBefore, 'no mutating request reached the server after the fence closed');
    // The unfenced client it came from is not affected.
    await base.apply(cm);
  } finally {
    base.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
