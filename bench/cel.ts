/**
 * CEL evaluator benchmark (on demand: `npx tsx bench/cel.ts [--rounds N]`, or `npm run bench cel`;
 * not a test): the hand-written evaluator (src/resolve/cel.ts) against @bufbuild/cel behind the
 * same contract (src/resolve/cel-bufbuild.test-helper.ts), for the issue "CEL: evaluate
 * @bufbuild/cel against the hand-written evaluator", whose rule is: adopt @bufbuild/cel only if
 * it costs no more in start-up time, resolution speed and memory, and gives the same answers.
 * Three measures, each printed with its ratio (@bufbuild/cel ÷ hand-written):
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
 * Besides the timings, each evaluator's answers over the parity data are counted against OLM's
 * own (src/resolve/testdata/cel/olm-verdicts.json; cel-parity.test.ts holds the differences).
 *
 * Runs are interleaved (one of each in turn), medians reported; CPU is user + sys (in 10 ms
 * steps, as /usr/bin/time reports it). The result, with every round's raw figures and the
 * issue's goals judged, is stored through bench/lib/results.ts in bench/results/cel/; the
 * README's table comes from it (`npx tsx hack/bench-readme.ts`).
 *
 * usage: npx tsx bench/cel.ts [--rounds N] [--resolve-rounds N]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { bundleCli } from '../src/cli/build-bundle.js';
import { CelError, compileCel, type CompiledRule } from '../src/resolve/cel.js';
import { compileCelBufbuild } from '../src/resolve/cel-bufbuild.test-helper.js';
import { judged, median, startRun, type GoalVerdict } from './lib/results.js';
import { timedNode, type TimedNode } from './lib/timed-node.js';
import type { CelProcessFigures, CelSummary } from './lib/summaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, '.cache', 'bench-cel');
const TIME = '/usr/bin/time';
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg('--rounds', 15);
const RESOLVE_ROUNDS = arg('--resolve-rounds', 5);
/** In-process: rounds run first and not kept (the JIT warms up), compiles and evaluations a round. */
const WARMUP_ROUNDS = 3;
const COMPILE_REPEATS = 5;
const EVAL_REPEATS = 20;
const BUFBUILD = ['@bufbuild/cel', '@bufbuild/cel-spec', '@bufbuild/protobuf', '@bufbuild/re2'];
const HAND = path.join(ROOT, 'src', 'resolve', 'cel.ts');
const ADAPTER = path.join(ROOT, 'src', 'resolve', 'cel-bufbuild.test-helper.ts');
const CEL_DATA = path.join(ROOT, 'src', 'resolve', 'testdata', 'cel');
/** The generated catalog's shape (writeCatalog). */
const CATALOG = { libraries: 20, apps: 80, versions: ['1.0.0', '1.1.0', '2.0.0'], rulesPerAppBundle: 2 };

type Sample = TimedNode;

const version = (pkg: string): string => (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
const rel = (a: string): string => (path.isAbsolute(a) ? path.relative(ROOT, a) : a);

/** Runs node with `args` under /usr/bin/time: wall, CPU (user + sys) and peak RSS. Exit 0 or 1 is an answer. */
function timed(args: string[]): Promise<Sample> {
  return timedNode(args, { cwd: ROOT, okExits: [0, 1] });
}

interface Row {
  key: string;
  label: string;
  args: string[];
  samples: Sample[];
}

function figures(r: Row): CelProcessFigures {
  return { wallMs: median(r.samples.map((s) => s.wallMs)), cpuMs: median(r.samples.map((s) => s.cpuMs)), rssMb: median(r.samples.map((s) => s.rssMb)) };
}

const over = (a: CelProcessFigures, b: CelProcessFigures): { wall: number; cpu: number; rss: number } => ({ wall: a.wallMs / b.wallMs, cpu: a.cpuMs / b.cpuMs, rss: a.rssMb / b.rssMb });

/** Runs every row's command `rounds` times, one of each in turn. */
async function interleaved(rows: Row[], rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) for (const row of rows) row.samples.push(await timed(row.args));
}

function printRows(title: string, rows: Row[], base: Row): void {
  const b = figures(base);
  console.log(`\n${title}`);
  console.log(`  ${'command'.padEnd(44)} ${'wall ms'.padStart(9)} ${'cpu ms'.padStart(9)} ${'rss MiB'.padStart(9)}   × ${base.label}`);
  for (const r of rows) {
    const s = figures(r);
    const x = over(s, b);
    console.log(`  ${r.label.padEnd(44)} ${s.wallMs.toFixed(0).padStart(9)} ${s.cpuMs.toFixed(0).padStart(9)} ${s.rssMb.toFixed(1).padStart(9)}   wall ${x.wall.toFixed(2)}, cpu ${x.cpu.toFixed(2)}, rss ${x.rss.toFixed(2)}`);
  }
}

/** The raw rounds as stored: every run of every command, without its output. */
const rawRounds = (measure: string, rows: Row[]): unknown[] =>
  rows.map((r) => ({ measure, variant: r.key, label: r.label, args: r.args.map(rel), samples: r.samples.map(({ stdout: _s, ...s }) => s) }));

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

type StartupRows = Record<'node' | 'hand' | 'inlined' | 'external', Row>;

async function startup(): Promise<StartupRows> {
  const rows: StartupRows = {
    node: { key: 'node', label: 'node -e 0', args: ['-e', '0'], samples: [] },
    hand: { key: 'hand', label: 'hand-written (bundled)', args: [await bundleProbe('hand-written', HAND, 'compileCel', [])], samples: [] },
    inlined: { key: 'inlined', label: '@bufbuild/cel (inlined in the bundle)', args: [await bundleProbe('bufbuild-inlined', ADAPTER, 'compileCelBufbuild', [])], samples: [] },
    external: { key: 'external', label: '@bufbuild/cel (from node_modules)', args: [await bundleProbe('bufbuild-node-modules', ADAPTER, 'compileCelBufbuild', BUFBUILD)], samples: [] },
  };
  await interleaved(Object.values(rows), ROUNDS);
  printRows(`1. start-up to one answer, ${ROUNDS} interleaved runs (medians)`, Object.values(rows), rows.node);
  const h = figures(rows.hand);
  for (const r of [rows.inlined, rows.external]) {
    const s = figures(r);
    console.log(`  ${r.label}: ${(s.wallMs / h.wallMs).toFixed(2)}× the hand-written's wall time, ${(s.cpuMs / h.cpuMs).toFixed(2)}× its CPU, ${(s.rssMb / h.rssMb).toFixed(2)}× its RSS`);
  }
  return rows;
}

function startupSummary(rows: StartupRows): CelSummary['startup'] {
  const node = figures(rows.node);
  const hand = figures(rows.hand);
  return {
    rows: (['node', 'hand', 'inlined', 'external'] as const).map((variant) => {
      const f = figures(rows[variant]);
      return { variant, label: rows[variant].label, ...f, toNode: over(f, node), toHand: variant === 'node' ? null : over(f, hand) };
    }),
  };
}

// ---- 2. compile and evaluate in one process ----------------------------------------------------------

interface Input {
  name: string;
  properties: { type: string; value: unknown }[];
  cluster: Record<string, unknown>;
}

interface ParityRule {
  id: string;
  rule: string;
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

/** Every rule of the parity data (OLM's tests' and Binnacle's), and the candidates they run over. */
function parityData(): { rules: ParityRule[]; inputs: Input[] } {
  const files = readdirSync(path.join(ROOT, 'test', 'vendor'))
    .map((d) => path.join(ROOT, 'test', 'vendor', d, 'olm-constraint-cel-rules.json'))
    .filter((f) => existsSync(f));
  files.push(path.join(CEL_DATA, 'binnacle-rules.json'));
  const rules = files.flatMap((f) => (readJson(f) as { rules: ParityRule[] }).rules);
  const inputs = (readJson(path.join(CEL_DATA, 'inputs.json')) as { inputs: Input[] }).inputs;
  return { rules, inputs };
}

const compiles = (c: (s: string) => CompiledRule, s: string): boolean => {
  try {
    c(s);
    return true;
  } catch {
    return false;
  }
};

interface InProcessRounds {
  compileMs: { hand: number[]; bufbuild: number[] };
  evalMs: { hand: number[]; bufbuild: number[] };
}

/** One round of one evaluator: every rule compiled COMPILE_REPEATS times (the mean), every compiled rule over every input EVAL_REPEATS times. */
function inProcessRound(compile: (s: string) => CompiledRule, rules: string[], compiled: CompiledRule[], inputs: Input[]): { compileMs: number; evalMs: number } {
  let t = performance.now();
  for (let k = 0; k < COMPILE_REPEATS; k++) for (const r of rules) compile(r);
  const compileMs = (performance.now() - t) / COMPILE_REPEATS;
  t = performance.now();
  let held = 0;
  for (let k = 0; k < EVAL_REPEATS; k++) for (const c of compiled) for (const i of inputs) if (c.matches(i.properties, i.cluster)) held++;
  const evalMs = performance.now() - t;
  if (held === 0) throw new Error('no rule held');
  return { compileMs, evalMs };
}

function inProcess(): { rounds: InProcessRounds; summary: CelSummary['inProcess'] } {
  const data = parityData();
  const rules = [...new Set(data.rules.map((r) => r.rule))].filter((s) => compiles(compileCel, s) && compiles(compileCelBufbuild, s));
  const { inputs } = data;
  const evaluators = { hand: compileCel, bufbuild: compileCelBufbuild };
  const out: InProcessRounds = { compileMs: { hand: [], bufbuild: [] }, evalMs: { hand: [], bufbuild: [] } };
  const compiled = { hand: rules.map((r) => compileCel(r)), bufbuild: rules.map((r) => compileCelBufbuild(r)) };
  for (let round = 0; round < ROUNDS + WARMUP_ROUNDS; round++) {
    for (const name of ['hand', 'bufbuild'] as const) {
      const r = inProcessRound(evaluators[name], rules, compiled[name], inputs);
      if (round < WARMUP_ROUNDS) continue;
      out.compileMs[name].push(r.compileMs);
      out.evalMs[name].push(r.evalMs);
    }
  }
  const evaluations = rules.length * inputs.length * EVAL_REPEATS;
  const us = (msPerRound: number[], per: number): number => (median(msPerRound) * 1000) / per;
  const compileUs = { hand: us(out.compileMs.hand, rules.length), bufbuild: us(out.compileMs.bufbuild, rules.length), ratio: 0 };
  compileUs.ratio = compileUs.bufbuild / compileUs.hand;
  const evaluateUs = { hand: us(out.evalMs.hand, evaluations), bufbuild: us(out.evalMs.bufbuild, evaluations), ratio: 0 };
  evaluateUs.ratio = evaluateUs.bufbuild / evaluateUs.hand;
  console.log(`\n2. in one process, ${ROUNDS} interleaved rounds after ${WARMUP_ROUNDS} to warm up (medians): the ${rules.length} distinct parity rules both compile, over ${inputs.length} inputs`);
  console.log(`  compile, per rule: hand-written ${compileUs.hand.toFixed(1)} µs, @bufbuild/cel ${compileUs.bufbuild.toFixed(1)} µs (${compileUs.ratio.toFixed(1)}×)`);
  console.log(`  evaluate, per evaluation (${evaluations} a round): hand-written ${evaluateUs.hand.toFixed(2)} µs, @bufbuild/cel ${evaluateUs.bufbuild.toFixed(2)} µs (${evaluateUs.ratio.toFixed(1)}×)`);
  return { rounds: out, summary: { rules: rules.length, inputs: inputs.length, evaluationsPerRound: evaluations, compileUs, evaluateUs } };
}

// ---- answers, against OLM's ------------------------------------------------------------------------

interface Verdict {
  id: string;
  rule: string;
  compileError?: string;
  results?: Record<string, boolean | 'error'>;
}

/** What a compiled rule answers over each input: holds or not; a rule that does not compile never holds. */
function answersOf(compile: (s: string) => CompiledRule, rule: string, inputs: Input[]): boolean[] {
  let c: CompiledRule;
  try {
    c = compile(rule);
  } catch (e) {
    if (!(e instanceof CelError)) throw e;
    return inputs.map(() => false);
  }
  return inputs.map((i) => c.matches(i.properties, i.cluster));
}

/**
 * Each evaluator's answers, rule by candidate, against OLM's: a rule holds exactly when OLM says
 * true (a rule OLM refuses to compile holds for none), as cel-parity.test.ts counts them.
 */
function answers(): CelSummary['answers'] {
  const { rules, inputs } = parityData();
  const verdicts = new Map((readJson(path.join(CEL_DATA, 'olm-verdicts.json')) as { rules: Verdict[] }).rules.map((v) => [v.id, v]));
  const out: CelSummary['answers'] = { rules: rules.length, inputs: inputs.length, answers: rules.length * inputs.length, asOlm: { hand: 0, bufbuild: 0 }, differ: { hand: [], bufbuild: [] }, agree: 0 };
  for (const r of rules) {
    const v = verdicts.get(r.id);
    if (v?.rule !== r.rule) throw new Error(`${r.id}: no OLM verdict for this rule (hack/bench-tools/olm-cel/verdicts.sh)`);
    const olm = inputs.map((i) => v.compileError === undefined && v.results?.[i.name] === true);
    const got = { hand: answersOf(compileCel, r.rule, inputs), bufbuild: answersOf(compileCelBufbuild, r.rule, inputs) };
    for (const side of ['hand', 'bufbuild'] as const) {
      const same = got[side].filter((a, k) => a === olm[k]).length;
      out.asOlm[side] += same;
      if (same < inputs.length) out.differ[side].push(`${r.id} (${inputs.length - same})`);
    }
    out.agree += got.hand.filter((a, k) => a === got.bufbuild[k]).length;
  }
  console.log(`\nanswers over the parity data (${out.rules} rules × ${out.inputs} candidates), as OLM's: hand-written ${out.asOlm.hand} of ${out.answers} (differs on ${out.differ.hand.join(', ') || 'none'}), @bufbuild/cel ${out.asOlm.bufbuild} (differs on ${out.differ.bufbuild.join(', ') || 'none'}); the two agree on ${out.agree}`);
  return out;
}

// ---- 3. binnacle resolve ---------------------------------------------------------------------------

/** A catalog of 20 library packages and 80 that need two of them through CEL rules, three versions each. */
function writeCatalog(): string {
  const dir = path.join(OUT, 'catalog');
  mkdirSync(dir, { recursive: true });
  const lines: unknown[] = [];
  const { versions } = CATALOG;
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
  for (let i = 0; i < CATALOG.libraries; i++) pkg(lib(i), i, () => [{ type: 'olm.label', value: i % 2 === 0 ? 'tier=gold' : 'tier=silver' }]);
  for (let i = 0; i < CATALOG.apps; i++) {
    const a = lib(i % CATALOG.libraries);
    const b = lib((i * 7 + 3) % CATALOG.libraries);
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

const VARIANTS = ['hand', 'inlined', 'external'] as const;
type Variant = (typeof VARIANTS)[number];
const VARIANT_LABEL: Record<Variant, string> = { hand: 'hand-written', inlined: '@bufbuild/cel inlined', external: '@bufbuild/cel in node_modules' };

interface ResolveRows {
  all: Record<Variant, Row>;
  none: Record<Variant, Row>;
}

async function resolveBench(): Promise<{ rows: ResolveRows; summary: CelSummary['resolve'] }> {
  const catalog = writeCatalog();
  console.log(`\nbuilding the CLI three ways into ${path.relative(ROOT, path.join(OUT, 'cli'))} ...`);
  const clis = await buildClis();
  const row = (v: Variant, what: 'all' | 'none'): Row =>
    what === 'all'
      ? { key: v, label: `resolve --all-packages, ${VARIANT_LABEL[v]}`, args: [clis[v], 'resolve', '--catalog', catalog, '--all-packages', '-o', 'json'], samples: [] }
      : { key: `${v}-startup-part`, label: `start-up part, ${VARIANT_LABEL[v]}`, args: [clis[v], 'resolve', '--catalog', catalog, '--package', 'not-in-the-catalog', '-o', 'json'], samples: [] };
  const rows: ResolveRows = { all: { hand: row('hand', 'all'), inlined: row('inlined', 'all'), external: row('external', 'all') }, none: { hand: row('hand', 'none'), inlined: row('inlined', 'none'), external: row('external', 'none') } };
  await interleaved([...Object.values(rows.all), ...Object.values(rows.none)], RESOLVE_ROUNDS);
  const outputs = Object.values(rows.all).flatMap((r) => r.samples.map((s) => s.stdout));
  const sameResolution = new Set(outputs).size === 1;
  const resolved = (JSON.parse(outputs[0] ?? '{}') as { packages?: { resolved: boolean }[] }).packages ?? [];
  const resolvedPackages = resolved.filter((p) => p.resolved).length;
  printRows(`3. binnacle resolve over ${path.relative(ROOT, catalog)}, ${RESOLVE_ROUNDS} interleaved runs; ${resolvedPackages} of ${resolved.length} packages resolve; the same resolution in every run of every variant: ${sameResolution ? 'yes' : 'NO'}`, [...Object.values(rows.all), ...Object.values(rows.none)], rows.all.hand);
  const resolution = (v: Variant): { wallMs: number; cpuMs: number } => ({ wallMs: figures(rows.all[v]).wallMs - figures(rows.none[v]).wallMs, cpuMs: figures(rows.all[v]).cpuMs - figures(rows.none[v]).cpuMs });
  const hand = { all: figures(rows.all.hand), resolution: resolution('hand') };
  const summaryRows = VARIANTS.map((v) => {
    const all = figures(rows.all[v]);
    const res = resolution(v);
    return { variant: v, label: VARIANT_LABEL[v], all, startupPart: figures(rows.none[v]), resolution: res, toHand: { cpu: all.cpuMs / hand.all.cpuMs, resolutionCpu: res.cpuMs / hand.resolution.cpuMs, rss: all.rssMb / hand.all.rssMb } };
  });
  for (const r of summaryRows.slice(1)) console.log(`  resolution alone (all packages − start-up part), ${r.label}: cpu ${r.resolution.cpuMs.toFixed(0)} ms vs ${hand.resolution.cpuMs.toFixed(0)} ms (${r.toHand.resolutionCpu.toFixed(2)}×), wall ${r.resolution.wallMs.toFixed(0)} ms vs ${hand.resolution.wallMs.toFixed(0)} ms`);
  const packages = CATALOG.libraries + CATALOG.apps;
  return {
    rows,
    summary: { packages, bundles: packages * CATALOG.versions.length, celRules: CATALOG.apps * CATALOG.versions.length * CATALOG.rulesPerAppBundle, resolvedPackages, sameResolution, rows: summaryRows },
  };
}

// ---- the issue's goals ------------------------------------------------------------------------------

const f0 = (x: number): string => x.toFixed(0);
const f1 = (x: number): string => x.toFixed(1);

/** The issue's rule, as goals for the hand-written side: no slower, no larger, and the same answers. */
function goals(s: CelSummary): GoalVerdict[] {
  const st = (v: 'hand' | 'inlined' | 'external'): CelProcessFigures => s.startup.rows.find((r) => r.variant === v) ?? { wallMs: NaN, cpuMs: NaN, rssMb: NaN };
  const rs = (v: Variant): CelSummary['resolve']['rows'][number] | undefined => s.resolve.rows.find((r) => r.variant === v);
  const [h, i, e] = [st('hand'), st('inlined'), st('external')];
  const [rh, ri, re] = [rs('hand'), rs('inlined'), rs('external')];
  const noMore = (a: number, ...bs: number[]): boolean => bs.every((b) => a <= b);
  const out = [
    judged('start-up to the first answer: the hand-written no slower than @bufbuild/cel, inlined or from node_modules (median CPU and wall)', noMore(h.cpuMs, i.cpuMs, e.cpuMs) && noMore(h.wallMs, i.wallMs, e.wallMs),
      `CPU ${f0(h.cpuMs)} ms vs ${f0(i.cpuMs)} / ${f0(e.cpuMs)} ms; wall ${f0(h.wallMs)} ms vs ${f0(i.wallMs)} / ${f0(e.wallMs)} ms`),
    judged('start-up to the first answer: the hand-written no larger than @bufbuild/cel (median peak RSS)', noMore(h.rssMb, i.rssMb, e.rssMb), `${f1(h.rssMb)} MiB vs ${f1(i.rssMb)} / ${f1(e.rssMb)} MiB`),
    judged('in one process: the hand-written no slower than @bufbuild/cel to compile a rule and to evaluate one', noMore(s.inProcess.compileUs.hand, s.inProcess.compileUs.bufbuild) && noMore(s.inProcess.evaluateUs.hand, s.inProcess.evaluateUs.bufbuild),
      `compile ${f1(s.inProcess.compileUs.hand)} µs vs ${f1(s.inProcess.compileUs.bufbuild)} µs, evaluate ${s.inProcess.evaluateUs.hand.toFixed(2)} µs vs ${s.inProcess.evaluateUs.bufbuild.toFixed(2)} µs`),
  ];
  if (rh === undefined || ri === undefined || re === undefined) return out;
  out.push(
    judged('binnacle resolve --all-packages: the hand-written CLI no slower than @bufbuild/cel\'s, inlined or from node_modules (median CPU, whole command and the resolution alone)', noMore(rh.all.cpuMs, ri.all.cpuMs, re.all.cpuMs) && noMore(rh.resolution.cpuMs, ri.resolution.cpuMs, re.resolution.cpuMs),
      `CPU ${f0(rh.all.cpuMs)} ms vs ${f0(ri.all.cpuMs)} / ${f0(re.all.cpuMs)} ms; resolution alone ${f0(rh.resolution.cpuMs)} ms vs ${f0(ri.resolution.cpuMs)} / ${f0(re.resolution.cpuMs)} ms`),
    judged('binnacle resolve --all-packages: the hand-written CLI no larger than @bufbuild/cel\'s (median peak RSS)', noMore(rh.all.rssMb, ri.all.rssMb, re.all.rssMb), `${f1(rh.all.rssMb)} MiB vs ${f1(ri.all.rssMb)} / ${f1(re.all.rssMb)} MiB`),
    judged('the same answers: every run of every variant of binnacle resolve prints the same resolution of the catalog', s.resolve.sameResolution, `${s.resolve.resolvedPackages} of ${s.resolve.packages} packages resolve`),
  );
  return out;
}

async function main(): Promise<void> {
  const recorder = startRun('cel');
  if (!existsSync(TIME)) throw new Error(`${TIME} is missing (apt-get install time)`);
  const startupRows = await startup();
  const inproc = inProcess();
  const answered = answers();
  const resolved = await resolveBench();
  const summary: CelSummary = { startup: startupSummary(startupRows), inProcess: inproc.summary, resolve: resolved.summary, answers: answered };
  const judgedGoals = goals(summary);
  console.log('\ngoals (the issue: adopt @bufbuild/cel only if it costs no more and answers the same):');
  for (const g of judgedGoals) console.log(`  ${g.verdict === 'met' ? 'met    ' : 'NOT met'}  ${g.goal} (${g.detail ?? ''})`);
  recorder.save({
    settings: {
      bench: {
        rounds: ROUNDS,
        resolveRounds: RESOLVE_ROUNDS,
        interleaved: true,
        statistic: 'median of the rounds; CPU is user + sys from /usr/bin/time (10 ms steps), memory its peak RSS (%M)',
        startupProbe: { rule: PROBE_RULE, bundled: 'esbuild, ESM, node20, as the CLI bundles' },
        inProcess: { warmupRounds: WARMUP_ROUNDS, compileRepeats: COMPILE_REPEATS, evalRepeats: EVAL_REPEATS, rules: 'the distinct parity rules both evaluators compile' },
        resolve: { catalog: CATALOG, command: 'resolve --catalog DIR --all-packages -o json', startupPart: 'resolve --catalog DIR --package not-in-the-catalog -o json', resolution: 'median of the whole command − median of the start-up part' },
      },
      binnacle: { what: 'the hand-written evaluator, src/resolve/cel.ts', bundled: 'inlined in the CLI bundle (src/cli/build-bundle.ts), as it ships' },
      reference: {
        what: '@bufbuild/cel behind the same contract (src/resolve/cel-bufbuild.test-helper.ts, OLM\'s semver_compare as a custom function)',
        version: version('@bufbuild/cel'),
        packages: Object.fromEntries(BUFBUILD.map((p) => [p, version(p)])),
        variants: { inlined: 'the @bufbuild packages inlined in the bundle (what adopting it would ship)', external: 'left in node_modules (the bundle\'s default for a package not in its INLINE list)' },
      },
    },
    rounds: [
      ...rawRounds('startup', Object.values(startupRows)),
      { measure: 'in-process', unit: 'ms a round: compile = every rule once (mean of the repeats), evaluate = every evaluation of the round', compileMs: inproc.rounds.compileMs, evalMs: inproc.rounds.evalMs },
      ...rawRounds('resolve', [...Object.values(resolved.rows.all), ...Object.values(resolved.rows.none)]),
    ],
    summary,
    goals: judgedGoals,
  });
}

await main();
