/**
 * A catalog as a manager keeps it in memory to resolve on: every record, without the parts that
 * are for people and installers, which are most of a catalog's bytes and which nothing resolves on.
 * - A bundle that has an image loses its `olm.bundle.object` properties (its whole manifests, base64
 *   in JSON; the installer pulls the image), its `relatedImages` (nothing resolves or installs from
 *   them; they were two fifths of what was left) and the three long fields of `olm.csv.metadata`:
 *   `description`, `annotations` (alm-examples among them) and `crdDescriptions`. The rest of
 *   `olm.csv.metadata` stays (`minKubeVersion`, which the resolver enforces, and the short fields a
 *   CEL constraint could name). A bundle without an image keeps everything: its objects are its content.
 * - A package loses its icon and description.
 * - Its short strings are one copy each (`stringInterner`): JSON.parse gives every occurrence of
 *   a string of ten characters or more (`AllNamespaces`, a CRD's group, a package name) its own
 *   copy, and most of what is left of a bundle is such strings, repeated bundle after bundle.
 * - A bundle's properties equal to an earlier bundle's are that one object, frozen
 *   (`propertySharer`): versions of a package repeat their GVKs and their CSV's metadata.
 * The catalog's served bytes are the stored file's, untouched (catalog-store); the console reads
 * those, not this view. The per-record functions are for loaders that build the view as they read
 * (catalog-store/unpack.ts).
 */
import { PROP_BUNDLE_OBJECT, PROP_CSV_METADATA, type Bundle, type DeclarativeConfig, type Package, type Property } from '../declcfg/index.js';

const CSV_METADATA_DROPPED: ReadonlySet<string> = new Set(['description', 'annotations', 'crdDescriptions']);

function slimProperty(p: Property): Property | undefined {
  if (p.type === PROP_BUNDLE_OBJECT) return undefined;
  if (p.type !== PROP_CSV_METADATA || typeof p.value !== 'object' || p.value === null || Array.isArray(p.value)) return p;
  return { ...p, value: Object.fromEntries(Object.entries(p.value).filter(([k]) => !CSV_METADATA_DROPPED.has(k))) };
}

/** A bundle as resolution reads it; one without an image is kept as it is. */
export function resolutionBundle(b: Bundle): Bundle {
  if (b.image === '') return b;
  const { relatedImages: _relatedImages, ...rest } = b;
  return { ...rest, properties: b.properties.map(slimProperty).filter((p): p is Property => p !== undefined) };
}

/** A package as resolution reads it: without its icon and description. */
export function resolutionPackage(p: Package): Package {
  if (p.icon === undefined && p.description === undefined) return p;
  const { icon: _icon, description: _description, ...rest } = p;
  return rest;
}

/** Strings at most this long are interned: names, versions, GVKs, install modes; not descriptions. */
const INTERNED_MAX_LENGTH = 256;

/**
 * Replaces, in place, every string of at most INTERNED_MAX_LENGTH characters within a record by the
 * first equal string this interner saw. A string is immutable and an equal one is indistinguishable,
 * so the record reads the same to everything. One interner is for one catalog's load: its table
 * goes with it, and what it made one stays one only in the records kept.
 */
export function stringInterner(): <T>(value: T) => T {
  const seen = new Map<string, string>();
  const one = (s: string): string => {
    if (s.length > INTERNED_MAX_LENGTH) return s;
    const had = seen.get(s);
    if (had !== undefined) return had;
    seen.set(s, s);
    return s;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return one(v);
    if (typeof v !== 'object' || v === null) return v;
    // Only strings are written back (JavaScript cannot tell two equal strings apart, so each is),
    // and nothing of a frozen object: its strings stay its own copies.
    const writable = !Object.isFrozen(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const w = walk(v[i]);
        if (writable && typeof w === 'string') v[i] = w;
      }
      return v;
    }
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const w = walk(o[k]);
      if (writable && typeof w === 'string') o[k] = w;
    }
    return o;
  };
  return <T>(value: T): T => walk(value) as T;
}

/**
 * A property whose type and value come to this many characters as JSON is not shared (no real one
 * does). Under V8's limit on hashing a string (16,383 characters; a longer one hashes by its length
 * alone), so that a catalog of many long values of one length cannot make each lookup compare them all.
 */
const SHARED_MAX_KEY = 8 * 1024;

/** The table's keys stop at this many characters, what one load may hold beside its view (a bench catalog of 2,820 bundles has about 0.3 MB of distinct properties). */
const SHARED_TABLE_MAX_CHARS = 8 * 1024 * 1024;

/** Whether `v` holds a number JSON does not keep (NaN and ±Infinity become null, -0 becomes 0; YAML can say them). */
function hasInexactNumber(v: unknown): boolean {
  if (typeof v === 'number') return !Number.isFinite(v) || Object.is(v, -0);
  if (typeof v !== 'object' || v === null) return false;
  return (Array.isArray(v) ? v : Object.values(v)).some(hasInexactNumber);
}

/** A copy of a JSON value, frozen all through; its strings are the original's (already interned). */
function frozenCopy<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return Object.freeze(v.map(frozenCopy)) as T;
  return Object.freeze(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, frozenCopy(x)]))) as T;
}

/**
 * Makes equal properties one object: a bundle's property equal in type and value (as JSON) to one
 * an earlier bundle of the same load had is replaced by that one. Versions of a package repeat
 * most of theirs (its GVKs, its CSV's metadata): in the catalog-scale bench's catalogs the CSV
 * metadata kept is 1.8 MB of JSON a catalog, 0.2 MB of it distinct. What is shared is a copy
 * frozen all through: the input keeps its own objects, and nothing can change one bundle's
 * property through another's. A bundle without an image is left as it is (resolutionBundle).
 */
export function propertySharer(): (b: Bundle) => Bundle {
  // Keyed by type and JSON: equal keys are equal values (hasInexactNumber keeps out what JSON would merge).
  const seen = new Map<string, Property>();
  let keyChars = 0;
  let full = false;
  const one = (p: Property): Property => {
    const json = JSON.stringify(p.value);
    if (json === undefined || json.length + p.type.length >= SHARED_MAX_KEY || hasInexactNumber(p.value)) return p;
    const key = `${p.type}\n${json}`;
    let had = seen.get(key);
    if (had === undefined) {
      // A catalog of ever new properties gains nothing from the table: it stops growing.
      if (full || keyChars + key.length > SHARED_TABLE_MAX_CHARS) {
        full = true;
        return p;
      }
      keyChars += key.length;
      had = frozenCopy(p);
      seen.set(key, had);
    }
    return had;
  };
  return (b) => (b.image === '' ? b : { ...b, properties: b.properties.map(one) });
}

/**
 * The view's records, one at a time, for one catalog's load (its tables go with it): slimmed,
 * their strings interned, a bundle's properties shared with earlier bundles'.
 */
export function resolutionRecords(): { bundle: (b: Bundle) => Bundle; package: (p: Package) => Package; other: <T>(record: T) => T } {
  const intern = stringInterner();
  const share = propertySharer();
  return {
    bundle: (b) => share(intern(resolutionBundle(b))),
    package: (p) => intern(resolutionPackage(p)),
    other: intern,
  };
}

export function resolutionView(dc: DeclarativeConfig): DeclarativeConfig {
  const view = resolutionRecords();
  return {
    ...dc,
    packages: dc.packages.map(view.package),
    channels: dc.channels.map(view.other),
    bundles: dc.bundles.map(view.bundle),
    deprecations: dc.deprecations.map(view.other),
    others: dc.others.map(view.other),
  };
}
