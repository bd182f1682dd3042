/**
 * Two manager processes contend for one Lease on the real API server: exactly one leads; when
 * the leader is killed with SIGKILL (no chance to release), the other takes over within the
 * lease duration; when a leader stops gracefully it releases the lease at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { KubeClient } from '../../src/kube/client.js';
import { e2eClient, e2eKubeconfig, eventually, uniqueName } from './env.js';

const fixture = fileURLToPath(new URL('./fixtures/elector.ts', import.meta.url));

interface Candidate {
  id: string;
  proc: ChildProcess;
  output: string;
}

function startCandidate(ns: string, lease: string, id: string): Candidate {
  const proc = spawn(process.execPath, ['--import', 'tsx', fixture, e2eKubeconfig(), ns, lease, id], { stdio: ['ignore', 'pipe', 'inherit'] });
  const c: Candidate = { id, proc, output: '' };
  proc.stdout?.on('data', (d: Buffer) => (c.output += d.toString()));
  return c;
}

const leading = (c: Candidate): boolean => c.output.includes(`LEADING ${c.id}`);

let client: KubeClient;
const ns = uniqueName('lease');
const candidates: Candidate[] = [];

before(async () => {
  client = await e2eClient();
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

after(async () => {
  for (const c of candidates) c.proc.kill('SIGKILL');
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  client.close();
});

test('exactly one of two candidates leads, and the other takes over when the leader is killed', async () => {
  const a = startCandidate(ns, 'manager', 'a');
  const b = startCandidate(ns, 'manager', 'b');
  candidates.push(a, b);
  // Generous: two cold node processes on a loaded machine may take long to start.
  const first = await eventually('a leader', () => Promise.resolve([a, b].find(leading)), 120_000, 100);
  const second = first === a ? b : a;
  // Hold for more than a lease duration: the other must not lead meanwhile.
  await new Promise((r) => setTimeout(r, 5_000));
  assert.equal(leading(second), false, 'only one candidate leads');
  const lease = await client.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: 'manager' });
  assert.equal((lease.spec as { holderIdentity?: string }).holderIdentity, first.id);

  const killedAt = Date.now();
  first.proc.kill('SIGKILL');
  await eventually('the other candidate to lead', () => Promise.resolve(leading(second) ? true : undefined), 60_000, 100);
  // Lease duration 4 s, retry period 0.5 s (+ jitter): about one lease duration on an idle
  // machine. A figure, not an assertion: load stretches it (the lease-safety test holds the rule).
  console.log(`# takeover after SIGKILL of the leader: ${Date.now() - killedAt} ms (lease 4 s)`);
  const after = await client.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: 'manager' });
  assert.equal((after.spec as { holderIdentity?: string }).holderIdentity, second.id);
  assert.equal((after.spec as { leaseTransitions?: number }).leaseTransitions, 1);
});

test('a leader that stops gracefully releases the lease for the next candidate at once', async () => {
  const c = startCandidate(ns, 'graceful', 'c');
  candidates.push(c);
  await eventually('c leads', () => Promise.resolve(leading(c) ? true : undefined), 120_000, 100);
  const d = startCandidate(ns, 'graceful', 'd');
  candidates.push(d);
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(leading(d), false);
  c.proc.kill('SIGTERM');
  await eventually('c reports it stopped leading', () => Promise.resolve(c.output.includes('STOPPED c') ? true : undefined), 10_000, 50);
  // Released, not left to expire: by the time c says it stopped, the Lease names no holder
  // (or d already), so d need not wait out the lease whatever the machine's load.
  const lease = await client.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: 'graceful' });
  const holder = (lease.spec as { holderIdentity?: string }).holderIdentity ?? '';
  assert.ok(holder === '' || holder === 'd', `the Lease was released (holder now "${holder}")`);
  await eventually('d leads', () => Promise.resolve(leading(d) ? true : undefined), 30_000, 50);
});
