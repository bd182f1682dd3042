/**
 * The package-manifest layout: `<pkg>/<pkg>.package.yaml` (packageName, channels with their
 * `currentCSV`, defaultChannel) beside one directory of manifests per version. The one reader of
 * the package file (the catalog renderer uses it too), the walk that finds a channel's members
 * (from its `currentCSV` along `replaces` and `skips`, as opm's loader does), and what a version
 * directory lacks without `metadata/annotations.yaml`: its channels (those whose walk reaches its
 * CSV) and the package's default channel.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError, errorMessage } from '../util/errors.js';
import { fastYamlDocument, readYaml, YamlError } from '../util/yaml.js';
import { CSV_KIND, decodeCsv } from './csv.js';
import { Decoder } from './decode.js';
import { isRecord } from '../util/object.js';
import { PACKAGE_FILE } from './types.js';
export type { PackageContext } from './types.js';
import { parseYamlDocuments } from './yaml-docs.js';

export interface PackageManifest {
  packageName: string;
  channels: { name: string; currentCSV: string }[];
  defaultChannel: string | undefined;
  file: string;
}

/** The upgrade edges of one CSV, all a channel walk needs. */
export interface UpgradeEdges {
  name: string;
  replaces?: string | undefined;
  skips: readonly string[];
}

/** The package file in `dir`, preferring `<dir>.package.yaml` when there are several. */
export async function findPackageManifestFile(dir: string): Promise<string | undefined> {
  const names = (await readdir(dir).catch(() => [])).filter((n) => PACKAGE_FILE.test(n)).sort();
  const hit = names.find((n) => n.startsWith(`${path.basename(dir)}.`)) ?? names[0];
  return hit === undefined ? undefined : path.join(dir, hit);
}

export async function readPackageManifest(file: string): Promise<PackageManifest> {
  let doc: unknown;
  try {
    const text = await readFile(file, 'utf8');
    doc = (fastYamlDocument(text) ?? { value: readYaml(text, file, { uniqueKeys: false }) }).value;
  } catch (err) {
    throw new InputError('PACKAGE_MANIFEST_YAML', err instanceof YamlError ? err.reason : `not valid YAML: ${errorMessage(err).split('\n')[0] ?? ''}`, { file, cause: err });
  }
  if (!isRecord(doc)) throw new InputError('PACKAGE_MANIFEST', 'expected a map with packageName and channels', { file });
  const packageName = doc.packageName;
  if (typeof packageName !== 'string' || packageName === '') throw new InputError('PACKAGE_MANIFEST', 'expected a non-empty string', { file, field: 'packageName' });
  if (!Array.isArray(doc.channels)) throw new InputError('PACKAGE_MANIFEST', 'expected a list of channels', { file, field: 'channels' });
  const channels: PackageManifest['channels'] = [];
  doc.channels.forEach((c: unknown, i) => {
    if (!isRecord(c) || typeof c.name !== 'string' || typeof c.currentCSV !== 'string') {
      throw new InputError('PACKAGE_MANIFEST', 'expected {name: string, currentCSV: string}', { file, field: `channels[${i}]` });
    }
    channels.push({ name: c.name, currentCSV: c.currentCSV });
  });
  const dc = doc.defaultChannel;
  if (dc !== undefined && dc !== null && typeof dc !== 'string') throw new InputError('PACKAGE_MANIFEST', 'expected a string', { file, field: 'defaultChannel' });
  return { packageName, channels, defaultChannel: typeof dc === 'string' && dc !== '' ? dc : undefined, file };
}

/** Members of a channel from its `currentCSV`: everything reachable by replaces and skips. */
export function walkFromHead<T extends UpgradeEdges>(head: string, byName: ReadonlyMap<string, T>): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  const queue = [head];
  while (queue.length > 0) {
    const n = queue.shift();
    if (n === undefined || seen.has(n)) continue;
    seen.add(n);
    const b = byName.get(n);
    if (b === undefined) continue;
    out.push(b);
    if (b.replaces !== undefined && b.replaces !== '') queue.push(b.replaces);
    queue.push(...b.skips);
  }
  return out;
}

/** The default channel as opm reads it: the file's, else the only channel. */
export function defaultChannelOf(manifest: PackageManifest): string | undefined {
  return manifest.defaultChannel ?? (manifest.channels.length === 1 ? manifest.channels[0]?.name : undefined);
}

/** Version directories of a package: its subdirectories, sorted, no dot-directories. */
export async function versionDirsOf(pkgDir: string): Promise<string[]> {
  const entries = await readdir(pkgDir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => path.join(pkgDir, e.name))
    .sort();
}

const YAML_FILE = /\.(ya?ml|json)$/i;
const CSV_FILE = /clusterserviceversion\.(ya?ml|json)$/i;

/**
 * Edges of the CSV files already parsed, by path, size and modification time: loading each
 * version of a package reads its siblings' CSVs, and a CSV can be megabytes, so each is parsed
 * once while it is unchanged. Bounded; cleared when full.
 */
const edgesCache = new Map<string, UpgradeEdges | null>();
const EDGES_CACHE_MAX = 4096;

async function csvEdgesOfFile(file: string): Promise<UpgradeEdges | undefined> {
  const st = await stat(file).catch(() => undefined);
  if (st === undefined || !st.isFile()) return undefined;
  const key = `${file}\0${st.size}\0${st.mtimeMs}`;
  const hit = edgesCache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  const text = await readFile(file, 'utf8').catch(() => '');
  let found: UpgradeEdges | undefined;
  if (text.includes(CSV_KIND)) {
    for (const doc of parseYamlDocuments(text, path.basename(file)).documents) {
      if (!isRecord(doc.value) || doc.value.kind !== CSV_KIND) continue;
      const csv = decodeCsv(doc.value, new Decoder(path.basename(file)));
      if (csv.name === '') continue;
      found = { name: csv.name, replaces: csv.replaces, skips: csv.skips };
      break;
    }
  }
  if (edgesCache.size >= EDGES_CACHE_MAX) edgesCache.clear();
  edgesCache.set(key, found ?? null);
  return found;
}

/**
 * The upgrade edges of the CSV in a version directory (either layout), reading only the files
 * that mention a CSV, those named like one first; undefined when it has none that decodes.
 * Siblings are read this cheaply so loading one version does not load the whole package.
 */
export async function readCsvEdges(versionDir: string): Promise<UpgradeEdges | undefined> {
  const manifests = path.join(versionDir, 'manifests');
  const dir = (await readdir(manifests).catch(() => undefined)) === undefined ? versionDir : manifests;
  const names = (await readdir(dir).catch(() => [])).filter((n) => YAML_FILE.test(n)).sort();
  const csvFirst = [...names.filter((n) => CSV_FILE.test(n)), ...names.filter((n) => !CSV_FILE.test(n))];
  for (const name of csvFirst) {
    const edges = await csvEdgesOfFile(path.join(dir, name));
    if (edges !== undefined) return edges;
  }
  return undefined;
}

/** CSV name → edges (and the directory) of every version directory of the package. */
export async function packageGraph(pkgDir: string): Promise<Map<string, UpgradeEdges & { dir: string }>> {
  const byName = new Map<string, UpgradeEdges & { dir: string }>();
  for (const dir of await versionDirsOf(pkgDir)) {
    const edges = await readCsvEdges(dir);
    if (edges !== undefined && !byName.has(edges.name)) byName.set(edges.name, { ...edges, dir });
  }
  return byName;
}

/** The channels of `manifest` whose walk from `currentCSV` reaches `csvName`. */
export function channelsContaining(csvName: string, manifest: PackageManifest, graph: ReadonlyMap<string, UpgradeEdges>): string[] {
  return manifest.channels.filter((c) => walkFromHead(c.currentCSV, graph).some((b) => b.name === csvName)).map((c) => c.name);
}

/**
 * The version directory a package directory stands for: the head (`currentCSV`) of its default
 * channel. Each failure names the package file and its field.
 */
export async function defaultHeadDir(pkgDir: string, manifest: PackageManifest): Promise<string> {
  const def = defaultChannelOf(manifest);
  if (def === undefined) {
    throw new InputError('PACKAGE_MANIFEST_NO_DEFAULT', `names no default channel and has ${manifest.channels.length} channels: pass a version directory (${pkgDir}/<version>) instead`, { file: manifest.file, field: 'defaultChannel' });
  }
  const index = manifest.channels.findIndex((c) => c.name === def);
  const channel = manifest.channels[index];
  if (channel === undefined) throw new InputError('PACKAGE_MANIFEST_NO_DEFAULT', `"${def}" is not one of the channels`, { file: manifest.file, field: 'defaultChannel' });
  const head = (await packageGraph(pkgDir)).get(channel.currentCSV);
  if (head === undefined) {
    throw new InputError('PACKAGE_MANIFEST_HEAD_MISSING', `default channel "${def}" names currentCSV "${channel.currentCSV}", which no version directory of ${pkgDir} holds`, { file: manifest.file, field: `channels[${index}].currentCSV` });
  }
  return head.dir;
}
