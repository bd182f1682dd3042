/**
 * Finding a chart and its subcharts on disk. CHART is a chart directory or a `.tgz`
 * (unpacked safely into a work folder); a subchart that serves a kind of its own is found
 * under its parent's `charts/` (a directory or an archive), by the name Helm knows it by
 * (its Chart.yaml name, or the alias its parent gives it). Every error names the file or flag.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createGunzip } from 'node:zlib';
import { unpackTarSafely } from '../../oci/unpack.js';
import { InputError, errorMessage } from '../../util/errors.js';
import { readYaml } from '../../util/yaml.js';
import { findChart } from '../../helm/chart-render.js';
import type { ChartDescription, HelmEngine } from '../../helm-engine/engine.js';

const ARCHIVE = /\.(tgz|tar\.gz)$/;

/** A chart directory for `chart`: itself, or the unpacked archive under `work`. */
export async function chartDirectory(chart: string, work: string): Promise<string> {
  const st = await stat(chart).catch(() => undefined);
  if (st === undefined) throw new InputError('HELM_BUNDLE_CHART', 'no such chart: the file or directory does not exist', { file: chart });
  if (st.isDirectory()) {
    const yaml = await stat(join(chart, 'Chart.yaml')).catch(() => undefined);
    if (yaml === undefined) throw new InputError('HELM_BUNDLE_CHART', 'not a chart directory: Chart.yaml is missing', { file: join(chart, 'Chart.yaml') });
    return chart;
  }
  if (!ARCHIVE.test(chart)) throw new InputError('HELM_BUNDLE_CHART', 'not a chart: expected a chart directory or a .tgz archive', { file: chart });
  return unpackArchive(chart, work);
}

async function unpackArchive(archive: string, work: string): Promise<string> {
  const dest = join(work, `unpacked-${Math.random().toString(36).slice(2)}`);
  try {
    await unpackTarSafely(createReadStream(archive).pipe(createGunzip()), dest, { source: archive, maxBytes: 64 * 1024 * 1024 });
    return findChart(dest);
  } catch (err) {
    throw new InputError('HELM_BUNDLE_CHART', `cannot unpack the chart archive: ${errorMessage(err)}`, { file: archive, cause: err });
  }
}

/** Where a (sub)chart's files are: a directory to package, or an archive to ship as it is. */
export type ChartSource = { type: 'dir'; dir: string } | { type: 'archive'; file: string };

/** The subchart at `path` (dependency names or aliases, `a/b`) of the chart in `dir`, on disk. */
export async function subchartSource(engine: HelmEngine, dir: string, path: readonly string[], work: string): Promise<ChartSource> {
  let current: ChartSource = { type: 'dir', dir };
  for (const name of path) {
    const parentDir = current.type === 'dir' ? current.dir : await unpackArchive(current.file, work);
    const aliases = await aliasesOf(parentDir);
    const wanted = aliases.get(name) ?? name;
    const found = await findDependency(engine, parentDir, wanted);
    if (found === undefined) {
      throw new InputError('HELM_BUNDLE_SUBCHART', `no subchart ${JSON.stringify(name)} under charts/`, { file: join(parentDir, 'charts') });
    }
    current = found;
  }
  return current;
}

/** alias → chart name, from a chart's Chart.yaml dependencies. */
async function aliasesOf(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const file = join(dir, 'Chart.yaml');
  const doc = readYaml(await readFile(file, 'utf8'), file);
  const deps = typeof doc === 'object' && doc !== null && Array.isArray((doc as Record<string, unknown>).dependencies) ? ((doc as Record<string, unknown>).dependencies as unknown[]) : [];
  for (const d of deps) {
    if (typeof d !== 'object' || d === null) continue;
    const { name, alias } = d as Record<string, unknown>;
    if (typeof name === 'string' && typeof alias === 'string' && alias !== '') out.set(alias, name);
  }
  return out;
}

async function findDependency(engine: HelmEngine, parentDir: string, name: string): Promise<ChartSource | undefined> {
  const chartsDir = join(parentDir, 'charts');
  const entries = await readdir(chartsDir, { withFileTypes: true }).catch(() => []);
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(chartsDir, e.name);
    if (e.isDirectory()) {
      const file = join(full, 'Chart.yaml');
      const text = await readFile(file, 'utf8').catch(() => undefined);
      const doc = text === undefined ? undefined : readYaml(text, file);
      if (typeof doc === 'object' && doc !== null && (doc as Record<string, unknown>).name === name) return { type: 'dir', dir: full };
    } else if (ARCHIVE.test(e.name)) {
      const described = await engine.inspect(full).catch(() => [] as ChartDescription[]);
      if (described[0]?.metadata.name === name) return { type: 'archive', file: full };
    }
  }
  return undefined;
}

/** `charts/a/charts/b` (a path under the chart) or `a/b` → dependency names `[a, b]`. */
export function dependencyPath(spec: string): string[] | undefined {
  const parts = spec.replace(/^\.\//, '').replace(/\/+$/, '').split('/').filter((p) => p !== '');
  if (parts.length === 0) return undefined;
  if (parts[0] !== 'charts') return parts;
  const names: string[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const name = parts[i + 1];
    if (parts[i] !== 'charts' || name === undefined) return undefined;
    names.push(name);
  }
  return names;
}

/** A path relative to `from` for messages, or the path itself when that is shorter. */
export function shortPath(path: string, from = process.cwd()): string {
  const rel = relative(from, path);
  return rel !== '' && !rel.startsWith('..') && rel.length < path.length ? rel : path;
}
