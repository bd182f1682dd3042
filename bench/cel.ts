/**
 * CEL evaluator benchmark (on demand: `npx tsx bench/cel.ts [--rounds N]`, or `npm run bench cel`;
 * not a test): the hand-written evaluator (src/resolve/cel.ts) against @bufbuild/cel behind the
 * same contract (src/resolve/cel-bufbuild.test-helper.ts), for the issue "CEL: evaluate
 * @bufbuild/cel against the hand-written evaluator". Three measures, each printed with its ratio
 * (@bufbuild/cel ÷ hand-written):
 *
 * 1. Start-up: a node process that imports one evaluator, compiles one OLM rule and runs it once,
 *    each bundled by esbuild as the CLI bundles (semver inlined), against `node -e 0`. @bufbuild/cel
 *    both inlined (what adopting it would ship) and left in node_modules (the bundle's default
 *    for a package not in its INLINE list). Wall and CPU time, peak RSS, under /usr/bin/time.
 * 2. In one process: compiling every rule of the parity data (src/resolve/testdata/cel and
 *    test/vendor/*) that both compile, and evaluating each over the twelve parity inputs.
 * 3. `binnacle resolve --all-packages -o json` over a generated catalog (100 packages, 300
 *    bundles; 80 packages' bundles each carry two olm.constraint CEL rules, in OLM's style, on
 *    the 20 others), with the CLI bundled three ways: as it is, and with cel.ts swapped for the
 *    @bufbuild/cel one (inlined, and from node_modules). The same command with a package no
 *    catalog offers gives the start-up part; their difference is resolution. Every variant
 *    must print the same resolution.
 *
 * Runs are interleaved (one of each in turn), medians reported; CPU is user + sys. Writes every
 * raw round to bench/results/cel-<date>.json with the commit, date and CPU count.
 *
 * usage: npx tsx bench/cel.ts [--rounds N] [--resolve-rounds N]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { bundleCli } from '../src/cli/build-bundle.js';
import { compileCel, type CompiledRule } from '../src/resolve/cel.js';
import { compileCelBufbuild } from '../src/resolve/cel-bufbuild.test-helper.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, '.cache', 'bench-cel');
const TIME = '/usr/bin/time';
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg('--rounds', 15);
const RESOLVE_ROUNDS = arg('--resolve-rounds', 5);
const BUFBUILD = ['@bufbuild/cel', '@bufbuild/cel-spec', '@bufbuild/protobuf', '@bufbuild/re2'];
const HAND = path.join(ROOT, 'src', 'resolve', 'cel.ts');
const ADAPTER = path.join(ROOT, 'src', 'resolve', 'cel-bufbuild.test-helper.ts');

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
  stdout: string;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? 0 : s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** Runs node with `args` under /usr/bin/time: wall, CPU (user + sys) and peak RSS. */
function timed(args: string[]): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(TIME, ['-f', 'BENCH %U %S %M', process.execPath, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
      const m = /BENCH ([\d.]+) ([\d.]+) (\d+)/.exec(err);
      if (m === null || (code !== 0 && code !== 1)) {
        reject(new Error(`node ${args.join(' ')} exited ${String(code)}: ${err.slice(0, 2000)}`));
        return;
      }
      resolve({ wallMs, cpuMs: (Number(m[1]) + Number(m[2])) * 1000, rssMb: Number(m[3]) / 1024, stdout: out });
    });
  });
}

interface Row {
  label: string;
  samples: Sample[];
}

function summary(r: Row): { wallMs: number; cpuMs: number; rssMb: number } {
  return { wallMs: median(r.samples.map((s) => s.wallMs)), cpuMs: median(r.samples.map((s) => s.cpuMs)), rssMb: median(r.samples.map((s) => s.rssMb)) };
}

/** Runs every row's command `rounds` times, one of each in turn. */
async function interleaved(rows: { row: Row; args: string[] }[], rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) for (const { row, args } of rows) row.samples.push(await timed(args));
}

function printRows(title: string, rows: Row[], base: Row): void {
  const b = summary(base);
  console.log(`\n${title}`);
  console.log(`  ${'command'.padEnd(44)} ${'wall ms'.padStart(9)} ${'cpu ms'.padStart(9)} ${'rss MiB'.padStart(9)}   × ${base.label}`);
  for (const r of rows) {
    const s = summary(r);
    console.log(`  ${r.label.padEnd(44)} ${s.wallMs.toFixed(0).padStart(9)} ${s.cpuMs.toFixed(0).padStart(9)} ${s.rssMb.toFixed(1).padStart(9)}   wall ${(s.wallMs / b.wallMs).toFixed(2)}, cpu ${(s.cpuMs / b.cpuMs).toFixed(2)}, rss ${(s.rssMb / b.rssMb).toFixed(2)}`);
  }
}

// ---- 1. start-up -------------------------------------------------------------------------------

const PROBE_RULE = "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'etcd' && semver_compare(p.value.version, '0.9.0') >= 0)";

async function bundleProbe(name: string, module: string, exportName: string, external: string[]): Promise<string> {
  const dir = path.join(OUT, 'startup');
  mkdirSync(dir, { recursive: true });
  const entry = path.join(dir, `${name}.entry.ts`);
  writeFileSync(
    entry,
    `import { ${exportName} } from ${JSON.stringify(module)};\n` +
      `const ok = ${exportName}(${JSON.stringify(PROBE_RULE)}).matches([{ type: 'olm.package', value: { packageName: 'etcd', version: '0.9.2' } }]);\n` +
      `if (!ok) process.exit(3);\n`,
  );
  const outfile = path.join(dir, `${name}.mjs`);
  await build({ entryPoints: [entry], outfile, bundle: true, format: 'esm', platform: 'node', target: 'node20', external, logLevel: 'warning',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } });
  return outfile;
}

async function startup(): Promise<Record<string, Row>> {
  const hand = await bundleProbe('hand-written', HAND, 'compileCel', []);
  const inlined = await bundleProbe('bufbuild-inlined', ADAPTER, 'compileCelBufbuild', []);
  const external = await bundleProbe('bufbuild-node-modules', ADAPTER, 'compileCelBufbuild', BUFBUILD);
  const rows: Record<'base' | 'hand' | 'inlined' | 'external', Row> = {
    base: { label: 'node -e 0', samples: [] },
    hand: { label: 'hand-written (bundled)', samples: [] },
    inlined: { label: '@bufbuild/cel (inlined in the bundle)', samples: [] },
    external: { label: '@bufbuild/cel (from node_modules)', samples: [] },
  };
  await interleaved(
    [
      { row: rows.base, args: ['-e', '0'] },
      { row: rows.hand, args: [hand] },
      { row: rows.inlined, args: [inlined] },
      { row: rows.external, args: [external] },
    ],
    ROUNDS,
  );
  printRows(`1. start-up to one answer, ${ROUNDS} interleaved runs (medians)`, Object.values(rows), rows.base);
  const h = summary(rows.hand);
  const b = summary(rows.base);
  for (const r of [rows.inlined, rows.external]) {
    const s = summary(r);
    console.log(`  ${r.label}: ${(s.wallMs / h.wallMs).toFixed(2)}× the hand-written's wall time, ${(s.cpuMs / h.cpuMs).toFixed(2)}× its CPU, ${(s.rssMb / h.rssMb).toFixed(2)}× its RSS: +${(s.wallMs - h.wallMs).toFixed(0)} ms wall, +${(s.cpuMs - h.cpuMs).toFixed(0)} ms CPU, +${(s.rssMb - h.rssMb).toFixed(1)} MiB (node -e 0 itself: ${b.wallMs.toFixed(0)} ms, ${b.cpuMs.toFixed(0)} ms, ${b.rssMb.toFixed(1)} MiB)`);
  }
  return rows;
}

// ---- 2. compile and evaluate in one process ----------------------------------------------------------

interface Input {
  name: string;
  properties: { type: string; value: unknown }[];
  cluster: Record<string, unknown>;
}

function parityData(): { rules: string[]; inputs: Input[] } {
  const files = readdirSync(path.join(ROOT, 'test', 'vendor'))
    .map((d) => path.join(ROOT, 'test', 'vendor', d, 'olm-constraint-cel-rules.json'))
    .filter((f) => existsSync(f));
  files.push(path.join(ROOT, 'src', 'resolve', 'testdata', 'cel', 'binnacle-rules.json'));
  const all = files.flatMap((f) => (JSON.parse(readFileSync(f, 'utf8')) as { rules: { rule: string }[] }).rules.map((r) => r.rule));
  const compiles = (c: (s: string) => CompiledRule, s: string): boolean => {
    try {
      c(s);
      return true;
    } catch {
      return false;
    }
  };
  const rules = [...new Set(all)].filter((s) => compiles(compileCel, s) && compiles(compileCelBufbuild, s));
  const inputs = (JSON.parse(readFileSync(path.join(ROOT, 'src', 'resolve', 'testdata', 'cel', 'inputs.json'), 'utf8')) as { inputs: Input[] }).inputs;
  return { rules, inputs };
}

interface InProcess {
  compileMs: { hand: number[]; bufbuild: number[] };
  evalMs: { hand: number[]; bufbuild: number[] };
  rules: number;
  evaluationsPerRound: number;
}

function inProcess(): InProcess {
  const { rules, inputs } = parityData();
  const evaluators = { hand: compileCel, bufbuild: compileCelBufbuild };
  const out: InProcess = { compileMs: { hand: [], bufbuild: [] }, evalMs: { hand: [], bufbuild: [] }, rules: rules.length, evaluationsPerRound: rules.length * inputs.length * 20 };
  const compiled = { hand: rules.map((r) => compileCel(r)), bufbuild: rules.map((r) => compileCelBufbuild(r)) };
  for (let round = 0; round < ROUNDS + 3; round++) {
    for (const name of ['hand', 'bufbuild'] as const) {
      const compile = evaluators[name];
      let t = performance.now();
      for (let k = 0; k < 5; k++) for (const r of rules) compile(r);
      const compileMs = (performance.now() - t) / 5;
      t = performance.now();
      let held = 0;
      for (let k = 0; k < 20; k++) for (const c of compiled[name]) for (const i of inputs) if (c.matches(i.properties, i.cluster)) held++;
      const evalMs = performance.now() - t;
      if (held === 0) throw new Error(`${name}: no rule held`);
      if (round >= 3) {
        // the first rounds warm the JIT
        out.compileMs[name].push(compileMs);
        out.evalMs[name].push(evalMs);
      }
    }
  }
  const c = { hand: median(out.compileMs.hand), bufbuild: median(out.compileMs.bufbuild) };
  const e = { hand: median(out.evalMs.hand), bufbuild: median(out.evalMs.bufbuild) };
  console.log(`\n2. in one process, ${ROUNDS} interleaved rounds after 3 to warm up (medians): the ${rules.length} distinct parity rules both compile, over ${inputs.length} inputs`);
  console.log(`  compile all ${rules.length}: hand-written ${c.hand.toFixed(2)} ms, @bufbuild/cel ${c.bufbuild.toFixed(2)} ms (${(c.bufbuild / c.hand).toFixed(1)}×); per rule ${((c.hand * 1000) / rules.length).toFixed(1)} µs vs ${((c.bufbuild * 1000) / rules.length).toFixed(1)} µs`);
  console.log(`  ${out.evaluationsPerRound} evaluations: hand-written ${e.hand.toFixed(1)} ms, @bufbuild/cel ${e.bufbuild.toFixed(1)} ms (${(e.bufbuild / e.hand).toFixed(1)}×); per evaluation ${((e.hand * 1000) / out.evaluationsPerRound).toFixed(2)} µs vs ${((e.bufbuild * 1000) / out.evaluationsPerRound).toFixed(2)} µs`);
  return out;
}

// ---- 3. binnacle resolve ---------------------------------------------------------------------------

/** A catalog of 20 library packages and 80 that need two of them through CEL rules, three versions each. */
function writeCatalog(): string {
  const dir = path.join(OUT, 'catalog');
  mkdirSync(dir, { recursive: true });
  const lines: unknown[] = [];
  const versions = ['1.0.0', '1.1.0', '2.0.0'];
  const lib = (i: number): string => `lib-${String(i).padStart(2, '0')}`;
  const bundle = (pkg: string, version: string, i: number, props: unknown[]): unknown => ({
    schema: 'olm.bundle',
    name: `${pkg}.v${version}`,
    package: pkg,
    image: `example.com/${pkg}-bundle:v${version}`,
    properties: [{ type: 'olm.package', value: { packageName: pkg, version } }, { type: 'olm.gvk', value: { group: `${pkg}.example.com`, version: 'v1', kind: `Kind${i}` } }, ...props],
  });
  const pkg = (name: string, i: number, props: (v: string) => unknown[]): void => {
    lines.push({ schema: 'olm.package', name, defaultChannel: 'stable' });
    lines.push({ schema: 'olm.channel', name: 'stable', package: name, entries: versions.map((v, k) => ({ name: `${name}.v${v}`, ...(k > 0 ? { replaces: `${name}.v${versions[k - 1] ?? ''}` } : {}) })) });
    for (const v of versions) lines.push(bundle(name, v, i, props(v)));
  };
  for (let i = 0; i < 20; i++) pkg(lib(i), i, () => [{ type: 'olm.label', value: i % 2 === 0 ? 'tier=gold' : 'tier=silver' }]);
  for (let i = 0; i < 80; i++) {
    const a = lib(i % 20);
    const b = lib((i * 7 + 3) % 20);
    pkg(`app-${String(i).padStart(2, '0')}`, i, (v) => [
      { type: 'olm.constraint', value: { failureMessage: `needs ${a} 1.1 or newer`, cel: { rule: `properties.exists(p, p.type == 'olm.package' && p.value.packageName == '${a}' && semver_compare(p.value.version, '${v === '2.0.0' ? '2.0.0' : '1.1.0'}') >= 0)` } } },
      { type: 'olm.constraint', value: { cel: { rule: `properties.exists(p, p.type == 'olm.gvk' && p.value.group == '${b}.example.com' && p.value.version == 'v1') && !properties.exists(p, p.type == 'olm.deprecated')` } } },
    ]);
  }
  writeFileSync(path.join(dir, 'catalog.json'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return dir;
}

/** esbuild plugin: src/resolve's imports of ./cel.js get `shim` instead (but the shim's and the adapter's own). */
function swapCel(shim: string): Plugin {
  return {
    name: 'swap-cel',
    setup(b) {
      b.onResolve({ filter: /^\.\/cel\.js$/ }, (args) =>
        path.dirname(args.importer) === path.join(ROOT, 'src', 'resolve') && args.importer !== ADAPTER ? { path: shim } : undefined,
      );
    },
  };
}

async function buildClis(): Promise<{ hand: string; inlined: string; external: string }> {
  const dir = path.join(OUT, 'cli');
  mkdirSync(dir, { recursive: true });
  execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'build-help-index.ts'), dir], { cwd: ROOT, stdio: 'ignore' });
  const helpIndex = path.join(dir, 'help-index.json');
  const shim = path.join(dir, 'cel-shim.ts');
  writeFileSync(shim, `export { CelError, MAX_CEL_NESTING, MAX_CEL_TOKENS, MAX_MATCH_SUBJECT, type CompiledRule } from ${JSON.stringify(HAND)};\nexport { compileCelBufbuild as compileCel } from ${JSON.stringify(ADAPTER)};\n`);
  const entry = path.join(ROOT, 'src', 'cli', 'main.ts');
  const out = { hand: path.join(dir, 'hand-written'), inlined: path.join(dir, 'bufbuild-inlined'), external: path.join(dir, 'bufbuild-node-modules') };
  await bundleCli({ entry, outDir: out.hand, helpIndex });
  await bundleCli({ entry, outDir: out.inlined, helpIndex, plugins: [swapCel(shim)], inline: BUFBUILD });
  await bundleCli({ entry, outDir: out.external, helpIndex, plugins: [swapCel(shim)] });
  return { hand: path.join(out.hand, 'main.js'), inlined: path.join(out.inlined, 'main.js'), external: path.join(out.external, 'main.js') };
}

async function resolveBench(): Promise<Record<string, Row>> {
  const catalog = writeCatalog();
  console.log(`\nbuilding the CLI three ways into ${path.relative(ROOT, path.join(OUT, 'cli'))} ...`);
  const clis = await buildClis();
  const all = (main: string): string[] => [main, 'resolve', '--catalog', catalog, '--all-packages', '-o', 'json'];
  const none = (main: string): string[] => [main, 'resolve', '--catalog', catalog, '--package', 'not-in-the-catalog', '-o', 'json'];
  const rows: Record<'hand' | 'inlined' | 'external' | 'handNone' | 'inlinedNone' | 'externalNone', Row> = {
    hand: { label: 'resolve --all-packages, hand-written', samples: [] },
    inlined: { label: 'resolve --all-packages, @bufbuild/cel inlined', samples: [] },
    external: { label: 'resolve --all-packages, @bufbuild/cel in n_m', samples: [] },
    handNone: { label: 'start-up part, hand-written', samples: [] },
    inlinedNone: { label: 'start-up part, @bufbuild/cel inlined', samples: [] },
    externalNone: { label: 'start-up part, @bufbuild/cel in n_m', samples: [] },
  };
  await interleaved(
    [
      { row: rows.hand, args: all(clis.hand) },
      { row: rows.inlined, args: all(clis.inlined) },
      { row: rows.external, args: all(clis.external) },
      { row: rows.handNone, args: none(clis.hand) },
      { row: rows.inlinedNone, args: none(clis.inlined) },
      { row: rows.externalNone, args: none(clis.external) },
    ],
    RESOLVE_ROUNDS,
  );
  const answers = new Set([rows.hand, rows.inlined, rows.external].flatMap((r) => r.samples.map((s) => s.stdout)));
  if (answers.size !== 1) throw new Error('the three CLIs resolved the catalog differently');
  const resolved = (JSON.parse([...answers][0] ?? '{}') as { packages: { resolved: boolean }[] }).packages;
  printRows(`3. binnacle resolve over ${path.relative(ROOT, catalog)} (100 packages, 300 bundles, 480 CEL rules; ${resolved.filter((p) => p.resolved).length} of ${resolved.length} packages resolve, the same in every variant), ${RESOLVE_ROUNDS} interleaved runs`, Object.values(rows), rows.hand);
  const part = (r: Row, none: Row): { wall: number; cpu: number } => ({ wall: summary(r).wallMs - summary(none).wallMs, cpu: summary(r).cpuMs - summary(none).cpuMs });
  const h = part(rows.hand, rows.handNone);
  for (const [r, n] of [[rows.inlined, rows.inlinedNone], [rows.external, rows.externalNone]] as const) {
    const p = part(r, n);
    console.log(`  resolution alone (all packages − start-up part), ${r.label.replace('resolve --all-packages, ', '')}: wall ${p.wall.toFixed(0)} ms vs ${h.wall.toFixed(0)} ms (${(p.wall / h.wall).toFixed(2)}×), cpu ${p.cpu.toFixed(0)} ms vs ${h.cpu.toFixed(0)} ms (${(p.cpu / h.cpu).toFixed(2)}×)`);
  }
  return rows;
}

async function main(): Promise<void> {
  if (!existsSync(TIME)) throw new Error(`${TIME} is missing (apt-get install time)`);
  const started = new Date();
  const startupRows = await startup();
  const inproc = inProcess();
  const resolveRows = await resolveBench();
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
  const raw = (rows: Record<string, Row>): Record<string, { label: string; rounds: Omit<Sample, 'stdout'>[] }> =>
    Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, { label: r.label, rounds: r.samples.map(({ stdout: _s, ...s }) => s) }]));
  const results = {
    bench: 'bench/cel.ts',
    commit,
    dirty,
    date: started.toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? '',
    loadAverage: os.loadavg(),
    packages: { '@bufbuild/cel': (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '@bufbuild', 'cel', 'package.json'), 'utf8')) as { version: string }).version },
    rounds: ROUNDS,
    resolveRounds: RESOLVE_ROUNDS,
    startup: raw(startupRows),
    inProcess: inproc,
    resolve: raw(resolveRows),
  };
  const dir = path.join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `cel-${started.toISOString().slice(0, 10)}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  console.log(`\nraw rounds in ${path.relative(ROOT, file)}`);
}

await main();
