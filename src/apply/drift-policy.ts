/**
 * Drift rules (`spec.drift` of a BundleDeployment, a ClusterExtension or a HelmOperator), after
 * Flux helm-controller's `driftDetection`: whether a resync repairs drift, only reports it, or
 * neither; and fields left to other writers (an autoscaler's replicas, a CA bundle an injector
 * sets, a webhook's defaults), named by JSON pointer (RFC 6901), on every object of the release
 * or only on those a rule's target names. An ignored field is neither repaired nor reported; an
 * upgrade whose manifest changes it still applies it. Ownership marks can never be ignored.
 */
import { managedFieldsOf, parseApiVersion, type KubeObject } from '../kube/types.js';
import { canonicalJson } from '../util/canonical-json.js';
import { identityOf } from './phases.js';
import type { DriftIgnoreRule, DriftMode, DriftSpec } from '../api/types.js';
import { HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION, MANAGED_BY_LABEL, OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from './ownership.js';
import { isRecord } from '../util/object.js';

export const DRIFT_MODES: readonly DriftMode[] = ['Repair', 'Warn', 'Off'];
/** The field manager that holds an ignored field the applier stops setting, so that letting go of it does not delete it. */
export const DRIFT_HANDOVER_MANAGER = 'binnacle-drift-ignored';

/** A JSON pointer's reference tokens, unescaped. */
export type Pointer = readonly string[];

type Rec = Record<string, unknown>;

/** RFC 6901: `/a/b~1c` → ['a', 'b/c']; undefined when it is not a pointer (no leading `/`, a bad `~` escape). */
export function parsePointer(text: string): Pointer | undefined {
  if (!text.startsWith('/')) return undefined;
  const tokens = text.slice(1).split('/');
  if (tokens.some((t) => /~(?![01])/.test(t))) return undefined;
  return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const MARK_KEYS: Record<string, ReadonlySet<string>> = {
  labels: new Set([OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, MANAGED_BY_LABEL]),
  annotations: new Set([HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION]),
};

/**
 * Why a pointer may not be ignored, if it may not: the object's identity and the marks that say
 * it is the release's. Ignoring those would let whoever edits the live object decide what the
 * release owns (and prunes, and uninstalls).
 */
function protectedReason(p: Pointer): string | undefined {
  const [top, field, key] = p;
  if (top === undefined || top === 'apiVersion' || top === 'kind' || (top === 'metadata' && field === undefined)) return 'names the object itself';
  if (top !== 'metadata') return undefined;
  if (field === 'name' || field === 'namespace') return 'is part of the object’s identity';
  if (field === 'ownerReferences') return 'holds the owner references Binnacle sets';
  const marks = field === undefined ? undefined : MARK_KEYS[field];
  if (marks !== undefined && (key === undefined || marks.has(key))) return `would include the ownership ${field === 'labels' ? 'labels' : 'annotations'} Binnacle sets`;
  return undefined;
}

/** What makes a `drift` spec unusable, each as `field: reason`. */
export function driftSpecProblems(spec: unknown, field: string): string[] {
  if (spec === undefined) return [];
  if (!isRecord(spec)) return [`${field}: must be an object`];
  const problems: string[] = [];
  if (spec.mode !== undefined && !DRIFT_MODES.includes(spec.mode as DriftMode)) problems.push(`${field}.mode: must be one of ${DRIFT_MODES.join(', ')} (got ${JSON.stringify(spec.mode)})`);
  if (spec.ignore === undefined) return problems;
  if (!Array.isArray(spec.ignore)) return [...problems, `${field}.ignore: must be a list`];
  spec.ignore.forEach((rule: unknown, i) => problems.push(...ruleProblems(rule, `${field}.ignore[${i}]`)));
  return problems;
}

function ruleProblems(rule: unknown, field: string): string[] {
  if (!isRecord(rule)) return [`${field}: must be an object`];
  const problems: string[] = [];
  if (!Array.isArray(rule.paths) || rule.paths.length === 0) problems.push(`${field}.paths: at least one JSON pointer is required`);
  else {
    rule.paths.forEach((p: unknown, j) => {
      const pointer = typeof p === 'string' ? parsePointer(p) : undefined;
      if (pointer === undefined) problems.push(`${field}.paths[${j}]: ${JSON.stringify(p)} is not a JSON pointer (RFC 6901: starts with "/", "~" only as ~0 or ~1)`);
      else {
        const why = protectedReason(pointer);
        if (why !== undefined) problems.push(`${field}.paths[${j}]: ${String(p)} cannot be ignored: it ${why}`);
      }
    });
  }
  if (rule.target === undefined) return problems;
  if (!isRecord(rule.target)) return [...problems, `${field}.target: must be an object`];
  for (const k of ['group', 'kind', 'name', 'namespace'] as const) {
    if (rule.target[k] !== undefined && typeof rule.target[k] !== 'string') problems.push(`${field}.target.${k}: must be a string`);
  }
  const sel = rule.target.labelSelector;
  if (sel !== undefined && (!isRecord(sel) || (sel.matchLabels !== undefined && (!isRecord(sel.matchLabels) || Object.values(sel.matchLabels).some((v) => typeof v !== 'string'))))) {
    problems.push(`${field}.target.labelSelector: must be {matchLabels: {key: value}}`);
  }
  return problems;
}

/** The mode, Repair when unset. */
export const driftMode = (spec: DriftSpec | undefined): DriftMode => spec?.mode ?? 'Repair';

function targets(rule: DriftIgnoreRule, obj: KubeObject): boolean {
  const t = rule.target;
  if (t === undefined) return true;
  if (t.group !== undefined && t.group !== parseApiVersion(obj.apiVersion).group) return false;
  if (t.kind !== undefined && t.kind !== obj.kind) return false;
  if (t.name !== undefined && t.name !== obj.metadata.name) return false;
  if (t.namespace !== undefined && t.namespace !== (obj.metadata.namespace ?? '')) return false;
  return Object.entries(t.labelSelector?.matchLabels ?? {}).every(([k, v]) => obj.metadata.labels?.[k] === v);
}

/** The pointers ignored on `obj` (the desired object: targets match what the manifest says of it). */
export function ignoredPointers(obj: KubeObject, spec: DriftSpec | undefined): Pointer[] {
  const out = new Map<string, Pointer>();
  for (const rule of spec?.ignore ?? []) {
    if (!targets(rule, obj)) continue;
    for (const text of rule.paths) {
      const p = parsePointer(text);
      if (p !== undefined && protectedReason(p) === undefined) out.set(JSON.stringify(p), p);
    }
  }
  return [...out.values()];
}

const indexOf = (token: string, list: readonly unknown[]): number | undefined => (/^(0|[1-9]\d*)$/.test(token) && Number(token) < list.length ? Number(token) : undefined);

/** The value at `p`, or undefined. */
export function valueAt(obj: unknown, p: Pointer): unknown {
  let at: unknown = obj;
  for (const token of p) {
    if (Array.isArray(at)) {
      const i = indexOf(token, at);
      at = i === undefined ? undefined : at[i];
    } else at = isRecord(at) && Object.hasOwn(at, token) ? at[token] : undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

const GONE = Symbol('ignored');

/** A copy of `obj` without the fields at `pointers` (a list item named by index is taken out of its list). */
export function withoutPointers<T>(obj: T, pointers: readonly Pointer[]): T {
  if (pointers.length === 0) return obj;
  const copy = structuredClone(obj) as unknown;
  for (const p of pointers) {
    const parent = valueAt(copy, p.slice(0, -1));
    const last = p.at(-1) ?? '';
    if (Array.isArray(parent)) {
      const i = indexOf(last, parent);
      if (i !== undefined) parent[i] = GONE;
    } else if (isRecord(parent) && last in parent) parent[last] = GONE;
  }
  return dropMarked(copy) as T;
}

function dropMarked(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== GONE).map(dropMarked);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== GONE).map(([k, x]) => [k, dropMarked(x)]));
  return v;
}

// --- field ownership (server-side apply's managedFields) -----------------------------------

/** The fieldsV1 key of item `item` of a list: by its merge keys when another entry names it so, else by its value or position. */
function itemKey(node: Rec, item: unknown, index: number): string | undefined {
  for (const k of Object.keys(node)) {
    if (!k.startsWith('k:')) continue;
    try {
      const keys = JSON.parse(k.slice(2)) as unknown;
      if (isRecord(keys) && isRecord(item) && Object.entries(keys).every(([a, b]) => item[a] === b)) return k;
    } catch {
      // Not a key we can read: look further.
    }
  }
  if (`v:${JSON.stringify(item)}` in node) return `v:${JSON.stringify(item)}`;
  if (`i:${index}` in node) return `i:${index}`;
  return undefined;
}

/** Whether `manager`'s applied configuration on `live` holds the field at `p`. */
export function appliesField(live: KubeObject, manager: string, p: Pointer): boolean {
  return managedFieldsOf(live).some((e) => e.manager === manager && e.operation === 'Apply' && isRecord(e.fieldsV1) && holds(e.fieldsV1, live, p));
}

function holds(fields: Rec, live: unknown, p: Pointer): boolean {
  let node: unknown = fields;
  let at: unknown = live;
  for (const token of p) {
    if (!isRecord(node)) return false;
    if (Array.isArray(at)) {
      const i = indexOf(token, at);
      if (i === undefined) return false;
      // An atomic list is held whole: holding the list holds its items.
      if (Object.keys(node).length === 0) return true;
      const key = itemKey(node, at[i], i);
      if (key === undefined) return false;
      node = node[key];
      at = at[i];
    } else {
      node = node[`f:${token}`];
      at = isRecord(at) ? at[token] : undefined;
    }
    if (node === undefined) return false;
  }
  return true;
}

/**
 * A partial object that sets only the field at `p` to its live value, to apply as
 * DRIFT_HANDOVER_MANAGER: list items on the way keep their `name` (the merge key of containers,
 * env, ports, volumes); a list whose items have none is taken whole. Undefined when the live
 * object has no such field.
 */
export function handoverObject(live: KubeObject, p: Pointer): KubeObject | undefined {
  if (valueAt(live, p) === undefined) return undefined;
  const body = partialAt(live, p) as Rec;
  const identity = { name: live.metadata.name, ...(live.metadata.namespace === undefined ? {} : { namespace: live.metadata.namespace }) };
  return { ...body, apiVersion: live.apiVersion, kind: live.kind, metadata: { ...(isRecord(body.metadata) ? body.metadata : {}), ...identity } };
}

function partialAt(at: unknown, p: Pointer): unknown {
  const [token, ...rest] = p;
  if (token === undefined) return structuredClone(at);
  if (Array.isArray(at)) {
    const i = indexOf(token, at);
    const item: unknown = i === undefined ? undefined : at[i];
    if (!isRecord(item) || typeof item.name !== 'string') return structuredClone(at);
    return [{ ...(partialAt(item, rest) as Rec), name: item.name }];
  }
  return isRecord(at) ? { [token]: partialAt(at[token], rest) } : undefined;
}

/**
 * The ignored fields of `obj` this revision leaves as `baseline` had them (the deployed revision's
 * objects; undefined for a repair, which changes nothing): what an apply of a live object leaves
 * out (intentOf). None for an object the baseline does not have.
 */
export function ignoredUnchanged(obj: KubeObject, drift: DriftSpec | undefined, baseline: Map<string, KubeObject> | undefined): Pointer[] {
  const pointers = ignoredPointers(obj, drift);
  if (pointers.length === 0) return [];
  const before = baseline === undefined ? obj : baseline.get(identityOf(obj));
  if (before === undefined) return [];
  return pointers.filter((p) => valueAt(obj, p) !== undefined && canonicalJson(valueAt(obj, p)) === canonicalJson(valueAt(before, p)));
}
