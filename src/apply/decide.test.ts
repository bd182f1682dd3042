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

/** One history and what is asked of it: each ask [state, inputs, action, on, helm, flux]; settle, the revisions each settles. */
type Ask = [state: string, inputs: Row['inputs'], action: string, on: number | undefined, helm: string, flux: string];

function given(history: ReleaseRevision[], asks: Ask[], settle?: number[]): Row[] {
  return asks.map(([state, inputs, action, on, helm, flux]) => ({ state, history, inputs, action, ...(on === undefined ? {} : { on }), ...(settle === undefined ? {} : { settle }), helm, flux }));
}

const rows: Row[] = [
  ...given([], [['no revision', { inputDigest: 'a' }, 'install', undefined, 'install', 'install']]),
  ...given([rev(1, 'deployed', 'a')], [
    ['deployed, same inputs', { inputDigest: 'a' }, 'repair', 1, 'nothing (upgrade makes a new revision)', 'nothing, or drift correction'],
    ['deployed, other inputs', { inputDigest: 'b' }, 'upgrade', 1, 'upgrade', 'upgrade'],
    ['someone else holds Helm records of the name', { inputDigest: 'a', foreignOwner: 'Pushgateway team-b/pg' }, 'refuse', undefined, 'upgrade (whoever runs it)', 'refuses a release another object manages'],
  ]),
  ...given([rev(1, 'superseded', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 }), rev(3, 'deployed', 'a')], [
    ['b failed and was rolled back, still asked for b', { inputDigest: 'b', generation: 2 }, 'keep', 3, 'upgrade again', 'no retry until the inputs or generation change (remediation retries exhausted)'],
    ['b failed and was rolled back; the spec changed away and back since (new generation)', { inputDigest: 'b', generation: 4 }, 'upgrade', 3, 'upgrade', 'upgrade (a new generation resets the failure counts)'],
  ]),
  ...given([rev(1, 'superseded', 'a'), rev(2, 'failed', 'b'), rev(3, 'deployed', 'a')], [
    ['b failed and was rolled back, generation unknown on the record (older Binnacle)', { inputDigest: 'b', generation: 4 }, 'keep', 3, 'upgrade again', 'no retry'],
  ]),
  ...given(
    [rev(1, 'deployed', 'a'), rev(2, 'pending-upgrade', 'b')],
    [
      ['an upgrade to b interrupted (pending), asked for a again', { inputDigest: 'a' }, 'rollback', 1, '"another operation is in progress" until fixed by hand', 'unlock (mark failed), then upgrade'],
      ['an upgrade to b interrupted, still asked for b', { inputDigest: 'b' }, 'upgrade', 1, '"another operation is in progress"', 'unlock, then upgrade'],
    ],
    [2],
  ),
  ...given([rev(1, 'deployed', 'a'), rev(2, 'failed', 'b', { ownerGeneration: 2 })], [
    ['b failed, not rolled back, asked for b', { inputDigest: 'b', generation: 2 }, 'upgrade', 1, 'upgrade', 'retry per remediation, then rollback'],
    ['b failed, not rolled back, automatic rollback off', { inputDigest: 'b', generation: 2, autoRollback: false }, 'refuse', undefined, 'upgrade', 'stalled until the inputs change'],
    ['b failed, automatic rollback off, the spec changed since', { inputDigest: 'b', generation: 3, autoRollback: false }, 'upgrade', 1, 'upgrade', 'upgrade (new generation)'],
  ]),
  ...given([rev(1, 'deployed', 'a'), rev(2, 'failed', 'b')], [['b failed, asked for c', { inputDigest: 'c' }, 'upgrade', 1, 'upgrade', 'upgrade']]),
  ...given([rev(1, 'failed', 'a')], [['the first install failed', { inputDigest: 'a' }, 'install', undefined, 'install refuses: "cannot re-use a name that is still in use" (upgrade --install upgrades)', 'uninstall remediation, then install']]),
  ...given([rev(1, 'superseded', 'a'), rev(2, 'failed', 'b')], [['the deployed record is gone; a superseded one stays', { inputDigest: 'c' }, 'upgrade', 1, 'upgrade from the last failed or superseded', 'upgrade']]),
  ...given([rev(1, 'deployed', 'a', { owner: { kind: 'Pushgateway', name: 'other', namespace: 'team-a' } })], [['the history names another owner', { inputDigest: 'a' }, 'refuse', undefined, 'upgrade', 'refuses']]),
  // A revision moved over from Helm's records (fields not Binnacle's to vouch for) is never re-applied from its record.
  ...given([rev(1, 'deployed', 'a', { movedOver: true })], [
    ['moved over, deployed, same inputs', { inputDigest: 'a' }, 'upgrade', 1, 'nothing (its records are its history)', 'nothing, or drift correction from its own storage'],
    ['moved over, deployed, other inputs', { inputDigest: 'b' }, 'upgrade', 1, 'upgrade', 'upgrade'],
  ]),
  ...given(
    [rev(1, 'deployed', 'a', { movedOver: true }), rev(2, 'pending-upgrade', 'b')],
    [['moved over, an upgrade to b interrupted, asked for a again', { inputDigest: 'a' }, 'upgrade', 1, '"another operation is in progress"', 'unlock, then upgrade']],
    [2],
  ),
  ...given([rev(1, 'deployed', 'a', { movedOver: true }), rev(2, 'failed', 'b', { ownerGeneration: 2 })], [
    ['moved over, b failed and was not rolled back to it, asked for b', { inputDigest: 'b', generation: 2 }, 'refuse', undefined, 'upgrade', 'retry per remediation, then rollback'],
    ['moved over, b failed, the spec changed since', { inputDigest: 'b', generation: 3 }, 'upgrade', 1, 'upgrade', 'upgrade (new generation)'],
  ]),
  ...given([rev(1, 'deployed', 'a', { movedOver: true }), rev(2, 'failed', 'a', { ownerGeneration: 2 })], [
    ['moved over, the fresh render of the same inputs failed', { inputDigest: 'a', generation: 2 }, 'refuse', undefined, 'upgrade again', 'retry per remediation'],
    ['moved over, the fresh render failed, automatic rollback off', { inputDigest: 'a', generation: 2, autoRollback: false }, 'refuse', undefined, 'upgrade again', 'stalled until the inputs change'],
    ['moved over, the fresh render failed, the spec changed since', { inputDigest: 'a', generation: 3 }, 'upgrade', 1, 'upgrade', 'upgrade (new generation)'],
  ]),
  ...given([rev(1, 'deployed', 'a', { movedOver: true }), rev(2, 'failed', 'a', { description: 'failed 2: interrupted' })], [
    ['moved over, the fresh render was interrupted (a crash says nothing of the inputs)', { inputDigest: 'a' }, 'upgrade', 1, '"another operation is in progress"', 'unlock, then upgrade'],
  ]),
  // A moved-over record's status is as unchecked as its other fields: a planted `failed` holds nothing back.
  ...given([rev(1, 'superseded', 'a', { movedOver: true }), rev(2, 'failed', 'b', { ownerGeneration: 2, movedOver: true }), rev(3, 'deployed', 'a', { movedOver: true })], [
    ['moved over: a failed record of b among them, asked for b', { inputDigest: 'b', generation: 2 }, 'upgrade', 3, 'upgrade', 'upgrade'],
  ]),
  ...given([rev(1, 'failed', 'b', { movedOver: true }), rev(2, 'superseded', 'a', { movedOver: true }), rev(3, 'deployed', 'a')], [
    ["moved over: a failed record of b, then Binnacle's own revision, asked for b", { inputDigest: 'b' }, 'upgrade', 3, 'upgrade', 'upgrade'],
  ]),
  ...given([rev(1, 'deployed', 'a', { movedOver: true }), rev(2, 'failed', 'b', { movedOver: true })], [
    ['moved over: the newest moved-over record says failed, asked for its inputs', { inputDigest: 'b' }, 'upgrade', 1, 'upgrade', 'upgrade'],
    ['moved over: the newest moved-over record says failed, automatic rollback off', { inputDigest: 'b', autoRollback: false }, 'upgrade', 1, 'upgrade', 'upgrade'],
  ]),
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
