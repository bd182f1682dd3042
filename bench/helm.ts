/**
 * Helm benchmark (run on demand: `npx tsx bench/helm.ts [--warm 5] [--rounds 3] [--threads 1] [--spare-keys off|on] [--no-build]`; not a test).
 *
 * Every chart of the charts corpus, with default values, release `corpus` in `corpus-ns`:
 * 1. helm: `helm template` (the CLI built from the same pinned Helm module, .cache/bin/helm),
 *    one process per chart, one after the other, as a user or CI runs it. Wall time of each
 *    process and its peak RSS (GNU `/usr/bin/time -f %M`, else sampled from /proc).
 * 2. Binnacle cold: one fresh Node process (this file with `--child`, bundled by esbuild and run
 *    by plain `node`, as Binnacle ships compiled) starts Helm's engine (the native helm-engine
 *    process when built, else WebAssembly; BINNACLE_HELM_ENGINE=wasm|native to choose) and renders
 *    every chart once. Wall time from spawn to the last render (Node, imports and engine
 *    start-up included) and the process's VmHWM (the engine's worker thread included) plus the
 *    engine processes' VmHWM and CPU time.
 *    With --threads N (default 1), the engine renders on N threads and N charts are in flight
 *    at once, as a manager reconciling several Helm releases does (first-render times per chart
 *    are then latencies under that load).
 * 3. Per chart: that first render, then --warm (default 5) pairs of one `helm template` process
 *    and one warm render of the same chart in the same long-lived engine (the Helm-operator case),
 *    interleaved in ABBA order (helm first in even pairs, the warm render first in odd ones). The
 *    chart's warm ratio is the median of its warm renders over the median of the helm processes of
 *    those same pairs: both sides run seconds apart, so load on the shared cores falls on both
 *    alike (helm processes run minutes before a chart's warm render let load drift decide close
 *    calls), and neither side always goes first. The cold process stays alive for this and renders
 *    on request: the parent writes `warm <chart>` on its stdin, it answers `warm <ms>` (the render's
 *    time inside the process, as a reconcile sees it). A line protocol over the pipes it already
 *    has is the simplest honest design: hosting the engine in the parent would put this process's
 *    helm bookkeeping and tsx loader into the engine's process, and a child per chart would not be
 *    the long-lived engine a Helm operator has. Charts that generate RSA keys do so on both sides,
 *    each inside its own timed render: see "RSA keys" below.
 * 4. The whole corpus again, --rounds times in all, helm then Binnacle (cold, without the warm
 *    renders): the corpus ratio is the median of the rounds' ratios, since the two cores are
 *    shared and the charts that generate RSA keys take a random time on both sides.
 * Outputs are compared: byte for byte, or, where `helm template` disagrees with itself (random
 * passwords, certificates), on every line but the ones Helm randomizes. Charts that fail in
 * Helm itself stay in: they count as failures on both sides, and their time counts too.
 *
 * RSA keys. Binnacle's engine keeps a spare key per size that templates asked for, searched for
 * in the background after a render takes one (src/helm-engine/go/overlay/sprig_hostkey_native.go.in;
 * engine-worker.ts under WebAssembly). In the paired runs that search overlapped the `helm
 * template` process being timed on the same two cores, and the next warm render took a ready key
 * that was found outside its own time: the charts that generate keys (airflow, nginx) were
 * judged on that. So the engine here runs with its spare keys off (HelmEngineOptions.spareKeys:
 * false, `--spare-keys off`, the default): each key is searched for inside the render that asks
 * for it, as `helm template` does, and nothing runs between the timed renders. `--spare-keys on`
 * measures the engine as it ships instead; the stored result says which.
 *
 * Every run is stored (bench/lib/results.ts): each chart's helm runs and renders, each round.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createHelmEngine, helmEngineKind, HelmError } from '../src/helm-engine/index.js';
import { judged, median, spread, startRun } from './lib/results.js';
import type { HelmChartRow, HelmSummary } from './lib/summaries.js';

// The cold process runs this file bundled into .cache/bench-helm/ (see childScript), so it is told the root.
const ROOT = process.env.BINNACLE_BENCH_ROOT ?? path.resolve(import.meta.dirname, '..');
const CHARTS = process.env.BINNACLE_CHARTS_CORPUS ?? path.join(ROOT, '..', 'shared', 'corpus', 'charts');
const HELM = path.join(ROOT, '.cache', 'bin', 'helm');
const WASM = path.join(ROOT, '.cache', 'helm-wasm', 'helm.wasm');
const WORK = path.join(ROOT, '.cache', 'bench-data', 'helm');
const RELEASE = 'corpus';
const NAMESPACE = 'corpus-ns';
const HELM_ENV = { ...process.env, HELM_CACHE_HOME: path.join(WORK, 'helm-cache'), HELM_CONFIG_HOME: path.join(WORK, 'helm-config'), HELM_DATA_HOME: path.join(WORK, 'helm-data') };
/** GNU time (apt package `time`), which reports a child's peak RSS; BusyBox's has no -f/-o. */
const GNU_TIME = spawnSync('/usr/bin/time', ['-f', '%M', '-o', '/dev/null', 'true']).status === 0 ? '/usr/bin/time' : undefined;

const args = process.argv.slice(2);
const arg = (name: string, def: number): number => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : def);
/** Pairs per chart of one helm process and one warm render (step 3). */
const WARM = Math.max(1, arg('warm', 5));
const ROUNDS = Math.max(1, arg('rounds', 3));
const THREADS = Math.max(1, arg('threads', 1));
/** The engine's spare RSA keys (see "RSA keys" above): off unless `--spare-keys on`. */
const SPARE_KEYS = args.includes('--spare-keys') && args[args.indexOf('--spare-keys') + 1] === 'on';

/** Helm's outcome for one chart: its output, or its error text (after "Error: "). */
interface Outcome {
  ok: boolean;
  text: string;
}

interface HelmRun extends Outcome {
  ms: number;
  maxRssKb: number;
  /** User + system CPU time (GNU time only; NaN without it). */
  cpuMs: number;
}

interface ChildChart {
  chart: string;
  ok: boolean;
  error?: string;
  firstMs: number;
}

/** What the cold Binnacle process reports (times in ms since that process started). */
interface ChildReport {
  scriptReadyMs: number;
  engineStartMs: number;
  rendersMs: number;
  hwmKbAfterCorpus: number;
  /** User + system CPU time of the whole process (every thread) up to the last first render. */
  cpuMsAfterCorpus: number;
  hwmKbAtEnd: number;
  charts: ChildChart[];
}

/** A /proc/<pid>/status field in kB, or undefined once the process is gone. */
function procStatusKb(pid: number | 'self', field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

async function chartDirs(): Promise<string[]> {
  return (await readdir(CHARTS, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

// ---------------------------------------------------------------------------------------------
// The cold Binnacle process (`--child <out-dir>`).

/**
 * The native engine's processes (children of this one): the peak and CPU time of each, sampled
 * while it runs (one that exits keeps what was last read), so the cold process's figures are the
 * whole tree's, as helm's are its process's.
 */
function engineChildren(): { sample(): void; hwmKb(threads: number): number; cpuMs(): number } {
  const seen = new Map<number, { hwmKb: number; cpuMs: number }>();
  const sample = (): void => {
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[1]) !== process.pid) continue;
        const hwmKb = procStatusKb(Number(d), 'VmHWM') ?? 0;
        seen.set(Number(d), { hwmKb: Math.max(hwmKb, seen.get(Number(d))?.hwmKb ?? 0), cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 });
      } catch {
        // gone meanwhile
      }
    }
  };
  return {
    sample,
    // At most `threads` engine processes run at once: the largest peaks, added.
    hwmKb: (threads) => [...seen.values()].map((c) => c.hwmKb).sort((a, b) => b - a).slice(0, threads).reduce((a, b) => a + b, 0),
    cpuMs: () => [...seen.values()].reduce((a, c) => a + c.cpuMs, 0),
  };
}

/** Step 3's line protocol: `warm <chart>` on stdin → one render of it → `warm <ms>` on stdout, until stdin ends. */
async function serveWarmRenders(render: (chart: string) => Promise<number>): Promise<void> {
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const m = /^warm (\S+)$/.exec(line);
    if (m?.[1] === undefined) throw new Error(`bench/helm child: unexpected request ${JSON.stringify(line)}`);
    process.stdout.write(`warm ${await render(m[1])}\n`);
  }
}

async function child(outDir: string): Promise<void> {
  const scriptReadyMs = performance.now(); // performance.now() counts from this process's start
  const kids = engineChildren();
  const kidSampler = setInterval(() => kids.sample(), 50);
  const charts = await chartDirs();
  const engine = createHelmEngine(undefined, { threads: THREADS, spareKeys: SPARE_KEYS });
  // The engine starts on its first call: asking about a chart that does not exist starts it
  // without rendering anything, so the first render below is the chart's alone.
  const startAt = performance.now();
  await engine.inspect(path.join(outDir, 'no-such-chart')).catch((err: unknown) => {
    if (!(err instanceof HelmError)) throw err;
  });
  const engineStartMs = performance.now() - startAt;
  const render = async (chart: string): Promise<{ ms: number; out: Outcome }> => {
    const t = performance.now();
    let out: Outcome;
    try {
      out = { ok: true, text: (await engine.template({ chart: path.join(CHARTS, chart), releaseName: RELEASE, namespace: NAMESPACE })).output };
    } catch (err) {
      if (!(err instanceof HelmError)) throw err;
      out = { ok: false, text: err.message.trim() };
    }
    return { ms: performance.now() - t, out };
  };

  const results: ChildChart[] = new Array<ChildChart>(charts.length);
  const rendersAt = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < charts.length; i = next++) {
      const chart = charts[i] ?? '';
      const { ms, out } = await render(chart);
      // Written out as helm's output goes to its pipe: part of the corpus time.
      if (out.ok) await writeFile(path.join(outDir, `${chart}.yaml`), out.text);
      results[i] = { chart, ok: out.ok, ...(out.ok ? {} : { error: out.text }), firstMs: ms };
    }
  };
  await Promise.all(Array.from({ length: THREADS }, lane));
  const rendersMs = performance.now() - rendersAt;
  kids.sample();
  const hwmKbAfterCorpus = (procStatusKb('self', 'VmHWM') ?? NaN) + kids.hwmKb(THREADS);
  const cpu = process.cpuUsage();
  const cpuMsAfterCorpus = (cpu.user + cpu.system) / 1000 + kids.cpuMs();
  process.stdout.write('corpus-done\n');

  if (args.includes('--serve-warm')) await serveWarmRenders(async (chart) => (await render(chart)).ms);
  kids.sample();
  clearInterval(kidSampler);
  const report: ChildReport = { scriptReadyMs, engineStartMs, rendersMs, hwmKbAfterCorpus, cpuMsAfterCorpus, hwmKbAtEnd: (procStatusKb('self', 'VmHWM') ?? NaN) + kids.hwmKb(THREADS), charts: results };
  await writeFile(path.join(outDir, 'report.json'), JSON.stringify(report));
  await engine.close();
}

// ---------------------------------------------------------------------------------------------
// The parent: helm processes, the cold Binnacle process, the comparison.

/** `helm template` for one chart, as its own process: wall time, peak RSS, output. */
async function helmTemplate(chart: string): Promise<HelmRun> {
  const helmArgs = ['template', RELEASE, path.join(CHARTS, chart), '-n', NAMESPACE];
  const rssFile = path.join(WORK, 'helm-rss.txt');
  const [cmd, cmdArgs] = GNU_TIME === undefined ? [HELM, helmArgs] : [GNU_TIME, ['-f', '%M %U %S', '-o', rssFile, HELM, ...helmArgs]];
  const start = performance.now();
  const proc = spawn(cmd, cmdArgs, { env: HELM_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  proc.stdout.on('data', (c: Buffer) => stdout.push(c));
  proc.stderr.on('data', (c: Buffer) => stderr.push(c));
  // Without GNU time: the last VmHWM read before the process went away (a lower bound).
  let sampledKb = 0;
  const pid = proc.pid;
  const sampler = GNU_TIME === undefined && pid !== undefined ? setInterval(() => (sampledKb = Math.max(sampledKb, procStatusKb(pid, 'VmHWM') ?? 0)), 2) : undefined;
  const exit = await new Promise<number>((resolve) => proc.on('close', (code) => resolve(code ?? 1)));
  const ms = performance.now() - start;
  if (sampler !== undefined) clearInterval(sampler);
  let maxRssKb = sampledKb;
  let cpuMs = NaN;
  if (GNU_TIME !== undefined) {
    // GNU time writes "Command exited with non-zero status N" before the format on failure.
    const lines = (await readFile(rssFile, 'utf8')).trim().split('\n');
    const [rss, user, sys] = (lines[lines.length - 1] ?? '').split(' ').map(Number);
    maxRssKb = rss ?? NaN;
    cpuMs = ((user ?? NaN) + (sys ?? NaN)) * 1000;
  }
  const err = Buffer.concat(stderr).toString('utf8');
  const at = err.indexOf('Error: ');
  const text = exit === 0 ? Buffer.concat(stdout).toString('utf8') : (at >= 0 ? err.slice(at + 'Error: '.length) : err).trim();
  return { ok: exit === 0, text, ms, maxRssKb, cpuMs };
}

let bundledChild: Promise<string> | undefined;

/**
 * This file and the engine's TypeScript bundled by esbuild (packages stay imports), which the cold
 * process runs with plain `node`: Binnacle ships compiled (npm run build bundles the CLI), and
 * tsx's loader would add about 0.2 s of its own start-up and transpiling to Binnacle's side.
 */
function childScript(): Promise<string> {
  bundledChild ??= (async () => {
    const { build } = await import('esbuild');
    const outfile = path.join(ROOT, '.cache', 'bench-helm', 'helm-bench.mjs');
    await build({ entryPoints: [import.meta.filename], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', packages: 'external', logLevel: 'warning' });
    return outfile;
  })();
  return bundledChild;
}

/** The cold Binnacle process, running: its corpus pass, the warm renders it serves, its report. */
interface ColdProcess {
  /** Spawn → last first render (outputs written), once the corpus pass is done. */
  corpusMs(): Promise<number>;
  /** One warm render of `chart` in the process's engine (step 3); its time inside the process. */
  warm(chart: string): Promise<number>;
  /** Ends the process (stdin closed) and reads its report. */
  finish(): Promise<ChildReport>;
}

/** Spawns the cold Binnacle process; `serveWarm` keeps it alive after the corpus for warm renders on request. */
async function startCold(outDir: string, serveWarm: boolean): Promise<ColdProcess> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const start = performance.now();
  const proc = spawn(process.execPath, [await childScript(), '--child', outDir, '--threads', String(THREADS), '--spare-keys', SPARE_KEYS ? 'on' : 'off', ...(serveWarm ? ['--serve-warm'] : [])], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, BINNACLE_BENCH_ROOT: ROOT, BINNACLE_HELM_WASM_DIR: path.dirname(WASM) },
  });
  // Helm's warnings (as `helm template` prints them to its stderr, kept here too), shown on failure only.
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  // A write after it died fails with EPIPE; the failure is reported from its exit instead.
  proc.stdin.on('error', () => undefined);
  const exited = new Promise<number>((resolve) => proc.on('close', (code) => resolve(code ?? 1)));
  const failed = async (): Promise<never> => {
    throw new Error(`the cold Binnacle process exited with ${await exited}:\n${stderr.slice(-4000)}`);
  };
  // Its stdout, line by line; the corpus time is taken as the line arrives.
  let corpusMs = NaN;
  const queued: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let closed = false;
  const lines = createInterface({ input: proc.stdout, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (line === 'corpus-done' && Number.isNaN(corpusMs)) corpusMs = performance.now() - start;
    if (waiting === undefined) queued.push(line);
    else waiting(line);
    waiting = undefined;
  });
  lines.on('close', () => {
    closed = true;
    waiting?.(undefined);
  });
  const nextLine = async (): Promise<string> => {
    const line = queued.shift() ?? (closed ? undefined : await new Promise<string | undefined>((resolve) => (waiting = resolve)));
    return line ?? failed();
  };
  const corpusDone = (async () => {
    for (let line = await nextLine(); line !== 'corpus-done'; line = await nextLine());
    return corpusMs;
  })();
  return {
    corpusMs: () => corpusDone,
    warm: async (chart) => {
      await corpusDone;
      proc.stdin.write(`warm ${chart}\n`);
      const line = await nextLine();
      const m = /^warm (\d+(?:\.\d+)?)$/.exec(line);
      if (m?.[1] === undefined) throw new Error(`the cold Binnacle process answered ${JSON.stringify(line)} to a warm render of ${chart}`);
      return Number(m[1]);
    },
    finish: async () => {
      await corpusDone;
      proc.stdin.end();
      if ((await exited) !== 0) return failed();
      return JSON.parse(await readFile(path.join(outDir, 'report.json'), 'utf8')) as ChildReport;
    },
  };
}

/**
 * Step 3 for one chart: --warm pairs of a helm process and a warm render, ABBA (helm first in even
 * pairs), so both sides of the ratio run under the same load and neither always goes first.
 */
async function pairedRuns(cold: ColdProcess, chart: string): Promise<{ helmMs: number[]; warmMs: number[] }> {
  const helmMs: number[] = [];
  const warmMs: number[] = [];
  for (let i = 0; i < WARM; i++) {
    if (i % 2 === 0) helmMs.push((await helmTemplate(chart)).ms);
    warmMs.push(await cold.warm(chart));
    if (i % 2 === 1) helmMs.push((await helmTemplate(chart)).ms);
  }
  return { helmMs, warmMs };
}

type Verdict = 'same' | 'same but Helm-random lines' | 'both fail alike' | 'MISMATCH';

/** Compares Binnacle's outcome with helm's; where they differ, asks helm again to find its random lines. */
async function compare(chart: string, helm: Outcome, ours: Outcome): Promise<Verdict> {
  if (helm.ok !== ours.ok) return 'MISMATCH';
  if (helm.text === ours.text) return helm.ok ? 'same' : 'both fail alike';
  if (!helm.ok) return 'MISMATCH';
  const again = await helmTemplate(chart);
  if (!again.ok || again.text === helm.text) return 'MISMATCH';
  const a = helm.text.split('\n');
  const b = again.text.split('\n');
  const o = ours.text.split('\n');
  if (a.length !== b.length || a.length !== o.length) return 'MISMATCH';
  return a.every((line, i) => line !== b[i] || line === o[i]) ? 'same but Helm-random lines' : 'MISMATCH';
}

/** Builds helm and the engine when missing (`--no-build` skips that). */
function ensureTools(): boolean {
  const missing = [...(existsSync(HELM) ? [] : ['helm']), ...(existsSync(WASM) ? [] : ['helm-wasm'])];
  if (missing.length === 0) return true;
  if (args.includes('--no-build')) return false;
  console.log(`building ${missing.join(' and ')} (hack/build-tools.sh) ...`);
  spawnSync('bash', [path.join(ROOT, 'hack/build-tools.sh'), ...missing], { stdio: 'inherit' });
  return existsSync(HELM) && existsSync(WASM);
}

/** Reads the helm binary, the engine and the charts once, so neither side pays for a cold disk. */
async function warmPageCache(dirs: readonly string[]): Promise<void> {
  await readFile(HELM);
  await readFile(WASM);
  for (const d of dirs) {
    for (const e of await readdir(path.join(CHARTS, d), { recursive: true, withFileTypes: true })) {
      if (e.isFile()) await readFile(path.join(e.parentPath, e.name));
    }
  }
}

const mb = (kb: number): string => `${(kb / 1024).toFixed(0)} MB`;
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

/** One round of the whole corpus, for the corpus ratio: every chart by a helm process, then by one cold Binnacle process. */
interface Round {
  helmMs: number;
  oursMs: number;
  helmMaxRssKb: number;
  oursHwmKb: number;
}

async function corpusRound(dirs: readonly string[], r: number): Promise<Round> {
  let helmMs = 0;
  let roundMaxRssKb = 0;
  for (const d of dirs) {
    const run = await helmTemplate(d);
    helmMs += run.ms;
    roundMaxRssKb = Math.max(roundMaxRssKb, run.maxRssKb);
  }
  const round = await startCold(path.join(WORK, `binnacle-round-${r}`), false);
  const oursMs = await round.corpusMs();
  return { helmMs, oursMs, helmMaxRssKb: roundMaxRssKb, oursHwmKb: (await round.finish()).hwmKbAfterCorpus };
}

/** A chart's row of the stored result; a chart helm never ran (or no verdict) reads as NaN and MISMATCH. */
function chartRow(chart: string, firstMs: number, h: HelmRun | undefined, p: { helmMs: number[]; warmMs: number[] } | undefined, ratio: number | undefined, verdict: Verdict | undefined): HelmChartRow {
  return {
    chart,
    helm: { ok: h?.ok ?? false, ms: h?.ms ?? NaN, maxRssKb: h?.maxRssKb ?? NaN, cpuMs: h?.cpuMs ?? NaN },
    binnacleFirstMs: firstMs,
    pairedHelmMs: p?.helmMs ?? [],
    warmMs: p?.warmMs ?? [],
    warmRatio: ratio ?? NaN,
    output: verdict ?? 'MISMATCH',
  };
}

/** Issue 29 section 2's goals, judged on the medians; answers the charts whose warm render is not faster. */
function printGoals(charts: readonly string[], ratios: readonly number[], corpusRatio: number, memoryRatio: number): string[] {
  const slower = charts.filter((_, i) => !((ratios[i] ?? NaN) < 1));
  const warmGoal = slower.length === 0 ? 'met' : `NOT met (slower on ${slower.length} of ${charts.length}: ${slower.join(', ')})`;
  console.log(`goal: warm render faster than a helm template process on every chart: ${warmGoal}`);
  console.log(`goal: whole corpus in at most 1.0x helm's time: ${corpusRatio <= 1 ? 'met' : 'NOT met'} (${corpusRatio.toFixed(2)}x)`);
  console.log(`goal: peak memory at most 2x the largest helm process: ${memoryRatio <= 2 ? 'met' : 'NOT met'} (${memoryRatio.toFixed(2)}x)`);
  return slower;
}

async function main(): Promise<void> {
  const recorder = startRun('helm');
  if (!ensureTools()) {
    console.log(`helm (${HELM}) or Helm's engine (${WASM}) is missing: run \`bash hack/build-tools.sh helm helm-wasm\``);
    process.exitCode = 1;
    return;
  }
  await mkdir(WORK, { recursive: true });
  const dirs = await chartDirs();
  const helmVersion = spawnSync(HELM, ['version', '--short'], { encoding: 'utf8' }).stdout.trim();
  console.log(`charts corpus ${CHARTS}: ${dirs.length} charts, default values, release ${RELEASE} in ${NAMESPACE}`);
  console.log(`reference: ${helmVersion} (${path.relative(ROOT, HELM)}), peak RSS by ${GNU_TIME === undefined ? 'sampling /proc/<pid>/status (a lower bound)' : 'GNU time -f %M'}`);
  console.log('NOTE: 2 shared cores, loaded by other work: every number here is noisy; compare ratios from one run only.');
  await warmPageCache(dirs);

  // 1. helm template, one process per chart, one after the other.
  const helm = new Map<string, HelmRun>();
  for (const d of dirs) helm.set(d, await helmTemplate(d));
  const helmRuns = [...helm.values()];
  const helmTotalMs = helmRuns.reduce((s, r) => s + r.ms, 0);
  const helmMaxRssKb = Math.max(...helmRuns.map((r) => r.maxRssKb));

  // 2 + 3. One cold Binnacle process: every chart once, then each chart's warm renders paired with helm processes.
  const outDir = path.join(WORK, 'binnacle');
  const cold = await startCold(outDir, true);
  const coldCorpusMs = await cold.corpusMs();
  const paired = new Map<string, { helmMs: number[]; warmMs: number[] }>();
  for (const d of dirs) paired.set(d, await pairedRuns(cold, d));
  const report = await cold.finish();

  // 4. More rounds of the whole corpus, for the corpus ratio.
  const rounds: Round[] = [{ helmMs: helmTotalMs, oursMs: coldCorpusMs, helmMaxRssKb, oursHwmKb: report.hwmKbAfterCorpus }];
  for (let r = 1; r < ROUNDS; r++) rounds.push(await corpusRound(dirs, r));

  // 5. Per chart.
  const verdicts = new Map<string, Verdict>();
  const w = Math.max(...dirs.map((d) => d.length));
  // A chart's warm ratio: the median of its warm renders over the median of the helm processes paired with them.
  const helmMedianMs = (chart: string): number => median(paired.get(chart)?.helmMs ?? [NaN]);
  const warmMedianMs = (chart: string): number => median(paired.get(chart)?.warmMs ?? [NaN]);
  console.log(`\n${'chart'.padEnd(w)} ${'helm ms'.padStart(8)} ${'helm MB'.padStart(8)} ${'first ms'.padStart(9)} ${`warm ms`.padStart(8)} ${'warm/helm'.padStart(9)}  output`);
  for (const c of report.charts) {
    const h = helm.get(c.chart);
    if (h === undefined) throw new Error(`no helm run for ${c.chart}`);
    const ours: Outcome = c.ok ? { ok: true, text: await readFile(path.join(outDir, `${c.chart}.yaml`), 'utf8') } : { ok: false, text: c.error ?? '' };
    const verdict = await compare(c.chart, h, ours);
    verdicts.set(c.chart, verdict);
    const note = verdict === 'both fail alike' ? `${verdict}: ${h.text.split('\n')[0]?.slice(0, 60) ?? ''}` : verdict;
    console.log(
      `${c.chart.padEnd(w)} ${helmMedianMs(c.chart).toFixed(0).padStart(8)} ${(h.maxRssKb / 1024).toFixed(0).padStart(8)} ${c.firstMs.toFixed(0).padStart(9)} ${warmMedianMs(c.chart).toFixed(0).padStart(8)} ${(warmMedianMs(c.chart) / helmMedianMs(c.chart)).toFixed(2).padStart(8)}x  ${note}`,
    );
  }

  const ratios = report.charts.map((c) => warmMedianMs(c.chart) / helmMedianMs(c.chart));
  const faster = ratios.filter((r) => r < 1).length;
  const n = report.charts.length;
  const count = (v: Verdict): number => [...verdicts.values()].filter((x) => x === v).length;
  const corpusRatio = median(rounds.map((r) => r.oursMs / r.helmMs));
  const memoryRatio = median(rounds.map((r) => r.oursHwmKb / r.helmMaxRssKb));
  const helmFailed = helmRuns.filter((r) => !r.ok).length;
  const oursFailed = report.charts.filter((c) => !c.ok).length;

  console.log(`\nwhole corpus, ${n} charts (failures included: helm ${helmFailed}, binnacle ${oursFailed})`);
  console.log(`  ${`helm template, ${n} processes (sum)`.padEnd(50)} ${secs(helmTotalMs).padStart(9)}   max peak RSS ${mb(helmMaxRssKb)}`);
  console.log(`  ${`binnacle, one cold process, ${THREADS} engine thread${THREADS === 1 ? '' : 's'} (spawn → last render)`.padEnd(50)} ${secs(coldCorpusMs).padStart(9)}   peak RSS (VmHWM) ${mb(report.hwmKbAfterCorpus)}`);
  console.log(
    `    of which node + imports ${secs(report.scriptReadyMs)}, engine start ${secs(report.engineStartMs)}, first renders (outputs written) ${secs(report.rendersMs)}; ` +
      `after the warm renders: VmHWM ${mb(report.hwmKbAtEnd)}`,
  );
  const helmCpuMs = helmRuns.reduce((sum, r) => sum + r.cpuMs, 0);
  console.log(
    `  CPU time (user + system, every thread; less sensitive to the shared cores' load than wall time): helm ${secs(helmCpuMs)}, binnacle ${secs(report.cpuMsAfterCorpus)} = ${(report.cpuMsAfterCorpus / helmCpuMs).toFixed(2)}x`,
  );
  const perRound = rounds
    .map((r, i) => `round ${i + 1}: ${secs(r.oursMs)} / ${secs(r.helmMs)} = ${(r.oursMs / r.helmMs).toFixed(2)}x, ${mb(r.oursHwmKb)} / ${mb(r.helmMaxRssKb)} = ${(r.oursHwmKb / r.helmMaxRssKb).toFixed(2)}x`)
    .join('; ');
  console.log(`  ${perRound}`);
  console.log(`ratios binnacle / helm:`);
  console.log(`  whole corpus time (cold process / sum of helm processes, median of ${rounds.length} rounds)  ${corpusRatio.toFixed(2)}x`);
  console.log(`  peak memory (process VmHWM / largest helm process, median of ${rounds.length} rounds)        ${memoryRatio.toFixed(2)}x`);
  console.log(`  warm render / helm process, median over charts (per chart: median of ${WARM} warm renders / median of the ${WARM} helm processes interleaved with them)  ${median(ratios).toFixed(2)}x; warm render faster on ${faster} of ${n} charts`);
  console.log(
    `outputs: ${count('same')} byte-identical, ${count('same but Helm-random lines')} identical but for the lines Helm itself randomizes, ` +
      `${count('both fail alike')} failed with Helm's own error on both sides, ${count('MISMATCH')} mismatched`,
  );

  const slower = printGoals(report.charts.map((c) => c.chart), ratios, corpusRatio, memoryRatio);
  if (count('MISMATCH') > 0) process.exitCode = 1;

  const charts = report.charts.map((c, i): HelmChartRow => chartRow(c.chart, c.firstMs, helm.get(c.chart), paired.get(c.chart), ratios[i], verdicts.get(c.chart)));
  recorder.save({
    settings: {
      bench: { charts: n, corpus: path.relative(ROOT, CHARTS), release: RELEASE, namespace: NAMESPACE, values: 'defaults', warmPairs: WARM, rounds: ROUNDS, order: 'ABBA (helm first in even pairs)', peakRss: GNU_TIME === undefined ? 'sampled /proc VmHWM (a lower bound)' : 'GNU time -f %M' },
      binnacle: {
        what: 'createHelmEngine in one Node process (this bench bundled by esbuild, run by plain node)',
        engine: helmEngineKind(path.dirname(WASM)),
        threads: THREADS,
        spareKeys: SPARE_KEYS,
        spareKeysNote: SPARE_KEYS ? 'the engine as it ships: a spare key per size searched for between renders' : 'each RSA key searched for inside the render that asks for it, as helm template does; nothing runs between timed renders',
      },
      reference: { what: 'helm template, one process per chart', version: helmVersion, binary: path.relative(ROOT, HELM), env: 'HELM_CACHE_HOME, HELM_CONFIG_HOME, HELM_DATA_HOME under .cache/bench-data/helm' },
    },
    rounds: rounds.map((r, i) => ({ round: i + 1, ...r, ...(i === 0 ? { charts } : {}) })),
    summary: {
      charts: n,
      failed: { helm: helmFailed, binnacle: oursFailed },
      corpus: { helmMs: spread(rounds.map((r) => r.helmMs)), binnacleMs: spread(rounds.map((r) => r.oursMs)), ratio: corpusRatio, ratios: rounds.map((r) => r.oursMs / r.helmMs) },
      memory: { helmMaxRssKb: spread(rounds.map((r) => r.helmMaxRssKb)), binnacleHwmKb: spread(rounds.map((r) => r.oursHwmKb)), ratio: memoryRatio, binnacleHwmKbAfterWarm: report.hwmKbAtEnd },
      cpu: { helmMs: helmCpuMs, binnacleMs: report.cpuMsAfterCorpus, ratio: report.cpuMsAfterCorpus / helmCpuMs },
      coldProcess: { nodeAndImportsMs: report.scriptReadyMs, engineStartMs: report.engineStartMs, firstRendersMs: report.rendersMs },
      warm: { medianRatio: median(ratios), faster: faster, slower },
      outputs: { same: count('same'), sameButHelmRandom: count('same but Helm-random lines'), bothFail: count('both fail alike'), mismatch: count('MISMATCH') },
    } satisfies HelmSummary,
    goals: [
      judged('warm render faster than a helm template process on every chart', faster === n, slower.length === 0 ? `${faster} of ${n}` : `slower on ${slower.join(', ')}`),
      judged("whole corpus in at most 1.0x helm's time", corpusRatio <= 1, `${corpusRatio.toFixed(2)}x`),
      judged('peak memory at most 2x the largest helm process', memoryRatio <= 2, `${memoryRatio.toFixed(2)}x`),
      judged('every output the same as helm template (but for the lines Helm randomizes)', count('MISMATCH') === 0, `${count('MISMATCH')} mismatched`),
    ],
  });
}

if (args[0] === '--child') {
  const outDir = args[1];
  if (outDir === undefined) throw new Error('usage: bench/helm.ts --child <out-dir>');
  await child(outDir);
} else {
  await main();
}
