/**
 * Resolution benchmark (on demand: `npx tsx bench/resolve.ts [corpus-dir]`).
 *
 * Renders the corpus catalog (cached under .cache/bench-data), resolves every package's default
 * channel, and reports p50/p99/max per request — end to end (problem building + solving) and
 * SAT-only. Then writes the same SAT problems as JSON and, when Go is available, runs them
 * through operator-framework/deppy v0.3.0 (hack/bench-tools/deppy, built into .cache/bench-bin
 * only when missing), checks that both pick the same bundles, and prints the time ratio.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DeclarativeConfig } from '../src/catalog/index.js';
import { render } from '../src/catalog-render/index.js';
import { CatalogIndex, ResolutionError, resolutionProblem, resolve, solveSat, type ResolveInput, type SatVariable } from '../src/resolve/index.js';
import { judged, startRun, type GoalVerdict } from './lib/results.js';
import type { Quantiles, ResolveSummary } from './lib/summaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CORPUS = process.argv[2] ?? process.env.BINNACLE_CORPUS ?? path.join(ROOT, '..', 'shared', 'corpus', 'operatorhub-2021');
const DATA = path.join(ROOT, '.cache', 'bench-data');
const BIN = path.join(ROOT, '.cache', 'bench-bin', 'deppy-bench');
const REPEAT = 7;

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

function summary(label: string, ms: readonly number[]): Quantiles {
  const s = [...ms].sort((a, b) => a - b);
  const out = { p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s[s.length - 1] ?? 0, n: s.length };
  console.log(`${label.padEnd(28)} n=${s.length}  p50 ${out.p50.toFixed(3)} ms  p99 ${out.p99.toFixed(3)} ms  max ${out.max.toFixed(3)} ms`);
  return out;
}

async function loadCorpus(): Promise<DeclarativeConfig> {
  mkdirSync(DATA, { recursive: true });
  const cache = path.join(DATA, `${path.basename(CORPUS)}.fbc.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as DeclarativeConfig;
  const started = performance.now();
  const out = await render([CORPUS]);
  console.log(`rendered ${CORPUS} in ${((performance.now() - started) / 1000).toFixed(1)} s (${out.failures.length} render failures)`);
  writeFileSync(cache, JSON.stringify(out.config));
  return out.config;
}

interface DeppyResult {
  name: string;
  ok: boolean;
  selected: string[] | null;
  coreSize: number;
  error?: string;
  medianMs: number;
}

function buildDeppy(): boolean {
  if (existsSync(BIN)) return true;
  if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) return false;
  mkdirSync(path.dirname(BIN), { recursive: true });
  console.log('building the Deppy harness (once) ...');
  execFileSync('go', ['build', '-o', BIN, '.'], { cwd: path.join(ROOT, 'hack', 'bench-tools', 'deppy'), stdio: 'inherit' });
  return true;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Random Deppy-style problems: up to 12 variables, every constraint kind. */
function randomProblems(count: number): { name: string; variables: SatVariable[] }[] {
  const out: { name: string; variables: SatVariable[] }[] = [];
  for (let seed = 1; seed <= count; seed++) {
    const r = rng(seed * 7919);
    const n = 2 + Math.floor(r() * 11);
    const names = Array.from({ length: n }, (_, i) => `v${i}`);
    const pick = (): string => names[Math.floor(r() * n)] ?? 'v0';
    const variables: SatVariable[] = names.map((id) => {
      const cs: SatVariable['constraints'][number][] = [];
      if (r() < 0.25) cs.push({ kind: 'mandatory' });
      if (r() < 0.05) cs.push({ kind: 'prohibited' });
      if (r() < 0.6) cs.push({ kind: 'dependency', ids: Array.from({ length: 1 + Math.floor(r() * 4) }, pick) });
      if (r() < 0.2) cs.push({ kind: 'dependency', ids: Array.from({ length: 1 + Math.floor(r() * 3) }, pick) });
      if (r() < 0.2) cs.push({ kind: 'conflict', id: pick() });
      if (r() < 0.15) cs.push({ kind: 'atMost', n: 1 + Math.floor(r() * 2), ids: [...new Set(Array.from({ length: 2 + Math.floor(r() * 3) }, pick))] });
      return { id, constraints: cs };
    });
    out.push({ name: `random ${seed}`, variables });
  }
  return out;
}

/** Microseconds: enough for times of a few milliseconds, and a smaller file. */
const us = (ms: number): number => Math.round(ms * 1000) / 1000;

type NamedInput = { name: string; input: ResolveInput };

/** Upgrades: installed at an entry something replaces, asking for anything newer in that channel. */
function upgradeInputs(cfg: Awaited<ReturnType<typeof loadCorpus>>, index: CatalogIndex): NamedInput[] {
  const out: NamedInput[] = [];
  for (const ch of cfg.channels) {
    const from = ch.entries.find((e) => ch.entries.some((o) => o.replaces === e.name || (o.skips ?? []).includes(e.name)));
    const entity = from === undefined ? undefined : index.byName.get(from.name)?.[0];
    if (entity === undefined) continue;
    out.push({
      name: `upgrade ${ch.package}/${ch.name} from ${entity.version.version}`,
      input: { catalogs: index, installed: [{ bundle: entity.name }], requests: [{ package: ch.package, channels: [ch.name], versionRange: `>${entity.version.version}` }] },
    });
  }
  return out;
}

/** REPEAT end-to-end resolutions of one input, in ms (one that cannot be resolved is explained, and timed too). */
function timeResolve(input: ResolveInput): number[] {
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const t = performance.now();
    try {
      resolve(input);
    } catch (err) {
      if (!(err instanceof ResolutionError)) throw err;
    }
    times.push(performance.now() - t);
  }
  return times;
}

async function main(): Promise<void> {
  const recorder = startRun('resolve');
  const cfg = await loadCorpus();
  const index = new CatalogIndex([{ name: 'corpus', priority: 0, config: cfg }]);
  const inputs: NamedInput[] = index.packages().map((pkg) => {
    const def = index.defaultChannel(pkg);
    return { name: pkg, input: { catalogs: index, requests: [{ package: pkg, channels: def === undefined ? [] : [def] }] } };
  });
  const packageCount = inputs.length;
  inputs.push(...upgradeInputs(cfg, index));
  const upgradeCount = inputs.length - packageCount;
  // Bulk: ten packages in one request (APIs clash now and then, which exercises the cores).
  const names = index.packages();
  for (let i = 0; i < names.length; i += 10) {
    inputs.push({ name: `bulk ${i / 10}`, input: { catalogs: index, requests: names.slice(i, i + 10).map((p) => ({ package: p })) } });
  }
  console.log(`${names.length} packages, ${index.bundles.length} bundles; ${packageCount} package, ${upgradeCount} upgrade and ${inputs.length - packageCount - upgradeCount} bulk requests`);

  const ends: number[] = [];
  const sats: number[] = [];
  const ours = new Map<string, string[] | null>();
  const problems: { name: string; variables: SatVariable[] }[] = [];
  /** Every timed call, per request: the raw figures of the stored result. */
  const raw: { name: string; endToEndMs: number[]; satMs: number[] }[] = [];
  let unsat = 0;
  for (const { name, input } of inputs) {
    const times = timeResolve(input);
    ends.push(median(times));
    const variables = resolutionProblem(input);
    problems.push({ name, variables });
    const satTimes: number[] = [];
    let last = solveSat(variables);
    for (let i = 0; i < REPEAT; i++) {
      const t = performance.now();
      last = solveSat(variables);
      satTimes.push(performance.now() - t);
    }
    sats.push(median(satTimes));
    raw.push({ name, endToEndMs: times.map(us), satMs: satTimes.map(us) });
    if (last.satisfiable) ours.set(name, last.selected.map((v) => v.id).sort());
    else {
      ours.set(name, null);
      unsat++;
    }
  }
  console.log(`${inputs.length - unsat} resolved, ${unsat} explained`);
  const groups = {
    package: summary('  package requests', ends.slice(0, packageCount)),
    upgrade: summary('  upgrade requests', ends.slice(packageCount, packageCount + upgradeCount)),
    bulk: summary('  bulk requests', ends.slice(packageCount + upgradeCount)),
  };
  const end = summary('binnacle end-to-end', ends);
  const sat = summary('binnacle SAT only', sats);
  const met = end.p50 < 5 && end.p99 < 50;
  console.log(`goals p50 < 5 ms, p99 < 50 ms: ${met ? 'met' : 'NOT met'}`);
  const goals: GoalVerdict[] = [judged('end-to-end resolution p50 < 5 ms and p99 < 50 ms (medians of each request)', met, `p50 ${end.p50.toFixed(3)} ms, p99 ${end.p99.toFixed(3)} ms`)];

  // Random small SAT problems (the unit tests' generator, bigger): semantics check against Deppy.
  const randoms = randomProblems(400);
  for (const r of randoms) {
    const out = solveSat(r.variables);
    ours.set(r.name, out.satisfiable ? out.selected.map((v) => v.id).sort() : null);
  }
  problems.push(...randoms);

  const file = path.join(DATA, 'resolve-problems.json');
  writeFileSync(file, JSON.stringify({ repeat: REPEAT, problems }));
  console.log(`wrote ${problems.length} problems to ${path.relative(ROOT, file)}`);

  const deppy = compareWithDeppy(file, ours, randoms.length, { sat, end });
  recorder.save({
    settings: {
      bench: { corpus: path.relative(ROOT, CORPUS), repeat: REPEAT, figure: "each request's median of its repeats; quantiles over requests", randomProblems: randoms.length },
      binnacle: { what: 'resolve() (problem building + SAT) and solveSat() alone, in this process', node: process.version },
      reference: { what: 'operator-framework/deppy v0.3.0 SAT solver (hack/bench-tools/deppy)', binary: path.relative(ROOT, BIN), note: 'the same SAT problems as JSON; its own median of the same repeats' },
    },
    rounds: [{ binnacle: raw, deppy: deppy?.raw ?? null }],
    summary: {
      packages: names.length,
      bundles: index.bundles.length,
      requests: { package: packageCount, upgrade: upgradeCount, bulk: inputs.length - packageCount - upgradeCount },
      resolved: inputs.length - unsat,
      explained: unsat,
      groups,
      endToEnd: end,
      sat,
      deppy: deppy?.summary ?? null,
      sameAnswer: deppy?.same ?? null,
    } satisfies ResolveSummary,
    goals,
  });
}

/** Runs the written problems through Deppy, checks the answers match, prints the ratio. */
interface DeppyComparison {
  summary: Quantiles;
  raw: { name: string; medianMs: number }[];
  same: { corpus: number; corpusOf: number; random: number; randomOf: number; differ: string[] };
  ratios: { satP50: number; satP99: number; endToEndP50: number };
}

function compareWithDeppy(file: string, ours: Map<string, string[] | null>, randomCount: number, mine: { sat: { p50: number; p99: number }; end: { p50: number } }): DeppyComparison | undefined {
  const { sat, end } = mine;
  if (!buildDeppy()) {
    console.log('Go is not available: skipping the Deppy comparison');
    return undefined;
  }
  const run = spawnSync(BIN, [], { input: readFileSync(file), maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) {
    console.log(`the Deppy harness failed: ${run.stderr.toString()}`);
    process.exitCode = 1;
    return undefined;
  }
  const results = (JSON.parse(run.stdout.toString()) as { results: DeppyResult[] }).results;
  let same = 0;
  let randomSame = 0;
  const differ: string[] = [];
  for (const r of results) {
    if (r.name.startsWith('random ')) {
      const mine = ours.get(r.name);
      if (JSON.stringify(mine) === JSON.stringify(r.ok ? [...(r.selected ?? [])].sort() : null)) randomSame++;
      else differ.push(r.name);
      continue;
    }
    const mine = ours.get(r.name);
    const theirs = r.ok ? [...(r.selected ?? [])].sort() : null;
    if (JSON.stringify(mine) === JSON.stringify(theirs)) same++;
    else differ.push(r.name);
  }
  const corpusResults = results.filter((r) => !r.name.startsWith('random '));
  const deppy = summary('deppy v0.3.0 SAT only', corpusResults.map((r) => r.medianMs));
  console.log(`same answer as Deppy: ${same} of ${corpusResults.length} corpus problems, ${randomSame} of ${randomCount} random problems${differ.length > 0 ? ` (differ: ${differ.slice(0, 10).join(', ')})` : ''}`);
  console.log(
    `ratio binnacle SAT / deppy: p50 ${(sat.p50 / deppy.p50).toFixed(2)}x, p99 ${(sat.p99 / deppy.p99).toFixed(2)}x; end-to-end / deppy: p50 ${(end.p50 / deppy.p50).toFixed(2)}x`,
  );
  return {
    summary: deppy,
    raw: corpusResults.map((r) => ({ name: r.name, medianMs: us(r.medianMs) })),
    same: { corpus: same, corpusOf: corpusResults.length, random: randomSame, randomOf: randomCount, differ },
    ratios: { satP50: sat.p50 / deppy.p50, satP99: sat.p99 / deppy.p99, endToEndP50: end.p50 / deppy.p50 },
  };
}

await main();
