/**
 * A workload's update strategy is a union: `type` says which member may be set. The API server
 * fills in the `rollingUpdate` member when a manifest leaves the strategy out, and no apply owns
 * what it filled in; so a later apply that switches `type` (a Deployment to `Recreate`, a
 * StatefulSet to `OnDelete`) cannot remove it, and the API server refuses the object
 * ("spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is
 * 'Recreate'", kubernetes/kubernetes#24198). Server-side apply has no `retainKeys` as the
 * strategic merge patch of `kubectl apply` and Helm 3 does, so the switch is made first by a
 * merge patch that sets `type` and drops the member, then the object is applied.
 */
import type { KubeObject } from '../kube/types.js';

interface Union {
  apiVersion: string;
  kind: string;
  /** The field holding the union, under `spec`. */
  field: string;
  /** The member the API server defaults, and the one `type` that allows it. */
  member: string;
  allowedWith: string;
}

/** The unions whose stale member the API server refuses (a DaemonSet's `OnDelete` keeps a `rollingUpdate` without complaint). */
const UNIONS: readonly Union[] = [
  { apiVersion: 'apps/v1', kind: 'Deployment', field: 'strategy', member: 'rollingUpdate', allowedWith: 'RollingUpdate' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', field: 'updateStrategy', member: 'rollingUpdate', allowedWith: 'RollingUpdate' },
];

/** A JSON merge patch: `{ spec: { <field>: { type, <member>: null } } }`. */
export type UnionSwitchPatch = { spec: Record<string, Record<string, string | null>> };

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
  if (typeof type !== 'string' || type === union.allowedWith || want?.[union.member] !== undefined) return undefined;
  const have = unionOf(live, union.field)?.[union.member];
  if (have === undefined || have === null) return undefined;
  return { spec: { [union.field]: { type, [union.member]: null } } };
}

/**
 * `desired` with the live object's union in place of its own: what a server dry run can check of
 * an object whose switch is made by `unionSwitchPatch` first (a dry run of `desired` as it is
 * would be refused for the member the patch removes).
 */
export function withLiveUnion(desired: KubeObject, live: KubeObject): KubeObject {
  const union = unionFor(desired);
  if (union === undefined) return desired;
  const spec = { ...(desired.spec as Record<string, unknown>) };
  const have = unionOf(live, union.field);
  if (have === undefined) delete spec[union.field];
  else spec[union.field] = have;
  return { ...desired, spec };
}
