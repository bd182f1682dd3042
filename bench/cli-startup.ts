/**
 * CLI start-up benchmark (run on demand: `npx tsx bench/cli-startup.ts`, or `npm run bench`;
 * not a test). Issue 15 §1: a command pays only for what it uses; the goal is `binnacle --help`
 * and `binnacle catalog validate` on a small catalog within 2× of `node -e 0`, in time and in
 * peak memory.
 *
 * It builds the CLI as `npm run build` does (tsc with tsconfig.build.json, the top-level help's
 * index, the esbuild bundle of src/cli/build-bundle.ts) into a private folder
 * (.cache/bench-cli/dist, so the shared tree's dist/ is left alone) with a copy of bin/binnacle.js
 * beside it, and runs what the published CLI runs: `node bin/binnacle.js …`, which takes the
 * bundle. Each command runs many times, interleaved with `node -e 0`. Each sample is two runs:
 * one under bash's `time` keyword for CPU time (user + sys of the node process and all its
 * threads, to the millisecond: `/usr/bin/time` prints 10 ms steps, half of `node -e 0`'s CPU,
 * which made earlier figures, stored before 2026-12-05 07:00, read its CPU as 16 ms where it is
 * about 30) and wall time, one under `/usr/bin/time` for peak RSS; all three are medians. One more row runs `catalog validate` from the unbundled
 * dist/cli/ (BINNACLE_UNBUNDLED=1), to show what the bundle saves, and one without Node's compile
 * cache (NODE_DISABLE_COMPILE_CACHE=1; the others keep it in a folder of the bench's own, filled
 * by the warm-up run, as a user's second run finds it), to show what it saves; the goal is not judged on them. It prints medians and the ratios to `node -e 0`. Wall time on a loaded machine is
 * noisy; CPU time (user + sys) is the steadier figure and is printed beside it.
 *
 * usage: npx tsx bench/cli-startup.ts [--runs N] [--no-build]
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { judged, startRun } from './lib/results.js';
import type { CliStartupSummary } from './lib/summaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, '.cache', 'bench-cli');
const DIST = path.join(OUT, 'dist');
/** bin/binnacle.js, copied beside DIST as it sits beside dist/ in the repository. */
const BIN = path.join(OUT, 'bin', 'binnacle.js');
const TIME = '/usr/bin/time';
const SMALL_CATALOG = path.join(ROOT, 'src', 'catalog', 'testdata', 'fbc', 'valid');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 15;

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
  exit: number;
}

/**
 * Where the runs keep Node's compile cache (bin/binnacle.js keeps it in the user's cache; a folder
 * of the bench's own, emptied at the start, so that what earlier runs left is not measured). The
 * warm-up run fills it; one row runs without it.
 */
const COMPILE_CACHE = path.join(OUT, 'compile-cache');
/** The CLI's own switches, and the compile cache's, are the bench's to set, not the caller's. */
const { BINNACLE_FROM_SOURCE: _fromSource, BINNACLE_UNBUNDLED: _unbundled, NODE_COMPILE_CACHE: _cache, NODE_DISABLE_COMPILE_CACHE: _noCache, XDG_CACHE_HOME: _xdg, ...ENV_OUTSIDE } = process.env;
const ENV = { ...ENV_OUTSIDE, XDG_CACHE_HOME: COMPILE_CACHE };

interface Case {
  label: string;
  args: string[];
  env?: Record<string, string>;
  samples: Sample[];
  /** Shown for comparison; the goal is not judged on it. */
  reference?: boolean;
}

function run(args: string[], what: string): void {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${what} failed: ${r.stderr}`);
}

function build(): void {
  if (process.argv.includes('--no-build') && existsSync(BIN)) return;
  console.log(`building the CLI as npm run build does, into ${path.relative(ROOT, DIST)} ...`);
  rmSync(OUT, { recursive: true, force: true });
  // tsc emits even when some file does not type-check; the bench needs only the emitted JS.
  spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', DIST], { cwd: ROOT, stdio: 'ignore' });
  if (!existsSync(path.join(DIST, 'cli', 'main.js'))) throw new Error(`tsc wrote no ${path.join(DIST, 'cli', 'main.js')}`);
  // The build's steps for the CLI, given this folder: the top-level help's index, then the bundle.
  run(['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'build-help-index.ts'), path.join(DIST, 'cli')], 'build-help-index');
  run(['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'build-bundle.ts'), DIST], 'build-bundle');
  mkdirSync(path.dirname(BIN), { recursive: true });
  copyFileSync(path.join(ROOT, 'bin', 'binnacle.js'), BIN);
}

/** bash's `time` keyword: the child's rusage to the millisecond (wall, user, sys). */
const TIMED = 'TIMEFORMAT="BENCH %3R %3U %3S"; time "$@" >/dev/null 2>/dev/null';

function spawnFigures(cmd: string, args: string[], env: Record<string, string>, pattern: RegExp): Promise<{ m: RegExpExecArray; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...ENV, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const m = pattern.exec(err);
      if (m === null) return reject(new Error(`no figures from ${cmd}: ${err.slice(-500)}`));
      resolve({ m, code: code ?? -1 });
    });
  });
}

async function once(args: string[], env: Record<string, string> = {}): Promise<Sample> {
  // The command's exit code is bash's: `time` passes it through.
  const timed = await spawnFigures('bash', ['-c', TIMED, 'bench', process.execPath, ...args], env, /BENCH ([\d.]+) ([\d.]+) ([\d.]+)/);
  const rss = await spawnFigures(TIME, ['-f', 'BENCH_RSS %M', process.execPath, ...args], env, /BENCH_RSS (\d+)/);
  const [, wall, user, sys] = timed.m;
  return { wallMs: Number(wall) * 1000, cpuMs: (Number(user) + Number(sys)) * 1000, rssMb: Number(rss.m[1]) / 1024, exit: timed.code !== 0 ? timed.code : rss.code };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

async function main(): Promise<void> {
  const recorder = startRun('cli-startup');
  if (!existsSync(TIME)) throw new Error(`${TIME} is missing (apt-get install time): it measures peak memory`);
  if (!existsSync(SMALL_CATALOG)) throw new Error(`the small catalog ${SMALL_CATALOG} is missing`);
  build();
  rmSync(COMPILE_CACHE, { recursive: true, force: true });
  mkdirSync(COMPILE_CACHE, { recursive: true });
  const cases: Case[] = [
    { label: 'node -e 0', args: ['-e', '0'], samples: [] },
    { label: 'binnacle --help', args: [BIN, '--help'], samples: [] },
    { label: 'binnacle catalog validate (small FBC)', args: [BIN, 'catalog', 'validate', SMALL_CATALOG], samples: [] },
    { label: 'binnacle install --help', args: [BIN, 'install', '--help'], samples: [] },
    { label: 'binnacle --version', args: [BIN, '--version'], samples: [] },
    { label: '  same validate, unbundled dist/cli', args: [BIN, 'catalog', 'validate', SMALL_CATALOG], env: { BINNACLE_UNBUNDLED: '1' }, samples: [], reference: true },
    { label: '  same validate, no compile cache', args: [BIN, 'catalog', 'validate', SMALL_CATALOG], env: { NODE_DISABLE_COMPILE_CACHE: '1' }, samples: [], reference: true },
  ];
  for (const c of cases) await once(c.args, c.env); // warm the file cache
  for (let i = 0; i < RUNS; i++) for (const c of cases) c.samples.push(await once(c.args, c.env));
  const base = cases[0];
  if (base === undefined) return;
  const b = { wall: median(base.samples.map((s) => s.wallMs)), cpu: median(base.samples.map((s) => s.cpuMs)), rss: median(base.samples.map((s) => s.rssMb)) };
  console.log(`\nCLI start-up, ${RUNS} interleaved runs: medians of wall, CPU (to the millisecond) and peak RSS (node ${path.relative(ROOT, BIN)}: the bundle in ${path.relative(ROOT, DIST)}/cli-bundle)`);
  console.log(`${'command'.padEnd(40)} ${'wall'.padStart(9)} ${'cpu'.padStart(9)} ${'peak RSS'.padStart(9)}   ratio to node -e 0 (wall / cpu / memory)`);
  let met = true;
  const rows: CaseSummary[] = [];
  for (const c of cases) {
    const bad = c.samples.filter((s) => s.exit !== 0);
    const wall = median(c.samples.map((s) => s.wallMs));
    const cpu = median(c.samples.map((s) => s.cpuMs));
    const rss = median(c.samples.map((s) => s.rssMb));
    const ratios = [wall / b.wall, cpu / b.cpu, rss / b.rss];
    if (c !== base && c.reference !== true && (Math.max(ratios[1] ?? 0, ratios[2] ?? 0) > 2 || bad.length > 0)) met = false;
    rows.push({ label: c.label.trim(), wallMs: wall, cpuMs: cpu, rssMb: rss, wallRatio: ratios[0] ?? NaN, cpuRatio: ratios[1] ?? NaN, rssRatio: ratios[2] ?? NaN, failedRuns: bad.length, reference: c === base, judged: c !== base && c.reference !== true });
    console.log(
      `${c.label.padEnd(40)} ${`${wall.toFixed(0)} ms`.padStart(9)} ${`${cpu.toFixed(0)} ms`.padStart(9)} ${`${rss.toFixed(1)} MB`.padStart(9)}   ${ratios.map((r) => `${r.toFixed(2)}x`).join(' / ')}${bad.length > 0 ? `  (${bad.length} runs failed)` : ''}`,
    );
  }
  const goal = 'CPU time and peak memory of binnacle --help, catalog validate, install --help and --version within 2x of node -e 0';
  console.log(`goal (CPU time and memory within 2x of node -e 0): ${met ? 'met' : 'NOT met'}`);
  recorder.save({
    settings: {
      bench: { runs: RUNS, interleaved: true, cpu: "median of user + sys from bash's time keyword (ms precision), the node process alone", wall: 'median, from the same run', rss: 'median of /usr/bin/time %M, a separate run of the same sample' },
      binnacle: { what: 'node bin/binnacle.js (the esbuild bundle npm run build makes, built into .cache/bench-cli), Node\'s compile cache in XDG_CACHE_HOME=.cache/bench-cli/compile-cache, filled by the warm-up run', command: [process.execPath, path.relative(ROOT, BIN)] },
      reference: { what: 'node -e 0', command: [process.execPath, '-e', '0'] },
    },
    // Every run of every command, in the order they ran (interleaved).
    rounds: cases.map((c) => ({ label: c.label.trim(), args: c.args.map((a) => (path.isAbsolute(a) ? path.relative(ROOT, a) : a)), env: c.env ?? {}, samples: c.samples })),
    summary: { rows } satisfies CliStartupSummary,
    goals: [judged(goal, met)],
  });
}

type CaseSummary = CliStartupSummary['rows'][number];

await main();
