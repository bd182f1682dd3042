/**
 * The release decision: from a release's history and the digest of the inputs it should now be
 * made from, what one reconcile does. Pure, and the only place that decides; both reconcilers
 * (BundleDeployment, Helm operator) and `binnacle release apply` call it once, before anything
 * is rendered, and the operations (install, upgrade, repair, rollback) carry out its answer
 * without deciding again.
 *
 * The answers, as Helm's `pkg/action` and Flux's helm-controller reach them (decide.test.ts has
 * the whole table, each row with what Helm and Flux do in that state):
 * - `install`: nothing was ever deployed (or the last attempt was interrupted or failed and
 *   nothing is deployed): render, and roll out a new revision with nothing to upgrade from.
 * - `upgrade`: inputs differ from the deployed revision's: render, and roll out a new revision
 *   from it.
 * - `repair`: the deployed revision is the newest and was made from these inputs: re-apply what
 *   it recorded (drift), no render, no new revision.
 * - `keep`: these inputs failed before and were rolled back (Flux's default remediation): the
 *   deployed revision is repaired and stays, until the inputs or the owner's spec change.
 * - `rollback`: the newest revision is not the deployed one (an upgrade interrupted, or failed
 *   and not rolled back) and the inputs are the deployed revision's again: roll the deployed
 *   revision's record out again as a new revision, which also prunes what the unfinished
 *   revision added. (Inputs that failed and were not rolled back are upgraded to again, and
 *   rolled back if they fail again; with automatic rollback off they wait for a change.)
 * - `refuse`: the release belongs to another owner, or inputs that failed wait for a change
 *   (automatic rollback off, or nothing to roll back to: below).
 * A revision that moved over from Helm's records (`movedOver`: written where a tenant may write
 * Secrets, its objects checked but not its fields) is never re-applied from its record: where it
 * would be repaired or rolled out again, the same inputs are rendered anew (`upgrade`), once, and
 * Binnacle's own revision is what later repairs re-apply; a failed upgrade is not rolled back to
 * it (install.ts) and waits, as with automatic rollback off, for the inputs or the spec to change.
 * A moved-over record's status counts for nothing either: a `failed` one does not hold inputs back.
 * A pending revision a crashed run left (Helm's "another operation is in progress") is first
 * marked failed (`settle`), as Flux's unlock does, then decided on like any other.
 */
import { ownerName } from './ownership.js';
import type { Owner, ReleaseRevision } from './types.js';

export interface ReleaseInputs {
  owner: Owner;
  /** The digest of everything the next revision would be made from (chart or bundle, values, options). */
  inputDigest: string;
  /** Whether a failed upgrade is rolled back (default true); without, the failed inputs wait for a change. */
  autoRollback?: boolean;
  /**
   * The owner's metadata.generation now. Inputs that failed are tried again when it differs
   * from the generation the failed revision was made at: the owner's spec changed since (away
   * and back, say), which is a new request, as a new generation resets Flux's failure counts.
   * Unknown (undefined) on either side: the failure stands.
   */
  generation?: number;
  /** Who else holds Helm records of this release's name in its namespace (release-records.ts), if anyone: the release is theirs. */
  foreignOwner?: string | undefined;
}

interface Base {
  /** What the decision is, in words: said in logs and status. */
  reason: string;
  /** Pending revisions left by an interrupted run, to mark failed before acting. */
  settle: ReleaseRevision[];
}

export type ReleaseDecision =
  | (Base & { action: 'install'; /** The newest revision, whose objects a new install prunes when it no longer has them. */ latest?: ReleaseRevision })
  | (Base & { action: 'upgrade'; from: ReleaseRevision; latest: ReleaseRevision })
  | (Base & { action: 'repair'; revision: ReleaseRevision })
  | (Base & { action: 'keep'; revision: ReleaseRevision; failed: ReleaseRevision })
  | (Base & { action: 'rollback'; to: ReleaseRevision; latest: ReleaseRevision })
  | (Base & { action: 'refuse'; code: 'RELEASE_NOT_OWNED' | 'RELEASE_REFUSED' });

/** What ends the description of a revision a crashed run left pending, once marked failed (history.ts `settle`). */
export const INTERRUPTED = ': interrupted';

/**
 * Whether `r` failed on its merits: not a revision a crashed run left pending (a crash says
 * nothing of the inputs; found by the model test: an interrupted rollback to A, then C deployed,
 * then A asked for again was `keep`, and C stayed for good).
 */
function failedOnItsMerits(r: ReleaseRevision): boolean {
  // A moved-over record's status and description are as unchecked as the rest of its fields.
  return r.status === 'failed' && !r.description.endsWith(INTERRUPTED) && r.movedOver !== true;
}

/** Whether the decision makes a new revision from a fresh render. */
export function needsRender(d: ReleaseDecision): boolean {
  return d.action === 'install' || d.action === 'upgrade';
}

function newestWith(history: readonly ReleaseRevision[], statuses: readonly string[]): ReleaseRevision | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i];
    if (r !== undefined && statuses.includes(r.status)) return r;
  }
  return undefined;
}

/** The owner the history names (the newest revision that names one), and whether it is `owner`. */
function recordedOwner(history: readonly ReleaseRevision[], owner: Owner): { ok: boolean; recorded: Owner | undefined } {
  const recorded = newestWith(
    history.filter((r) => r.owner !== undefined),
    ['unknown', 'deployed', 'uninstalled', 'superseded', 'failed', 'uninstalling', 'pending-install', 'pending-upgrade', 'pending-rollback'],
  )?.owner;
  // A record without an owner namespace predates it; records live in the release namespace.
  const sameNamespace = recorded?.namespace === undefined || recorded.namespace === owner.namespace;
  return { ok: recorded !== undefined && recorded.kind === owner.kind && recorded.name === owner.name && sameNamespace, recorded };
}

/** Whether the owner's spec changed since `failed` was made (its generation differs): the failed inputs are asked for again. */
function askedAgain(failed: ReleaseRevision, inputs: ReleaseInputs): boolean {
  return inputs.generation !== undefined && failed.ownerGeneration !== undefined && inputs.generation !== failed.ownerGeneration;
}

/**
 * The latest revision is the deployed one: repaired when made from these inputs; kept when a
 * revision with these inputs failed before and the spec did not change since; else upgraded.
 */
function decideOnDeployed(sorted: readonly ReleaseRevision[], deployed: ReleaseRevision, inputs: ReleaseInputs, settle: ReleaseRevision[]): ReleaseDecision {
  const digest = inputs.inputDigest;
  if (deployed.inputDigest === digest && deployed.movedOver === true) {
    return { action: 'upgrade', from: deployed, latest: deployed, reason: `revision ${deployed.revision} moved over from Helm's records, whose fields Binnacle did not write: rendered anew from these inputs rather than re-applied`, settle };
  }
  if (deployed.inputDigest === digest) return { action: 'repair', revision: deployed, reason: `revision ${deployed.revision} was made from these inputs`, settle };
  const failedBefore = newestWith(
    sorted.filter((r) => r.inputDigest === digest && r.revision < deployed.revision && failedOnItsMerits(r)),
    ['failed'],
  );
  if (failedBefore !== undefined && askedAgain(failedBefore, inputs)) {
    const reason = `revision ${failedBefore.revision} with these inputs failed (${failedBefore.description}) at generation ${String(failedBefore.ownerGeneration)}; the spec changed since (generation ${String(inputs.generation)}): trying them again`;
    return { action: 'upgrade', from: deployed, latest: deployed, reason, settle };
  }
  if (failedBefore !== undefined) {
    return {
      action: 'keep',
      revision: deployed,
      failed: failedBefore,
      reason: `revision ${failedBefore.revision} with these inputs failed (${failedBefore.description}) and was rolled back; revision ${deployed.revision} keeps running until the inputs change`,
      settle,
    };
  }
  return { action: 'upgrade', from: deployed, latest: deployed, reason: `the inputs differ from revision ${deployed.revision}'s`, settle };
}

/**
 * The newest revision is not the deployed one: decided from `base`, the deployed revision (or,
 * with none deployed, the newest superseded one, as Helm's upgrade takes it).
 */
function decideFromBase(base: ReleaseRevision, latest: ReleaseRevision, inputs: ReleaseInputs, settle: ReleaseRevision[]): ReleaseDecision {
  const digest = inputs.inputDigest;
  const interrupted = latest.status.startsWith('pending-');
  const state = base === latest ? 'is not deployed' : interrupted ? `was interrupted (${latest.status})` : `is ${latest.status}`;
  const newest = `revision ${latest.revision} ${state}`;
  if (base.inputDigest === digest && base.movedOver === true) {
    // Binnacle's own render of these inputs failed after the move: not tried again every reconcile.
    if (latest.inputDigest === digest && failedOnItsMerits(latest) && !askedAgain(latest, inputs)) {
      const reason = `revision ${latest.revision} with these inputs failed (${latest.description}); revision ${base.revision} moved over from Helm's records, whose fields Binnacle did not write, so it is not rolled out from its record: it stays until the inputs or the spec change`;
      return { action: 'refuse', code: 'RELEASE_REFUSED', reason, settle };
    }
    return { action: 'upgrade', from: base, latest, reason: `${newest} and the inputs are revision ${base.revision}'s, which moved over from Helm's records: rendered anew rather than rolled out from its record`, settle };
  }
  if (base.inputDigest === digest) {
    return { action: 'rollback', to: base, latest, reason: `${newest} and the inputs are revision ${base.revision}'s: rolling it out anew`, settle };
  }
  if (latest.inputDigest === digest && latest.status === 'failed' && latest.movedOver !== true) {
    if (inputs.autoRollback === false && !askedAgain(latest, inputs)) {
      return { action: 'refuse', code: 'RELEASE_REFUSED', reason: `revision ${latest.revision} with these inputs failed (${latest.description}); automatic rollback is off, so it stays until the inputs change`, settle };
    }
    if (base.movedOver === true && !askedAgain(latest, inputs) && failedOnItsMerits(latest)) {
      const reason = `revision ${latest.revision} with these inputs failed (${latest.description}); revision ${base.revision} moved over from Helm's records, whose fields Binnacle did not write, so it is not rolled back to: it stays until the inputs change`;
      return { action: 'refuse', code: 'RELEASE_REFUSED', reason, settle };
    }
    // Its rollback did not run (it had to wait, or the run died): the upgrade is tried again, and rolled back if it fails again.
    return { action: 'upgrade', from: base, latest, reason: `revision ${latest.revision} with these inputs failed (${latest.description}) and was not rolled back: trying it again`, settle };
  }
  return { action: 'upgrade', from: base, latest, reason: `${newest}; upgrading from revision ${base.revision}`, settle };
}

/** The one release decision (see the top of this file). `history` is oldest first. */
export function decideRelease(history: readonly ReleaseRevision[], inputs: ReleaseInputs): ReleaseDecision {
  const sorted = [...history].sort((a, b) => a.revision - b.revision);
  if (inputs.foreignOwner !== undefined) {
    return { action: 'refuse', code: 'RELEASE_NOT_OWNED', reason: `the release belongs to ${inputs.foreignOwner}, not ${ownerName(inputs.owner)}: its Helm records are in the release namespace, and nothing of theirs is taken over`, settle: [] };
  }
  const latest = sorted.at(-1);
  if (latest === undefined) return { action: 'install', reason: 'no revision yet', settle: [] };
  const owned = recordedOwner(sorted, inputs.owner);
  if (!owned.ok) {
    const who = owned.recorded === undefined ? 'a Helm user (no Binnacle owner recorded)' : ownerName(owned.recorded);
    return { action: 'refuse', code: 'RELEASE_NOT_OWNED', reason: `the release belongs to ${who}, not ${ownerName(inputs.owner)}`, settle: [] };
  }
  const settle = sorted.filter((r) => r.status.startsWith('pending-'));
  const interrupted = latest.status.startsWith('pending-');
  const deployed = newestWith(sorted, ['deployed']);

  if (deployed !== undefined && deployed === latest) return decideOnDeployed(sorted, deployed, inputs, settle);

  // Nothing newer finished. The deployed revision is the base; with none deployed, the newest
  // good one (superseded: its deployed successor's record is gone), as Helm's upgrade takes it.
  const base = deployed ?? newestWith(sorted, ['superseded']);
  if (base !== undefined) return decideFromBase(base, latest, inputs, settle);

  const what = interrupted ? `revision ${latest.revision} was interrupted (${latest.status})` : `revision ${latest.revision} is ${latest.status}`;
  return { action: 'install', latest, reason: `nothing is deployed and ${what}: installing`, settle };
}
