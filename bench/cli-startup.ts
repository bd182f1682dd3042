/**
 * CLI start-up benchmark (run on demand: `npx tsx bench/cli-startup.ts`, or `npm run bench`;
 * not a test). Issue 15 §1: a command pays only for what it uses; the goal is `binnacle --help`
 * and `binnacle catalog validate` on a small catalog within 2× of `node -e 0`, in time and in
 * peak memory.
 *
 * It compiles the CLI as `npm run build` does (tsc, tsconfig.build.json, and the top-level help's
 * index) into a private folder (.cache/bench-cli, so the shared tree's dist/ is left alone), then runs each command many
 * times, interleaved with `node -e 0`, each under `/usr/bin/time` for its peak RSS and CPU
 * time. It prints medians and the ratios to `node -e 0`. Wall time on a loaded machine is
 * noisy; CPU time (user + sys) is the steadier figure and is printed beside it.
 *
 * usage: npx tsx bench/cli-startup.ts [--runs N] [--no-build]
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, '.cache', 'bench-cli');
const MAIN = path.join(OUT, 'cli', 'main.js');
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

interface Case {
  label: string;
  args: string[];
  samples: Sample[];
}

function build(): void {
  if (process.argv.includes('--no-build') && existsSync(MAIN)) return;
  console.log(`compiling the CLI (tsc -p tsconfig.build.json --outDir ${path.relative(ROOT, OUT)}) ...`);
  // tsc emits even when some file does not type-check; the bench needs only the emitted JS.
  spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', OUT], { cwd: ROOT, stdio: 'ignore' });
  if (!existsSync(MAIN)) throw new Error(`tsc wrote no ${MAIN}`);
  // The top-level help's index, as `npm run build` writes it beside dist/cli/main.js.
  const index = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'build-help-index.ts'), path.dirname(MAIN)], { cwd: ROOT, encoding: 'utf8' });
  if (index.status !== 0) throw new Error(`build-help-index failed: ${index.stderr}`);
}

function once(args: string[]): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(TIME, ['-f', 'BENCH %U %S %M', process.execPath, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
      const m = /BENCH ([\d.]+) ([\d.]+) (\d+)/.exec(err);
      if (m === null) return reject(new Error(`no figures from ${TIME}: ${err.slice(-500)}`));
      resolve({ wallMs, cpuMs: (Number(m[1]) + Number(m[2])) * 1000, rssMb: Number(m[3]) / 1024, exit: code ?? -1 });
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

async function main(): Promise<void> {
  if (!existsSync(TIME)) throw new Error(`${TIME} is missing (apt-get install time): it measures peak memory`);
  if (!existsSync(SMALL_CATALOG)) throw new Error(`the small catalog ${SMALL_CATALOG} is missing`);
  build();
  const cases: Case[] = [
    { label: 'node -e 0', args: ['-e', '0'], samples: [] },
    { label: 'binnacle --help', args: [MAIN, '--help'], samples: [] },
    { label: 'binnacle catalog validate (small FBC)', args: [MAIN, 'catalog', 'validate', SMALL_CATALOG], samples: [] },
    { label: 'binnacle install --help', args: [MAIN, 'install', '--help'], samples: [] },
  ];
  for (const c of cases) await once(c.args); // warm the file cache
  for (let i = 0; i < RUNS; i++) for (const c of cases) c.samples.push(await once(c.args));
  const base = cases[0];
  if (base === undefined) return;
  const b = { wall: median(base.samples.map((s) => s.wallMs)), cpu: median(base.samples.map((s) => s.cpuMs)), rss: median(base.samples.map((s) => s.rssMb)) };
  console.log(`\nCLI start-up, median of ${RUNS} interleaved runs (compiled with tsc, ${path.relative(ROOT, MAIN)})`);
  console.log(`${'command'.padEnd(40)} ${'wall'.padStart(9)} ${'cpu'.padStart(9)} ${'peak RSS'.padStart(9)}   ratio to node -e 0 (wall / cpu / memory)`);
  let met = true;
  for (const c of cases) {
    const bad = c.samples.filter((s) => s.exit !== 0);
    const wall = median(c.samples.map((s) => s.wallMs));
    const cpu = median(c.samples.map((s) => s.cpuMs));
    const rss = median(c.samples.map((s) => s.rssMb));
    const ratios = [wall / b.wall, cpu / b.cpu, rss / b.rss];
    if (c !== base && (Math.max(ratios[1] ?? 0, ratios[2] ?? 0) > 2 || bad.length > 0)) met = false;
    console.log(
      `${c.label.padEnd(40)} ${`${wall.toFixed(0)} ms`.padStart(9)} ${`${cpu.toFixed(0)} ms`.padStart(9)} ${`${rss.toFixed(1)} MB`.padStart(9)}   ${ratios.map((r) => `${r.toFixed(2)}x`).join(' / ')}${bad.length > 0 ? `  (${bad.length} runs failed)` : ''}`,
    );
  }
  console.log(`goal (CPU time and memory within 2x of node -e 0): ${met ? 'met' : 'NOT met'}`);
}

await main();
