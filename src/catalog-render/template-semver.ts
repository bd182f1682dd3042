/**
 * opm's `olm.semver` template: Candidate/Fast/Stable bundle lists become channels named by
 * major (`stable-v1`) and/or minor (`stable-v1.2`) version. Within a Y-stream the newest bundle
 * skips the older ones; across Y-streams the newest of one minor is replaced by the next. The
 * default channel is the "most stable, newest" one, preferring `defaultChannelTypePreference`.
 * Follows operator-registry's alpha/template/semver exactly, including its edge quirks.
 */
import type semver from 'semver';
import { InputError } from '../util/errors.js';
import {
  PROP_BUNDLE_OBJECT,
  PROP_CSV_METADATA,
  PROP_PACKAGE,
  SCHEMA_CHANNEL,
  SCHEMA_PACKAGE,
  decodePackageProperty,
  emptyDeclarativeConfig,
  type Bundle,
  type Channel,
  type DeclarativeConfig,
  type Icon,
  type Package,
} from '../declcfg/index.js';
import { isRecord } from '../util/object.js';
import { parseStrictSemver } from '../catalog/model.js';
import { parseTemplateDocument, type ImageBundleRenderer } from './template-basic.js';

export const SCHEMA_TEMPLATE_SEMVER = 'olm.semver';

export type Archetype = 'candidate' | 'fast' | 'stable';
type StreamType = '' | 'minor' | 'major';

export const ARCHETYPES: readonly Archetype[] = ['candidate', 'fast', 'stable'];
const CHANNEL_PRIORITY: Record<Archetype, number> = { candidate: 0, fast: 1, stable: 2 };
const STREAM_PRIORITY: Record<StreamType, number> = { minor: 2, major: 1, '': 0 };

export interface SemverTemplate {
  generateMajorChannels: boolean;
  generateMinorChannels: boolean;
  defaultChannelTypePreference: 'minor' | 'major';
  bundles: Record<Archetype, string[]>;
}

const TOP_KEYS = new Set(['schema', 'generateMajorChannels', 'generateMinorChannels', 'defaultChannelTypePreference', 'candidate', 'fast', 'stable']);

/** Reads and checks the template strictly (unknown fields are errors, as opm's UnmarshalStrict). */
export function parseSemverTemplate(text: string, file: string): SemverTemplate {
  const doc = parseTemplateDocument(text, file);
  const fail = (field: string, msg: string): never => {
    throw new InputError('TEMPLATE_INVALID', msg, { file, field });
  };
  if (doc.schema !== SCHEMA_TEMPLATE_SEMVER) fail('schema', `input file has unknown schema, should be "${SCHEMA_TEMPLATE_SEMVER}"`);
  for (const k of Object.keys(doc)) if (!TOP_KEYS.has(k)) fail(k, 'unknown field');
  const bool = (k: string): boolean => {
    const v = doc[k];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') fail(k, `expected true or false, got ${JSON.stringify(v)}`);
    return v === true;
  };
  const generateMajorChannels = bool('generateMajorChannels');
  let generateMinorChannels = bool('generateMinorChannels');
  if (!generateMajorChannels && !generateMinorChannels) generateMinorChannels = true;
  const defaultChannelTypePreference = channelTypePreference(doc.defaultChannelTypePreference ?? '', generateMajorChannels, generateMinorChannels, fail);
  const bundles: Record<Archetype, string[]> = { candidate: [], fast: [], stable: [] };
  for (const a of ARCHETYPES) bundles[a] = archetypeImages(doc[a], a, fail);
  return { generateMajorChannels, generateMinorChannels, defaultChannelTypePreference, bundles };
}

type Fail = (field: string, msg: string) => never;

/** The default channel's kind: as asked (when those channels are generated), else minor when minor channels are. */
function channelTypePreference(pref: unknown, major: boolean, minor: boolean, fail: Fail): 'minor' | 'major' {
  if (pref === 'minor') {
    if (!minor) fail('defaultChannelTypePreference', "set to 'minor' doesn't make sense if not generating minor-version channels");
    return 'minor';
  }
  if (pref === 'major') {
    if (!major) fail('defaultChannelTypePreference', "set to 'major' doesn't make sense if not generating major-version channels");
    return 'major';
  }
  if (pref !== '') fail('defaultChannelTypePreference', `unknown value ${JSON.stringify(pref)}; valid values are 'major' or 'minor'`);
  return minor ? 'minor' : 'major';
}

/** The bundle images of one archetype's section (`{bundles: [{image}]}`), none when it is absent. */
function archetypeImages(section: unknown, a: Archetype, fail: Fail): string[] {
  if (section === undefined || section === null) return [];
  if (!isRecord(section)) fail(a, 'expected a map with "bundles"');
  for (const k of Object.keys(section)) if (k !== 'bundles') fail(`${a}.${k}`, 'unknown field');
  const list = section.bundles ?? [];
  if (!Array.isArray(list)) fail(`${a}.bundles`, 'expected a list');
  return (list as unknown[]).map((b, i) => {
    if (!isRecord(b) || typeof b.image !== 'string') fail(`${a}.bundles[${i}].image`, 'expected a string');
    for (const k of Object.keys(b)) if (k !== 'image') fail(`${a}.bundles[${i}].${k}`, 'unknown field');
    return b.image;
  });
}

interface EntryTuple {
  arch: Archetype;
  kind: StreamType;
  parent: string;
  name: string;
  version: semver.SemVer;
  index: number;
}

interface Highwater {
  archetype: Archetype;
  kind: StreamType;
  version: semver.SemVer;
  name: string;
}

function hwGreater(h: Highwater, other: Highwater, pref: StreamType): boolean {
  if (CHANNEL_PRIORITY[h.archetype] !== CHANNEL_PRIORITY[other.archetype]) return CHANNEL_PRIORITY[h.archetype] > CHANNEL_PRIORITY[other.archetype];
  if (h.version.compare(other.version) !== 0) return h.version.compare(other.version) > 0;
  if (h.kind !== other.kind) {
    if (h.kind === pref) return true;
    if (other.kind === pref) return false;
    return STREAM_PRIORITY[h.kind] > STREAM_PRIORITY[other.kind];
  }
  return false;
}

const zero = (): semver.SemVer => parseStrictSemver('0.0.0') as semver.SemVer;

/** Links the unlinked channels' entries: replaces across Y-streams, skips within, as opm. */
function linkChannels(channels: Map<string, Channel>, entries: EntryTuple[]): void {
  entries.sort((a, b) => {
    if (a.arch !== b.arch) return CHANNEL_PRIORITY[a.arch] - CHANNEL_PRIORITY[b.arch];
    if (a.kind !== b.kind) return STREAM_PRIORITY[a.kind] - STREAM_PRIORITY[b.kind];
    return a.version.compare(b.version);
  });
  const entryAt = (t: EntryTuple): { name: string; replaces?: string; skips?: string[] } | undefined => channels.get(t.parent)?.entries[t.index];
  const writeEdges = (t: EntryTuple, prevZMax: string, curSkips: Set<string>): void => {
    const e = entryAt(t);
    if (e === undefined) return;
    if (prevZMax !== '') e.replaces = prevZMax;
    else delete e.replaces;
    const skips = [...curSkips].filter((s) => s !== prevZMax).sort();
    if (skips.length > 0) e.skips = skips;
  };
  let prevZMax = '';
  let curSkips = new Set<string>();
  for (let i = 1; i < entries.length; i++) {
    const prev = entries[i - 1];
    const cur = entries[i];
    if (prev === undefined || cur === undefined) continue;
    const archChange = cur.arch !== prev.arch;
    const kindChange = cur.kind !== prev.kind;
    const xChange = cur.version.major !== prev.version.major;
    const yChange = cur.version.minor !== prev.version.minor || xChange;
    if (archChange || kindChange || xChange || yChange) writeEdges(prev, prevZMax, curSkips);
    if (archChange || kindChange || xChange) {
      curSkips = new Set();
      prevZMax = '';
    } else {
      if (yChange) prevZMax = prev.name;
      curSkips.add(prev.name);
    }
  }
  const last = entries.at(-1);
  const penultimate = entries.at(-2);
  if (last !== undefined && penultimate !== undefined) {
    const change = penultimate.arch !== last.arch || penultimate.kind !== last.kind || penultimate.version.major !== last.version.major;
    if (!change) writeEdges(last, prevZMax, curSkips);
  }
}

function csvMetadata(b: Bundle): { description: string | undefined; icon: Icon | undefined } {
  for (const p of b.properties) {
    let csv: unknown;
    if (p.type === PROP_CSV_METADATA) csv = { spec: p.value };
    else if (p.type === PROP_BUNDLE_OBJECT && isRecord(p.value) && typeof p.value.data === 'string') {
      try {
        const obj: unknown = JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8'));
        if (isRecord(obj) && obj.kind === 'ClusterServiceVersion') csv = obj;
      } catch {
        continue;
      }
    }
    if (!isRecord(csv) || !isRecord(csv.spec)) continue;
    const spec = csv.spec;
    const icons = Array.isArray(spec.icon) ? spec.icon : [];
    const first: unknown = icons[0];
    const icon = isRecord(first) && typeof first.base64data === 'string' && typeof first.mediatype === 'string' ? { base64data: first.base64data, mediatype: first.mediatype } : undefined;
    return { description: typeof spec.description === 'string' ? spec.description : undefined, icon };
  }
  return { description: undefined, icon: undefined };
}

/** Renders each distinct image once; each must give exactly one bundle. */
async function renderBundles(t: SemverTemplate, file: string, renderImage: ImageBundleRenderer): Promise<Map<string, Bundle>> {
  const byImage = new Map<string, Bundle>();
  for (const a of ARCHETYPES) {
    for (const image of t.bundles[a]) {
      if (byImage.has(image)) continue;
      const rendered = await renderImage(image);
      const only = rendered[0];
      if (rendered.length !== 1 || only === undefined) throw new InputError('TEMPLATE_BUNDLE', `bundle reference "${image}" resulted in ${rendered.length} bundles, expected 1`, { file });
      byImage.set(image, only);
    }
  }
  if (byImage.size === 0) throw new InputError('TEMPLATE_EMPTY', 'no bundles specified or no bundles could be rendered', { file });
  return byImage;
}

/** Archetype → bundle name → version; also checks one package and orderable versions. */
function collectVersions(t: SemverTemplate, file: string, byImage: Map<string, Bundle>): { pkg: string; versions: Map<Archetype, Map<string, semver.SemVer>> } {
  let pkg = '';
  const versions = new Map<Archetype, Map<string, semver.SemVer>>();
  const fail = (msg: string, field?: string): never => {
    throw new InputError('TEMPLATE_BUNDLE', msg, field === undefined ? { file } : { file, field });
  };
  for (const a of ARCHETYPES) {
    const m = new Map<string, semver.SemVer>();
    for (const image of t.bundles[a]) {
      const b = byImage.get(image);
      if (b === undefined) continue;
      const props = b.properties.filter((p) => p.type === PROP_PACKAGE);
      const pp = props.length === 1 ? decodePackageProperty(props[0]?.value) : undefined;
      if (pp === undefined) return fail(`bundle "${b.name}" must have exactly 1 valid "${PROP_PACKAGE}" property`);
      const v = parseStrictSemver(pp.version);
      if (v === undefined) return fail(`bundle "${b.name}" has invalid version "${pp.version}"`);
      if (pkg === '') pkg = pp.packageName;
      else if (pp.packageName !== pkg) fail(`bundle "${b.name}" belongs to package "${pp.packageName}", not "${pkg}"`);
      if (m.has(b.name)) fail(`duplicate bundle name "${b.name}" in ${a}`, `${a}.bundles`);
      m.set(b.name, v);
    }
    // Versions that differ only by build metadata cannot be ordered.
    const seen = new Map<string, string>();
    for (const [name, v] of m) {
      const other = seen.get(v.version);
      if (other !== undefined) fail(`bundle versions of "${other}" and "${name}" differ only by build metadata and cannot be ordered`, `${a}.bundles`);
      seen.set(v.version, name);
    }
    versions.set(a, m);
  }
  return { pkg, versions };
}

/** Unlinked channels per archetype and stream, plus the "high-water" default channel. */
function generateChannels(t: SemverTemplate, pkg: string, versions: Map<Archetype, Map<string, semver.SemVer>>): { channels: Map<string, Channel>; defaultChannel: string } {
  const channels = new Map<string, Channel>();
  const tuples: EntryTuple[] = [];
  let hw: Highwater = { archetype: 'candidate', kind: '', version: zero(), name: '' };
  for (const a of ARCHETYPES) {
    const m = versions.get(a) ?? new Map<string, semver.SemVer>();
    const sorted = [...m.entries()].sort((x, y) => x[1].compare(y[1]));
    for (const [name, v] of sorted) {
      const keys: { kind: StreamType; channel: string }[] = [];
      if (t.generateMajorChannels) keys.push({ kind: 'major', channel: `${a}-v${v.major}` });
      if (t.generateMinorChannels) keys.push({ kind: 'minor', channel: `${a}-v${v.major}.${v.minor}` });
      for (const k of keys) {
        let ch = channels.get(k.channel);
        if (ch === undefined) {
          ch = { schema: SCHEMA_CHANNEL, name: k.channel, package: pkg, entries: [] };
          channels.set(k.channel, ch);
          const candidate: Highwater = { archetype: a, kind: k.kind, version: v, name: k.channel };
          if (hwGreater(candidate, hw, t.defaultChannelTypePreference)) hw = candidate;
        }
        ch.entries.push({ name });
        tuples.push({ arch: a, kind: k.kind, parent: k.channel, name, version: v, index: ch.entries.length - 1 });
      }
    }
  }
  linkChannels(channels, tuples);
  return { channels, defaultChannel: hw.name };
}

export async function expandSemverTemplate(text: string, file: string, renderImage: ImageBundleRenderer): Promise<DeclarativeConfig> {
  const t = parseSemverTemplate(text, file);
  const byImage = await renderBundles(t, file, renderImage);
  const out = emptyDeclarativeConfig();
  out.bundles = [...byImage.values()];
  const { pkg, versions } = collectVersions(t, file, byImage);
  const { channels, defaultChannel } = generateChannels(t, pkg, versions);
  out.channels = [...channels.values()].sort((x, y) => (x.name < y.name ? -1 : 1));
  const p: Package = { schema: SCHEMA_PACKAGE, name: pkg, defaultChannel };
  // Icon and description come from the default channel's head (its newest entry).
  const headName = channels.get(defaultChannel)?.entries.at(-1)?.name;
  const head = out.bundles.find((b) => b.name === headName);
  if (head !== undefined) {
    const meta = csvMetadata(head);
    if (meta.description !== undefined && meta.description !== '') p.description = meta.description;
    if (meta.icon !== undefined) p.icon = meta.icon;
  }
  out.packages.push(p);
  return out;
}
