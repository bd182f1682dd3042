/**
 * Preflight: every object checked before anything changes, side by side. Who owns the live
 * object (never take over another owner's), whether a CRD change is safe, whether the object is
 * being deleted, and whether the API server accepts it (a server dry run). Throws
 * ApplyRefusedError with every problem; answers which objects to apply with force (ours, or
 * adopted), which to replace (immutable changes, with force), and which are unchanged.
 */
import { FIELD_MANAGER } from '../kube/client.js';
import { isFieldManagerConflict, isInvalid, isNotFound, isTransient } from '../kube/errors.js';
import { describeRef, managedFieldsOf, refOf, type KubeObject, type ObjectRef } from '../kube/types.js';
import { errorMessage, ValidationResult } from '../util/errors.js';
import { mapLimit } from '../util/map-limit.js';
import { findQuiet, type ActionConfig } from './action-config.js';
import { checkCrdUpgrade } from './crd-safety.js';
import { objectDrift } from './drift.js';
import { ignoredUnchanged, withoutPointers } from './drift-policy.js';
import type { DriftSpec } from '../api/types.js';
import { ApplyRefusedError, ObjectTerminatingError } from './errors.js';
import { heldByHelm } from './helm-fields.js';
import { hookTakeover } from './hooks.js';
import { controlledBy, describeOwner, heldBySomeone, isOwnedBy, ownerName } from './ownership.js';
import { identityOf } from './phases.js';
import type { Owner, ReleaseRef, OperationRequest } from './types.js';
import { heldBySwitch, otherHolders, switchedPaths, unionSwitchPatch, withLiveUnion, type UnionSwitchPatch } from './union-switch.js';

/** Objects as one read found them, by identity; `object` undefined when there was none. */
export type LiveObjects = Map<string, { object: KubeObject | undefined }>;

export interface Preflight {
  /** Live objects we own or adopt: applied with force (their fields other managers set are taken over). */
  takeOver: Set<string>;
  /** With force: live objects whose change the API server refuses as immutable, to delete and create. */
  replace: Set<string>;
  /** Objects as the deployed revision applied them (`same`), live still matching and applied by Binnacle: left alone. */
  unchanged: Set<string>;
  /** What each object's read found (undefined: it does not exist), by identity. */
  live: LiveObjects;
  /** Live objects the `helm` CLI holds fields of (adopted, or upgraded by hand): those fields are handed to Binnacle first (helm-fields.ts). */
  helmHeld: Set<string>;
  /** Live objects whose update strategy switches type over a member the API server filled in: patched first (union-switch.ts). */
  switchFirst: Map<string, UnionSwitchPatch>;
  /** Live objects a cut-short switch's field manager still holds fields of: its hold is given up before the apply. */
  switchHeld: Set<string>;
}

export interface PreflightHow {
  adopt?: OperationRequest['adopt'];
  conflictPolicy?: OperationRequest['conflictPolicy'];
  force?: boolean;
  /** A repair re-applies the deployed revision: no dry run, and the release namespace exists. */
  repair?: boolean;
  /** Identities of objects as the deployed revision applied them (sameAsDeployed). */
  same?: Set<string>;
  watched?: OperationRequest['watched'];
  crdUpgradeSafety?: OperationRequest['crdUpgradeSafety'];
  /** The objects of the hooks this rollout runs (hookObjectsOf): one that exists and is another's refuses the release, as a manifest object does. */
  hooks?: readonly KubeObject[];
  /** The drift rules and the deployed revision's objects (a repair: none) the apply will use: what of each object it sends (intentOf). */
  intent?: { drift: DriftSpec | undefined; baseline: Map<string, KubeObject> | undefined };
}

/** How a preflight runs for one object. */
interface ObjectCheck {
  owner: Owner;
  release: ReleaseRef;
  adopt: OperationRequest['adopt'];
  /** Whether a live object's fields other managers hold are taken (ConflictPolicy `Force`). */
  forceConflicts: boolean;
  force: boolean;
  same: boolean;
  /** Whether a changed CRD is checked for upgrade safety (all but `None`). */
  checkCrds: boolean;
  watched?: (ref: ObjectRef) => KubeObject | undefined;
  /** What the apply will send of the object: without the ignored fields it leaves as they were. */
  applied: (obj: KubeObject) => KubeObject;
}

/** What a preflight finds, object by object: the problems, and the objects that are going away. */
interface Findings extends Preflight {
  result: ValidationResult;
  /** Objects being deleted: what each is (its owner said), and where the live one is. */
  terminating: { what: string; ref: ObjectRef }[];
  /** Whether each object is also put to a server dry run. */
  dryRun: boolean;
}

/** How many objects of a release are checked at once. */
export const PREFLIGHT_CONCURRENCY = 8;

function emptyFindings(subject: string, dryRun: boolean): Findings {
  return { result: new ValidationResult(subject), takeOver: new Set(), replace: new Set(), unchanged: new Set(), helmHeld: new Set(), switchFirst: new Map(), switchHeld: new Set(), terminating: [], live: new Map(), dryRun };
}

/** Checks every object before anything changes (see the top of this file). */
export async function preflight(cfg: ActionConfig, objects: readonly KubeObject[], owner: Owner, release: ReleaseRef, how: PreflightHow = {}): Promise<Preflight> {
  const repair = how.repair === true;
  const subject = `release ${release.namespace}/${release.name}`;
  const found = emptyFindings(subject, !repair);
  // The release's Helm records live in the release namespace: it must exist or be part of the release.
  const createsNamespace = objects.some((o) => o.kind === 'Namespace' && o.apiVersion === 'v1' && o.metadata.name === release.namespace);
  const namespaceMissing = repair || createsNamespace ? Promise.resolve(false) : findQuiet(cfg.client, { apiVersion: 'v1', kind: 'Namespace', name: release.namespace }).then((ns) => ns === undefined);
  // Objects are checked side by side (their reads and dry runs are independent), and their
  // findings gathered in the objects' order: one round trip or two, not two per object. Both
  // awaited together: a read of the namespace that fails while an object's check throws must
  // not be left rejecting with nobody to handle it.
  const applied = (obj: KubeObject): KubeObject => (how.intent === undefined ? obj : withoutPointers(obj, ignoredUnchanged(obj, how.intent.drift, how.intent.baseline)));
  const checks = mapLimit(objects, PREFLIGHT_CONCURRENCY, async (obj) => {
    const mine = emptyFindings(subject, found.dryRun);
    const same = how.same?.has(identityOf(obj)) === true;
    // What a watch holds stands in for the read only where nothing new is to be written: a
    // repair, or an object as the deployed revision applied it. A new or changed object is read.
    const watched = repair || same ? how.watched : undefined;
    await checkObject(cfg, obj, { owner, release, adopt: how.adopt, forceConflicts: how.conflictPolicy !== 'Fail', force: how.force === true, same, checkCrds: how.crdUpgradeSafety !== 'None', applied, ...(watched === undefined ? {} : { watched }) }, mine);
    return mine;
  });
  // A hook is never taken over, whatever adopt says (hooks.ts checks again when it runs).
  const hookChecks = mapLimit(how.hooks ?? [], PREFLIGHT_CONCURRENCY, async (obj) => {
    const what = describeRef(refOf(obj));
    try {
      const refused = hookTakeover(await findQuiet(cfg.client, refOf(obj)), owner, release);
      return refused === undefined ? undefined : { what, code: 'apply.hook-not-owned', problem: `a hook of the release: ${refused}` };
    } catch (err) {
      if (isTransient(err)) throw err;
      return { what, code: 'apply.read', problem: `the release's hook of that name cannot read it: ${errorMessage(err)}` };
    }
  });
  const [missing, perObject, hookProblems] = await Promise.all([namespaceMissing, checks, hookChecks]);
  for (const p of hookProblems) if (p !== undefined) found.result.error(p.code, p.problem, { field: p.what });
  if (missing) {
    found.result.error('apply.release-namespace', `namespace ${release.namespace} does not exist and the release does not create it; its records cannot be stored`, { field: 'release.namespace' });
  }
  for (const mine of perObject) mergeFindings(found, mine);
  if (!found.result.ok) throw new ApplyRefusedError(found.result);
  const terminating = found.terminating;
  if (terminating.length > 0) {
    const one = terminating.length === 1;
    throw new ObjectTerminatingError(
      terminating.map((t) => t.ref),
      `${subject}: ${terminating.map((t) => t.what).join(', ')} ${one ? 'is' : 'are'} being deleted; applying once ${one ? 'it is' : 'they are'} gone`,
    );
  }
  return { takeOver: found.takeOver, replace: found.replace, unchanged: found.unchanged, live: found.live, helmHeld: found.helmHeld, switchFirst: found.switchFirst, switchHeld: found.switchHeld };
}

/** Preflight of one object: readable, not being deleted, ours (or adopted), a safe CRD change, accepted by a server dry run. */
async function checkObject(cfg: ActionConfig, obj: KubeObject, o: ObjectCheck, found: Findings): Promise<void> {
  const ref = refOf(obj);
  const what = describeRef(ref);
  let live: KubeObject | undefined;
  try {
    live = o.watched?.(ref) ?? (await findQuiet(cfg.client, ref));
  } catch (err) {
    found.result.error('apply.read', `${what}: cannot read it: ${errorMessage(err)}`, { field: what });
    return;
  }
  found.live.set(identityOf(obj), { object: live });
  if (live?.metadata.deletionTimestamp !== undefined) {
    // Going away (an earlier release's uninstall, a CRD's custom resources being cleaned up):
    // applying now would be undone, and who owns it says nothing. Wait for it, then apply.
    found.terminating.push({ what: `${what} (${describeOwner(live)})`, ref: refOf(live) });
    return;
  }
  if (live !== undefined && !claimLive(obj, live, o, found)) return;
  const helmHeld = live !== undefined && heldByHelm(live);
  if (helmHeld) found.helmHeld.add(identityOf(obj));
  const switchFirst = noteSwitch(obj, live, o, found);
  if (switchFirst === false || !found.dryRun) return;
  // As the deployed revision applied it, and live still so: no dry run, and nothing to apply.
  if (o.same && !helmHeld && live !== undefined && isOwnedBy(live, o.owner, o.release) && appliedByBinnacle(live) && (await objectDrift({ find: () => Promise.resolve(live) }, obj)) === undefined) {
    found.unchanged.add(identityOf(obj));
    return;
  }
  await dryRun(cfg, obj, live, switchFirst, o, found);
}

/**
 * The server's verdict on what the apply will send (a drift rule's ignored fields, unchanged,
 * left out: no conflict over a field the rule gives to others); a strategy switch is patched
 * first, so the dry run checks the rest of the object.
 */
async function dryRun(cfg: ActionConfig, obj: KubeObject, live: KubeObject | undefined, switchFirst: UnionSwitchPatch | undefined, o: ObjectCheck, found: Findings): Promise<void> {
  try {
    const sent = live === undefined ? obj : o.applied(obj);
    await cfg.client.apply(switchFirst === undefined ? sent : withLiveUnion(sent, live), { dryRun: true, force: found.takeOver.has(identityOf(obj)) });
  } catch (err) {
    noteDryRunRefusal(err, obj, live, o.force, found);
  }
}

/**
 * The strategy switch the rollout makes first (union-switch.ts), noted; false when it is refused:
 * under the conflict policy Fail, one that would take fields another manager holds, as a conflict is.
 */
function noteSwitch(obj: KubeObject, live: KubeObject | undefined, o: ObjectCheck, found: Findings): UnionSwitchPatch | undefined | false {
  if (heldBySwitch(live)) found.switchHeld.add(identityOf(obj));
  // Of what the apply sends: a drift rule that ignores the strategy, unchanged, leaves it out.
  const patch = live === undefined ? undefined : unionSwitchPatch(live, o.applied(obj));
  if (patch === undefined || live === undefined) return undefined;
  const others = o.forceConflicts ? [] : otherHolders(live, patch, FIELD_MANAGER);
  if (others.length > 0) {
    const what = describeRef(refOf(obj));
    found.result.error('apply.conflict', `${what}: switching ${switchedPaths(patch).join(' and ')} takes fields ${others.join(', ')} hold${others.length === 1 ? 's' : ''} (conflictPolicy Fail: Binnacle takes no field another manager holds; Force takes them)`, { field: what });
    return false;
  }
  found.switchFirst.set(identityOf(obj), patch);
  return patch;
}

/** Some Apply of Binnacle's own field manager holds fields of `live`: what it applied is its own, not adopted. */
function appliedByBinnacle(live: KubeObject): boolean {
  return managedFieldsOf(live).some((e) => e.manager === FIELD_MANAGER && e.operation === 'Apply');
}

/** One object's findings added to the whole's. */
function mergeFindings(into: Findings, from: Findings): void {
  into.result.problems.push(...from.result.problems);
  into.result.children.push(...from.result.children);
  for (const id of from.takeOver) into.takeOver.add(id);
  for (const id of from.replace) into.replace.add(id);
  for (const id of from.unchanged) into.unchanged.add(id);
  for (const id of from.helmHeld) into.helmHeld.add(id);
  for (const [id, patch] of from.switchFirst) into.switchFirst.set(id, patch);
  for (const id of from.switchHeld) into.switchHeld.add(id);
  into.terminating.push(...from.terminating);
  for (const [id, live] of from.live) into.live.set(id, live);
}

/**
 * An object that exists already: refused unless ours or adopted (`adopt`: any; `unowned`: one no
 * one holds, never a kind that holds data), else claimed: applied with force unless the conflict
 * policy is Fail, a CRD only with a safe change. Answers whether to go on to the dry run. A
 * release's hooks are held to a stricter rule (hooks.ts: never taken over).
 */
export function claimLive(obj: KubeObject, live: KubeObject, o: Pick<ObjectCheck, 'owner' | 'release' | 'adopt'> & Partial<Pick<ObjectCheck, 'checkCrds' | 'forceConflicts'>>, found: Pick<Findings, 'result' | 'takeOver'>): boolean {
  const { owner, release } = o;
  const what = describeRef(refOf(obj));
  // A tenant's release taking a Namespace, a CRD or a volume its uninstall would then delete, with
  // the data in it, is never what takeOwnership is for.
  const takeable = o.adopt === true || (o.adopt === 'unowned' && !heldBySomeone(live) && !HOLDS_DATA.has(obj.kind)) || (typeof o.adopt === 'object' && controlledBy(live, o.adopt));
  if (!isOwnedBy(live, owner, release) && !takeable) {
    const hint =
      o.adopt !== 'unowned'
        ? "adopt to override: a BundleDeployment's adoptExisting, a HelmOperator's takeOwnership, helm adopt"
        : HOLDS_DATA.has(obj.kind)
          ? `takeOwnership never takes a ${obj.kind}: uninstalling the release would delete it and its data`
          : 'takeOwnership takes only objects no release, owner or controller holds';
    found.result.error('apply.not-owned', `${what} already exists and belongs to ${describeOwner(live)}, not ${ownerName(owner)} (release ${release.namespace}/${release.name}); refusing to take it over (${hint})`, { field: what });
    return false;
  }
  if (o.forceConflicts !== false) found.takeOver.add(identityOf(obj));
  if (obj.kind === 'CustomResourceDefinition' && o.checkCrds !== false) {
    const safety = checkCrdUpgrade(live, obj);
    if (!safety.ok) found.result.children.push(safety);
  }
  return true;
}

/** The server dry run refused `obj`: a problem, unless the refusal is no verdict (retried, or checked at apply) or force replaces it. */
function noteDryRunRefusal(err: unknown, obj: KubeObject, live: KubeObject | undefined, force: boolean, found: Findings): void {
  // NotFound: its namespace or CRD comes earlier in this same release; checked when applied.
  // ConflictPolicy Fail: another field manager holds a field this change sets (the API server
  // names the manager and the fields). A verdict, not a race: refused before anything changes.
  if (isFieldManagerConflict(err)) {
    const what = describeRef(refOf(obj));
    found.result.error('apply.conflict', `${what}: ${errorMessage(err)} (conflictPolicy Fail: Binnacle takes no field another manager holds; Force takes them)`, { field: what });
    return;
  }
  // A transient failure (5xx, unreachable) is no verdict on the object: retried, not refused.
  if (isTransient(err)) throw err;
  if (isNotFound(err)) return;
  const what = describeRef(refOf(obj));
  const immutable = live !== undefined && isImmutableRefusal(err);
  if (immutable && force && replaceable(obj)) {
    found.replace.add(identityOf(obj));
    return;
  }
  const hint = !immutable ? '' : replaceable(obj) ? ' (an upgrade with force deletes and re-creates it: helm --force, the upgrade-force annotation)' : ` (a ${obj.kind} is never replaced: deleting it would delete its data)`;
  found.result.error('apply.rejected', `${what}: the API server rejects it: ${errorMessage(err)}${hint}`, { field: what });
}

/** Kinds whose deletion deletes data (custom resources, a namespace's contents, volumes): never replaced, and pruned only by a revision that was rendered without them. */
export const HOLDS_DATA = new Set(['CustomResourceDefinition', 'Namespace', 'PersistentVolume', 'PersistentVolumeClaim']);

function replaceable(obj: KubeObject): boolean {
  return !HOLDS_DATA.has(obj.kind);
}

/**
 * The API server's answer to changing what cannot change: 422 Invalid with one of its
 * validators' phrasings ("field is immutable", a Service's "may not change once set", a
 * StatefulSet's "updates to statefulset spec for fields other than … are forbidden").
 */
function isImmutableRefusal(err: unknown): boolean {
  return isInvalid(err) && /immutable|may not change once set|updates to \S+ spec for fields other than/i.test(errorMessage(err));
}
