/**
 * The release decision's table: each row a history and the inputs, the action decided, and
 * what Helm's `pkg/action` and Flux's helm-controller do in that state (for the reader; the
 * differences are Binnacle's on purpose).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideRelease, needsRender, type ReleaseInputs } from './decide.js';
import type { Owner, ReleaseRevision, ReleaseStatus } from './types.js';

const OWNER: Owner = { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' };

function rev(revision: number, status: ReleaseStatus, inputDigest: string, more: Partial<ReleaseRevision> = {}): ReleaseRevision {
  return { name: 'pg', namespace: 'team-a', revision, status, description: `${status} ${revision}`, firstDeployed: '', lastDeployed: '', chart: { name: 'pg', version: '1.0.0' }, config: {}, manifest: '', owner: OWNER, inputDigest, ...more };
}

interface Row {
  state: string;
  history: ReleaseRevision[];
  inputs: Partial<ReleaseInputs> & { inputDigest: string };
  action: string;
  /** The revision the action acts from or on (repair's, keep's, rollback's target, upgrade's base). */
  on?: number;
  settle?: number[];
  helm: string;
  flux: string;
}

const rows: Row[] = [
  { state: 'no revision', history: [], inputs: { inputDigest: 'a' }, action: 'install', helm: 'install', flux: 'install' },
  { state: 'deployed, same inputs', history: [rev(1, 'deployed', 'a')], inputs: { inputDigest: 'a' }, action: 'repair', on: 1, helm: 'nothing (upgrade makes a new revision)', flux: 'nothing, or drift correction' },
  { state: 'deployed, other inputs', history: [rev(1, 'deployed', 'a')], inputs: { inputDigest: 'b' }, action: 'upgrade', on: 1, helm: 'upgrade', flux: 'upgrade' },
  {
    state: 'b failed and was rolled back, still asked for b',
    history: [rev(1, 'superseded', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 }), rev(3, 'deployed', 'a')],
    inputs: { inputDigest: 'b', generation: 2 },
    action: 'keep',
    on: 3,
    helm: 'upgrade again',
    flux: 'no retry until the inputs or generation change (remediation retries exhausted)',
  },
  {
    state: 'b failed and was rolled back; the spec changed away and back since (new generation)',
    history: [rev(1, 'superseded', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 }), rev(3, 'deployed', 'a')],
    inputs: { inputDigest: 'b', generation: 4 },
    action: 'upgrade',
    on: 3,
    helm: 'upgrade',
    flux: 'upgrade (a new generation resets the failure counts)',
  },
  {
    state: 'b failed and was rolled back, generation unknown on the record (older Binnacle)',
    history: [rev(1, 'superseded', 'a'), rev(2, 'failed', 'b'), rev(3, 'deployed', 'a')],
    inputs: { inputDigest: 'b', generation: 4 },
    action: 'keep',
    on: 3,
    helm: 'upgrade again',
    flux: 'no retry',
  },
  {
    state: 'an upgrade to b interrupted (pending), asked for a again',
    history: [rev(1, 'deployed', 'a'), rev(2, 'pending-upgrade', 'b')],
    inputs: { inputDigest: 'a' },
    action: 'rollback',
    on: 1,
    settle: [2],
    helm: '"another operation is in progress" until fixed by hand',
    flux: 'unlock (mark failed), then upgrade',
  },
  {
    state: 'an upgrade to b interrupted, still asked for b',
    history: [rev(1, 'deployed', 'a'), rev(2, 'pending-upgrade', 'b')],
    inputs: { inputDigest: 'b' },
    action: 'upgrade',
    on: 1,
    settle: [2],
    helm: '"another operation is in progress"',
    flux: 'unlock, then upgrade',
  },
  {
    state: 'b failed, not rolled back, asked for b',
    history: [rev(1, 'deployed', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 })],
    inputs: { inputDigest: 'b', generation: 2 },
    action: 'upgrade',
    on: 1,
    helm: 'upgrade',
    flux: 'retry per remediation, then rollback',
  },
  {
    state: 'b failed, not rolled back, automatic rollback off',
    history: [rev(1, 'deployed', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 })],
    inputs: { inputDigest: 'b', generation: 2, autoRollback: false },
    action: 'refuse',
    helm: 'upgrade',
    flux: 'stalled until the inputs change',
  },
  {
    state: 'b failed, automatic rollback off, the spec changed since',
    history: [rev(1, 'deployed', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 })],
    inputs: { inputDigest: 'b', generation: 3, autoRollback: false },
    action: 'upgrade',
    on: 1,
    helm: 'upgrade',
    flux: 'upgrade (new generation)',
  },
  {
    state: 'b failed, asked for c',
    history: [rev(1, 'deployed', 'a'), rev(2, 'failed', 'b')],
    inputs: { inputDigest: 'c' },
    action: 'upgrade',
    on: 1,
    helm: 'upgrade',
    flux: 'upgrade',
  },
  {
    state: 'the first install failed',
    history: [rev(1, 'failed', 'a')],
    inputs: { inputDigest: 'a' },
    action: 'install',
    helm: 'install refuses: "cannot re-use a name that is still in use" (upgrade --install upgrades)',
    flux: 'uninstall remediation, then install',
  },
  {
    state: 'the deployed record is gone; a superseded one stays',
    history: [rev(1, 'superseded', 'a'), rev(2, 'failed', 'b')],
    inputs: { inputDigest: 'c' },
    action: 'upgrade',
    on: 1,
    helm: 'upgrade from the last failed or superseded',
    flux: 'upgrade',
  },
  {
    state: 'someone else holds Helm records of the name',
    history: [rev(1, 'deployed', 'a')],
    inputs: { inputDigest: 'a', foreignOwner: 'Pushgateway team-b/pg' },
    action: 'refuse',
    helm: 'upgrade (whoever runs it)',
    flux: 'refuses a release another object manages',
  },
  {
    state: "the history names another owner",
    history: [rev(1, 'deployed', 'a', { owner: { kind: 'Pushgateway', name: 'other', namespace: 'team-a' } })],
    inputs: { inputDigest: 'a' },
    action: 'refuse',
    helm: 'upgrade',
    flux: 'refuses',
  },
];

for (const row of rows) {
  test(`decide: ${row.state} → ${row.action} (Helm: ${row.helm}; Flux: ${row.flux})`, () => {
    const d = decideRelease(row.history, { owner: OWNER, ...row.inputs });
    assert.equal(d.action, row.action, d.reason);
    const on = d.action === 'repair' || d.action === 'keep' ? d.revision.revision : d.action === 'rollback' ? d.to.revision : d.action === 'upgrade' ? d.from.revision : undefined;
    assert.equal(on, row.on, d.reason);
    assert.deepEqual(
      d.settle.map((r) => r.revision),
      row.settle ?? [],
    );
    assert.equal(needsRender(d), d.action === 'install' || d.action === 'upgrade');
    assert.ok(d.reason.length > 0);
  });
}

test('decide: the reason for a retry names the generations', () => {
  const d = decideRelease([rev(1, 'superseded', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 }), rev(3, 'deployed', 'a')], { owner: OWNER, inputDigest: 'b', generation: 5 });
  assert.match(d.reason, /generation 2.*generation 5.*trying them again/);
});
