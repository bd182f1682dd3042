/**
 * Post-rendering, as Flux's `postRenderers[].kustomize.patches`: patches the release owner names
 * (a HelmOperator's, never a CR author's) applied to the rendered manifest's objects after Helm's
 * render and before anything is checked or applied, so that a patched object meets the same
 * scope check, limits and ownership marks as any other. Each patch is Kustomize's `patches`
 * entry: YAML that is either a list of RFC 6902 operations (JSON Patch) applied to every object
 * its `target` selects, or one object applied as an RFC 7386 merge patch to every object its
 * `target` selects, or without a target, to the object its apiVersion, kind, name (and namespace)
 * name. A merge patch replaces a list whole (Kustomize's strategic merge would merge containers
 * by name): to add to a list, use a JSON Patch `add` at `/…/-`.
 *
 * Every problem names the patch (`postRenderers[i].kustomize.patches[j]`) and why; a patch that
 * selects nothing is one (a rename in the chart would otherwise silently drop it).
 */
import type { PostRenderer, PostRenderPatchTarget } from '../api/types.js';
import { parseApiVersion, type KubeObject } from '../kube/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { readYaml } from '../util/yaml.js';
import { parsePointer, type Pointer } from './drift-policy.js';
import { isRecord } from '../util/object.js';

type Rec = Record<string, unknown>;

/** A patch that cannot be read or applied: names the patch and why. */
export class PostRenderError extends BinnacleError {
  constructor(where: string, why: string) {
    super('input', 'POST_RENDER', `${where}: ${why}`);
  }
}

interface Operation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: Pointer;
  from?: Pointer;
  value?: unknown;
}

/** The objects with every patch of every post-renderer applied, in order (the input is not changed). */
export function postRender(objects: readonly KubeObject[], renderers: readonly PostRenderer[] | undefined, where = 'postRenderers'): KubeObject[] {
  let out = objects.map((o) => structuredClone(o));
  (renderers ?? []).forEach((r, i) => {
    (r.kustomize?.patches ?? []).forEach((p, j) => {
      out = applyPatch(out, p.patch, p.target, `${where}[${i}].kustomize.patches[${j}]`);
    });
  });
  return out;
}

function applyPatch(objects: KubeObject[], text: string, target: PostRenderPatchTarget | undefined, where: string): KubeObject[] {
  let doc: unknown;
  try {
    doc = readYaml(text, `${where}.patch`);
  } catch (err) {
    throw new PostRenderError(`${where}.patch`, `not YAML: ${errorMessage(err)}`);
  }
  // A key that would set an object's prototype rather than a field is no Kubernetes field.
  if (protoKey(doc)) throw new PostRenderError(`${where}.patch`, 'holds a __proto__ key or path');
  const ops = Array.isArray(doc) ? operationsOf(doc, `${where}.patch`) : undefined;
  if (ops === undefined && !isRecord(doc)) throw new PostRenderError(`${where}.patch`, 'neither a list of JSON Patch operations nor an object (a merge patch)');
  const selects = target !== undefined ? (o: KubeObject) => matches(o, target) : ops === undefined ? (o: KubeObject) => namedBy(o, doc as Rec) : undefined;
  if (selects === undefined) throw new PostRenderError(`${where}.target`, 'a JSON Patch needs a target');
  let hits = 0;
  const out = objects.map((o) => {
    if (!selects(o)) return o;
    hits++;
    const patched = ops === undefined ? (mergePatch(o, doc) as KubeObject) : runOperations(o, ops, `${where}.patch`, describe(o));
    if (!isRecord(patched) || typeof patched.apiVersion !== 'string' || typeof patched.kind !== 'string' || !isRecord(patched.metadata)) {
      throw new PostRenderError(`${where}.patch`, `${describe(o)} is no longer a Kubernetes object after it (apiVersion, kind or metadata gone)`);
    }
    return patched;
  });
  if (hits === 0) throw new PostRenderError(where, `selects none of the ${objects.length} rendered objects`);
  return out;
}

function describe(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace === undefined ? '' : `${o.metadata.namespace}/`}${o.metadata.name ?? ''}`;
}

/** Kustomize's target: each field given must match (labelSelector: `k=v` and `k` terms, comma-separated). */
function matches(o: KubeObject, t: PostRenderPatchTarget): boolean {
  const { group, version } = parseApiVersion(o.apiVersion);
  if (t.group !== undefined && t.group !== group) return false;
  if (t.version !== undefined && t.version !== version) return false;
  if (t.kind !== undefined && t.kind !== o.kind) return false;
  if (t.name !== undefined && t.name !== o.metadata.name) return false;
  if (t.namespace !== undefined && t.namespace !== o.metadata.namespace) return false;
  if (t.labelSelector !== undefined) {
    const labels = o.metadata.labels ?? {};
    for (const term of t.labelSelector.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
      const [k, v] = term.split('=', 2) as [string, string | undefined];
      if (v === undefined ? !(k in labels) : labels[k.trim()] !== v.trim()) return false;
    }
  }
  return true;
}

function protoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(protoKey);
  if (!isRecord(v)) return typeof v === 'string' && /(^|\/)__proto__(\/|$)/.test(v);
  return Object.keys(v).some((k) => k === '__proto__') || Object.values(v).some(protoKey);
}

/** A merge patch without a target applies to the object its own apiVersion, kind and name say. */
function namedBy(o: KubeObject, patch: Rec): boolean {
  const meta = isRecord(patch.metadata) ? patch.metadata : {};
  if (patch.apiVersion !== o.apiVersion || patch.kind !== o.kind || meta.name !== o.metadata.name) return false;
  return meta.namespace === undefined || meta.namespace === o.metadata.namespace;
}

/** RFC 7386: objects merge key by key, null removes, anything else (a list too) replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Rec = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) Reflect.deleteProperty(out, k);
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

function operationsOf(doc: unknown[], where: string): Operation[] {
  return doc.map((raw, i) => {
    const at = `${where}[${i}]`;
    if (!isRecord(raw) || typeof raw.op !== 'string' || !OPS.has(raw.op)) throw new PostRenderError(at, `op must be one of ${[...OPS].join(', ')}`);
    const path = typeof raw.path === 'string' ? parsePointer(raw.path) ?? (raw.path === '' ? [] : undefined) : undefined;
    if (path === undefined) throw new PostRenderError(`${at}.path`, `not a JSON pointer: ${JSON.stringify(raw.path)}`);
    const op: Operation = { op: raw.op as Operation['op'], path };
    if (op.op === 'move' || op.op === 'copy') {
      const from = typeof raw.from === 'string' ? parsePointer(raw.from) : undefined;
      if (from === undefined) throw new PostRenderError(`${at}.from`, `not a JSON pointer: ${JSON.stringify(raw.from)}`);
      op.from = from;
    }
    if (op.op === 'add' || op.op === 'replace' || op.op === 'test') {
      if (!('value' in raw)) throw new PostRenderError(`${at}.value`, `${op.op} needs a value`);
      op.value = raw.value;
    }
    return op;
  });
}

/** RFC 6902 over a copy of `obj`; the first operation that cannot apply names itself and the object. */
function runOperations(obj: KubeObject, ops: readonly Operation[], where: string, what: string): KubeObject {
  let doc: unknown = structuredClone(obj);
  ops.forEach((op, i) => {
    const fail = (why: string): never => {
      throw new PostRenderError(`${where}[${i}]`, `${op.op} /${op.path.join('/')} on ${what}: ${why}`);
    };
    switch (op.op) {
      case 'add':
        doc = put(doc, op.path, structuredClone(op.value), 'add', fail);
        break;
      case 'replace':
        doc = put(doc, op.path, structuredClone(op.value), 'replace', fail);
        break;
      case 'remove':
        doc = take(doc, op.path, fail).doc;
        break;
      case 'move': {
        const from = op.from ?? [];
        if (op.path.length > from.length && from.every((t, k) => op.path[k] === t)) fail('cannot move a value into itself');
        const taken = take(doc, from, fail);
        doc = put(taken.doc, op.path, taken.value, 'add', fail);
        break;
      }
      case 'copy':
        doc = put(doc, op.path, structuredClone(get(doc, op.from ?? [], fail)), 'add', fail);
        break;
      case 'test':
        if (JSON.stringify(get(doc, op.path, fail)) !== JSON.stringify(op.value)) fail(`the value is not ${JSON.stringify(op.value)}`);
        break;
    }
  });
  return doc as KubeObject;
}

function indexOf(arr: unknown[], token: string, forAdd: boolean, fail: (why: string) => never): number {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) fail(`"${token}" is not an index of the list`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) fail(`index ${i} is past the end of the list (${arr.length} items)`);
  return i;
}

function get(doc: unknown, path: Pointer, fail: (why: string) => never): unknown {
  let at = doc;
  for (const t of path) {
    if (Array.isArray(at)) at = at[indexOf(at, t, false, fail)];
    else if (isRecord(at) && t in at) at = at[t];
    else fail(`nothing at ${t}`);
  }
  return at;
}

/** Sets the value at `path` (add inserts into a list; replace needs a value there); the root is replaced whole. */
function put(doc: unknown, path: Pointer, value: unknown, how: 'add' | 'replace', fail: (why: string) => never): unknown {
  if (path.length === 0) return value;
  const parent = get(doc, path.slice(0, -1), fail);
  const last = path[path.length - 1] ?? '';
  if (Array.isArray(parent)) {
    const i = indexOf(parent, last, how === 'add', fail);
    if (how === 'add') parent.splice(i, 0, value);
    else parent[i] = value;
  } else if (isRecord(parent)) {
    if (how === 'replace' && !(last in parent)) fail(`nothing at ${last} to replace`);
    parent[last] = value;
  } else fail('its parent is neither an object nor a list');
  return doc;
}

function take(doc: unknown, path: Pointer, fail: (why: string) => never): { doc: unknown; value: unknown } {
  if (path.length === 0) fail('cannot remove the whole object');
  const parent = get(doc, path.slice(0, -1), fail);
  const last = path[path.length - 1] ?? '';
  if (Array.isArray(parent)) {
    const i = indexOf(parent, last, false, fail);
    return { doc, value: parent.splice(i, 1)[0] };
  }
  if (isRecord(parent) && last in parent) {
    const value = parent[last];
    Reflect.deleteProperty(parent, last);
    return { doc, value };
  }
  return fail(`nothing at ${last} to remove`);
}
