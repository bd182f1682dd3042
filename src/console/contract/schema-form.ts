/**
 * Forms generated from a CRD's OpenAPI v3 schema: the custom resources of an installed
 * operator's APIs are created and edited through them. Pure (no DOM, no Node): the page renders
 * the field tree `formFor` builds and keeps a `FieldState` per field; `valueOf` turns that state
 * back into the object's value. The CSV's spec descriptors give labels, descriptions and order
 * where present; the example (`alm-examples`) or the object being edited prefills the state,
 * schema defaults fill what it leaves out.
 *
 * What a form cannot express well — maps, `x-kubernetes-preserve-unknown-fields`, values without
 * a single type, arrays of arrays — becomes a YAML field. Keys of an object the schema does not
 * name (or a descriptor hides) are carried through unchanged, so editing never loses data.
 * Required fields are marked, not enforced here: the API server is the judge, and its field
 * errors are shown on the field they name.
 */
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- the package is passed to readOne (util/yaml-values.ts, the rule util/yaml.ts reads by), as util/yaml.ts cannot be built for the page
import * as YAML from 'yaml';
import { readOne, YamlError } from '../../util/yaml-values.js';
import { isRecord } from '../../util/object.js';

export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'enum' | 'int-or-string' | 'object' | 'array' | 'yaml';

/** A CSV spec descriptor: `path` is relative to `spec` (dots, `[0]` for array items). */
export interface SpecDescriptor {
  path: string;
  displayName?: string;
  description?: string;
  'x-descriptors'?: string[];
}

export interface FormField {
  /** The property name ('' for the root). */
  key: string;
  /** The path the API server names in its field errors: `spec.selector.matchLabels`, `spec.list[0].name`. */
  path: string;
  label: string;
  description?: string;
  kind: FieldKind;
  required: boolean;
  default?: unknown;
  /** For `enum`. */
  options?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  /** For `object`: its fields, descriptor order first. */
  fields?: FormField[];
  /** For `array`: the field of one item (its path ends in `[]`). */
  item?: FormField;
}

/** What the page holds for a field: text for scalars and YAML, child states for objects and arrays. */
export type FieldState = { text: string } | { fields: Record<string, FieldState>; extra: Record<string, unknown> } | { items: FieldState[] };

export interface FormProblem {
  path: string;
  message: string;
}

type Rec = Record<string, unknown>;

/** Top-level keys the form leaves to the page (name, namespace) or to the server. */
const ROOT_SKIPPED = new Set(['apiVersion', 'kind', 'metadata', 'status']);
const HIDDEN = 'urn:alm:descriptor:com.tectonic.ui:hidden';
const MAX_DEPTH = 8;
const SCALAR: readonly FieldKind[] = ['string', 'integer', 'number', 'boolean', 'enum', 'int-or-string'];

/** `foo.bar[0].baz` → `foo.bar[].baz`: descriptors name one item, the form describes them all. */
function normalise(path: string): string {
  return path.replace(/\[\d*\]/g, '[]').replace(/^\./, '');
}

/** "maxUnhealthy" → "Max unhealthy"; "externalRemediationTemplate" → "External remediation template". */
export function labelOf(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim();
  if (words === '') return key;
  const lower = words.split(' ').map((w, i) => (i > 0 && !/^[A-Z0-9]+$/.test(w) ? w.toLowerCase() : w));
  const first = lower[0] ?? '';
  lower[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return lower.join(' ');
}

function kindOf(node: Rec, depth: number): FieldKind {
  if (node['x-kubernetes-int-or-string'] === true) return 'int-or-string';
  if (Array.isArray(node.enum) && node.enum.length > 0 && node.type !== 'object' && node.type !== 'array') return 'enum';
  switch (node.type) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return node.type;
    case 'array':
      return arrayKind(node, depth);
    default:
      // An object, or no type (preserve-unknown-fields alone, or anyOf/oneOf of several).
      return objectKind(node, depth);
  }
}

/** A list of fields or of scalars is a list in the form; of lists, or too deep, YAML. */
function arrayKind(node: Rec, depth: number): FieldKind {
  if (!isRecord(node.items) || depth >= MAX_DEPTH) return 'yaml';
  const item = kindOf(node.items, depth + 1);
  return item === 'yaml' || item === 'array' ? 'yaml' : 'array';
}

/** An object with declared fields (not too deep) is a group of fields; anything else YAML. */
function objectKind(node: Rec, depth: number): FieldKind {
  const hasProps = isRecord(node.properties) && Object.keys(node.properties).length > 0;
  return hasProps && depth < MAX_DEPTH ? 'object' : 'yaml';
}

interface Build {
  descriptors: Map<string, SpecDescriptor>;
  /** Descriptor order, by normalised path relative to the root. */
  order: Map<string, number>;
}

function buildField(node: Rec, key: string, path: string, rel: string, required: boolean, depth: number, b: Build): FormField {
  const d = b.descriptors.get(rel);
  const kind = kindOf(node, depth);
  const description = d?.description ?? (typeof node.description === 'string' ? node.description : undefined);
  const f: FormField = { key, path, label: d?.displayName ?? labelOf(key), kind, required };
  if (description !== undefined && description !== '') f.description = description;
  if (node.default !== undefined) f.default = node.default;
  if (kind === 'enum' && Array.isArray(node.enum)) f.options = node.enum.filter((e) => e !== null);
  if (typeof node.pattern === 'string') f.pattern = node.pattern;
  if (typeof node.minimum === 'number') f.minimum = node.minimum;
  if (typeof node.maximum === 'number') f.maximum = node.maximum;
  if (kind === 'object') f.fields = fieldsOf(node, path, rel, depth, b, false);
  if (kind === 'array' && isRecord(node.items)) f.item = buildField(node.items, '', `${path}[]`, `${rel}[]`, true, depth + 1, b);
  return f;
}

function fieldsOf(node: Rec, path: string, rel: string, depth: number, b: Build, root: boolean): FormField[] {
  const props = isRecord(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required.filter((r): r is string => typeof r === 'string') : []);
  const out: { field: FormField; rank: number; index: number }[] = [];
  let index = 0;
  for (const [key, child] of Object.entries(props)) {
    if (root && ROOT_SKIPPED.has(key)) continue;
    if (!isRecord(child)) continue;
    const childRel = rel === '' ? key : `${rel}.${key}`;
    if (b.descriptors.get(childRel)?.['x-descriptors']?.includes(HIDDEN) === true) continue;
    const field = buildField(child, key, path === '' ? key : `${path}.${key}`, childRel, required.has(key), depth + 1, b);
    out.push({ field, rank: b.order.get(childRel) ?? Number.MAX_SAFE_INTEGER, index: index++ });
  }
  // Descriptor order first; then required fields; then the schema's own order.
  return out.sort((x, y) => x.rank - y.rank || Number(y.field.required) - Number(x.field.required) || x.index - y.index).map((x) => x.field);
}

/**
 * The form of a custom resource: every top-level property of `schema` (the version's
 * `openAPIV3Schema`) but apiVersion, kind, metadata and status. Descriptor paths are relative to
 * `spec`, as in a CSV.
 */
export function formFor(schema: unknown, descriptors: readonly SpecDescriptor[] = []): FormField {
  const node = isRecord(schema) ? schema : {};
  const b: Build = { descriptors: new Map(), order: new Map() };
  descriptors.forEach((d, i) => {
    if (typeof d.path !== 'string' || d.path === '') return;
    const rel = `spec.${normalise(d.path)}`;
    if (!b.descriptors.has(rel)) b.descriptors.set(rel, d);
    if (!b.order.has(rel)) b.order.set(rel, i);
    // A descriptor on a nested field also brings its parents forward.
    for (let p = rel.lastIndexOf('.'); p > 0; p = rel.lastIndexOf('.', p - 1)) if (!b.order.has(rel.slice(0, p))) b.order.set(rel.slice(0, p), i);
  });
  return { key: '', path: '', label: '', kind: 'object', required: true, fields: fieldsOf(node, '', '', 0, b, true) };
}

function scalarText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function yamlText(v: unknown): string {
  return v === undefined ? '' : YAML.stringify(v).replace(/\n$/, '');
}

/** The state of `field` prefilled from `value` (an example or the object edited), else its default. */
export function initialState(field: FormField, value: unknown): FieldState {
  const v = value === undefined ? field.default : value;
  switch (field.kind) {
    case 'object': {
      const obj = isRecord(v) ? v : {};
      const fields: Record<string, FieldState> = {};
      const known = new Set<string>();
      for (const f of field.fields ?? []) {
        known.add(f.key);
        fields[f.key] = initialState(f, obj[f.key]);
      }
      const extra = Object.fromEntries(Object.entries(obj).filter(([k]) => !known.has(k) && !(field.path === '' && ROOT_SKIPPED.has(k))));
      return { fields, extra };
    }
    case 'array': {
      const item = field.item;
      return { items: Array.isArray(v) && item !== undefined ? v.map((x) => initialState(item, x)) : [] };
    }
    case 'yaml':
      return { text: yamlText(v) };
    default:
      return { text: scalarText(v) };
  }
}

/** The path of item `i` of an array field: `spec.list[]` → `spec.list[2]`. */
function itemPath(field: FormField, i: number): string {
  return `${field.path}[${i}]`;
}

function scalarValue(field: FormField, text: string, path: string, problems: FormProblem[]): unknown {
  const t = field.kind === 'string' ? text : text.trim();
  if (t === '') return undefined;
  switch (field.kind) {
    case 'integer':
      if (!/^-?\d+$/.test(t)) return void problems.push({ path, message: `${JSON.stringify(t)} is not an integer` });
      return Number(t);
    case 'number': {
      const n = Number(t);
      if (!Number.isFinite(n)) return void problems.push({ path, message: `${JSON.stringify(t)} is not a number` });
      return n;
    }
    case 'boolean':
      if (t !== 'true' && t !== 'false') return void problems.push({ path, message: `${JSON.stringify(t)} is not true or false` });
      return t === 'true';
    case 'int-or-string':
      return /^-?\d+$/.test(t) ? Number(t) : t;
    case 'enum': {
      // The option whose text is `t` (enums may hold numbers or booleans).
      const match = (field.options ?? []).find((o) => scalarText(o) === t);
      return match ?? t;
    }
    default:
      return t;
  }
}

function valueAt(field: FormField, state: FieldState, path: string, problems: FormProblem[]): unknown {
  if (field.kind === 'object') {
    if (!('fields' in state)) return undefined;
    const out: Rec = { ...state.extra };
    for (const f of field.fields ?? []) {
      const s = state.fields[f.key];
      const v = s === undefined ? undefined : valueAt(f, s, path === '' ? f.key : `${path}.${f.key}`, problems);
      if (v !== undefined) out[f.key] = v;
    }
    // An optional object left empty is left out; a required one is sent, for the server to judge its fields.
    return Object.keys(out).length === 0 && !field.required ? undefined : out;
  }
  if (field.kind === 'array') {
    if (!('items' in state) || field.item === undefined) return undefined;
    const item = field.item;
    const values = state.items.map((s, i) => valueAt(item, s, itemPath({ ...field, path }, i), problems));
    const kept = values.map((v) => (v === undefined ? (SCALAR.includes(item.kind) ? undefined : {}) : v)).filter((v) => v !== undefined);
    return kept.length === 0 && !field.required ? undefined : kept;
  }
  if (!('text' in state)) return undefined;
  if (field.kind === 'yaml') {
    if (state.text.trim() === '') return undefined;
    // As the server reads YAML (util/yaml.ts): many aliases are fine, an alias bomb is refused.
    try {
      return readOne(state.text, path, YAML);
    } catch (err) {
      if (!(err instanceof YamlError)) throw err;
      problems.push({ path, message: err.reason });
      return undefined;
    }
  }
  return scalarValue(field, state.text, path, problems);
}

/** The value the form's state describes, and what in it cannot be read (bad numbers, bad YAML). */
export function valueOf(field: FormField, state: FieldState): { value: Rec; problems: FormProblem[] } {
  const problems: FormProblem[] = [];
  const v = valueAt(field, state, field.path, problems);
  return { value: isRecord(v) ? v : {}, problems };
}

/** The first example of `alm-examples` (JSON text) for the kind and group, if any. */
export function exampleFor(almExamples: unknown, group: string, kind: string): Rec | undefined {
  if (typeof almExamples !== 'string' || almExamples.trim() === '') return undefined;
  let list: unknown;
  try {
    list = JSON.parse(almExamples);
  } catch {
    return undefined;
  }
  if (!Array.isArray(list)) return undefined;
  return list.filter(isRecord).find((e) => e.kind === kind && typeof e.apiVersion === 'string' && (e.apiVersion.includes('/') ? e.apiVersion.slice(0, e.apiVersion.lastIndexOf('/')) : '') === group);
}
