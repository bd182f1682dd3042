/**
 * What the trusted release records cost in requests, as docs/trust-model.md states it ("What it
 * costs"): one Helm operator CR through the real reconciler over the one fake cluster.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FakeRequest } from '../kube/fake-cluster.test-helper.js';
import { helmSubject as subject, newWorld, reconcileOnce, SYSTEM } from './release-engine.world.test-helper.js';

const byVerb = (rs: readonly FakeRequest[]): Record<string, number> => rs.reduce<Record<string, number>>((a, r) => ({ ...a, [r.verb]: (a[r.verb] ?? 0) + 1 }), {});

test('the trusted records cost one list per reconcile and one write per record change: install 3 requests, a reconcile that changes nothing 1, an upgrade 4', async () => {
  const w = newWorld(subject);
  subject.create(w, 'A');
  const counted: Record<string, { trusted: Record<string, number>; all: number }> = {};
  for (const [label, v] of [['install', 'A'], ['no change', 'A'], ['upgrade', 'B']] as const) {
    subject.setVariant(w, v);
    const from = w.cluster.log.length;
    await reconcileOnce(w, subject);
    const reqs = w.cluster.log.slice(from);
    counted[label] = { trusted: byVerb(reqs.filter((r) => r.kind === 'Secret' && r.namespace === SYSTEM)), all: reqs.length };
  }
  console.log(JSON.stringify(counted));
  assert.deepEqual(counted.install?.trusted, { list: 1, create: 1, update: 1 });
  assert.deepEqual(counted['no change']?.trusted, { list: 1 });
  assert.deepEqual(counted.upgrade?.trusted, { list: 1, create: 1, update: 2 });
  assert.deepEqual(w.violations, []);
});
