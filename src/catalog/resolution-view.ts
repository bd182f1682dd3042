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

export function resolutionView(dc: DeclarativeConfig): DeclarativeConfig {
  return { ...dc, packages: dc.packages.map(resolutionPackage), bundles: dc.bundles.map(resolutionBundle) };
}
