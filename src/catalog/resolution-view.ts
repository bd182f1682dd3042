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

export function resolutionView(dc: DeclarativeConfig): DeclarativeConfig {
  const intern = stringInterner();
  return {
    ...dc,
    packages: dc.packages.map((p) => intern(resolutionPackage(p))),
    channels: dc.channels.map(intern),
    bundles: dc.bundles.map((b) => intern(resolutionBundle(b))),
    deprecations: dc.deprecations.map(intern),
    others: dc.others.map(intern),
  };
}
