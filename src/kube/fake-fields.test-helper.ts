/**
 * The field sets of server-side apply (managedFields' fieldsV1), merge patches and selectors,
 * as the one fake cluster's API server (fake-cluster.test-helper.ts) reads them.
 */
import type { KubeObject } from './types.js';
import { isRecord } from '../util/object.js';

/** A field set as server-side apply's fieldsV1 holds it: `f:<key>` maps; a leaf (a scalar, a list, an empty map) is `{}`. */
export type FieldSet = Record<string, unknown>;

export const SERVER_METADATA = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'managedFields']);

export function fieldsOf(value: unknown, top: 'object' | 'status' | 'nested' = 'nested'): FieldSet {
  const out: FieldSet = {};
  if (!isRecord(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    // A field set to undefined is not sent (JSON has no undefined): it is not applied.
    if (v === undefined) continue;
    if (top === 'object' && (k === 'apiVersion' || k === 'kind' || k === 'status')) continue;
    if (top === 'status' && k !== 'status') continue;
    if (top === 'object' && k === 'metadata') {
      const meta = isRecord(v) ? Object.fromEntries(Object.entries(v).filter(([mk]) => !SERVER_METADATA.has(mk))) : {};
      if (Object.keys(meta).length > 0) out['f:metadata'] = fieldsOf(meta);
      continue;
    }
    out[`f:${k}`] = isRecord(v) && Object.keys(v).length > 0 ? fieldsOf(v) : {};
  }
  return out;
}

/** Leaf paths of a field set. */
export function leaves(set: FieldSet, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(set)) {
    const path = [...prefix, k.slice(2)];
    if (isRecord(v) && Object.keys(v).length > 0) out.push(...leaves(v, path));
    else out.push(path);
  }
  return out;
}

export function holdsPath(set: FieldSet, path: readonly string[]): boolean {
  let node: unknown = set;
  for (const k of path) {
    if (!isRecord(node)) return false;
    const next = node[`f:${k}`];
    if (next === undefined) return false;
    // A leaf held whole holds what is below it.
    if (isRecord(next) && Object.keys(next).length === 0) return true;
    node = next;
  }
  return true;
}

export function dropPath(set: FieldSet, path: readonly string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  const key = `f:${head}`;
  const next = set[key];
  if (rest.length === 0 || !isRecord(next) || Object.keys(next).length === 0) {
    Reflect.deleteProperty(set, key);
    return;
  }
  dropPath(next, rest);
  if (Object.keys(next).length === 0) Reflect.deleteProperty(set, key);
}

export function valueAt(obj: unknown, path: readonly string[]): unknown {
  let node = obj;
  for (const k of path) {
    if (!isRecord(node)) return undefined;
    node = node[k];
  }
  return node;
}

export function setAt(obj: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = obj;
  for (const k of path.slice(0, -1)) {
    if (!isRecord(node[k])) node[k] = {};
    node = node[k] as Record<string, unknown>;
  }
  const last = path.at(-1);
  if (last !== undefined) node[last] = structuredClone(value);
}

export function deleteAt(obj: Record<string, unknown>, path: readonly string[]): void {
  const parents: Record<string, unknown>[] = [];
  let node: unknown = obj;
  for (const k of path.slice(0, -1)) {
    if (!isRecord(node)) return;
    parents.push(node);
    node = node[k];
  }
  const last = path.at(-1);
  if (!isRecord(node) || last === undefined) return;
  Reflect.deleteProperty(node, last);
  // Maps left empty by the removal go too, as the API server prunes them.
  for (let i = parents.length - 1; i >= 0; i--) {
    const parent = parents[i];
    const key = path[i];
    if (parent === undefined || key === undefined) break;
    const child = parent[key];
    if (isRecord(child) && Object.keys(child).length === 0 && !(i === 0 && key === 'metadata')) Reflect.deleteProperty(parent, key);
    else break;
  }
}

export function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface ManagedEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  subresource?: string;
  fieldsV1: FieldSet;
}

/** JSON merge patch (RFC 7386). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) Reflect.deleteProperty(out, k);
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Equality-based label selectors (`a=b`, `a==b`, `a!=b`), existence (`a`, `!a`) and `a in (x,y)`. */
export function selects(selector: string | undefined, labels: Record<string, string> | undefined): boolean {
  if (selector === undefined || selector.trim() === '') return true;
  const l = labels ?? {};
  const terms = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const t = raw.trim();
    const inMatch = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t);
    if (inMatch !== null) {
      const values = (inMatch[3] ?? '').split(',').map((v) => v.trim());
      const has = l[inMatch[1] ?? ''] !== undefined && values.includes(l[inMatch[1] ?? ''] ?? '');
      return inMatch[2] === 'in' ? has : !has;
    }
    const ne = t.split('!=');
    if (ne.length === 2) return l[ne[0]?.trim() ?? ''] !== ne[1]?.trim();
    const eq = t.split(/==?/);
    if (eq.length === 2) return l[eq[0]?.trim() ?? ''] === eq[1]?.trim();
    if (t.startsWith('!')) return l[t.slice(1)] === undefined;
    return l[t] !== undefined;
  });
}

export function selectsFields(selector: string | undefined, obj: KubeObject): boolean {
  if (selector === undefined || selector.trim() === '') return true;
  return selector.split(',').every((term) => {
    const ne = term.split('!=');
    const [path, want] = ne.length === 2 ? ne : term.split(/==?/);
    const got = valueAt(obj, (path ?? '').trim().split('.'));
    return ne.length === 2 ? String(got) !== want?.trim() : String(got) === want?.trim();
  });
}
