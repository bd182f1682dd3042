/**
 * Writes a `DeclarativeConfig` back out deterministically, in opm's order: packages by name, and
 * for each its `olm.package`, channels by name, bundles by name, other schemas (stable by
 * schema), deprecations; then records that belong to no package.
 */
import { writeFile } from 'node:fs/promises';
import { toYaml } from '../util/output.js';
import type { Bundle, Channel, DeclarativeConfig, Deprecation, Meta, Package } from '../declcfg/index.js';

/** One record ready to serialize, with the keys the catalog server indexes it by. */
export interface OrderedMeta {
  schema: string;
  package: string;
  name: string;
  blob: Record<string, unknown>;
}

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

// Field order follows opm's JSON output so diffs against opm stay small.
function packageBlob(p: Package): Record<string, unknown> {
  const o: Record<string, unknown> = { schema: p.schema, name: p.name };
  if (p.defaultChannel !== undefined && p.defaultChannel !== '') o.defaultChannel = p.defaultChannel;
  if (p.icon !== undefined) o.icon = { base64data: p.icon.base64data, mediatype: p.icon.mediatype };
  if (p.description !== undefined && p.description !== '') o.description = p.description;
  if (p.properties !== undefined && p.properties.length > 0) o.properties = p.properties;
  return o;
}

function channelBlob(c: Channel): Record<string, unknown> {
  const o: Record<string, unknown> = {
    schema: c.schema,
    name: c.name,
    package: c.package,
    entries: c.entries.map((e) => {
      const x: Record<string, unknown> = { name: e.name };
      if (e.replaces !== undefined && e.replaces !== '') x.replaces = e.replaces;
      if (e.skips !== undefined && e.skips.length > 0) x.skips = e.skips;
      if (e.skipRange !== undefined && e.skipRange !== '') x.skipRange = e.skipRange;
      return x;
    }),
  };
  if (c.properties !== undefined && c.properties.length > 0) o.properties = c.properties;
  return o;
}

function bundleBlob(b: Bundle): Record<string, unknown> {
  const o: Record<string, unknown> = { schema: b.schema, name: b.name, package: b.package, image: b.image, properties: b.properties };
  if (b.relatedImages !== undefined && b.relatedImages.length > 0) o.relatedImages = b.relatedImages;
  return o;
}

function deprecationBlob(d: Deprecation): Record<string, unknown> {
  return { schema: d.schema, package: d.package, entries: d.entries };
}

interface PackageGroup {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  others: Meta[];
  deprecations: Deprecation[];
}

/** Every record of `cfg` in opm's write order. */
export function orderedMetas(cfg: DeclarativeConfig): OrderedMeta[] {
  const groups = new Map<string, PackageGroup>();
  const group = (name: string): PackageGroup => {
    let g = groups.get(name);
    if (g === undefined) {
      g = { packages: [], channels: [], bundles: [], others: [], deprecations: [] };
      groups.set(name, g);
    }
    return g;
  };
  for (const p of cfg.packages) group(p.name).packages.push(p);
  for (const c of cfg.channels) group(c.package).channels.push(c);
  for (const b of cfg.bundles) group(b.package).bundles.push(b);
  for (const d of cfg.deprecations) group(d.package).deprecations.push(d);
  const rootOthers: Meta[] = [];
  for (const o of cfg.others) {
    if (o.package === undefined || o.package === '') rootOthers.push(o);
    else group(o.package).others.push(o);
  }
  const out: OrderedMeta[] = [];
  const push = (schema: string, pkg: string, name: string, blob: Record<string, unknown>): void => {
    out.push({ schema, package: pkg, name, blob });
  };
  for (const name of [...groups.keys()].sort()) {
    const g = group(name);
    for (const p of g.packages) push(p.schema, p.name, p.name, packageBlob(p));
    for (const c of [...g.channels].sort(byName)) push(c.schema, c.package, c.name, channelBlob(c));
    for (const b of [...g.bundles].sort(byName)) push(b.schema, b.package, b.name, bundleBlob(b));
    const others = [...g.others].sort((a, b) => (a.schema < b.schema ? -1 : a.schema > b.schema ? 1 : 0));
    for (const o of others) push(o.schema, name, o.name ?? '', o.blob);
    for (const d of g.deprecations) push(d.schema, d.package, '', deprecationBlob(d));
  }
  for (const o of rootOthers) push(o.schema, '', o.name ?? '', o.blob);
  return out;
}

/** opm-style JSON: each record pretty-printed, one after another. */
export function toFbcJson(cfg: DeclarativeConfig): string {
  return orderedMetas(cfg)
    .map((m) => `${JSON.stringify(m.blob, null, 4)}\n`)
    .join('');
}

/** One compact JSON record per line (what the catalog server stores and streams). */
export function toFbcJsonLines(cfg: DeclarativeConfig): string {
  return orderedMetas(cfg)
    .map((m) => `${JSON.stringify(m.blob)}\n`)
    .join('');
}

/** Multi-document YAML, each record starting with `---`. */
export function toFbcYaml(cfg: DeclarativeConfig): string {
  return orderedMetas(cfg)
    .map((m) => `---\n${toYaml(m.blob)}`)
    .join('');
}

export type FbcFormat = 'json' | 'yaml';

/**
 * The catalog record by record, in the order and form of `formatFbc`: a writer that sends each
 * piece on never holds the whole text (as large as the catalog) beside the catalog.
 */
export function* fbcChunks(cfg: DeclarativeConfig, format: FbcFormat): Generator<string> {
  for (const m of orderedMetas(cfg)) yield format === 'json' ? `${JSON.stringify(m.blob, null, 4)}\n` : `---\n${toYaml(m.blob)}`;
}

export function formatFbc(cfg: DeclarativeConfig, format: FbcFormat): string {
  return format === 'json' ? toFbcJson(cfg) : toFbcYaml(cfg);
}

export async function writeFbcFile(cfg: DeclarativeConfig, file: string, format: FbcFormat): Promise<void> {
  await writeFile(file, formatFbc(cfg, format));
}
