/**
 * Checks one parsed FBC document (unknown JSON) against its schema and turns it into a typed
 * record. Every wrong field is reported (not just the first), each with its field path.
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
} from './declcfg.js';

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

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Object keys sorted at every level. opm reads every FBC record through a Go map, so property
 * values and unknown records come back out with sorted keys; doing the same keeps output equal.
 */
export function sortKeysDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeysDeep);
  if (!isRecord(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortKeysDeep(v[k]);
  return out;
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

  properties(obj: Record<string, unknown>, path: string): Property[] | undefined {
    const items = this.list(obj, 'properties', path);
    if (items === undefined) return undefined;
    const out: Property[] = [];
    items.forEach((item, i) => {
      const p = `${path}[${i}]`;
      if (!isRecord(item)) {
        this.fail(p, `expected an object, got ${typeName(item)}`);
        return;
      }
      const type = this.str(item, 'type', `${p}.type`, true);
      if (item.value === undefined) this.fail(`${p}.value`, 'required field is missing');
      if (type !== undefined) out.push({ type, value: sortKeysDeep(item.value) });
    });
    return out;
  }
}

export function describeRecord(blob: Record<string, unknown>): string {
  const schema = typeof blob.schema === 'string' ? blob.schema : '(no schema)';
  const name = typeof blob.name === 'string' ? ` "${blob.name}"` : '';
  const pkg = typeof blob.package === 'string' ? ` of package "${blob.package}"` : '';
  return `${schema}${name}${pkg}`;
}

function decodePackage(r: Reader, o: Record<string, unknown>): Package {
  const pkg: Package = { schema: SCHEMA_PACKAGE, name: r.str(o, 'name', 'name', true) ?? '' };
  const dc = r.str(o, 'defaultChannel', 'defaultChannel', false);
  if (dc !== undefined) pkg.defaultChannel = dc;
  const desc = r.str(o, 'description', 'description', false);
  if (desc !== undefined) pkg.description = desc;
  if (o.icon !== undefined && o.icon !== null) {
    if (!isRecord(o.icon)) r.fail('icon', `expected an object, got ${typeName(o.icon)}`);
    else {
      const icon: Icon = {
        // opm decodes the data and encodes it again: line breaks (which Go's decoder skips) vanish.
        base64data: (r.str(o.icon, 'base64data', 'icon.base64data', false) ?? '').replace(/[\r\n]/g, ''),
        mediatype: r.str(o.icon, 'mediatype', 'icon.mediatype', false) ?? '',
      };
      pkg.icon = icon;
    }
  }
  const props = r.properties(o, 'properties');
  if (props !== undefined) pkg.properties = props;
  return pkg;
}

function decodeChannel(r: Reader, o: Record<string, unknown>): Channel {
  const ch: Channel = {
    schema: SCHEMA_CHANNEL,
    package: r.str(o, 'package', 'package', true) ?? '',
    name: r.str(o, 'name', 'name', true) ?? '',
    entries: [],
  };
  const entries = r.list(o, 'entries', 'entries') ?? [];
  entries.forEach((e, i) => {
    const p = `entries[${i}]`;
    if (!isRecord(e)) {
      r.fail(p, `expected an object, got ${typeName(e)}`);
      return;
    }
    const name = r.str(e, 'name', `${p}.name`, true);
    if (name === undefined) return;
    const entry: ChannelEntry = { name };
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

function decodeBundle(r: Reader, o: Record<string, unknown>): Bundle {
  const b: Bundle = {
    schema: SCHEMA_BUNDLE,
    package: r.str(o, 'package', 'package', false) ?? '',
    name: r.str(o, 'name', 'name', false) ?? '',
    image: r.str(o, 'image', 'image', false) ?? '',
    properties: r.properties(o, 'properties') ?? [],
  };
  const rel = r.list(o, 'relatedImages', 'relatedImages');
  if (rel !== undefined) {
    const out: RelatedImage[] = [];
    rel.forEach((x, i) => {
      const p = `relatedImages[${i}]`;
      if (!isRecord(x)) {
        r.fail(p, `expected an object, got ${typeName(x)}`);
        return;
      }
      const image = r.str(x, 'image', `${p}.image`, true);
      if (image !== undefined) out.push({ name: r.str(x, 'name', `${p}.name`, false) ?? '', image });
    });
    b.relatedImages = out;
  }
  return b;
}

function decodeDeprecation(r: Reader, o: Record<string, unknown>): Deprecation {
  const d: Deprecation = { schema: SCHEMA_DEPRECATIONS, package: r.str(o, 'package', 'package', true) ?? '', entries: [] };
  const entries = r.list(o, 'entries', 'entries') ?? [];
  entries.forEach((e, i) => {
    const p = `entries[${i}]`;
    if (!isRecord(e)) {
      r.fail(p, `expected an object, got ${typeName(e)}`);
      return;
    }
    const message = r.str(e, 'message', `${p}.message`, true) ?? '';
    if (!isRecord(e.reference)) {
      r.fail(`${p}.reference`, e.reference === undefined ? 'required field is missing' : `expected an object, got ${typeName(e.reference)}`);
      return;
    }
    const schema = r.str(e.reference, 'schema', `${p}.reference.schema`, true);
    const name = r.str(e.reference, 'name', `${p}.reference.name`, false);
    if (schema === undefined) return;
    if (schema !== SCHEMA_PACKAGE && schema !== SCHEMA_CHANNEL && schema !== SCHEMA_BUNDLE) {
      r.fail(`${p}.reference.schema`, `expected one of ${SCHEMA_PACKAGE}, ${SCHEMA_CHANNEL}, ${SCHEMA_BUNDLE}, got "${schema}"`);
      return;
    }
    const entry: DeprecationEntry = { reference: name === undefined || name === '' ? { schema } : { schema, name }, message };
    d.entries.push(entry);
  });
  return d;
}

/** Decodes one document; problems name fields relative to the document. */
export function decodeDocument(doc: unknown): DecodeResult {
  const r = new Reader();
  if (!isRecord(doc)) {
    r.fail('', `expected an object with a "schema" field, got ${typeName(doc)}`);
    return { decoded: undefined, subject: 'document', problems: r.problems };
  }
  const subject = describeRecord(doc);
  const schema = r.str(doc, 'schema', 'schema', true);
  if (schema === undefined) return { decoded: undefined, subject, problems: r.problems };
  let decoded: Decoded;
  switch (schema) {
    case SCHEMA_PACKAGE:
      decoded = { kind: 'package', value: decodePackage(r, doc) };
      break;
    case SCHEMA_CHANNEL:
      decoded = { kind: 'channel', value: decodeChannel(r, doc) };
      break;
    case SCHEMA_BUNDLE:
      decoded = { kind: 'bundle', value: decodeBundle(r, doc) };
      break;
    case SCHEMA_DEPRECATIONS:
      decoded = { kind: 'deprecation', value: decodeDeprecation(r, doc) };
      break;
    default: {
      // Unknown schemas pass through untouched; only package/name are lifted out for indexing.
      const meta: Meta = { schema, blob: sortKeysDeep(doc) as Record<string, unknown> };
      if (typeof doc.package === 'string') meta.package = doc.package;
      if (typeof doc.name === 'string') meta.name = doc.name;
      decoded = { kind: 'other', value: meta };
    }
  }
  return { decoded, subject, problems: r.problems };
}
