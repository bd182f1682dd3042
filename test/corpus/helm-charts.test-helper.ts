/**
 * The Helm chart corpus (`../shared/corpus/charts` beside the repository, or BINNACLE_CHARTS_CORPUS):
 * every chart with its values.yaml and values.schema.json, and every subchart under `charts/`,
 * whether a directory or a `.tgz` archive, nested archives included. Archives are read in
 * memory with the `tar` package. A missing corpus is an error, never a skip.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Parser, type ReadEntry } from 'tar';

export interface CorpusChart {
  /** Where it is, e.g. `bitnami__wordpress/charts/mariadb-22.0.0.tgz`; names it in messages. */
  name: string;
  /** `name` from its Chart.yaml directory, e.g. `mariadb`. */
  chartDir: string;
  /** Whether it is a top-level chart of the corpus (not a subchart). */
  topLevel: boolean;
  valuesYaml: string;
  schemaJson?: string;
}

import { corpusChartsDir } from './corpus.test-helper.js';

export { corpusChartsDir };

/** A chart's files, from a directory or from an archive. */
interface Tree {
  read(path: string): Buffer | undefined;
  /** Entries directly under `dir` (names, directories without a slash). */
  list(dir: string): string[];
  isDir(path: string): boolean;
}

function dirTree(root: string): Tree {
  return {
    read: (p) => (existsSync(join(root, p)) && statSync(join(root, p)).isFile() ? readFileSync(join(root, p)) : undefined),
    list: (d) => (existsSync(join(root, d)) && statSync(join(root, d)).isDirectory() ? readdirSync(join(root, d)).sort() : []),
    isDir: (p) => existsSync(join(root, p)) && statSync(join(root, p)).isDirectory(),
  };
}

function mapTree(files: Map<string, Buffer>, prefix: string): Tree {
  const under = (d: string): string => (d === '' ? prefix : `${prefix}${d.replace(/\/$/, '')}/`);
  return {
    read: (p) => files.get(`${prefix}${p}`),
    list: (d) => {
      const base = under(d);
      const names = new Set<string>();
      for (const f of files.keys()) if (f.startsWith(base)) names.add(f.slice(base.length).split('/')[0] ?? '');
      names.delete('');
      return [...names].sort();
    },
    isDir: (p) => [...files.keys()].some((f) => f.startsWith(under(p))),
  };
}

async function readTgz(data: Buffer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const parser = new Parser();
  parser.on('entry', (entry: ReadEntry) => {
    if (entry.type !== 'File') {
      entry.resume();
      return;
    }
    const chunks: Buffer[] = [];
    entry.on('data', (c: Buffer) => chunks.push(c));
    entry.on('end', () => files.set(entry.path, Buffer.concat(chunks)));
  });
  await new Promise<void>((done, fail) => {
    parser.on('end', () => done());
    parser.on('error', fail);
    parser.end(data);
  });
  return files;
}

async function fromTree(tree: Tree, name: string, chartDir: string, topLevel: boolean, out: CorpusChart[]): Promise<void> {
  const schema = tree.read('values.schema.json');
  out.push({
    name,
    chartDir,
    topLevel,
    valuesYaml: tree.read('values.yaml')?.toString('utf8') ?? '',
    ...(schema === undefined ? {} : { schemaJson: schema.toString('utf8') }),
  });
  for (const entry of tree.list('charts')) {
    const path = `charts/${entry}`;
    if (entry.endsWith('.tgz')) {
      const data = tree.read(path);
      if (data === undefined) continue;
      await fromArchive(data, `${name}/${path}`, out);
    } else if (tree.isDir(path) && tree.read(`${path}/Chart.yaml`) !== undefined) {
      const sub = subTree(tree, `${path}/`);
      await fromTree(sub, `${name}/${path}`, entry, false, out);
    }
  }
}

function subTree(tree: Tree, prefix: string): Tree {
  return {
    read: (p) => tree.read(`${prefix}${p}`),
    list: (d) => tree.list(`${prefix}${d}`),
    isDir: (p) => tree.isDir(`${prefix}${p}`),
  };
}

async function fromArchive(data: Buffer, name: string, out: CorpusChart[]): Promise<void> {
  const files = await readTgz(data);
  const tops = new Set([...files.keys()].map((f) => f.split('/')[0] ?? ''));
  for (const top of [...tops].sort()) {
    if (files.has(`${top}/Chart.yaml`)) await fromTree(mapTree(files, `${top}/`), name, top, false, out);
  }
}

/** Every chart and subchart of the corpus, top-level charts in directory order, each followed by its subcharts. */
export async function loadCorpusCharts(): Promise<CorpusChart[]> {
  const root = corpusChartsDir();
  const out: CorpusChart[] = [];
  for (const d of readdirSync(root).sort()) {
    const dir = join(root, d);
    if (!statSync(dir).isDirectory() || !existsSync(join(dir, 'Chart.yaml'))) continue;
    await fromTree(dirTree(dir), d, chartNameOf(dir) ?? d, true, out);
  }
  return out;
}

function chartNameOf(dir: string): string | undefined {
  const m = /^name:\s*["']?([^"'\s]+)/m.exec(readFileSync(join(dir, 'Chart.yaml'), 'utf8'));
  return m?.[1];
}
