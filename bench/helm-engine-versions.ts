/**
 * Helm's engine before and after its move to Helm 4 (run on demand: `npx tsx
 * bench/helm-engine-versions.ts [--rounds 4] [--warm 7] [--no-build]`; not a test). Issue 46 §1:
 * the module's size and the engine's start-up memory stay within 10% of Helm 3's, and a warm render
 * is no more than 10% slower.
 *
 * Both engines are built here by the project's own recipe from its own history: "before" is
 * `src/helm-engine` at BEFORE_COMMIT (the last commit on Helm v3.22.0, its build.sh and Go module
 * exported with `git archive` into .cache/bench-helm-engine/, built by that build.sh (`--no-build` keeps a
 * build there) with
 * BINNACLE_HELM_WASM_DIR pointing there); "after" is the working tree's engine (hack/build-tools.sh
 * helm-wasm, .cache/helm-wasm). Same Go, same flags; their wire protocol is the same (Helm 4's side
 * only added optional fields), so today's host drives both.
 *
 * Each measurement is one fresh Node process (this file with --child) holding one engine, native
 * (the helm-engine child process) or WebAssembly (a worker thread), spare RSA keys off as in
 * bench/helm.ts so that no background search falls between timed renders:
 * - start-up memory after its first call (an `inspect` of the smallest chart, jiralert): the helm-engine process's
 *   VmHWM (native), the module's linear memory (WebAssembly);
 * - per chart, one first render (not counted) then --warm renders: the median wall time, and CPU
 *   time per render (the helm-engine process's utime+stime for native, in clock ticks summed over
 *   the renders; the Node process's, worker included, for WebAssembly).
 * Rounds alternate the order (before, after; after, before; ...), so drift in the machine's load falls
 * on both. The verdicts use the median over rounds of the five charts' summed figures.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { judged, median, spread, startRun } from './lib/results.js';
import type { HelmEngineVersionsSummary } from './lib/summaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CHARTS = process.env.BINNACLE_CHARTS_CORPUS ?? path.join(ROOT, '..', 'shared', 'corpus', 'charts');
/** The last commit whose engine is Helm v3.22.0's (e18104d moved it to helm.sh/helm/v4 v4.3.1). */
export const BEFORE_COMMIT = '60fff78';
const OUT = path.join(ROOT, '.cache', 'bench-helm-engine');
const BEFORE_DIR = path.join(OUT, 'before');
const AFTER_DIR = process.env.BINNACLE_HELM_WASM_DIR ?? path.join(ROOT, '.cache', 'helm-wasm');
/** Five corpus charts from small to large (the same as docs/helm4.md's hand figures used). */
const CHART_NAMES = ['prometheus-community__jiralert', 'prometheus-community__kube-state-metrics', 'bitnami__zookeeper', 'grafana__loki-distributed', 'prometheus-community__prometheus'];

type Kind = 'native' | 'wasm';
type Version = 'before' | 'after';

/** What one child process saw. */
export interface EngineSample {
  version: Version;
  kind: Kind;
  startupMiB: number;
  charts: { chart: string; wallMs: number[]; cpuMsPerRender: number }[];
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i > 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name}: expected a positive whole number`);
  return v;
}

// --- the child: one engine, measured --------------------------------------------------------

/** The helm-engine process among this process's children. */
function enginePid(): number | undefined {
  for (const task of readdirSync('/proc/self/task')) {
    const children = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/).filter((s) => s !== '');
    for (const pid of children) {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'helm-engine') return Number(pid);
    }
  }
  return undefined;
}

function procStatus(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? NaN);
}

/** utime + stime of `pid`, in milliseconds (clock ticks of 10 ms). */
function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function child(version: Version, kind: Kind, warm: number): Promise<void> {
  const { createHelmEngine } = await import('../src/helm-engine/index.js');
  const engine = createHelmEngine(version === 'before' ? BEFORE_DIR : AFTER_DIR, { engine: kind, threads: 1, spareKeys: false });
  try {
    await engine.inspect(path.join(CHARTS, CHART_NAMES[0] ?? ''));
    const pid = kind === 'native' ? enginePid() : undefined;
    if (kind === 'native' && pid === undefined) throw new Error('no helm-engine child process found');
    const startupMiB = pid === undefined ? engine.memory().bytes / 1024 / 1024 : procStatus(pid, 'VmHWM') / 1024;
    const cpuNow = (): number => (pid === undefined ? process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 : procCpuMs(pid));
    const charts: EngineSample['charts'] = [];
    for (const name of CHART_NAMES) {
      const req = { chart: path.join(CHARTS, name), releaseName: 'corpus', namespace: 'corpus-ns' };
      await engine.template(req);
      const wallMs: number[] = [];
      const cpuBefore = cpuNow();
      for (let i = 0; i < warm; i++) {
        const t = performance.now();
        await engine.template(req);
        wallMs.push(performance.now() - t);
      }
      charts.push({ chart: name, wallMs: wallMs.map((x) => Math.round(x * 10) / 10), cpuMsPerRender: Math.round(((cpuNow() - cpuBefore) / warm) * 10) / 10 });
    }
    const sample: EngineSample = { version, kind, startupMiB: Math.round(startupMiB * 100) / 100, charts };
    process.stdout.write(`${JSON.stringify(sample)}\n`);
  } finally {
    await engine.close();
  }
}

// --- the parent: build both, measure in alternating order, judge -----------------------------

function sh(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${String(r.status)})`);
  return r.stdout;
}

/** The helm module a build's go.mod pins. */
function helmModule(goMod: string): string {
  const m = /^\s*(helm\.sh\/helm\/v\d+)\s+(v\S+)/m.exec(goMod);
  return m === null ? 'unknown' : `${m[1] ?? ''} ${m[2] ?? ''}`;
}

function build(): { before: string; after: string } {
  const src = path.join(OUT, 'before-src');
  if (!(process.argv.includes('--no-build') && existsSync(path.join(BEFORE_DIR, 'helm-engine')))) {
    console.log(`building Helm's engine as of ${BEFORE_COMMIT} (Helm 3) into ${path.relative(ROOT, BEFORE_DIR)} ...`);
    rmSync(src, { recursive: true, force: true });
    mkdirSync(src, { recursive: true });
    const tar = spawnSync('git', ['archive', BEFORE_COMMIT, 'src/helm-engine'], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
    if (tar.status !== 0) throw new Error(`git archive ${BEFORE_COMMIT} failed: is this a clone with its history?`);
    const x = spawnSync('tar', ['-x', '-C', src], { input: tar.stdout });
    if (x.status !== 0) throw new Error('tar -x failed');
    sh('bash', [path.join(src, 'src', 'helm-engine', 'build.sh')], { ...process.env, BINNACLE_HELM_WASM_DIR: BEFORE_DIR });
  }
  // Always (nothing to do when its stamp says the working tree's sources built it): what is measured is today's engine.
  console.log("building today's engine if its sources changed (hack/build-tools.sh helm-wasm) ...");
  sh('bash', [path.join(ROOT, 'hack', 'build-tools.sh'), 'helm-wasm']);
  const before = helmModule(readFileSync(path.join(src, 'src', 'helm-engine', 'go', 'go.mod'), 'utf8'));
  const after = helmModule(readFileSync(path.join(ROOT, 'src', 'helm-engine', 'go', 'go.mod'), 'utf8'));
  return { before, after };
}

function measure(version: Version, kind: Kind, warm: number): EngineSample {
  const out = sh(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'helm-engine-versions.ts'), '--child', version, kind, '--warm', String(warm)]);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as EngineSample;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const pct = (before: number, after: number): number => Math.round((after / before - 1) * 1000) / 10;

async function main(): Promise<void> {
  if (process.argv[2] === '--child') {
    await child(process.argv[3] as Version, process.argv[4] as Kind, arg('--warm', 7));
    return;
  }
  const rounds = arg('--rounds', 4);
  const warm = arg('--warm', 7);
  const run = startRun('helm-engine-versions');
  const modules = build();
  const samples: EngineSample[] = [];
  for (let r = 0; r < rounds; r++) {
    const order: Version[] = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const kind of ['native', 'wasm'] as const) {
      for (const version of order) {
        const s = measure(version, kind, warm);
        samples.push(s);
        console.log(`round ${r + 1} ${kind} ${version}: start-up ${s.startupMiB} MiB, warm wall ${Math.round(sum(s.charts.map((c) => median(c.wallMs))))} ms, CPU ${Math.round(sum(s.charts.map((c) => c.cpuMsPerRender)))} ms per render (5 charts summed)`);
      }
    }
  }
  const size = (dir: string, file: string): number => statSync(path.join(dir, file)).size;
  const figures = (version: Version, kind: Kind): HelmEngineVersionsSummary['engines'][number]['before'] => {
    const mine = samples.filter((s) => s.version === version && s.kind === kind);
    return {
      bytes: size(version === 'before' ? BEFORE_DIR : AFTER_DIR, kind === 'native' ? 'helm-engine' : 'helm.wasm'),
      startupMiB: spread(mine.map((s) => s.startupMiB)),
      warmWallMs: spread(mine.map((s) => sum(s.charts.map((c) => median(c.wallMs))))),
      warmCpuMs: spread(mine.map((s) => sum(s.charts.map((c) => c.cpuMsPerRender)))),
    };
  };
  const engines = (['native', 'wasm'] as const).map((kind) => {
    const before = figures('before', kind);
    const after = figures('after', kind);
    return { kind, before, after, change: { bytesPct: pct(before.bytes, after.bytes), startupPct: pct(before.startupMiB.median, after.startupMiB.median), warmWallPct: pct(before.warmWallMs.median, after.warmWallMs.median), warmCpuPct: pct(before.warmCpuMs.median, after.warmCpuMs.median) } };
  });
  const summary: HelmEngineVersionsSummary = { modules, charts: CHART_NAMES, engines };
  const goals = engines.flatMap((e) => [
    judged(`${e.kind}: module size within 10% of Helm 3's`, e.change.bytesPct <= 10, `${e.before.bytes} → ${e.after.bytes} bytes (${e.change.bytesPct}%)`),
    judged(`${e.kind}: start-up memory within 10% of Helm 3's`, e.change.startupPct <= 10, `${e.before.startupMiB.median.toFixed(2)} → ${e.after.startupMiB.median.toFixed(2)} MiB (${e.change.startupPct}%)`),
    judged(`${e.kind}: a warm render no more than 10% slower (wall, 5 charts summed, median of rounds)`, e.change.warmWallPct <= 10, `${Math.round(e.before.warmWallMs.median)} → ${Math.round(e.after.warmWallMs.median)} ms (${e.change.warmWallPct}%)`),
    judged(`${e.kind}: a warm render no more than 10% slower (CPU per render, 5 charts summed, median of rounds)`, e.change.warmCpuPct <= 10, `${Math.round(e.before.warmCpuMs.median)} → ${Math.round(e.after.warmCpuMs.median)} ms (${e.change.warmCpuPct}%)`),
  ]);
  for (const g of goals) console.log(`${g.verdict === 'met' ? 'MET' : 'NOT MET'}  ${g.goal}: ${g.detail ?? ''}`);
  run.save({
    settings: {
      bench: { rounds, warm, charts: CHART_NAMES, order: 'before, after in odd rounds; after, before in even ones', spareKeys: 'off', threads: 1 },
      // Each build's stamp: its sources' digest, Go's version and the recipe's revision (build.sh).
      binnacle: { what: `Helm's engine from ${modules.after} (src/helm-engine, working tree)`, dir: path.relative(ROOT, AFTER_DIR), stamp: readFileSync(path.join(AFTER_DIR, 'stamp'), 'utf8').trim() },
      reference: { what: `Helm's engine from ${modules.before} (src/helm-engine at ${BEFORE_COMMIT}, built by its own build.sh)`, dir: path.relative(ROOT, BEFORE_DIR), stamp: readFileSync(path.join(BEFORE_DIR, 'stamp'), 'utf8').trim() },
    },
    rounds: samples,
    summary,
    goals,
  });
}

await main();
