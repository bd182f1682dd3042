/**
 * Charts in a chart repository: fetch `<url>/index.yaml`, pick the chart's version (exact match,
 * else the highest in range), download the entry's first URL (relative URLs resolve against the
 * repository URL), check the archive against the entry's `digest` when it has one, and confirm
 * that the archive's Chart.yaml is the chart and version the index promised.
 */
import type { Credentials } from '../../oci/index.js';
import { readArchiveChartMetadata } from './chart-file.js';
import { cachedArchive, storeArchive } from './cache.js';
import { ChartIndexError, ChartSourceError, NoMatchingVersionError } from './errors.js';
import { bodyFailureReason } from '../../util/http-request.js';
import { hasUserinfo, redactUrl } from '../../util/redact.js';
import { httpGet, readResponse, responseBody, type HttpGetOptions } from './http.js';
import { describeChartRef, repoBaseUrl, type RepoChartRef } from './reference.js';
import { decodeIndex, indexUrlOf, resolveChartUrl, type IndexEntry } from './repo-index.js';
import {
  DEFAULT_MAX_ARCHIVE_BYTES,
  DEFAULT_MAX_INDEX_BYTES,
  DEFAULT_TIMEOUT_MS,
  type ChartSourceOptions,
  type FetchedChart,
  type ListVersionsOptions,
} from './types.js';
import { sameChartVersion, selectChartVersion, sortChartVersions } from './version.js';

function httpOptions(base: string, label: string, opts: ListVersionsOptions): HttpGetOptions {
  const origin = new URL(base).origin;
  // Only explicit credentials: the docker config's are for registries, not chart repositories.
  const auth = opts.auth;
  const creds: Credentials | undefined = typeof auth === 'function' ? auth(new URL(base).host) : auth;
  return { ref: label, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, ...(creds === undefined ? {} : { credentials: { origin, credentials: creds } }) };
}

interface LoadedIndex {
  base: string;
  indexUrl: string;
  entries: IndexEntry[];
  /** Versions of the chart, highest first. */
  versions: string[];
}

async function loadIndex(ref: RepoChartRef, opts: ListVersionsOptions): Promise<LoadedIndex> {
  const base = repoBaseUrl(ref.url);
  const label = describeChartRef(ref);
  const indexUrl = indexUrlOf(base);
  const http = httpOptions(base, label, opts);
  const res = await httpGet(indexUrl, 'repository index', http);
  const bytes = await readResponse(res, indexUrl, opts.maxIndexBytes ?? DEFAULT_MAX_INDEX_BYTES, http);
  const decoded = decodeIndex(bytes, { indexUrl, chart: ref.chart });
  if (decoded.entries === undefined) {
    const names = decoded.chartNames;
    const shown = names.length > 20 ? `${names.slice(0, 20).join(', ')}, …` : names.join(', ');
    throw new ChartSourceError('HELM_CHART_NOT_FOUND', label, `the repository index ${indexUrl} has no chart named "${ref.chart}"${names.length === 0 ? ' (it lists no charts)' : ` (it lists: ${shown})`}`);
  }
  for (const s of decoded.skipped) opts.logger?.warn({ index: indexUrl, field: s.field }, `skipping index entry: ${s.reason}`);
  const entries = decoded.entries;
  return { base, indexUrl, entries, versions: sortChartVersions(entries.map((e) => e.version)).valid };
}

/** The chart's versions in the repository, highest first. */
export async function listRepoVersions(ref: RepoChartRef, opts: ListVersionsOptions): Promise<string[]> {
  return (await loadIndex(ref, opts)).versions;
}

export async function fetchRepoChart(ref: RepoChartRef, opts: ChartSourceOptions): Promise<FetchedChart> {
  const label = describeChartRef(ref);
  const maxBytes = opts.maxArchiveBytes ?? DEFAULT_MAX_ARCHIVE_BYTES;
  const index = await loadIndex(ref, opts);
  const selected = selectChartVersion(index.versions, ref.version);
  if (selected === undefined) throw new NoMatchingVersionError(label, ref.version ?? '*', index.versions);
  const entry = index.entries.find((e) => e.version === selected);
  if (entry === undefined) throw new NoMatchingVersionError(label, ref.version ?? '*', index.versions);
  const first = entry.urls[0];
  if (first === undefined) throw new ChartIndexError(index.indexUrl, [{ field: `${entry.field}.urls`, message: `version ${entry.version} has no download URL` }]);
  let url: string;
  try {
    url = resolveChartUrl(index.base, first);
  } catch {
    throw new ChartIndexError(index.indexUrl, [{ field: `${entry.field}.urls[0]`, message: `"${first}" is not a valid URL` }]);
  }
  if (!/^https?:/i.test(url)) throw new ChartIndexError(index.indexUrl, [{ field: `${entry.field}.urls[0]`, message: `"${first}" is not an http or https URL` }]);
  // Not requested (httpRequest refuses a URL with userinfo) and never shown: the index's author put a credential there.
  if (hasUserinfo(url)) throw new ChartIndexError(index.indexUrl, [{ field: `${entry.field}.urls[0]`, message: `"${redactUrl(first)}" has credentials in it, which are not sent; serve the archive without them` }]);

  const expected = entry.digest === undefined ? undefined : `sha256:${entry.digest}`;
  let path = expected === undefined ? undefined : await cachedArchive(opts.cacheDir, expected);
  let digest = expected;
  if (path === undefined || digest === undefined) {
    const http = httpOptions(index.base, label, opts);
    const res = await httpGet(url, 'chart archive', http);
    const stored = await storeArchive(opts.cacheDir, responseBody(res, url, maxBytes, label), {
      ref: label,
      from: url,
      maxBytes,
      failureReason: (err) => bodyFailureReason(err, url, http.timeoutMs),
      ...(expected === undefined ? {} : { expectedDigest: expected }),
    });
    path = stored.path;
    digest = stored.digest;
  } else {
    opts.logger?.debug({ chart: label, digest }, 'chart archive already cached');
  }
  const meta = await readArchiveChartMetadata(path, label, maxBytes);
  if (meta.name !== ref.chart || !sameChartVersion(meta.version, entry.version)) {
    throw new ChartSourceError('HELM_CHART_MISMATCH', label, `the index promised ${ref.chart} ${entry.version} at ${url}, but the archive holds ${meta.name} ${meta.version}`);
  }
  return { path, kind: 'archive', digest, name: meta.name, version: meta.version, appVersion: meta.appVersion, ref, source: url };
}
