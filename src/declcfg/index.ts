/**
 * The file-based catalog (FBC) wire format: flat records that refer to each other by name,
 * exactly as they appear in JSON/YAML files. Unknown schemas are kept as they are (`Meta`).
 * The validated, linked model is built from this by one conversion (src/catalog/model.ts).
 *
 * The lowest layer of the catalog side: bundle/ (which writes these records), catalog/ (which
 * loads, writes and validates them) and the folders above it (catalog-render, catalog-store,
 * publish) all build on it, so no arrow runs back up from bundle/ to catalog/.
 */
import { isRecord } from '../util/object.js';

export const SCHEMA_PACKAGE = 'olm.package';
export const SCHEMA_CHANNEL = 'olm.channel';
export const SCHEMA_BUNDLE = 'olm.bundle';
export const SCHEMA_DEPRECATIONS = 'olm.deprecations';

export const PROP_PACKAGE = 'olm.package';
export const PROP_GVK = 'olm.gvk';
export const PROP_PACKAGE_REQUIRED = 'olm.package.required';
export const PROP_GVK_REQUIRED = 'olm.gvk.required';
export const PROP_CONSTRAINT = 'olm.constraint';
export const PROP_BUNDLE_OBJECT = 'olm.bundle.object';
export const PROP_CSV_METADATA = 'olm.csv.metadata';
export const PROP_DEPRECATED = 'olm.deprecated';
export const PROP_MAX_OPENSHIFT_VERSION = 'olm.maxOpenShiftVersion';

/** A property is a typed value; `value` stays `unknown` until a decoder checks it. */
export interface Property {
  type: string;
  value: unknown;
}

export interface Icon {
  base64data: string;
  mediatype: string;
}

export interface Package {
  schema: typeof SCHEMA_PACKAGE;
  name: string;
  defaultChannel?: string;
  icon?: Icon;
  description?: string;
  properties?: Property[];
}

export interface ChannelEntry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

export interface Channel {
  schema: typeof SCHEMA_CHANNEL;
  package: string;
  name: string;
  entries: ChannelEntry[];
  properties?: Property[];
}

export interface RelatedImage {
  name: string;
  image: string;
}

export interface Bundle {
  schema: typeof SCHEMA_BUNDLE;
  package: string;
  name: string;
  image: string;
  properties: Property[];
  relatedImages?: RelatedImage[];
}

/** What a deprecation entry points at: the package, a channel of it, or a bundle of it. */
export interface PackageScopedReference {
  schema: typeof SCHEMA_PACKAGE | typeof SCHEMA_CHANNEL | typeof SCHEMA_BUNDLE;
  name?: string;
}

export interface DeprecationEntry {
  reference: PackageScopedReference;
  message: string;
}

export interface Deprecation {
  schema: typeof SCHEMA_DEPRECATIONS;
  package: string;
  entries: DeprecationEntry[];
}

/** A record of a schema Binnacle does not model; kept byte-for-byte (as parsed JSON). */
export interface Meta {
  schema: string;
  package?: string;
  name?: string;
  blob: Record<string, unknown>;
}

export interface DeclarativeConfig {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  deprecations: Deprecation[];
  others: Meta[];
}

export function emptyDeclarativeConfig(): DeclarativeConfig {
  return { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
}

// --- Property values -------------------------------------------------------

export interface PackageProperty {
  packageName: string;
  version: string;
}

export interface GVKProperty {
  group: string;
  version: string;
  kind: string;
}

export interface PackageRequiredProperty {
  packageName: string;
  versionRange: string;
}

export type GVKRequiredProperty = GVKProperty;

/**
 * `olm.constraint`: exactly one of the constraint kinds is set. `cel.rule` is evaluated against
 * the candidate bundle's properties; `all`/`any`/`not` compose.
 */
export interface ConstraintProperty {
  failureMessage?: string;
  cel?: { rule: string };
  gvk?: GVKProperty;
  package?: PackageRequiredProperty;
  all?: { constraints: ConstraintProperty[] };
  any?: { constraints: ConstraintProperty[] };
  not?: { constraints: ConstraintProperty[] };
}

function str(v: Record<string, unknown>, key: string): string | undefined {
  const x = v[key];
  return typeof x === 'string' ? x : undefined;
}

/** The named fields of value when it is an object and each of them is a string; else undefined. */
function stringFields<K extends string>(value: unknown, keys: readonly K[]): Record<K, string> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) {
    const v = str(value, k);
    if (v === undefined) return undefined;
    out[k] = v;
  }
  return out as Record<K, string>;
}

/** Decodes `olm.package`; undefined when the value does not have the right shape. */
export function decodePackageProperty(value: unknown): PackageProperty | undefined {
  return stringFields(value, ['packageName', 'version']);
}

export function decodeGVKProperty(value: unknown): GVKProperty | undefined {
  if (!isRecord(value)) return undefined;
  const group = str(value, 'group') ?? '';
  const version = str(value, 'version');
  const kind = str(value, 'kind');
  if (version === undefined || kind === undefined) return undefined;
  return { group, version, kind };
}

export function decodePackageRequiredProperty(value: unknown): PackageRequiredProperty | undefined {
  return stringFields(value, ['packageName', 'versionRange']);
}

export function decodeConstraintProperty(value: unknown): ConstraintProperty | undefined {
  if (!isRecord(value)) return undefined;
  const out: ConstraintProperty = {};
  const failureMessage = str(value, 'failureMessage');
  if (failureMessage !== undefined) out.failureMessage = failureMessage;
  let kinds = 0;
  if (isRecord(value.cel)) {
    const rule = str(value.cel, 'rule');
    if (rule === undefined) return undefined;
    out.cel = { rule };
    kinds++;
  }
  if (value.gvk !== undefined) {
    const gvk = decodeGVKProperty(value.gvk);
    if (gvk === undefined) return undefined;
    out.gvk = gvk;
    kinds++;
  }
  if (value.package !== undefined) {
    const pkg = decodePackageRequiredProperty(value.package);
    if (pkg === undefined) return undefined;
    out.package = pkg;
    kinds++;
  }
  for (const key of ['all', 'any', 'not'] as const) {
    const comp = value[key];
    if (comp === undefined) continue;
    if (!isRecord(comp) || !Array.isArray(comp.constraints)) return undefined;
    const constraints: ConstraintProperty[] = [];
    for (const c of comp.constraints) {
      const d = decodeConstraintProperty(c);
      if (d === undefined) return undefined;
      constraints.push(d);
    }
    out[key] = { constraints };
    kinds++;
  }
  return kinds === 1 ? out : undefined;
}

/** Every property of `type` on a bundle, in order. */
export function propertiesOfType(props: readonly Property[] | undefined, type: string): unknown[] {
  return (props ?? []).filter((p) => p.type === type).map((p) => p.value);
}
