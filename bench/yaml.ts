/**
 * YAML reader benchmark (on demand: `npm run bench yaml`, or `npx tsx bench/yaml.ts [--rounds N]`;
 * not a test). util/yaml.ts keeps two YAML libraries, js-yaml for speed and the `yaml` package for
 * exact errors, and says why: this measures it. Each side is a process of its own
 * (bench/yaml-reader/read-corpus.ts) reading every YAML file of the operator and chart corpora
 * (charts' templates/ aside) through the bundle and catalog reader, bundle/yaml-docs.ts: with the
 * js-yaml path (the default) and without it (BINNACLE_FAST_YAML=0, the `yaml` package alone, the
 * reference). Rounds are interleaved; medians of the time spent reading (the process's own clock,
 * file reads aside), wall time and peak RSS of the whole process (/usr/bin/time). Both sides must
 * read the same values (a digest of every document). Goal: the js-yaml path reads at least three
 * times as fast, with the same values. Stored in bench/results/yaml/ (bench/lib/results.ts).
 *
 * usage: npx tsx bench/yaml.ts [--rounds N]
 */
import { timedNode } from './lib/timed-node.js';
import path from 'node:path';
import { judged, median, startRun } from './lib/results.js';
import type { YamlSummary } from './lib/summaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CORPORA = [path.join(ROOT, '..', 'shared', 'corpus', 'operatorhub-2021'), path.join(ROOT, '..', 'shared', 'corpus', 'charts')];
const READER = path.join(ROOT, 'bench', 'yaml-reader', 'read-corpus.ts');
const i = process.argv.indexOf('--rounds');
const ROUNDS = i > 0 ? Number(process.argv[i + 1]) : 3;
const GOAL_RATIO = 3;

interface Read {
  files: number;
  documents: number;
  refused: number;
  bytes: number;
  readMs: number;
  digest: string;
}
interface Round {
  side: 'js-yaml' | 'yaml';
  read: Read;
  wallMs: number;
  rssMb: number;
}

async function side(fast: boolean): Promise<Round> {
  const env = { ...process.env, BINNACLE_FROM_SOURCE: '1', BINNACLE_FAST_YAML: fast ? '1' : '0' };
  const name = fast ? 'js-yaml' : 'yaml';
  const got = await timedNode(['--import', 'tsx', READER, ...CORPORA], { cwd: ROOT, env }).catch((err: unknown) => {
    throw new Error(`the ${name} side failed: ${err instanceof Error ? err.message : String(err)}`);
  });
  return { side: name, read: JSON.parse(got.stdout.trim()) as Read, wallMs: got.wallMs, rssMb: got.rssMb };
}

const run = startRun('yaml');
const rounds: Round[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const fast of [true, false]) {
    const got = await side(fast);
    rounds.push(got);
    process.stdout.write(`round ${r + 1} ${got.side}: read ${(got.read.readMs / 1000).toFixed(2)} s, wall ${(got.wallMs / 1000).toFixed(2)} s, ${got.rssMb.toFixed(0)} MB, ${got.read.documents} documents\n`);
  }
}
const of = (s: Round['side']): Round[] => rounds.filter((r) => r.side === s);
const figures = (s: Round['side']): YamlSummary['fast'] => ({ readMs: median(of(s).map((r) => r.read.readMs)), wallMs: median(of(s).map((r) => r.wallMs)), rssMb: median(of(s).map((r) => r.rssMb)) });
const fast = figures('js-yaml');
const exact = figures('yaml');
const digests = new Set(rounds.map((r) => r.read.digest));
const first = rounds[0]?.read;
const summary: YamlSummary = { files: first?.files ?? 0, documents: first?.documents ?? 0, bytes: first?.bytes ?? 0, fast, exact, readRatio: exact.readMs / fast.readMs, wallRatio: exact.wallMs / fast.wallMs, rssRatio: exact.rssMb / fast.rssMb, sameValues: digests.size === 1 };
const line = `js-yaml path: read ${(fast.readMs / 1000).toFixed(2)} s, ${fast.rssMb.toFixed(0)} MB; the yaml package alone: ${(exact.readMs / 1000).toFixed(2)} s, ${exact.rssMb.toFixed(0)} MB; ${summary.readRatio.toFixed(1)}× faster reading (wall ${summary.wallRatio.toFixed(1)}×), same values: ${summary.sameValues ? 'yes' : 'NO'}`;
process.stdout.write(`${line}\n`);
const goals = [judged(`the js-yaml path reads the corpora at least ${GOAL_RATIO}× as fast as the yaml package alone, with the same values`, summary.sameValues && summary.readRatio >= GOAL_RATIO, line)];
for (const g of goals) process.stdout.write(`goal ${g.verdict}: ${g.goal}\n`);
run.save({
  settings: {
    bench: { rounds: ROUNDS, corpora: CORPORA.map((c) => path.relative(ROOT, c)), reader: 'src/bundle/yaml-docs.ts parseYamlDocuments' },
    binnacle: { what: 'util/yaml.ts js-yaml path (default)', env: { BINNACLE_FAST_YAML: '1' } },
    reference: { what: 'the yaml package alone', env: { BINNACLE_FAST_YAML: '0' } },
  },
  rounds,
  summary,
  goals,
});
