/**
 * From a loaded registry+v1 bundle to its file-based-catalog `olm.bundle` record, with the
 * properties derived as opm derives them (operator-registry `bundleParser.derivedProperties`
 * and `ObjectsAndPropertiesFromBundle`, with the `bundle-object-to-csv-metadata` migration):
 * - `olm.package` from annotations.yaml (or the caller), unless a property file sets one;
 * - `olm.gvk` for every version of every CRD in the bundle and every owned API service;
 * - `olm.gvk.required` for the CSV's required CRDs and API services and `olm.gvk` dependencies;
 * - `olm.package.required` for `olm.package` dependencies; other dependency types as written;
 * - properties from `metadata/properties.yaml` and the CSV annotation `olm.properties`
 *   (this is where `olm.maxOpenShiftVersion` lives);
 * - `olm.csv.metadata` with the CSV's descriptive fields, for a bundle with an image; without
 *   one, as opm leaves it (its migration skips image-less bundles), an `olm.bundle.object` for
 *   every manifest, CSV included: the object as Go's JSON writes it, base64-encoded, which is
 *   all a catalog has of such a bundle's content.
 * Properties are de-duplicated and sorted by type, then by value, exactly as opm sorts them.
 */
import semver from 'semver';
import {
  PROP_BUNDLE_OBJECT,
  PROP_CSV_METADATA,
  PROP_GVK,
  PROP_GVK_REQUIRED,
  PROP_PACKAGE,
  PROP_PACKAGE_REQUIRED,
  SCHEMA_BUNDLE,
  type Bundle,
  type ChannelEntry,
  type Property,
  type RelatedImage,
} from '../declcfg/index.js';
import { InputError } from '../util/errors.js';
import { goJson } from '../util/canonical-json.js';
import { isRecord } from '../util/object.js';
import type { BundleProperty, RegistryV1Bundle } from './types.js';

/** The CSV annotation opm reads extra properties from: a JSON list of `{type, value}`. */
export const CSV_PROPERTIES_ANNOTATION = 'olm.properties';

export interface FbcOptions {
  image?: string;
  packageName?: string;
}

interface Gvk {
  group: string;
  kind: string;
  version: string;
}

export function toFbcBundle(bundle: RegistryV1Bundle, opts: FbcOptions = {}): Bundle {
  const { csv } = bundle;
  const packageName = opts.packageName ?? bundle.packageName;
  const image = opts.image ?? '';
  checkConvertible(bundle, packageName);

  const provided = new Map<string, Gvk>();
  const required = new Map<string, Gvk>();
  const other: Property[] = [];
  const pkgProp = sortDeclared(declaredProperties(bundle), provided, other);
  const pkgRequired = sortDependencies(bundle.dependencies, required, other);
  for (const g of providedApis(bundle)) addGvk(provided, g);
  for (const g of requiredApis(bundle)) addGvk(required, g);

  const props: Property[] = [
    pkgProp ?? { type: PROP_PACKAGE, value: { packageName, version: csv.version } },
    ...[...provided.values()].map((g) => ({ type: PROP_GVK, value: g })),
    ...[...required.values()].map((g) => ({ type: PROP_GVK_REQUIRED, value: g })),
    ...pkgRequired,
    ...other,
    ...contentProperties(bundle, image),
  ];
  const sorted = dedupeAndSort(props);

  const out: Bundle = {
    schema: SCHEMA_BUNDLE,
    package: packageName,
    name: bundle.name,
    image,
    properties: sorted,
  };
  const related = relatedImages(bundle, image);
  if (related.length > 0) out.relatedImages = related;
  return out;
}

/** A catalog bundle needs a package name and a semantic version (without a leading v). */
function checkConvertible(bundle: RegistryV1Bundle, packageName: string): void {
  const { csv } = bundle;
  if (packageName === '') {
    throw new InputError('BUNDLE_NO_PACKAGE', 'bundle has no package name: annotations.yaml does not say it and none was given', {
      file: 'metadata/annotations.yaml',
      field: 'annotations.operators.operatorframework.io.bundle.package.v1',
    });
  }
  if (semver.valid(csv.version) === null || csv.version.startsWith('v')) {
    throw new InputError('BUNDLE_BAD_VERSION', `"${csv.version}" is not a semantic version`, { file: csv.file, field: 'spec.version' });
  }
}

/** b.Properties in opm: properties.yaml first, then the derived ones (package, CSV annotation; GVKs come later). */
function declaredProperties(bundle: RegistryV1Bundle): BundleProperty[] {
  const declared: BundleProperty[] = [...bundle.properties];
  if (bundle.annotations?.packageName !== undefined && bundle.annotations.packageName !== '') {
    declared.push({ type: PROP_PACKAGE, value: { packageName: bundle.annotations.packageName, version: bundle.csv.version } });
  }
  declared.push(...csvAnnotationProperties(bundle));
  return declared;
}

function addGvk(m: Map<string, Gvk>, g: Gvk): void {
  m.set(`${g.group}/${g.version}/${g.kind}`, g);
}

/** Declared properties by kind: GVKs into `provided`, the package property returned (the last one wins), the rest into `other`. */
function sortDeclared(declared: BundleProperty[], provided: Map<string, Gvk>, other: Property[]): Property | undefined {
  let pkgProp: Property | undefined;
  for (const p of dedupe(declared)) {
    if (p.type === PROP_GVK && isRecord(p.value)) addGvk(provided, gvkOf(p.value));
    else if (p.type === PROP_PACKAGE && isRecord(p.value)) {
      pkgProp = { type: PROP_PACKAGE, value: { packageName: strOf(p.value.packageName), version: strOf(p.value.version) } };
    } else other.push({ type: p.type, value: p.value });
  }
  return pkgProp;
}

/** Dependencies by kind: GVKs into `required`, packages returned as olm.package.required, the rest into `other`. */
function sortDependencies(dependencies: RegistryV1Bundle['dependencies'], required: Map<string, Gvk>, other: Property[]): Property[] {
  const pkgRequired: Property[] = [];
  for (const dep of dependencies) {
    if (dep.type === PROP_GVK && isRecord(dep.value)) addGvk(required, gvkOf(dep.value));
    else if (dep.type === PROP_PACKAGE && isRecord(dep.value)) {
      pkgRequired.push({
        type: PROP_PACKAGE_REQUIRED,
        value: { packageName: strOf(dep.value.packageName), versionRange: strOf(dep.value.version) },
      });
    } else other.push({ type: dep.type, value: dep.value });
  }
  return pkgRequired;
}

/**
 * What a catalog keeps of the bundle's content: with an image, the CSV's metadata (the bundle is
 * pulled to install it); without one, every manifest, as opm leaves an image-less bundle.
 */
function contentProperties(bundle: RegistryV1Bundle, image: string): Property[] {
  if (image !== '') return [{ type: PROP_CSV_METADATA, value: csvMetadata(bundle) }];
  return bundle.objects.map((o) => ({ type: PROP_BUNDLE_OBJECT, value: { data: Buffer.from(goJson(o.object)).toString('base64') } }));
}

/**
 * Properties de-duplicated and sorted by type, then by value's JSON text, as opm sorts them.
 * Each value's JSON text is made once, for both (the sort made it twice per comparison).
 */
function dedupeAndSort(props: readonly Property[]): Property[] {
  const seen = new Set<string>();
  const keyed: { type: string; json: string | undefined; value: unknown }[] = [];
  for (const p of props) {
    const json = JSON.stringify(p.value) as string | undefined;
    const k = `${p.type}\u0000${json ?? 'undefined'}`;
    if (seen.has(k)) continue;
    seen.add(k);
    keyed.push({ type: p.type, json, value: p.value });
  }
  keyed.sort((a, b) => {
    if (a.type !== b.type) return a.type < b.type ? -1 : 1;
    const av = a.json;
    const bv = b.json;
    if (av === undefined || bv === undefined) return 0;
    return av < bv ? -1 : av > bv ? 1 : 0;
  });
  return keyed.map((p) => ({ type: p.type, value: p.value }));
}

/** The bundle's upgrade edges, for its `olm.channel` entries. */
export function channelEntryOf(bundle: RegistryV1Bundle): ChannelEntry {
  const e: ChannelEntry = { name: bundle.name };
  if (bundle.csv.replaces !== undefined) e.replaces = bundle.csv.replaces;
  if (bundle.csv.skips.length > 0) e.skips = [...bundle.csv.skips];
  if (bundle.csv.skipRange !== undefined) e.skipRange = bundle.csv.skipRange;
  return e;
}

/** Provided APIs as opm counts them: every served version of every bundled CRD, plus owned API services. */
export function providedApis(bundle: RegistryV1Bundle): Gvk[] {
  const out: Gvk[] = [];
  for (const crd of bundle.crds) {
    const spec = isRecord(crd.object.spec) ? crd.object.spec : {};
    const group = strOf(spec.group);
    const kind = isRecord(spec.names) ? strOf(spec.names.kind) : '';
    const versions = new Set<string>();
    if (Array.isArray(spec.versions)) {
      for (const v of spec.versions) if (isRecord(v) && typeof v.name === 'string') versions.add(v.name);
    }
    // v1beta1 CRDs may name a single version instead of (or as well as) a list; v1 has no such
    // field (the API server and opm ignore it), so a v1 CRD with only spec.version provides nothing.
    if (crd.apiVersion !== 'apiextensions.k8s.io/v1' && typeof spec.version === 'string' && spec.version !== '') versions.add(spec.version);
    for (const version of versions) out.push({ group, kind, version });
  }
  for (const api of bundle.csv.ownedAPIServices) out.push({ group: api.group, kind: api.kind, version: api.version });
  return out;
}

function requiredApis(bundle: RegistryV1Bundle): Gvk[] {
  const out: Gvk[] = [];
  for (const crd of bundle.csv.requiredCRDs) {
    const dot = crd.name.indexOf('.');
    // opm refuses a required CRD name without "plural.group"; validation reports it, here we skip it.
    if (dot < 0) continue;
    out.push({ group: crd.name.slice(dot + 1), kind: crd.kind, version: crd.version });
  }
  for (const api of bundle.csv.requiredAPIServices) out.push({ group: api.group, kind: api.kind, version: api.version });
  return out;
}

/** `olm.properties` on the CSV; a value that is not a JSON list of properties is ignored, as opm does (with a warning). */
export function csvAnnotationProperties(bundle: RegistryV1Bundle): BundleProperty[] {
  const text = bundle.csv.annotations[CSV_PROPERTIES_ANNOTATION];
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: BundleProperty[] = [];
  for (const p of parsed) if (isRecord(p) && typeof p.type === 'string') out.push({ type: p.type, value: p.value });
  return out;
}

/** The fields of `olm.csv.metadata`, in the order opm writes them (its struct's order). */
const CSV_METADATA_FIELDS = ['annotations', 'apiServiceDefinitions', 'crdDescriptions', 'description', 'displayName', 'installModes', 'keywords', 'labels', 'links', 'maintainers', 'maturity', 'minKubeVersion', 'nativeAPIs', 'provider'] as const;

/** The CSV's descriptive fields, each left out when empty (Go's omitempty). */
function csvMetadata(bundle: RegistryV1Bundle): Record<string, unknown> {
  const spec = isRecord(bundle.csv.raw.spec) ? bundle.csv.raw.spec : {};
  // Most come from spec under the same name; these four do not.
  const from: Record<string, unknown> = { ...spec, annotations: bundle.csv.annotations, labels: bundle.csv.labels, apiServiceDefinitions: spec.apiservicedefinitions, crdDescriptions: spec.customresourcedefinitions };
  const out: Record<string, unknown> = {};
  for (const key of CSV_METADATA_FIELDS) {
    const v = from[key];
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (isRecord(v) && Object.keys(v).length === 0) continue;
    out[key] = v;
  }
  return out;
}

/** `spec.relatedImages`, then the bundle image, then every operator container image (sorted). */
function relatedImages(bundle: RegistryV1Bundle, image: string): RelatedImage[] {
  const out: RelatedImage[] = bundle.csv.relatedImages.filter((r) => r.image !== '').map((r) => ({ name: r.name, image: r.image }));
  const seen = new Set(out.map((r) => r.image));
  if (image !== '' && !seen.has(image)) {
    out.push({ name: '', image });
    seen.add(image);
  }
  const opImages = new Set<string>();
  for (const dep of bundle.csv.deployments) {
    const template = dep.spec.template;
    const podSpec = isRecord(template) && isRecord(template.spec) ? template.spec : {};
    for (const key of ['initContainers', 'containers']) {
      const list = podSpec[key];
      if (!Array.isArray(list)) continue;
      for (const c of list) if (isRecord(c) && typeof c.image === 'string' && c.image !== '') opImages.add(c.image);
    }
  }
  for (const img of [...opImages].sort()) {
    if (!seen.has(img)) out.push({ name: '', image: img });
    seen.add(img);
  }
  return out;
}

function gvkOf(v: Record<string, unknown>): Gvk {
  return { group: strOf(v.group), kind: strOf(v.kind), version: strOf(v.version) };
}

function strOf(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function dedupe<T extends { type: string; value: unknown }>(props: T[]): T[] {
  const seen = new Set<string>();
  return props.filter((p) => {
    const k = `${p.type}\u0000${JSON.stringify(p.value)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
