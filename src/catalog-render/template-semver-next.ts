/**
 * The next bundle of an `olm.semver` template (`binnacle helm release`): which bundle it
 * replaces and the `skipRange` it carries, taken from what the rendered template already holds
 * for its archetype (stable, fast or candidate), and the template with the new bundle's image
 * added, its comments and layout kept.
 *
 * The template draws the catalog's channel edges itself (template-semver.ts); the bundle's own
 * `spec.replaces` and `olm.skipRange` say the same thing for readers of the bundle alone
 * (`opm render` of the image, a basic template, a package-manifest tree): it replaces the newest
 * bundle of its major version, and upgrades from any version of that major before it. The
 * semver template never links across major versions, so a new major starts without an edge.
 */
import type semver from 'semver';
import { isMap, isSeq } from 'yaml';
import { InputError } from '../util/errors.js';
import { yamlPackage } from '../util/yaml.js';
import { PROP_PACKAGE, decodePackageProperty, type DeclarativeConfig } from '../declcfg/index.js';
import { parseStrictSemver } from '../catalog/model.js';
import { parseSemverTemplate, type Archetype, type SemverTemplate } from './template-semver.js';

export interface CatalogBundleVersion {
  name: string;
  version: string;
}

export interface NextBundle {
  /** The bundle's name in the catalog: `<package>.v<version>`. */
  name: string;
  /** The channel the template puts it in (its default channel type): `stable-v1` or `stable-v1.2`. */
  channel: string;
  /** The newest bundle of the archetype today, if any. */
  head?: CatalogBundleVersion;
  /** The bundle it replaces: the newest of its major version. */
  replaces?: string;
  /** The versions it upgrades from directly: every earlier one of its major version. */
  skipRange?: string;
  /** Why the edges are what they are, in a sentence. */
  reason: string;
}

export interface NextBundleRequest {
  template: SemverTemplate;
  /** The template rendered (empty when it has no bundles yet). */
  catalog: DeclarativeConfig;
  archetype: Archetype;
  packageName: string;
  version: string;
  /** The template's file, named by errors. */
  file: string;
}

function versionOf(cfg: DeclarativeConfig, name: string): string | undefined {
  const b = cfg.bundles.find((x) => x.name === name);
  const prop = b?.properties.find((p) => p.type === PROP_PACKAGE);
  return prop === undefined ? undefined : decodePackageProperty(prop.value)?.version;
}

/** Every bundle the template lists under `archetype`, with its version, oldest first. */
export function archetypeBundles(cfg: DeclarativeConfig, archetype: Archetype): { name: string; version: semver.SemVer }[] {
  const names = new Set(cfg.channels.filter((c) => c.name.startsWith(`${archetype}-v`)).flatMap((c) => c.entries.map((e) => e.name)));
  const out: { name: string; version: semver.SemVer }[] = [];
  for (const name of names) {
    const v = parseStrictSemver(versionOf(cfg, name) ?? '');
    if (v !== undefined) out.push({ name, version: v });
  }
  return out.sort((a, b) => a.version.compare(b.version));
}

/** The channel the semver template puts `v` in under `archetype`: its default channel type. */
export function channelFor(t: SemverTemplate, archetype: Archetype, v: semver.SemVer): string {
  return t.defaultChannelTypePreference === 'major' ? `${archetype}-v${v.major}` : `${archetype}-v${v.major}.${v.minor}`;
}

/**
 * The next bundle's edges. Refuses a version that is not semver, one the catalog has already,
 * one not newer than the archetype's head, and a package other than the template's.
 */
export function nextBundle(r: NextBundleRequest): NextBundle {
  const fail = (code: string, message: string, field: string): never => {
    throw new InputError(code, message, { file: r.file, field });
  };
  const v = parseStrictSemver(r.version) ?? fail('RELEASE_VERSION', `the new version ${JSON.stringify(r.version)} is not a semantic version`, 'version');
  const other = r.catalog.packages.find((p) => p.name !== r.packageName);
  if (other !== undefined) fail('RELEASE_PACKAGE', `the template holds package ${other.name}, not ${r.packageName}: release into the template of the same package (or pass --package ${other.name})`, `${r.archetype}.bundles`);
  const name = `${r.packageName}.v${v.version}`;
  for (const b of r.catalog.bundles) {
    const bv = parseStrictSemver(versionOf(r.catalog, b.name) ?? '');
    if (b.name === name || (bv !== undefined && bv.compare(v) === 0)) fail('RELEASE_VERSION_EXISTS', `version ${v.version} is in the catalog already (bundle ${b.name}): a release needs a new chart version`, 'version');
  }
  const existing = archetypeBundles(r.catalog, r.archetype);
  const last = existing.at(-1);
  const head = last === undefined ? undefined : { name: last.name, version: last.version.version };
  if (last !== undefined && last.version.compare(v) >= 0) {
    fail('RELEASE_NOT_NEWER', `version ${v.version} is not newer than the catalog's head of ${r.archetype}, ${last.name} (${last.version.version})`, `${r.archetype}.bundles`);
  }
  const channel = channelFor(r.template, r.archetype, v);
  const sameMajor = existing.filter((b) => b.version.major === v.major);
  const newest = sameMajor.at(-1);
  const oldest = sameMajor[0];
  if (newest === undefined || oldest === undefined) {
    const why = existing.length === 0 ? `the first ${r.archetype} bundle of ${r.packageName}` : `the first ${r.archetype} bundle of major version ${v.major} (the semver template does not link majors)`;
    return { name, channel, ...(head === undefined ? {} : { head }), reason: `${why}: it replaces nothing` };
  }
  const skipRange = `>=${oldest.version.version} <${v.version}`;
  return { name, channel, ...(head === undefined ? {} : { head }), replaces: newest.name, skipRange, reason: `replaces ${newest.name}, the newest ${r.archetype} bundle of major version ${v.major}, and upgrades directly from ${skipRange}` };
}

/**
 * The template's text with `image` added to the bundles of `archetype`; the rest of the file
 * (comments, order, other archetypes) is kept. Refuses an image the template lists already.
 */
export function addBundleImage(text: string, file: string, archetype: Archetype, image: string): string {
  const t = parseSemverTemplate(text, file);
  for (const [a, images] of Object.entries(t.bundles)) {
    if (images.includes(image)) throw new InputError('RELEASE_IMAGE_EXISTS', `the template lists ${image} already (under ${a})`, { file, field: `${a}.bundles` });
  }
  // Parsed again as a document to edit it in place (parseSemverTemplate checked it already).
  const doc = yamlPackage().parseDocument(text);
  const section = doc.get(archetype, true);
  if (!isMap(section)) doc.set(archetype, doc.createNode({ bundles: [{ image }] }));
  else {
    const list = section.get('bundles', true);
    if (isSeq(list)) {
      list.flow = false;
      list.items.push(doc.createNode({ image }));
    } else section.set('bundles', doc.createNode([{ image }]));
  }
  return doc.toString({ lineWidth: 0 });
}
