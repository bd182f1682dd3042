/**
 * The linked, validated catalog model: packages own channels and bundles, channel entries point
 * at bundles, and each bundle knows its version (from its `olm.package` property). Built from a
 * `DeclarativeConfig` by one conversion, `toModel`, which reports every problem it meets in a
 * `ValidationResult` tree (package → channel / bundle) and still builds what it can.
 */
import type SemVer from 'semver/classes/semver.js';
import { ValidationResult } from '../util/errors.js';
import {
  PROP_BUNDLE_OBJECT,
  PROP_CSV_METADATA,
  PROP_GVK,
  PROP_GVK_REQUIRED,
  PROP_PACKAGE,
  PROP_PACKAGE_REQUIRED,
  SCHEMA_BUNDLE,
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  decodePackageRequiredProperty,
  type DeclarativeConfig,
  type Icon,
  type Bundle,
  type Property,
  type RelatedImage,
} from '../declcfg/index.js';
import { olmRangeProblem, parseStrictSemver } from '../util/semver.js';
import { isValidImageReference } from '../oci/reference.js';
import { base64Problem, goFields } from './decode.js';
import { isRecord } from '../util/object.js';
import { checkYamlAliases, fastYamlDocuments, YamlAliasError, yamlPackage } from '../util/yaml.js';

export interface ModelPackage {
  name: string;
  description: string;
  icon: Icon | undefined;
  /** The name the package record asked for, whether or not such a channel exists. */
  defaultChannelName: string;
  defaultChannel: ModelChannel | undefined;
  channels: Map<string, ModelChannel>;
  bundles: Map<string, ModelBundle>;
  deprecation: string | undefined;
  properties: Property[];
}

export interface ModelChannelEntry {
  name: string;
  replaces: string | undefined;
  skips: string[];
  skipRange: string | undefined;
  /** Undefined when no `olm.bundle` of that name exists in the package. */
  bundle: ModelBundle | undefined;
}

export interface ModelChannel {
  package: ModelPackage;
  name: string;
  entries: Map<string, ModelChannelEntry>;
  deprecation: string | undefined;
  properties: Property[];
}

export interface ModelBundle {
  package: ModelPackage;
  name: string;
  image: string;
  /** Raw version string from `olm.package`; `version` is set only when it is valid semver. */
  versionString: string;
  version: SemVer | undefined;
  /**
   * `olm.package`'s release (operator-registry main: dot-separated semver pre-release
   * identifiers, a rebuild of the same version), "" when it has none or it is invalid.
   */
  release: string;
  properties: Property[];
  relatedImages: RelatedImage[];
  channels: ModelChannel[];
  deprecation: string | undefined;
}

export interface Model {
  packages: Map<string, ModelPackage>;
}

export interface ModelResult {
  model: Model;
  result: ValidationResult;
}

export { parseStrictSemver };

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function dns1123LabelProblem(name: string): string | undefined {
  if (name.length > 63) return 'must be no more than 63 characters';
  if (!DNS1123_LABEL.test(name)) {
    return "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export { isValidImageReference };

function newPackage(name: string): ModelPackage {
  return {
    name,
    description: '',
    icon: undefined,
    defaultChannelName: '',
    defaultChannel: undefined,
    channels: new Map(),
    bundles: new Map(),
    deprecation: undefined,
    properties: [],
  };
}

/** Children of the result tree by subject, so each package/channel/bundle has one node. */
class Tree {
  readonly root: ValidationResult;
  private readonly nodes = new Map<string, ValidationResult>();
  constructor(root: ValidationResult) {
    this.root = root;
  }
  pkg(name: string): ValidationResult {
    return this.node(`package "${name}"`, this.root);
  }
  channel(pkg: string, name: string): ValidationResult {
    return this.node(`channel "${name}"`, this.pkg(pkg), `package "${pkg}"/`);
  }
  bundle(pkg: string, name: string): ValidationResult {
    return this.node(`bundle "${name}"`, this.pkg(pkg), `package "${pkg}"/`);
  }
  private node(subject: string, parent: ValidationResult, prefix = ''): ValidationResult {
    const key = prefix + subject;
    let n = this.nodes.get(key);
    if (n === undefined) {
      n = parent.child(subject);
      this.nodes.set(key, n);
    }
    return n;
  }
}

/**
 * The Go type a known property value is decoded into (operator-registry alpha/property): opm
 * refuses a bundle whose property value does not decode. `null` decodes to the zero value of any
 * type; unknown object keys are ignored; keys match case-insensitively.
 */
type Shape = 'string' | 'int' | 'bool' | 'base64' | 'any' | 'string-map' | { list: Shape } | { fields: Record<string, Shape> };

const S = 'string' as const;
const GVK_SHAPE: Shape = { fields: { group: S, kind: S, version: S } };
const LINK: Shape = { fields: { name: S, url: S } };
const PROPERTY_SHAPES: Record<string, Shape> = {
  [PROP_PACKAGE]: { fields: { packageName: S, version: S, release: S } },
  [PROP_PACKAGE_REQUIRED]: { fields: { packageName: S, versionRange: S } },
  [PROP_GVK]: GVK_SHAPE,
  [PROP_GVK_REQUIRED]: GVK_SHAPE,
  [PROP_BUNDLE_OBJECT]: { fields: { data: 'base64' } },
  'olm.channel': { fields: { channelName: S, priority: 'int' } },
  [PROP_CSV_METADATA]: {
    fields: {
      annotations: 'string-map',
      apiServiceDefinitions: { fields: { owned: { list: { fields: {} } }, required: { list: { fields: {} } } } },
      crdDescriptions: { fields: { owned: { list: { fields: {} } }, required: { list: { fields: {} } } } },
      description: S,
      displayName: S,
      installModes: { list: { fields: { type: S, supported: 'bool' } } },
      keywords: { list: S },
      labels: 'string-map',
      links: { list: LINK },
      maintainers: { list: { fields: { name: S, email: S } } },
      maturity: S,
      minKubeVersion: S,
      nativeAPIs: { list: GVK_SHAPE },
      provider: LINK,
    },
  },
};

/**
 * The shape of a property type opm decodes, or undefined for any other type (opm keeps its value
 * as it is). Own keys only: a type named like an Object.prototype member (`__proto__`,
 * `constructor`, `toString`) is a type opm does not know, not the prototype's member.
 */
function shapeOf(type: string): Shape | undefined {
  return Object.hasOwn(PROPERTY_SHAPES, type) ? PROPERTY_SHAPES[type] : undefined;
}

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** Where `v` does not decode into `shape`, in Go's terms ("cannot unmarshal number into … of type string"). */
function shapeProblem(v: unknown, shape: Shape, at: string): string | undefined {
  if (v === null || v === undefined || shape === 'any') return undefined;
  const wrong = (goType: string): string => `cannot unmarshal ${jsonType(v)} into ${at === '' ? 'the value' : `field ${at}`} of type ${goType}`;
  switch (shape) {
    case 'string':
      return typeof v === 'string' ? undefined : wrong('string');
    case 'bool':
      return typeof v === 'boolean' ? undefined : wrong('bool');
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) ? undefined : wrong('int');
    case 'base64':
      return typeof v === 'string' ? base64Problem(v) : wrong('[]byte (base64)');
    case 'string-map':
      return isRecord(v) ? firstShapeProblem(Object.entries(v).map(([k, x]) => [x, 'string', `${at}.${k}`])) : wrong('map[string]string');
  }
  if ('list' in shape) {
    const item = shape.list;
    return Array.isArray(v) ? firstShapeProblem(v.map((x, i) => [x, item, `${at}[${i}]`])) : wrong('list');
  }
  if (!isRecord(v)) return wrong('object');
  const f = goFields(v, Object.keys(shape.fields));
  return firstShapeProblem(Object.entries(shape.fields).map(([k, sub]) => [f[k], sub, at === '' ? k : `${at}.${k}`]));
}

/** The first problem among values checked against their shapes, each at its own path. */
function firstShapeProblem(checks: readonly (readonly [unknown, Shape, string])[]): string | undefined {
  for (const [v, shape, at] of checks) {
    const bad = shapeProblem(v, shape, at);
    if (bad !== undefined) return bad;
  }
  return undefined;
}

/** The YAML (or JSON) object an `olm.bundle.object` carries must parse, as opm converts it at load. */
function bundleObjectProblem(value: unknown): string | undefined {
  const data = isRecord(value) ? goFields(value, ['data']).data : undefined;
  if (typeof data !== 'string' || data === '') return undefined;
  const text = Buffer.from(data.replace(/[\r\n]/g, ''), 'base64').toString('utf8');
  // Most objects are JSON; JSON.parse and the fast YAML reader accept only what the yaml package accepts.
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    // not JSON: read it as YAML
  }
  if (fastYamlDocuments(text)?.length === 1) return undefined;
  const doc = yamlPackage().parseDocument(text, { uniqueKeys: false });
  const err = doc.errors[0];
  if (err !== undefined) return `the object is not YAML or JSON: ${err.message.split('\n')[0] ?? err.code}`;
  // opm reads the object with Go's YAML, which refuses an alias bomb.
  try {
    checkYamlAliases(doc, 'the object');
    return undefined;
  } catch (e) {
    if (e instanceof YamlAliasError) return `the object is not usable YAML: ${e.reason}`;
    throw e;
  }
}

/**
 * What is wrong with a property's value, as opm decodes it: where (`value`, or `value.data` for a
 * bundle object that does not parse) and the message after `parse property[i] of type "T"`.
 */
interface PropertyVerdict {
  at: 'value' | 'value.data';
  text: string;
}

function propertyVerdict(p: Property): PropertyVerdict | undefined {
  const shape = shapeOf(p.type);
  const bad = shape === undefined ? undefined : shapeProblem(p.value, shape, '');
  const as = p.type === PROP_BUNDLE_OBJECT ? ' as bundle object' : '';
  if (bad !== undefined) return { at: 'value', text: `${as}: ${bad}` };
  if (p.type !== PROP_BUNDLE_OBJECT) return undefined;
  const objBad = bundleObjectProblem(p.value);
  return objBad === undefined ? undefined : { at: 'value.data', text: `${as}: ${objBad}` };
}

/**
 * Properties that validation reads once, to check them, and never again: bundle objects and CSV
 * metadata (most of an FBC's bytes).
 */
const CHECK_ONLY_PROPERTIES: ReadonlySet<string> = new Set([PROP_BUNDLE_OBJECT, PROP_CSV_METADATA]);

/** The stand-in value of a property checked as it was read: its verdict, not its value. */
const CHECKED_WHEN_READ = Symbol('property checked when read');
interface CheckedProperty {
  [CHECKED_WHEN_READ]: PropertyVerdict | undefined;
}

function isCheckedProperty(v: unknown): v is CheckedProperty {
  return typeof v === 'object' && v !== null && CHECKED_WHEN_READ in v;
}

/**
 * The bundle as validation needs to hold it: what `toModel` checks of a bundle alone and reads for
 * nothing else is checked now and dropped. Its bundle objects and CSV metadata are held as their
 * verdicts; of its related images only those validation reports (no image, a pull spec nothing can
 * pull) are held, each at its index (a sparse list: `toModel` names the index). `toModel` reports
 * on the result exactly what it would report on `b`; the result is for validation only.
 */
export function bundleForValidation(b: Bundle): Bundle {
  const properties = b.properties.map((p): Property => {
    if (!CHECK_ONLY_PROPERTIES.has(p.type) || p.value === undefined) return p;
    const checked: CheckedProperty = { [CHECKED_WHEN_READ]: propertyVerdict(p) };
    return { type: p.type, value: checked };
  });
  const { relatedImages, ...rest } = b;
  const reported = relatedImagesReported(relatedImages ?? []);
  return reported === undefined ? { ...rest, properties } : { ...rest, properties, relatedImages: reported };
}

/** What validation reports of a related image, if anything: a warning when it has no image, an error when nothing can pull it. */
function relatedImageProblem(r: RelatedImage): 'no-image' | 'invalid' | undefined {
  if (r.image === '') return 'no-image';
  return isValidImageReference(r.image) ? undefined : 'invalid';
}

/** The related images validation reports on, at their indices (holes between); undefined when none. */
function relatedImagesReported(all: readonly RelatedImage[]): RelatedImage[] | undefined {
  let reported: RelatedImage[] | undefined;
  all.forEach((r, i) => {
    if (relatedImageProblem(r) === undefined) return;
    reported ??= [];
    reported[i] = r;
  });
  return reported;
}

/**
 * Checks every bundle property decodes as opm decodes it (alpha/property Parse and the bundle
 * object conversion); opm refuses a bundle whose properties do not. Version ranges of
 * `olm.package.required` that OLM cannot parse (blang/semver) are warnings: opm accepts them, the
 * dependency simply never matches.
 */
function checkProperties(props: readonly Property[], node: ValidationResult): void {
  props.forEach((p, i) => {
    const field = `properties[${i}]`;
    if (p.value === undefined) {
      node.error('bundle.property', `parse property[${i}] of type "${p.type}": value must be set (unexpected end of JSON input)`, { field: `${field}.value` });
      return;
    }
    const verdict = isCheckedProperty(p.value) ? p.value[CHECKED_WHEN_READ] : propertyVerdict(p);
    if (verdict !== undefined) {
      node.error('bundle.property', `parse property[${i}] of type "${p.type}"${verdict.text}`, { field: `${field}.${verdict.at}` });
      return;
    }
    if (p.type === PROP_PACKAGE_REQUIRED) {
      const d = decodePackageRequiredProperty(p.value);
      const range = d?.versionRange ?? '';
      const rangeBad = olmRangeProblem(range);
      if (rangeBad !== undefined) {
        node.warning('bundle.version-range', `olm.package.required versionRange "${range}" is not a range OLM can parse (blang/semver): ${rangeBad}`, { field: `${field}.value.versionRange` });
      }
    }
  });
}

/** `olm.package`'s packageName, version and release, absent ones as "" (a value that decodes, see checkProperties). */
function packageProperty(value: unknown): { packageName: string; version: string; release: string } {
  const f = isRecord(value) ? goFields(value, ['packageName', 'version', 'release']) : {};
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  return { packageName: str(f.packageName), version: str(f.version), release: str(f.release) };
}

/** operator-registry main's model.NewRelease: its length limit is the CSV's `spec.release`'s. */
const RELEASE_MAX_LENGTH = 20;
const PRERELEASE_IDENTIFIER = /^(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)$/;

/** Why a release is not one (model.NewRelease), or undefined. */
export function releaseProblem(release: string): string | undefined {
  if (release.length > RELEASE_MAX_LENGTH) return `exceeds maximum length of ${RELEASE_MAX_LENGTH} characters`;
  const bad = release.split('.').findIndex((seg) => !PRERELEASE_IDENTIFIER.test(seg));
  return bad < 0 ? undefined : `segment ${bad} "${release.split('.')[bad] ?? ''}" is not a semver pre-release identifier (letters, digits and "-"; no leading zeros)`;
}

/**
 * The release rules of operator-registry main (alpha/model Bundle.Validate): a bundle with a
 * release is named `<package>-v<version>-<release>`, and its version carries no build metadata.
 */
function checkRelease(b: Bundle, version: SemVer | undefined, release: string, node: ValidationResult): string {
  if (release === '') return '';
  const bad = releaseProblem(release);
  if (bad !== undefined) {
    node.error('bundle.release', `error parsing bundle "${b.name}" release version "${release}": ${bad}`, { field: 'properties' });
    return '';
  }
  if (version === undefined) return release;
  const normalized = `${b.package}-v${version.version}${version.build.length > 0 ? `+${version.build.join('.')}` : ''}-${release}`;
  if (b.name !== normalized) node.error('bundle.normalized-name', `name "${b.name}" does not match normalized name "${normalized}" (a bundle with a release is named <package>-v<version>-<release>)`, { field: 'name' });
  if (version.build.length > 0) node.error('bundle.release', 'cannot use build metadata in version with a release version', { field: 'properties' });
  return release;
}

function addPackages(cfg: DeclarativeConfig, model: Model, tree: Tree): void {
  cfg.packages.forEach((p, i) => {
    if (p.name === '') {
      tree.root.error('package.name', 'package has no name', { field: `packages[${i}].name` });
      return;
    }
    const node = tree.pkg(p.name);
    if (model.packages.has(p.name)) {
      node.error('package.duplicate', `duplicate olm.package "${p.name}"`);
      return;
    }
    const bad = dns1123LabelProblem(p.name);
    if (bad !== undefined) node.error('package.name', `invalid package name "${p.name}": ${bad}`, { field: 'name' });
    const mp = newPackage(p.name);
    mp.description = p.description ?? '';
    mp.icon = p.icon;
    mp.defaultChannelName = p.defaultChannel ?? '';
    mp.properties = p.properties ?? [];
    model.packages.set(p.name, mp);
  });
}

/**
 * Where a channel or bundle record belongs: its package and its node in the tree; undefined, with
 * the reason said, when it names no known package, has no name, or repeats a name in its package.
 */
function placeRecord(schema: 'channel' | 'bundle', rec: { package: string; name: string }, model: Model, tree: Tree): { mp: ModelPackage; node: ValidationResult } | undefined {
  const mp = model.packages.get(rec.package);
  if (mp === undefined) {
    tree.root.error(`${schema}.package`, `olm.${schema} "${rec.name}" refers to unknown package "${rec.package}"`);
    return undefined;
  }
  if (rec.name === '') {
    tree.pkg(rec.package).error(`${schema}.name`, `package contains a ${schema} with no name`);
    return undefined;
  }
  const node = schema === 'channel' ? tree.channel(rec.package, rec.name) : tree.bundle(rec.package, rec.name);
  if ((schema === 'channel' ? mp.channels : mp.bundles).has(rec.name)) {
    node.error(`${schema}.duplicate`, `package "${rec.package}" has duplicate ${schema} "${rec.name}"`);
    return undefined;
  }
  return { mp, node };
}

function addChannels(cfg: DeclarativeConfig, model: Model, tree: Tree): void {
  for (const c of cfg.channels) {
    const placed = placeRecord('channel', c, model, tree);
    if (placed === undefined) continue;
    const { mp, node } = placed;
    const mc: ModelChannel = { package: mp, name: c.name, entries: new Map(), deprecation: undefined, properties: c.properties ?? [] };
    c.entries.forEach((e, i) => {
      if (mc.entries.has(e.name)) {
        node.error('channel.entry-duplicate', `duplicate entry "${e.name}"`, { field: `entries[${i}].name` });
        return;
      }
      (e.skips ?? []).forEach((s, k) => {
        if (s === '') node.error('channel.skips', `entry "${e.name}" has an empty skip`, { field: `entries[${i}].skips[${k}]` });
      });
      // operator-registry main refuses a skipRange blang/semver cannot parse (Bundle.Validate);
      // v1.47.0 accepted it, and OLM then skipped nothing with it.
      const badRange = e.skipRange === undefined || e.skipRange === '' ? undefined : olmRangeProblem(e.skipRange);
      if (badRange !== undefined) {
        node.error('channel.skip-range', `entry "${e.name}": invalid skipRange "${e.skipRange ?? ''}", not a range OLM can parse (blang/semver): ${badRange}`, { field: `entries[${i}].skipRange` });
      }
      mc.entries.set(e.name, { name: e.name, replaces: e.replaces, skips: e.skips ?? [], skipRange: e.skipRange, bundle: undefined });
    });
    mp.channels.set(c.name, mc);
  }
}

function addBundles(cfg: DeclarativeConfig, model: Model, tree: Tree): void {
  for (const b of cfg.bundles) {
    if (b.package === '') {
      tree.root.error('bundle.package', `package name must be set for bundle "${b.name}": olm.bundle has no package`, { field: 'package' });
      continue;
    }
    const placed = placeRecord('bundle', b, model, tree);
    if (placed === undefined) continue;
    const { mp, node } = placed;
    checkProperties(b.properties, node);
    const pkgProps = b.properties.filter((p) => p.type === PROP_PACKAGE);
    let versionString = '';
    let releaseString = '';
    if (pkgProps.length !== 1) {
      node.error('bundle.package-property', `must have exactly 1 "${PROP_PACKAGE}" property, found ${pkgProps.length}`, { field: 'properties' });
    } else if (shapeProblem(pkgProps[0]?.value, PROPERTY_SHAPES[PROP_PACKAGE] ?? 'any', '') === undefined) {
      const pp = packageProperty(pkgProps[0]?.value);
      if (pp.packageName !== b.package) {
        node.error('bundle.package-property', `package "${b.package}" does not match "${PROP_PACKAGE}" property "${pp.packageName}"`, { field: 'properties' });
      }
      versionString = pp.version;
      releaseString = pp.release;
      if (parseStrictSemver(versionString) === undefined) {
        node.error('bundle.version', `error parsing bundle version "${versionString}": not valid semver (MAJOR.MINOR.PATCH, no "v", no leading zeros)`, { field: 'properties' });
      }
    }
    const version = parseStrictSemver(versionString);
    const release = checkRelease(b, version, releaseString, node);
    if (b.image === '' && !b.properties.some((p) => p.type === PROP_BUNDLE_OBJECT)) {
      node.error('bundle.image', 'bundle image must be set (or the bundle must carry olm.bundle.object properties)', { field: 'image' });
    }
    // operator-registry main refuses a pull spec docker's reference parser refuses (v1.47.0 did
    // not check). `configmaps://ns/name:path,…` names a bundle kept in ConfigMaps
    // (src/source/configmaps-ref.ts): Binnacle's own, so accepted.
    if (b.image !== '' && !isValidImageReference(b.image) && !b.image.startsWith('configmaps://')) {
      node.error('bundle.image-pull-spec', `invalid image pull spec "${b.image}": the bundle cannot be unpacked`, { field: 'image' });
    }
    // forEach skips the holes of bundleForValidation's sparse list.
    (b.relatedImages ?? []).forEach((r, i) => {
      const problem = relatedImageProblem(r);
      if (problem === 'no-image') node.warning('bundle.related-image', `related image "${r.name}" has no image`, { field: `relatedImages[${i}].image` });
      else if (problem === 'invalid') node.error('bundle.related-image', `invalid image pull spec "${r.image}": it cannot be mirrored or pulled`, { field: `relatedImages[${i}].image` });
    });
    mp.bundles.set(b.name, {
      package: mp,
      name: b.name,
      image: b.image,
      versionString,
      version,
      release,
      properties: b.properties,
      relatedImages: b.relatedImages ?? [],
      channels: [],
      deprecation: undefined,
    });
  }
}

/** Links channel entries to bundles; reports entries without bundles and bundles in no channel. */
function linkEntries(model: Model, tree: Tree): void {
  for (const mp of model.packages.values()) {
    for (const mc of mp.channels.values()) {
      for (const e of mc.entries.values()) {
        const b = mp.bundles.get(e.name);
        if (b === undefined) {
          tree.channel(mp.name, mc.name).error('channel.entry-bundle', `entry "${e.name}" has no olm.bundle in package "${mp.name}"`);
          continue;
        }
        e.bundle = b;
        b.channels.push(mc);
      }
    }
    for (const b of mp.bundles.values()) {
      if (b.channels.length === 0) tree.bundle(mp.name, b.name).error('bundle.channel', 'bundle is not in any channel entries');
    }
    if (mp.defaultChannelName !== '') mp.defaultChannel = mp.channels.get(mp.defaultChannelName);
  }
}

function addDeprecations(cfg: DeclarativeConfig, model: Model, tree: Tree): void {
  const seen = new Set<string>();
  cfg.deprecations.forEach((d, i) => {
    if (d.package === '') {
      tree.root.error('deprecation.package', `olm.deprecations item ${i} has no package`, { field: 'package' });
      return;
    }
    const mp = model.packages.get(d.package);
    if (mp === undefined) {
      tree.root.error('deprecation.package', `cannot apply deprecations to unknown package "${d.package}"`);
      return;
    }
    const node = tree.pkg(d.package);
    if (seen.has(d.package)) {
      node.error('deprecation.duplicate', `expected at most one olm.deprecations per package, found another for "${d.package}"`);
      return;
    }
    seen.add(d.package);
    const refs = new Set<string>();
    d.entries.forEach((e, j) => {
      const field = `olm.deprecations.entries[${j}].reference`;
      const key = `${e.reference.schema}/${e.reference.name ?? ''}`;
      if (refs.has(key)) {
        node.error('deprecation.duplicate-entry', `duplicate deprecation entry for ${e.reference.schema} "${e.reference.name ?? ''}"`, { field });
        return;
      }
      refs.add(key);
      const name = e.reference.name ?? '';
      const noMessage = (): void => {
        node.error('deprecation.message', `invalid deprecation of ${e.reference.schema} "${name}": message must be set`, { field: `olm.deprecations.entries[${j}].message` });
      };
      if (e.message === '' && (e.reference.schema === SCHEMA_BUNDLE ? mp.bundles.has(name) : e.reference.schema === SCHEMA_CHANNEL ? mp.channels.has(name) : name === '')) noMessage();
      if (e.reference.schema === SCHEMA_BUNDLE) {
        const b = mp.bundles.get(name);
        if (b === undefined) node.error('deprecation.reference', `cannot deprecate bundle "${name}": bundle not found`, { field });
        else b.deprecation = e.message;
      } else if (e.reference.schema === SCHEMA_CHANNEL) {
        const c = mp.channels.get(name);
        if (c === undefined) node.error('deprecation.reference', `cannot deprecate channel "${name}": channel not found`, { field });
        else c.deprecation = e.message;
      } else if (e.reference.schema === SCHEMA_PACKAGE) {
        if (name !== '') node.error('deprecation.reference', `package reference must not have a name (got "${name}")`, { field });
        else mp.deprecation = e.message;
      }
    });
  });
}

/** DeclarativeConfig → linked model, with every conversion problem collected. */
export function toModel(cfg: DeclarativeConfig, subject = 'catalog'): ModelResult {
  const result = new ValidationResult(subject);
  const tree = new Tree(result);
  const model: Model = { packages: new Map() };
  addPackages(cfg, model, tree);
  addChannels(cfg, model, tree);
  addBundles(cfg, model, tree);
  linkEntries(model, tree);
  addDeprecations(cfg, model, tree);
  return { model, result };
}

/** For rules that need the tree node of a model object. */
export function nodeFor(result: ValidationResult, subjectPath: readonly string[]): ValidationResult {
  let node = result;
  for (const s of subjectPath) node = node.children.find((c) => c.subject === s) ?? node.child(s);
  return node;
}
