/**
 * Checks one parsed FBC document (unknown JSON) against its schema and turns it into a typed
 * record. Every wrong field is reported (not just the first), each with its field path.
 *
 * Field matching is opm's (operator-registry declcfg, Go's encoding/json): a key matches a field
 * exactly or case-insensitively (`DefaultChannel` is `defaultChannel`; the last matching key
 * wins), unknown keys are ignored, `null` is the zero value (an absent string, an empty list, a
 * `{}` list element), and at the top level `schema`, `package` and `name` must be strings and may
 * not be given twice in different cases.
 */
import {
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_DEPRECATIONS,
  SCHEMA_PACKAGE,
  type Bundle,
  type Channel,
  type ChannelEntry,
  type Deprecation,
  type DeprecationEntry,
  type Icon,
  type Meta,
  type Package,
  type Property,
  type RelatedImage,
} from '../declcfg/index.js';
import { isRecord } from '../util/object.js';

export type Decoded =
  | { kind: 'package'; value: Package }
  | { kind: 'channel'; value: Channel }
  | { kind: 'bundle'; value: Bundle }
  | { kind: 'deprecation'; value: Deprecation }
  | { kind: 'other'; value: Meta };

/** A field that has the wrong shape: `field` is a path such as `entries[2].name`. */
export interface FieldProblem {
  field: string;
  message: string;
}

export interface DecodeResult {
  /** Undefined when the document is too broken to keep (its problems say why). */
  decoded: Decoded | undefined;
  /** Names the record for messages, e.g. `olm.channel "stable" of package "etcd"`. */
  subject: string;
  problems: FieldProblem[];
}

/**
 * Object keys sorted at every level. opm reads every FBC record through a Go map, so property
 * values and unknown records come back out with sorted keys; doing the same keeps output equal.
 */
export function sortKeysDeep(v: unknown): unknown {
  // What is already in order is returned as it is (most records are, being written by opm or by
  // Binnacle): only the objects that change are copied.
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const y = sortKeysDeep(x);
      if (y !== x) {
        out ??= [...(v as unknown[])];
        out[i] = y;
      }
    }
    return out ?? v;
  }
  if (!isRecord(v)) return v;
  const keys = Object.keys(v);
  let changed = false;
  for (let i = 1; i < keys.length && !changed; i++) if ((keys[i - 1] ?? '') > (keys[i] ?? '')) changed = true;
  const entries = keys.map((k): [string, unknown] => {
    const x = v[k];
    const y = sortKeysDeep(x);
    if (y !== x) changed = true;
    return [k, y];
  });
  if (!changed) return v;
  // Own properties, a key named `__proto__` too (assigned, it would set the copy's prototype and be lost).
  return Object.fromEntries(entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

/**
 * The fields of `o` that match `fields`, under their canonical names: exact or case-insensitive
 * matches, the last one winning, as Go's encoding/json decodes into a struct.
 */
export function goFields(o: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  // Most records spell every field's key exactly and have no other spelling of one: then `o`
  // already reads as the answer (callers read only the fields' names, never change it).
  const respelled = (k: string): boolean => !fields.includes(k) && fields.some((f) => f.length === k.length && f.toLowerCase() === k.toLowerCase());
  if (!Object.keys(o).some(respelled)) return o;
  const byLower = new Map(fields.map((f) => [f.toLowerCase(), f]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    const f = fields.includes(k) ? k : byLower.get(k.toLowerCase());
    if (f !== undefined) out[f] = v;
  }
  return out;
}

/** `null` as a struct element decodes to the zero struct in Go. */
function asStruct(v: unknown): unknown {
  return v === null ? {} : v;
}

const VALID_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Icons whose data the decoder found valid: validation need not scan them again (tens of MB in large catalogs). */
const ICONS_CHECKED = new WeakSet<Icon>();

/** Whether the decoder checked this icon's data and found it valid base64. */
export function iconDataChecked(icon: Icon): boolean {
  return ICONS_CHECKED.has(icon);
}

/**
 * The package with its icon's data, once the decoder found it valid, replaced by a stand-in that
 * validation reads the same way (present, valid, the same media type): for validating a catalog
 * without holding its icons, a fifth of an OperatorHub-size catalog's bytes. For validation only.
 */
export function withIconDataChecked(p: Package): Package {
  const icon = p.icon;
  if (icon === undefined || icon.base64data === '' || !ICONS_CHECKED.has(icon)) return p;
  const standIn: Icon = { base64data: 'AA==', mediatype: icon.mediatype };
  ICONS_CHECKED.add(standIn);
  return { ...p, icon: standIn };
}

/**
 * Go's base64.StdEncoding (how opm decodes icon data and bundle objects): padded, CR and LF
 * skipped. Undefined when valid, else where it breaks, in Go's wording.
 */
export function base64Problem(data: string): string | undefined {
  const s = data.includes('\r') || data.includes('\n') ? data.replace(/[\r\n]/g, '') : data;
  // Valid data (nearly all) is told in one anchored pass; only bad data is searched for where it breaks.
  if (s.length % 4 === 0 && VALID_BASE64.test(s)) return undefined;
  const bad = /[^A-Za-z0-9+/=]|=[^=]|=={2,}/.exec(s);
  if (bad !== null) return `illegal base64 data at input byte ${bad.index}`;
  if (s.length % 4 !== 0) return `illegal base64 data at input byte ${s.length - (s.length % 4)}`;
  return undefined;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/** Collects field problems while reading one document. */
class Reader {
  readonly problems: FieldProblem[] = [];

  fail(field: string, message: string): void {
    this.problems.push({ field, message });
  }

  str(obj: Record<string, unknown>, key: string, path: string, required: boolean): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (required) this.fail(path, 'required field is missing');
      return undefined;
    }
    if (typeof v !== 'string') {
      this.fail(path, `expected a string, got ${typeName(v)}`);
      return undefined;
    }
    return v;
  }

  strList(obj: Record<string, unknown>, key: string, path: string): string[] | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      this.fail(path, `expected a list of strings, got ${typeName(v)}`);
      return undefined;
    }
    const out: string[] = [];
    v.forEach((x: unknown, i) => {
      if (typeof x === 'string') out.push(x);
      else this.fail(`${path}[${i}]`, `expected a string, got ${typeName(x)}`);
    });
    return out;
  }

  list(obj: Record<string, unknown>, key: string, path: string): unknown[] | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      this.fail(path, `expected a list, got ${typeName(v)}`);
      return undefined;
    }
    return v as unknown[];
  }

  /**
   * Visits the objects of a list field in order, each as its Go-read `fields` with its path
   * (`path[i]`); an item that is not an object is a problem and skipped. False when the field is absent.
   */
  eachStruct(obj: Record<string, unknown>, key: string, path: string, fields: readonly string[], visit: (f: Record<string, unknown>, path: string) => void): boolean {
    const items = this.list(obj, key, path);
    if (items === undefined) return false;
    items.forEach((raw, i) => {
      const p = `${path}[${i}]`;
      const item = asStruct(raw);
      if (isRecord(item)) visit(goFields(item, fields), p);
      else this.fail(p, `expected an object, got ${typeName(item)}`);
    });
    return true;
  }

  /**
   * Properties as opm reads them: `type` a string (absent is ""), `value` any JSON; a missing
   * `value` is kept as undefined (only bundle properties must have one: the model checks them).
   */
  properties(obj: Record<string, unknown>, path: string): Property[] | undefined {
    const out: Property[] = [];
    const present = this.eachStruct(obj, 'properties', path, ['type', 'value'], (f, p) => {
      const type = this.str(f, 'type', `${p}.type`, false);
      if (type === undefined && f.type !== undefined && f.type !== null) return;
      out.push({ type: type ?? '', value: sortKeysDeep(f.value) });
    });
    return present ? out : undefined;
  }
}

export function describeRecord(doc: Record<string, unknown>): string {
  const blob = goFields(doc, ['schema', 'name', 'package']);
  const schema = typeof blob.schema === 'string' ? blob.schema : '(no schema)';
  const name = typeof blob.name === 'string' ? ` "${blob.name}"` : '';
  const pkg = typeof blob.package === 'string' ? ` of package "${blob.package}"` : '';
  return `${schema}${name}${pkg}`;
}

function decodePackage(r: Reader, blob: Record<string, unknown>): Package {
  const o = goFields(blob, ['name', 'defaultChannel', 'icon', 'description', 'properties']);
  // A missing name, package or channel name is the model's problem (validate reports it by name).
  const pkg: Package = { schema: SCHEMA_PACKAGE, name: r.str(o, 'name', 'name', false) ?? '' };
  const dc = r.str(o, 'defaultChannel', 'defaultChannel', false);
  if (dc !== undefined) pkg.defaultChannel = dc;
  const desc = r.str(o, 'description', 'description', false);
  if (desc !== undefined) pkg.description = desc;
  if (o.icon !== undefined && o.icon !== null) {
    if (!isRecord(o.icon)) r.fail('icon', `expected an object, got ${typeName(o.icon)}`);
    else {
      const f = goFields(o.icon, ['base64data', 'mediatype']);
      const data = r.str(f, 'base64data', 'icon.base64data', false) ?? '';
      const bad = base64Problem(data);
      if (bad !== undefined) r.fail('icon.base64data', `${bad} (the icon data must be standard, padded base64)`);
      const icon: Icon = {
        // opm decodes the data and encodes it again: line breaks (which Go's decoder skips) vanish.
        base64data: data.includes('\n') || data.includes('\r') ? data.replace(/[\r\n]/g, '') : data,
        mediatype: r.str(f, 'mediatype', 'icon.mediatype', false) ?? '',
      };
      if (bad === undefined) ICONS_CHECKED.add(icon);
      pkg.icon = icon;
    }
  }
  const props = r.properties(o, 'properties');
  if (props !== undefined) pkg.properties = props;
  return pkg;
}

function decodeChannel(r: Reader, blob: Record<string, unknown>): Channel {
  const o = goFields(blob, ['name', 'package', 'entries', 'properties']);
  const ch: Channel = {
    schema: SCHEMA_CHANNEL,
    package: r.str(o, 'package', 'package', false) ?? '',
    name: r.str(o, 'name', 'name', false) ?? '',
    entries: [],
  };
  r.eachStruct(o, 'entries', 'entries', ['name', 'replaces', 'skips', 'skipRange'], (e, p) => {
    // An entry without a name is kept as "": the model reports it has no olm.bundle, as opm does.
    const name = r.str(e, 'name', `${p}.name`, false);
    if (name === undefined && e.name !== undefined && e.name !== null) return;
    const entry: ChannelEntry = { name: name ?? '' };
    const replaces = r.str(e, 'replaces', `${p}.replaces`, false);
    if (replaces !== undefined && replaces !== '') entry.replaces = replaces;
    const skips = r.strList(e, 'skips', `${p}.skips`);
    if (skips !== undefined && skips.length > 0) entry.skips = skips;
    const skipRange = r.str(e, 'skipRange', `${p}.skipRange`, false);
    if (skipRange !== undefined && skipRange !== '') entry.skipRange = skipRange;
    ch.entries.push(entry);
  });
  const props = r.properties(o, 'properties');
  if (props !== undefined) ch.properties = props;
  return ch;
}

function decodeBundle(r: Reader, blob: Record<string, unknown>): Bundle {
  const o = goFields(blob, ['name', 'package', 'image', 'properties', 'relatedImages']);
  const b: Bundle = {
    schema: SCHEMA_BUNDLE,
    package: r.str(o, 'package', 'package', false) ?? '',
    name: r.str(o, 'name', 'name', false) ?? '',
    image: r.str(o, 'image', 'image', false) ?? '',
    properties: r.properties(o, 'properties') ?? [],
  };
  const rel: RelatedImage[] = [];
  // opm does not require the image (some catalogs carry [name, value] pairs): validate.ts warns.
  const present = r.eachStruct(o, 'relatedImages', 'relatedImages', ['name', 'image'], (x, p) => {
    rel.push({ name: r.str(x, 'name', `${p}.name`, false) ?? '', image: r.str(x, 'image', `${p}.image`, false) ?? '' });
  });
  if (present) b.relatedImages = rel;
  return b;
}

function decodeDeprecation(r: Reader, blob: Record<string, unknown>): Deprecation {
  const o = goFields(blob, ['package', 'entries']);
  const d: Deprecation = { schema: SCHEMA_DEPRECATIONS, package: r.str(o, 'package', 'package', false) ?? '', entries: [] };
  r.eachStruct(o, 'entries', 'entries', ['reference', 'message'], (e, p) => {
    // An empty or missing message is the model's "message must be set", once the reference resolves.
    const message = r.str(e, 'message', `${p}.message`, false) ?? '';
    const ref = asStruct(e.reference ?? null);
    if (!isRecord(ref)) {
      r.fail(`${p}.reference`, `expected an object, got ${typeName(ref)}`);
      return;
    }
    const rf = goFields(ref, ['schema', 'name']);
    const schema = r.str(rf, 'schema', `${p}.reference.schema`, false);
    const name = r.str(rf, 'name', `${p}.reference.name`, false);
    if (schema === undefined || schema === '') {
      if (rf.schema === undefined || rf.schema === null || schema === '') r.fail(`${p}.reference.schema`, 'schema must be set for a deprecation entry');
      return;
    }
    if (schema !== SCHEMA_PACKAGE && schema !== SCHEMA_CHANNEL && schema !== SCHEMA_BUNDLE) {
      r.fail(`${p}.reference.schema`, `cannot deprecate object of schema "${schema}": object schema unknown (expected ${SCHEMA_PACKAGE}, ${SCHEMA_CHANNEL} or ${SCHEMA_BUNDLE})`);
      return;
    }
    const entry: DeprecationEntry = { reference: name === undefined || name === '' ? { schema } : { schema, name }, message };
    d.entries.push(entry);
  });
  return d;
}

/**
 * The top-level `schema`, `package` and `name` of any record, as opm's Meta reads them: keys
 * compared case-insensitively, two keys of one name in different cases refused, values strings.
 */
function metaKeys(r: Reader, doc: Record<string, unknown>): { schema?: string; package?: string; name?: string } {
  const byFold = new Map<string, string[]>();
  for (const k of Object.keys(doc)) byFold.set(k.toLowerCase(), [...(byFold.get(k.toLowerCase()) ?? []), k]);
  for (const [fold, keys] of byFold) if (keys.length > 1) r.fail(fold, `duplicate keys for key "${fold}": [${[...keys].sort().join(' ')}]`);
  const out: { schema?: string; package?: string; name?: string } = {};
  for (const key of ['schema', 'package', 'name'] as const) {
    const k = byFold.get(key)?.[0];
    if (k === undefined) continue;
    const v = doc[k];
    if (typeof v === 'string') out[key] = v;
    else r.fail(k, `expected value for key "${k}" to be a string, got ${typeName(v)}`);
  }
  return out;
}

/** The schemas opm knows, each with its decoder; any other schema passes through as it is. */
const KNOWN_SCHEMAS: Readonly<Record<string, (r: Reader, doc: Record<string, unknown>) => Decoded>> = {
  [SCHEMA_PACKAGE]: (r, doc) => ({ kind: 'package', value: decodePackage(r, doc) }),
  [SCHEMA_CHANNEL]: (r, doc) => ({ kind: 'channel', value: decodeChannel(r, doc) }),
  [SCHEMA_BUNDLE]: (r, doc) => ({ kind: 'bundle', value: decodeBundle(r, doc) }),
  [SCHEMA_DEPRECATIONS]: (r, doc) => ({ kind: 'deprecation', value: decodeDeprecation(r, doc) }),
};

/** Decodes one document; problems name fields relative to the document. */
export function decodeDocument(doc: unknown): DecodeResult {
  const r = new Reader();
  if (!isRecord(doc)) {
    r.fail('', doc === null ? 'the document is empty: object is missing root schema field' : `expected an object with a "schema" field, got ${typeName(doc)}`);
    return { decoded: undefined, subject: 'document', problems: r.problems };
  }
  const subject = describeRecord(doc);
  const meta = metaKeys(r, doc);
  if (r.problems.length > 0) return { decoded: undefined, subject, problems: r.problems };
  const schema = meta.schema;
  if (schema === undefined || schema === '') {
    r.fail('schema', "object is missing root schema field");
    return { decoded: undefined, subject, problems: r.problems };
  }
  const known = Object.hasOwn(KNOWN_SCHEMAS, schema) ? KNOWN_SCHEMAS[schema] : undefined;
  if (known !== undefined) return { decoded: known(r, doc), subject, problems: r.problems };
  // Unknown schemas pass through untouched; only package/name are lifted out for indexing.
  const other: Meta = { schema, blob: sortKeysDeep(doc) as Record<string, unknown> };
  if (meta.package !== undefined) other.package = meta.package;
  if (meta.name !== undefined) other.name = meta.name;
  const decoded: Decoded = { kind: 'other', value: other };
  return { decoded, subject, problems: r.problems };
}
