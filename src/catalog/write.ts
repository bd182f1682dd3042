/**
 * Writes a `DeclarativeConfig` back out deterministically, in opm's order: packages by name, and
 * for each its `olm.package`, channels by name, bundles by name, other schemas (stable by
 * schema), deprecations; then records that belong to no package.
 */
import { writeFile } from 'node:fs/promises';
import { toYaml } from '../util/output.js';
import type { Bundle, Channel, DeclarativeConfig, Deprecation, Package } from '../declcfg/index.js';
import type { Decoded } from './decode.js';

/** One record ready to serialize, with the keys the catalog server indexes it by. */
export interface OrderedMeta {
  schema: string;
  package: string;
  name: string;
  blob: Record<string, unknown>;
}

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

/** A record's kind, in the order records of one package are written. */
const KIND_RANK = { package: 0, channel: 1, bundle: 2, other: 3, deprecation: 4 } as const;
export type RecordKind = keyof typeof KIND_RANK;

/** What the write order needs of a record. `package` is '' for a record of no package. */
export interface WriteOrderKey {
  kind: RecordKind;
  package: string;
  name: string;
  schema: string;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * opm's order: packages by name, and for each its `olm.package`, channels by name, bundles by
 * name, other schemas (stable by schema), deprecations; then other records that belong to no
 * package. Records that tie keep their order (the sort is stable).
 */
function compareWriteOrder(a: WriteOrderKey, b: WriteOrderKey): number {
  const aRoot = a.kind === 'other' && a.package === '';
  const bRoot = b.kind === 'other' && b.package === '';
  if (aRoot !== bRoot) return aRoot ? 1 : -1;
  if (aRoot) return 0;
  const byPackage = compareText(a.package, b.package);
  if (byPackage !== 0) return byPackage;
  const byKind = KIND_RANK[a.kind] - KIND_RANK[b.kind];
  if (byKind !== 0) return byKind;
  if (a.kind === 'channel' || a.kind === 'bundle') return compareText(a.name, b.name);
  if (a.kind === 'other') return compareText(a.schema, b.schema);
  return 0;
}

/** The records in opm's write order (a sorted copy). */
export function inWriteOrder<T extends WriteOrderKey>(records: readonly T[]): T[] {
  return [...records].sort(compareWriteOrder);
}

/** One decoded record as it is written, with its place in the write order. */
export function writtenRecord(d: Decoded): WriteOrderKey & { blob: Record<string, unknown> } {
  switch (d.kind) {
    case 'package':
      return { kind: d.kind, schema: d.value.schema, package: d.value.name, name: d.value.name, blob: packageBlob(d.value) };
    case 'channel':
      return { kind: d.kind, schema: d.value.schema, package: d.value.package, name: d.value.name, blob: channelBlob(d.value) };
    case 'bundle':
      return { kind: d.kind, schema: d.value.schema, package: d.value.package, name: d.value.name, blob: bundleBlob(d.value) };
    case 'deprecation':
      return { kind: d.kind, schema: d.value.schema, package: d.value.package, name: '', blob: deprecationBlob(d.value) };
    case 'other':
      return { kind: d.kind, schema: d.value.schema, package: d.value.package ?? '', name: d.value.name ?? '', blob: d.value.blob };
  }
}

/** Every record of `cfg` in opm's write order. */
export function orderedMetas(cfg: DeclarativeConfig): OrderedMeta[] {
  const records = [
    ...cfg.packages.map((value) => writtenRecord({ kind: 'package', value })),
    ...cfg.channels.map((value) => writtenRecord({ kind: 'channel', value })),
    ...cfg.bundles.map((value) => writtenRecord({ kind: 'bundle', value })),
    ...cfg.others.map((value) => writtenRecord({ kind: 'other', value })),
    ...cfg.deprecations.map((value) => writtenRecord({ kind: 'deprecation', value })),
  ];
  return inWriteOrder(records).map((r) => ({ schema: r.schema, package: r.package, name: r.name, blob: r.blob }));
}

/** One record as opm writes it in JSON: pretty-printed with four spaces, without the newline after it. */
export function fbcJsonRecord(blob: Record<string, unknown>): string {
  return JSON.stringify(blob, null, 4);
}

/** opm-style JSON: each record pretty-printed, one after another. */
export function toFbcJson(cfg: DeclarativeConfig): string {
  return orderedMetas(cfg)
    .map((m) => `${fbcJsonRecord(m.blob)}\n`)
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
  for (const m of orderedMetas(cfg)) yield format === 'json' ? `${fbcJsonRecord(m.blob)}\n` : `---\n${toYaml(m.blob)}`;
}

export function formatFbc(cfg: DeclarativeConfig, format: FbcFormat): string {
  return format === 'json' ? toFbcJson(cfg) : toFbcYaml(cfg);
}

export async function writeFbcFile(cfg: DeclarativeConfig, file: string, format: FbcFormat): Promise<void> {
  await writeFile(file, formatFbc(cfg, format));
}
