/**
 * Charts on this machine: a directory is copied into the cache as a tree (src/source's copyTree
 * and commitTree: no links out, no devices, a size limit, a deterministic digest); an archive is
 * copied in by its sha256. The cached copy is what is reported, so later edits of the original
 * cannot change a chart that was fetched under a digest.
 */
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { commitTree, copyTree, workDir } from '../../source/index.js';
import { readArchiveChartMetadata, readDirChartMetadata } from './chart-file.js';
import { storeArchive } from './cache.js';
import { ChartSourceError } from './errors.js';
import type { ArchiveChartRef, DirChartRef } from './reference.js';
import { DEFAULT_MAX_ARCHIVE_BYTES, DEFAULT_MAX_TREE_BYTES, type ChartSourceOptions, type FetchedChart, type ListVersionsOptions } from './types.js';

function checkAllowed(ref: DirChartRef | ArchiveChartRef, opts: ListVersionsOptions): void {
  if (opts.allowHostPaths !== true) {
    throw new ChartSourceError('HELM_CHART_HOST_PATH_DENIED', ref.path, 'charts from this machine\'s files are not allowed here (allowHostPaths is off)');
  }
}

async function statOf(ref: DirChartRef | ArchiveChartRef): Promise<{ abs: string; isDir: boolean; size: number }> {
  const abs = resolve(ref.path);
  const st = await stat(abs).catch(() => undefined);
  if (st === undefined) {
    const hint = /^[^/.][^/]*\/[^/]+$/.test(ref.path) ? ' (a "repo/chart" name needs the repository URL: give it as a repository reference)' : '';
    throw new ChartSourceError('HELM_CHART_NOT_FOUND', ref.path, `does not exist${hint}`);
  }
  return { abs, isDir: st.isDirectory(), size: st.size };
}

async function fetchDir(ref: DirChartRef, opts: ChartSourceOptions): Promise<FetchedChart> {
  const { abs, isDir } = await statOf(ref);
  if (!isDir) throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref.path, 'is a file, not a chart directory (a packaged chart is an archive reference, ending in .tgz)');
  const limits = { maxBytes: opts.maxTreeBytes ?? DEFAULT_MAX_TREE_BYTES, what: ref.path };
  const work = await workDir(opts.cacheDir, 'chart-dir');
  let committed: { dir: string; digest: string };
  try {
    const tree = join(work, 'tree');
    await copyTree(abs, tree, limits);
    committed = await commitTree(opts.cacheDir, tree, limits);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const meta = await readDirChartMetadata(committed.dir, ref.path);
  return { path: committed.dir, kind: 'dir', digest: committed.digest, name: meta.name, version: meta.version, appVersion: meta.appVersion, ref, source: abs };
}

async function fetchArchive(ref: ArchiveChartRef, opts: ChartSourceOptions): Promise<FetchedChart> {
  const { abs, isDir, size } = await statOf(ref);
  if (isDir) throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref.path, 'is a directory, not a packaged chart');
  const maxBytes = opts.maxArchiveBytes ?? DEFAULT_MAX_ARCHIVE_BYTES;
  if (size > maxBytes) throw new ChartSourceError('HELM_CHART_TOO_LARGE', ref.path, `is ${size} bytes, over the limit of ${maxBytes}`);
  const stored = await storeArchive(opts.cacheDir, createReadStream(abs), { ref: ref.path, from: abs, maxBytes });
  const meta = await readArchiveChartMetadata(stored.path, ref.path, maxBytes);
  return { path: stored.path, kind: 'archive', digest: stored.digest, name: meta.name, version: meta.version, appVersion: meta.appVersion, ref, source: abs };
}

export async function fetchLocalChart(ref: DirChartRef | ArchiveChartRef, opts: ChartSourceOptions): Promise<FetchedChart> {
  checkAllowed(ref, opts);
  return ref.type === 'dir' ? fetchDir(ref, opts) : fetchArchive(ref, opts);
}

/** The one version a local chart has. */
export async function localVersion(ref: DirChartRef | ArchiveChartRef, opts: ListVersionsOptions): Promise<string> {
  checkAllowed(ref, opts);
  const { abs, isDir } = await statOf(ref);
  if (ref.type === 'dir') {
    if (!isDir) throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref.path, 'is a file, not a chart directory');
    return (await readDirChartMetadata(abs, ref.path)).version;
  }
  if (isDir) throw new ChartSourceError('HELM_CHART_NOT_A_CHART', ref.path, 'is a directory, not a packaged chart');
  return (await readArchiveChartMetadata(abs, ref.path, opts.maxArchiveBytes ?? DEFAULT_MAX_ARCHIVE_BYTES)).version;
}
