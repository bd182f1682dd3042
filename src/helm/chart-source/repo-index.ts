/**
 * A chart repository's `index.yaml`, decoded for one chart: the document arrives as unknown
 * YAML and is checked here, every problem named by its field path (`entries.nginx[2].urls`).
 * Like Helm, an entry whose version is not a version is skipped rather than fatal; anything of
 * the wrong shape in the chart's entries makes the index unusable. Scalars are read as text
 * (YAML's failsafe schema), as Helm reads them into strings: `version: 1.10` stays `1.10`.
 */
import { YamlAliasError, yamlPackage, yamlValue } from '../../util/yaml.js';
import { ChartIndexError, type IndexProblem } from './errors.js';
import { parseChartVersion } from './version.js';
import { isRecord } from '../../util/object.js';

export interface IndexEntry {
  name: string;
  version: string;
  /** As written; resolve with resolveChartUrl. Helm downloads the first. */
  urls: string[];
  /** Lower-case hex sha256 of the archive, when the index has one. */
  digest: string | undefined;
  /** Field path of the entry, for messages. */
  field: string;
}

export interface SkippedEntry {
  version: string;
  field: string;
  reason: string;
}

export interface DecodedIndex {
  /** Every chart the index lists, sorted. */
  chartNames: string[];
  /** The chart's usable entries, in index order; undefined when the index does not list the chart. */
  entries: IndexEntry[] | undefined;
  skipped: SkippedEntry[];
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (isRecord(v)) return 'a map';
  return typeof v === 'string' ? `"${v}"` : typeof v;
}

/** `null`, `~` and the empty scalar are YAML's null; the failsafe schema leaves them as text. */
function isNullish(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === '~' || v === 'null' || v === 'Null' || v === 'NULL';
}

const HEX_SHA256 = /^(?:sha256:)?([0-9a-fA-F]{64})$/;

function decodeEntry(raw: unknown, chart: string, field: string, problems: IndexProblem[], skipped: SkippedEntry[]): IndexEntry | undefined {
  if (isNullish(raw)) return undefined; // Helm skips empty entries.
  if (!isRecord(raw)) {
    problems.push({ field, message: `expected a map describing one chart version, got ${describe(raw)}` });
    return undefined;
  }
  const before = problems.length;
  const { version, name, urls, digest } = raw;
  if (!isNullish(version) && typeof version !== 'string') problems.push({ field: `${field}.version`, message: `expected a version string, got ${describe(version)}` });
  if (!isNullish(name) && typeof name !== 'string') problems.push({ field: `${field}.name`, message: `expected a string, got ${describe(name)}` });
  let urlList: string[] = [];
  if (!isNullish(urls)) {
    if (!Array.isArray(urls)) problems.push({ field: `${field}.urls`, message: `expected a list of URLs, got ${describe(urls)}` });
    else {
      urls.forEach((u, i) => {
        if (typeof u !== 'string' || isNullish(u)) problems.push({ field: `${field}.urls[${i}]`, message: `expected a URL string, got ${describe(u)}` });
      });
      urlList = urls.filter((u): u is string => typeof u === 'string' && !isNullish(u));
    }
  }
  let hex: string | undefined;
  if (!isNullish(digest)) {
    const m = typeof digest === 'string' ? HEX_SHA256.exec(digest.trim()) : null;
    if (m === null) problems.push({ field: `${field}.digest`, message: `expected a sha256 as 64 hex digits, got ${describe(digest)}` });
    else hex = (m[1] ?? '').toLowerCase();
  }
  if (problems.length > before) return undefined;
  const versionText = typeof version === 'string' ? version : '';
  if (versionText === '' || parseChartVersion(versionText) === undefined) {
    skipped.push({ version: versionText, field: `${field}.version`, reason: versionText === '' ? 'has no version' : `"${versionText}" is not a semantic version` });
    return undefined;
  }
  return { name: typeof name === 'string' && !isNullish(name) ? name : chart, version: versionText, urls: urlList, digest: hex, field };
}

/**
 * Decode `bytes` (the index at `indexUrl`) for `chart`. Throws ChartIndexError listing every
 * problem with its field when the document, its `apiVersion`, its `entries` or the chart's
 * entries are malformed.
 */
export function decodeIndex(bytes: Uint8Array | string, opts: { indexUrl: string; chart: string }): DecodedIndex {
  const text = typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');
  if (text.trim() === '') throw new ChartIndexError(opts.indexUrl, [{ field: '(document)', message: 'the index is empty' }]);
  const doc = yamlPackage().parseDocument(text, { schema: 'failsafe', prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ChartIndexError(
      opts.indexUrl,
      doc.errors.map((e) => ({ field: '(document)', message: `not valid YAML: ${e.message.split('\n')[0] ?? e.message}` })),
    );
  }
  let root: unknown;
  try {
    root = yamlValue(doc, opts.indexUrl);
  } catch (err) {
    if (err instanceof YamlAliasError) throw new ChartIndexError(opts.indexUrl, [{ field: '(document)', message: err.reason }]);
    throw err;
  }
  if (!isRecord(root)) throw new ChartIndexError(opts.indexUrl, [{ field: '(document)', message: `expected a map with apiVersion and entries, got ${describe(root)}` }]);
  const problems: IndexProblem[] = [];
  if (isNullish(root.apiVersion)) problems.push({ field: 'apiVersion', message: 'is missing (a chart repository index has apiVersion: v1)' });
  else if (typeof root.apiVersion !== 'string') problems.push({ field: 'apiVersion', message: `expected a string, got ${describe(root.apiVersion)}` });
  const entriesRaw = root.entries;
  let entriesMap: Record<string, unknown> = {};
  if (!isNullish(entriesRaw)) {
    if (isRecord(entriesRaw)) entriesMap = entriesRaw;
    else problems.push({ field: 'entries', message: `expected a map from chart name to versions, got ${describe(entriesRaw)}` });
  }
  const skipped: SkippedEntry[] = [];
  let entries: IndexEntry[] | undefined;
  if (Object.hasOwn(entriesMap, opts.chart)) {
    const list = entriesMap[opts.chart];
    const field = `entries.${opts.chart}`;
    entries = [];
    if (Array.isArray(list)) {
      list.forEach((raw, i) => {
        const e = decodeEntry(raw, opts.chart, `${field}[${i}]`, problems, skipped);
        if (e !== undefined) entries?.push(e);
      });
    } else if (!isNullish(list)) problems.push({ field, message: `expected a list of chart versions, got ${describe(list)}` });
  }
  if (problems.length > 0) throw new ChartIndexError(opts.indexUrl, problems);
  return { chartNames: Object.keys(entriesMap).sort(), entries, skipped };
}

/**
 * Where an entry's URL points, the way Helm resolves it: an absolute URL as it is; a relative
 * one against the repository URL taken as a directory, keeping the repository URL's query.
 */
export function resolveChartUrl(repoUrl: string, entryUrl: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(entryUrl)) return entryUrl;
  const base = new URL(repoUrl);
  if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
  const resolved = new URL(entryUrl, base);
  resolved.search = base.search;
  return resolved.toString();
}

/** The index URL of a repository base URL (which repoBaseUrl has normalised). */
export function indexUrlOf(repoUrl: string): string {
  const u = new URL(repoUrl);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/index.yaml`;
  return u.toString();
}
