/**
 * Every bench's stored result: one JSON file per run, `bench/results/<bench>/<date>-<commit>.json`,
 * with what a reader needs to judge the figures without taking anyone's word for them: the
 * commit (and whether the tree had changes), the date, the machine (every CPU, the load average
 * before and after), Node's version, the exact command line, every round's raw figures, the
 * settings of Binnacle's side and of the reference's side, and each goal with its verdict.
 * The README's benchmark tables are generated from these files (bench/lib/readme.ts,
 * `npx tsx hack/bench-readme.ts`), never typed.
 *
 * A bench calls `startRun(name)` first (it reads the load average before any work) and
 * `run.save({...})` at the end. `BINNACLE_BENCH_RESULTS=DIR` writes elsewhere (say, a trial run
 * that should not replace the README's figures); `BINNACLE_BENCH_RESULTS=off` writes nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** Where results go unless BINNACLE_BENCH_RESULTS says otherwise. */
export const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
/** The version of this file's format; bench/lib/readme.ts reads this one. */
export const RESULT_FORMAT = 1;

/** A goal as the bench judged it. `not-compared`: a side did not finish, so there was nothing to compare. */
export interface GoalVerdict {
  goal: string;
  verdict: 'met' | 'not-met' | 'not-compared';
  /** The figures the verdict rests on, in words. */
  detail?: string;
}

/** One side's settings: what ran and with which flags and defaults that matter to the figures. */
export interface SideSettings {
  /** What runs, e.g. "binnacle helm-operator run" or "opm v1.x". */
  what: string;
  /** The command line, when it is one process. */
  command?: string[];
  /** Anything else that bears on the figures (environment, defaults left as they are, limits). */
  [key: string]: unknown;
}

export interface Machine {
  hostname: string;
  platform: string;
  release: string;
  arch: string;
  cpuCount: number;
  cpus: { model: string; speedMHz: number }[];
  totalMemoryMiB: number;
}

export interface GitState {
  commit: string;
  /** True when tracked files (other than stored results) differed from the commit. */
  dirty: boolean;
  /** The changed paths when dirty (at most 20). */
  changes: string[];
}

/** The stored file. `summary` is what the bench printed, computed from `rounds`. */
export interface BenchResult<S = unknown, R = unknown> {
  format: typeof RESULT_FORMAT;
  bench: string;
  startedAt: string;
  finishedAt: string;
  git: GitState;
  machine: Machine;
  node: string;
  argv: string[];
  /** os.loadavg() (1, 5 and 15 minutes) before the bench started working and when it ended. */
  loadavg: { before: number[]; after: number[] };
  settings: { bench: Record<string, unknown>; binnacle: SideSettings; reference?: SideSettings; [side: string]: unknown };
  rounds: R[];
  summary: S;
  goals: GoalVerdict[];
  notes?: string[];
}

export interface RunRecorder {
  /** Writes the result file; returns its path (undefined when results are off). */
  save(r: { settings: BenchResult['settings']; rounds: unknown[]; summary: unknown; goals: GoalVerdict[]; notes?: string[] }): string | undefined;
}

/** git's output, or '' when it fails; kept as printed (a status line's first column may be a space). */
function git(args: string[]): string {
  const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout : '';
}

export function gitState(): GitState {
  const commit = git(['rev-parse', 'HEAD']).trim() || 'unknown';
  // Stored results are written by the runs themselves: they do not make the code under test differ.
  const changes = git(['status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results'])
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.slice(3)); // "XY path": two status columns and a space
  return { commit, dirty: changes.length > 0, changes: changes.slice(0, 20) };
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpuCount: cpus.length,
    cpus: cpus.map((c) => ({ model: c.model, speedMHz: c.speed })),
    totalMemoryMiB: Math.round(os.totalmem() / 1024 / 1024),
  };
}

const round2 = (xs: number[]): number[] => xs.map((x) => Math.round(x * 100) / 100);

/** `2026-12-02T01-08-02Z`: sorts by time, safe in a file name. */
function stamp(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
}

/** Begins a run of `bench` (a file name in bench/ without .ts): the load average is read now. */
export function startRun(bench: string): RunRecorder {
  const started = new Date();
  const before = round2(os.loadavg());
  const gitAtStart = gitState();
  return {
    save({ settings, rounds, summary, goals, notes }) {
      const where = process.env.BINNACLE_BENCH_RESULTS;
      if (where === 'off') return undefined;
      const result: BenchResult = {
        format: RESULT_FORMAT,
        bench,
        startedAt: started.toISOString(),
        finishedAt: new Date().toISOString(),
        git: gitAtStart,
        machine: machine(),
        node: process.version,
        argv: process.argv.slice(2),
        loadavg: { before, after: round2(os.loadavg()) },
        settings,
        rounds,
        summary,
        goals,
        ...(notes === undefined || notes.length === 0 ? {} : { notes }),
      };
      const dir = path.join(where === undefined || where === '' ? RESULTS_DIR : path.resolve(where), bench);
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `${stamp(started)}-${gitAtStart.commit.slice(0, 7)}.json`);
      writeFileSync(file, `${compactJson(result)}\n`);
      console.log(`result stored: ${path.relative(process.cwd(), file)} (load average ${before.join(' ')} before, ${result.loadavg.after.join(' ')} after)`);
      return file;
    },
  };
}

/**
 * JSON with one key a line, but arrays of plain values (a round's raw times) on one line: the
 * file stays readable and diffable without a line per number.
 */
export function compactJson(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object')) return JSON.stringify(value);
    const inner = `${indent} `;
    return `[\n${value.map((v: unknown) => `${inner}${compactJson(v, inner)}`).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    const inner = `${indent} `;
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${compactJson(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A goal's verdict from a boolean. */
export function judged(goal: string, met: boolean, detail?: string): GoalVerdict {
  return { goal, verdict: met ? 'met' : 'not-met', ...(detail === undefined ? {} : { detail }) };
}

/** The median (the mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

/** Median with the smallest and largest value: what a table shows for several rounds. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function spread(xs: readonly number[]): Spread {
  const finite = xs.filter((x) => Number.isFinite(x));
  return { median: median(finite), min: finite.length === 0 ? NaN : Math.min(...finite), max: finite.length === 0 ? NaN : Math.max(...finite), n: finite.length };
}
