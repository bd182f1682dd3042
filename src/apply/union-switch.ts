/**
 * A workload's update strategy is a union: `type` says which member may be set. The API server
 * fills in the `rollingUpdate` member when a manifest leaves the strategy out, and no apply owns
 * what it filled in; so a later apply that switches `type` (a Deployment to `Recreate`, a
 * StatefulSet to `OnDelete`) cannot remove it, and the API server refuses the object
 * ("spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is
 * 'Recreate'", kubernetes/kubernetes#24198). Server-side apply has no `retainKeys` as the
 * strategic merge patch of `kubectl apply` and Helm 3 does, so the switch is made first by a
 * merge patch that sets `type` and drops the member, then the object is applied.
 *
 * The merge patch is an `Update`: its field manager would hold `type` from then on, beside the
 * apply, and an apply that later leaves the strategy out (a rollback to a revision without one)
 * would not remove it. So the patch is made under a field manager of its own
 * (`STRATEGY_SWITCH_MANAGER`), whose entry is handed to Binnacle's `Apply` entry at once, in a
 * managedFields patch that holds only if the object did not change meanwhile (as helm-fields.ts
 * hands over the helm CLI's fields): the type is Binnacle's apply's from then on, even when the
 * apply that follows fails and the release rolls back. An entry a cut-short switch left (a crash,
 * conflicts) is handed over by the next rollout or repair that applies the object (preflight
 * notes it).
 */
import { isConflict, KubeApiError } from '../kube/errors.js';
import { fieldsHandedOver } from './helm-fields.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import { describeRef, managedFieldsOf, refOf, type KubeObject, type ObjectRef } from '../kube/types.js';
import { isRecord } from '../util/object.js';

interface Union {
  apiVersion: string;
  kind: string;
  /** The field holding the union, under `spec`. */
  field: string;
  /** The member the API server defaults, and the one `type` that allows it. */
  member: string;
  allowedWith: string;
  /** The other types the API server knows: a switch is made only to one of them (another, a typo, is the dry run's to refuse). */
  others: readonly string[];
}

/** The unions whose stale member the API server refuses (a DaemonSet's `OnDelete` keeps a `rollingUpdate` without complaint). */
const UNIONS: readonly Union[] = [
  { apiVersion: 'apps/v1', kind: 'Deployment', field: 'strategy', member: 'rollingUpdate', allowedWith: 'RollingUpdate', others: ['Recreate'] },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', field: 'updateStrategy', member: 'rollingUpdate', allowedWith: 'RollingUpdate', others: ['OnDelete'] },
];

/**
 * A JSON merge patch: `{ metadata: { uid }, spec: { <field>: { type, <member>: null } } }`. The
 * uid is the object's that the switch was decided on: the API server refuses the patch on another
 * object of the name, one deleted and made again in between by someone else (422, `metadata.uid`
 * immutable; `switchUnion` answers it as the conflict it is).
 */
export type UnionSwitchPatch = { metadata?: { uid: string }; spec: Record<string, Record<string, string | null>> };

function unionOf(obj: KubeObject, field: string): Record<string, unknown> | undefined {
  const spec = obj.spec;
  if (typeof spec !== 'object' || spec === null) return undefined;
  const value = (spec as Record<string, unknown>)[field];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function unionFor(obj: KubeObject): Union | undefined {
  return UNIONS.find((u) => u.apiVersion === obj.apiVersion && u.kind === obj.kind);
}

/**
 * The merge patch `live` needs before `desired` is applied, or undefined: when `desired` sets a
 * `type` that does not allow the member, sets no member itself, and `live` still has one.
 */
export function unionSwitchPatch(live: KubeObject | undefined, desired: KubeObject): UnionSwitchPatch | undefined {
  const union = unionFor(desired);
  if (union === undefined || live === undefined) return undefined;
  const want = unionOf(desired, union.field);
  const type = want?.type;
  if (typeof type !== 'string' || !union.others.includes(type) || want?.[union.member] !== undefined) return undefined;
  const have = unionOf(live, union.field)?.[union.member];
  if (have === undefined || have === null) return undefined;
  const uid = live.metadata.uid;
  return { ...(uid === undefined || uid === '' ? {} : { metadata: { uid } }), spec: { [union.field]: { type, [union.member]: null } } };
}

/** The fields a switch changes, as a plan lists them (`spec.strategy.type`, `spec.strategy.rollingUpdate`). */
export function switchedPaths(patch: UnionSwitchPatch): string[] {
  return Object.entries(patch.spec).flatMap(([field, union]) => Object.keys(union).map((k) => `spec.${field}.${k}`));
}

/**
 * Field managers other than `mine` that hold the union's type or member on `live`: under the
 * conflict policy Fail a switch would take their fields, so it is refused as a conflict is.
 */
export function otherHolders(live: KubeObject, patch: UnionSwitchPatch, mine: string): string[] {
  const holders = new Set<string>();
  for (const [field, union] of Object.entries(patch.spec)) {
    for (const e of managedFieldsOf(live)) {
      if (e.manager === mine || (e.subresource ?? '') !== '' || !isRecord(e.fieldsV1)) continue;
      const spec = e.fieldsV1['f:spec'];
      const held = isRecord(spec) ? spec[`f:${field}`] : undefined;
      if (isRecord(held) && Object.keys(union).some((k) => `f:${k}` in held)) holders.add(e.manager ?? '(unnamed)');
    }
  }
  return [...holders];
}

/**
 * `desired` with the live object's union in place of its own: what a server dry run can check of
 * an object whose switch is made by `unionSwitchPatch` first (a dry run of `desired` as it is
 * would be refused for the member the patch removes).
 */
export function withLiveUnion(desired: KubeObject, live: KubeObject | undefined): KubeObject {
  const union = unionFor(desired);
  if (union === undefined || live === undefined) return desired;
  const have = unionOf(live, union.field);
  const rest = Object.entries(desired.spec as Record<string, unknown>).filter(([k]) => k !== union.field);
  return { ...desired, spec: Object.fromEntries(have === undefined ? rest : [...rest, [union.field, have]]) };
}

/** The field manager of the merge patch that makes a switch; its entry is removed once the switch is made. */
export const STRATEGY_SWITCH_MANAGER = 'binnacle-strategy-switch';

/** Whether a switch's field manager still holds fields of `live` (a switch cut short before its entry was handed over). */
export function heldBySwitch(live: KubeObject | undefined): boolean {
  return live !== undefined && managedFieldsOf(live).some((e) => e.manager === STRATEGY_SWITCH_MANAGER && (e.subresource ?? '') === '');
}

/**
 * Hands the switch's field manager's entries to Binnacle's `Apply` entry (see the top of this
 * file): the switched type is then Binnacle's apply's, so an apply that leaves the strategy out (a
 * rollback, even after an apply that failed) removes it. A write in between is a conflict: the
 * object is read again and the hand-over made anew.
 */
export async function releaseSwitchHold(client: Pick<ObjectReader, 'find'> & Pick<ObjectWriter, 'patch'>, ref: ObjectRef, read?: KubeObject, attempts = 5): Promise<void> {
  let live = read ?? (await client.find(ref));
  for (let i = 1; live !== undefined; i++) {
    const managedFields = fieldsHandedOver(live, (e) => e.manager === STRATEGY_SWITCH_MANAGER && (e.subresource ?? '') === '');
    if (managedFields === undefined) return;
    try {
      await client.patch(ref, { metadata: { resourceVersion: live.metadata.resourceVersion, managedFields } });
      return;
    } catch (err) {
      if (!isConflict(err) || i >= attempts) throw err;
    }
    live = await client.find(ref);
  }
}

/** Whether an Invalid answer is about `metadata.uid` (the Status's causes; its message only when it has none). */
function refusedUid(err: KubeApiError): boolean {
  const causes = err.details?.causes ?? [];
  return causes.length > 0 ? causes.some((c) => c.field === 'metadata.uid') : /metadata\.uid: Invalid value/.test(err.message);
}

/** Makes the switch `patch` says on the live object under its own field manager, then removes that manager's hold. */
export async function switchUnion(client: Pick<ObjectReader, 'find'> & Pick<ObjectWriter, 'patch'>, obj: KubeObject, patch: UnionSwitchPatch): Promise<void> {
  const ref = refOf(obj);
  const switched = await client.patch(ref, patch, 'merge', { fieldManager: STRATEGY_SWITCH_MANAGER }).catch((err: unknown) => {
    // The API server answers a uid that is not the object's as an invalid change of an immutable
    // field (422); here it means the object was made again since it was read: a conflict, read again.
    const uid = patch.metadata?.uid;
    if (uid !== undefined && err instanceof KubeApiError && err.statusCode === 422 && err.reason === 'Invalid' && refusedUid(err)) {
      throw new KubeApiError(409, 'Conflict', `${describeRef(ref)} is not the object the strategy switch was decided on (uid ${uid}): it was deleted and made again since; nothing was switched, it is read again`);
    }
    throw err;
  });
  await releaseSwitchHold(client, ref, switched);
}
