/**
 * OLM v1's ClusterObjectSet (`olm.operatorframework.io/v1`, operator-controller v1.11's
 * BoxcutterRuntime revision): ordered phases of objects, each phase applied once the one before
 * passes its progression probes. What is decided without the cluster lives here: the kind's
 * types and reasons, the probes (as boxcutter's `probing` package reads an object, messages
 * included, since users and tests match on them), and the phase digests that pin what a
 * revision resolved to.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { matchesLabelSelector, type CatalogSelector } from '../catalog-selector.js';
import { goJson } from '../../util/canonical-json.js';
import type { Condition, KubeObject } from '../../kube/types.js';

export const OBJECT_SET_KIND = 'ClusterObjectSet';
/** Removed once the revision's objects are torn down (archived) or it is deleted. */
export const OBJECT_SET_FINALIZER = 'olm.operatorframework.io/teardown';
/** Set on every object of a revision, from the revision's own label (empty when it has none), as operator-controller does. */
export const OWNER_NAME_LABEL = 'olm.operatorframework.io/owner-name';
export const BUNDLE_VERSION_ANNOTATION = 'olm.operatorframework.io/bundle-version';
/** The field manager of the objects' apply: operator-controller's prefix, so the fields stay one owner's across a migration. */
export const OBJECT_SET_FIELD_MANAGER = 'olm.operatorframework.io';

export type CollisionProtection = 'Prevent' | 'IfNoController' | 'None';

export interface ObjectSourceRef {
  name: string;
  namespace?: string;
  key: string;
}

export interface ObjectSetObject {
  object?: KubeObject;
  ref?: ObjectSourceRef;
  collisionProtection?: CollisionProtection;
}

export interface ObjectSetPhase {
  name: string;
  objects: ObjectSetObject[];
  collisionProtection?: CollisionProtection;
}

export interface ProgressionAssertion {
  type: 'ConditionEqual' | 'FieldsEqual' | 'FieldValue';
  conditionEqual?: { type: string; status: string };
  fieldsEqual?: { fieldA: string; fieldB: string };
  fieldValue?: { fieldPath: string; value: string };
}

export interface ProgressionProbe {
  selector: { type: 'GroupKind' | 'Label'; groupKind?: { group: string; kind: string }; label?: CatalogSelector };
  assertions?: ProgressionAssertion[];
}

export interface ObservedPhase {
  name: string;
  digest: string;
}

export interface ClusterObjectSet extends KubeObject {
  spec: {
    lifecycleState?: 'Active' | 'Archived';
    revision: number;
    phases?: ObjectSetPhase[];
    progressDeadlineMinutes?: number;
    progressionProbes?: ProgressionProbe[];
    collisionProtection?: CollisionProtection;
  };
  status?: { conditions?: Condition[]; observedPhases?: ObservedPhase[] };
}

/** The innermost collision protection set (object over phase over revision), Prevent when none is. */
export function effectiveCollisionProtection(...levels: (CollisionProtection | undefined)[]): CollisionProtection {
  let out: CollisionProtection = 'Prevent';
  for (const l of levels) if (l !== undefined && (l as string) !== '') out = l;
  return out;
}

// ---- probes -------------------------------------------------------------------------------

export type ProbeStatus = 'True' | 'False' | 'Unknown';
export interface ProbeResult {
  status: ProbeStatus;
  messages: string[];
}

/** A value as Go's `%v` prints it, and its type as `%T` does, for a JSON value decoded into maps (integers are int64). */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object') return `map[${Object.keys(v).sort().map((k) => `${k}:${goValue((v as Record<string, unknown>)[k])}`).join(' ')}]`;
  return typeof v === 'string' ? v : JSON.stringify(v);
}
function goType(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'object' && v !== null) return 'map[string]interface {}';
  return typeof v;
}

/**
 * A value at a dotted path (`status.phase`), as apimachinery's NestedFieldCopy finds it: a null or
 * missing step is not found; a step into something that is not an object is an error naming it.
 */
function nestedField(obj: unknown, path: string): { found: true; value: unknown } | { found: false; error?: string } {
  let cur: unknown = obj;
  const parts = path.replace(/^\.+|\.+$/g, '').split('.');
  for (const [i, p] of parts.entries()) {
    if (cur === null || cur === undefined) return { found: false };
    if (typeof cur !== 'object' || Array.isArray(cur)) return { found: false, error: `.${parts.slice(0, i + 1).join('.')} accessor error: ${goValue(cur)} is of the type ${goType(cur)}, expected map[string]interface{}` };
    if (!Object.hasOwn(cur, p)) return { found: false };
    cur = (cur as Record<string, unknown>)[p];
  }
  return { found: true, value: cur };
}


function fieldValue(probe: ProgressionAssertion['fieldValue'], obj: KubeObject): ProbeResult {
  const { fieldPath = '', value = '' } = probe ?? {};
  const got = nestedField(obj, fieldPath);
  if (!got.found) return { status: 'False', messages: [got.error === undefined ? `missing key: ${JSON.stringify(fieldPath)}` : `error locating key ${JSON.stringify(fieldPath)}; ${got.error}`] };
  if (!isDeepStrictEqual(got.value, value)) return { status: 'False', messages: [`value at key ${JSON.stringify(fieldPath)} != ${JSON.stringify(value)}; expected: ${goJson(value)} got: ${goJson(got.value)}`] };
  return { status: 'True', messages: [`value at key ${JSON.stringify(fieldPath)} == ${JSON.stringify(value)}`] };
}

function fieldsEqual(probe: ProgressionAssertion['fieldsEqual'], obj: KubeObject): ProbeResult {
  const { fieldA = '', fieldB = '' } = probe ?? {};
  const va = nestedField(obj, fieldA);
  if (!va.found) return { status: 'False', messages: [`"${fieldA}" missing`] };
  const vb = nestedField(obj, fieldB);
  if (!vb.found) return { status: 'False', messages: [`"${fieldB}" missing`] };
  if (!isDeepStrictEqual(va.value, vb.value)) return { status: 'False', messages: [`"${fieldA}" != "${fieldB}" expected: ${goJson(va.value)} got: ${goJson(vb.value)}`] };
  return { status: 'True', messages: [`"${fieldA}" == "${fieldB}"`] };
}

function conditionEqual(probe: ProgressionAssertion['conditionEqual'], obj: KubeObject): ProbeResult {
  const { type = '', status = '' } = probe ?? {};
  const conditions = (obj.status as { conditions?: unknown } | undefined)?.conditions;
  if (conditions === undefined) return { status: 'Unknown', messages: ['missing .status.conditions'] };
  if (!Array.isArray(conditions)) return { status: 'Unknown', messages: ['malformed .status.conditions'] };
  for (const c of conditions as unknown[]) {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return { status: 'Unknown', messages: ['malformed .status.conditions'] };
    const cond = c as Record<string, unknown>;
    if (cond.type !== type) continue;
    if (typeof cond.observedGeneration === 'number' && cond.observedGeneration !== (obj.metadata.generation ?? 0)) return { status: 'Unknown', messages: [`.status.condition["${type}"] outdated`] };
    return cond.status === status ? { status: 'True', messages: [`.status.condition["${type}"] is ${status}`] } : { status: 'False', messages: [`.status.condition["${type}"] is ${String(cond.status)}`] };
  }
  return { status: 'Unknown', messages: [`missing .status.condition["${type}"]`] };
}

function assertion(a: ProgressionAssertion, obj: KubeObject): ProbeResult {
  if (a.type === 'FieldValue') return fieldValue(a.fieldValue, obj);
  if (a.type === 'FieldsEqual') return fieldsEqual(a.fieldsEqual, obj);
  if (a.type === 'ConditionEqual') return conditionEqual(a.conditionEqual, obj);
  return { status: 'Unknown', messages: [`unknown progressionProbe assertion probe type: ${String((a as { type: unknown }).type)}`] };
}

/** Results joined as boxcutter's probing.And: any Unknown wins, then any False, else True; each status keeps its own messages. */
function all(results: ProbeResult[]): ProbeResult {
  for (const status of ['Unknown', 'False'] as const) {
    if (results.some((r) => r.status === status)) return { status, messages: results.filter((r) => r.status === status).flatMap((r) => r.messages) };
  }
  return { status: 'True', messages: results.flatMap((r) => r.messages) };
}

function groupKindOf(obj: KubeObject): { group: string; kind: string } {
  const slash = obj.apiVersion.indexOf('/');
  return { group: slash < 0 ? '' : obj.apiVersion.slice(0, slash), kind: obj.kind };
}

/**
 * One object against a revision's progression probes: each probe whose selector picks the
 * object (by group and kind, or by labels) asserts on it, once its `.status.observedGeneration`
 * (when it has one) has caught up with its generation; with any probe, an object whose status has
 * not caught up is not judged yet, picked or not (upstream's ObservedGenerationProbe wraps the selector).
 */
export function probeObject(probes: readonly ProgressionProbe[], obj: KubeObject): ProbeResult {
  return all(
    probes.map((p): ProbeResult => {
      // As upstream wraps each selector: an object whose status speaks for an older generation is not judged yet, picked or not.
      const observed = (obj.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
      if (typeof observed === 'number' && observed !== (obj.metadata.generation ?? 0)) return { status: 'Unknown', messages: ['.status outdated'] };
      const picked =
        p.selector.type === 'GroupKind'
          ? ((gk) => gk.group === (p.selector.groupKind?.group ?? '') && gk.kind === (p.selector.groupKind?.kind ?? ''))(groupKindOf(obj))
          : matchesLabelSelector(obj.metadata.labels ?? {}, p.selector.label);
      if (!picked) return { status: 'True', messages: [] };
      return all((p.assertions ?? []).map((a) => assertion(a, obj)));
    }),
  );
}

// ---- digests ------------------------------------------------------------------------------

/**
 * What a phase resolved to (its name and objects, before Binnacle's labels are added), as
 * operator-controller's computePhaseDigest hashes it, so a revision it observed keeps its digests here.
 */
export function phaseDigest(name: string, objects: readonly KubeObject[]): string {
  return `sha256:${createHash('sha256').update(goJson({ name, objects })).digest('hex')}`;
}

/** Why the phases now resolve to other content than first observed; undefined when they do not. */
export function observedPhasesChanged(stored: readonly ObservedPhase[], current: readonly ObservedPhase[]): string | undefined {
  if (stored.length !== current.length) return `number of phases has changed (expected ${stored.length} phases, got ${current.length})`;
  const before = new Map(stored.map((p) => [p.name, p.digest]));
  const changed = current.filter((c) => before.has(c.name) && before.get(c.name) !== c.digest).map((c) => `phase ${JSON.stringify(c.name)} (expected digest ${before.get(c.name) ?? ''}, got ${c.digest})`);
  if (changed.length === 0) return undefined;
  return `resolved content of ${changed.length} phase(s) has changed: ${changed.join('; ')}; a referenced object source may have been deleted and recreated with different content`;
}
