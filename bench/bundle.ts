/**
 * Bundle benchmark and differential check (run on demand: `npx tsx bench/bundle.ts`; not a test).
 *
 * Binnacle loads, validates (default suite) and converts every version directory of the
 * operatorhub-2021 corpus; the real validator, `operator-verify manifests` from
 * operator-framework/api v0.27.0, validates the same directories. Prints both times, their
 * ratio, and every directory where one finds errors and the other does not, with the reasons.
 * operator-verify is built by `hack/bench-tools/operator-verify/build.sh` when missing
 * (pass `--no-build` to skip that). `--limit N` checks only the first N directories. Each side
 * goes over every directory `--rounds N` times (default 3, the sides alternating); the times are
 * medians, every round's kept in the stored result (bench/lib/results.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import {
  convertRegistryV1,
  defaultWatchNamespaces,
  staticCertProvider,
  validateBundleDir,
} from '../src/bundle/index.js';
import { errorMessage } from '../src/util/errors.js';
import { median, spread, startRun } from './lib/results.js';
import type { BundleSummary } from './lib/summaries.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CORPUS = process.env.BINNACLE_CORPUS ?? path.join(ROOT, '..', 'shared', 'corpus', 'operatorhub-2021');
const VERIFY = path.join(ROOT, '.cache', 'bench-bin', 'operator-verify');
const args = process.argv.slice(2);
const limitIdx = args.indexOf('--limit');
const LIMIT = limitIdx >= 0 ? Number(args[limitIdx + 1]) : Infinity;
const roundsIdx = args.indexOf('--rounds');
const ROUNDS = roundsIdx >= 0 ? Math.max(1, Number(args[roundsIdx + 1]) || 1) : 3;

interface Outcome {
  errors: string[];
}

/**
 * Warnings of Binnacle's that operator-verify raises as errors, on purpose: v1beta1 CRDs with
 * preserveUnknownFields (its default) are refused by today's API server, but Binnacle upgrades
 * them to v1 itself, so it only warns. For the error/no-error comparison they count as errors.
 */
const PARITY_WARNINGS = new Set(['crd.preserve-unknown-fields']);

async function versionDirs(): Promise<string[]> {
  const out: string[] = [];
  for (const p of (await readdir(CORPUS, { withFileTypes: true })).filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    for (const v of (await readdir(path.join(CORPUS, p.name), { withFileTypes: true })).filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
      out.push(path.join(CORPUS, p.name, v.name));
    }
  }
  return out.slice(0, LIMIT);
}

const certProvider = staticCertProvider({ caPem: 'CA', certPem: 'CERT', keyPem: 'KEY' });

async function binnacle(dir: string): Promise<Outcome> {
  const { result, bundle } = await validateBundleDir(dir);
  const errors = result
    .all()
    .filter((p) => p.severity === 'error' || PARITY_WARNINGS.has(p.rule))
    .map((p) => `${p.rule}: ${[p.file, p.field].filter(Boolean).join(': ')}: ${p.message}`);
  if (bundle !== undefined) {
    const watch = defaultWatchNamespaces(bundle, 'operators');
    try {
      if (watch === undefined) errors.push('convert: no supported install mode');
      else convertRegistryV1(bundle, { installNamespace: 'operators', watchNamespaces: watch, certProvider });
    } catch (e) {
      errors.push(`convert: ${errorMessage(e).split('\n')[0] ?? ''}`);
    }
  }
  return { errors };
}

/** operator-verify logs through logrus and exits 0 even with errors: read its log levels. */
function goVerify(dir: string): Outcome {
  const r = spawnSync(VERIFY, ['manifests', dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const lines = `${r.stdout}\n${r.stderr}`.split('\n');
  const errors = lines.filter((l) => /level=(error|fatal)/.test(l)).map((l) => (/msg="((?:[^"\\]|\\.)*)"/.exec(l)?.[1] ?? l).slice(0, 300));
  if (r.status !== 0 && errors.length === 0) errors.push(`exit ${String(r.status)}: ${lines.filter((l) => l !== '').slice(-1)[0] ?? ''}`);
  return { errors };
}

function ensureVerify(): boolean {
  if (existsSync(VERIFY)) return true;
  if (args.includes('--no-build')) return false;
  console.log('building operator-verify (hack/bench-tools/operator-verify/build.sh)…');
  const r = spawnSync('bash', [path.join(ROOT, 'hack', 'bench-tools', 'operator-verify', 'build.sh')], { stdio: 'inherit' });
  return r.status === 0 && existsSync(VERIFY);
}

const recorder = startRun('bundle');
const dirs = await versionDirs();
console.log(`${dirs.length} version directories under ${CORPUS}, ${ROUNDS} round(s) a side`);
const verifyVersion = 'operator-framework/api v0.27.0 (hack/bench-tools/operator-verify)';
const settings = {
  bench: { rounds: ROUNDS, directories: dirs.length, corpus: path.relative(ROOT, CORPUS), limit: Number.isFinite(LIMIT) ? LIMIT : null },
  binnacle: { what: 'validateBundleDir (default suite) + convertRegistryV1 in this process, one directory after another', parityWarnings: [...PARITY_WARNINGS] },
  reference: { what: 'operator-verify manifests DIR', version: verifyVersion, binary: path.relative(ROOT, VERIFY), note: 'one process per directory, started each time' },
};

const ours = new Map<string, Outcome>();
const theirs = new Map<string, Outcome>();
const rounds: { binnacleMs: number; verifyMs?: number }[] = [];
const canVerify = ensureVerify();
if (!canVerify) console.log('operator-verify is not available; skipping the differential check');
for (let r = 0; r < ROUNDS; r++) {
  let t = performance.now();
  for (const d of dirs) ours.set(d, await binnacle(d));
  const round: { binnacleMs: number; verifyMs?: number } = { binnacleMs: performance.now() - t };
  if (canVerify) {
    t = performance.now();
    for (const d of dirs) theirs.set(d, goVerify(d));
    round.verifyMs = performance.now() - t;
  }
  rounds.push(round);
  console.log(`round ${r + 1}: binnacle ${(round.binnacleMs / 1000).toFixed(2)} s${round.verifyMs === undefined ? '' : `, operator-verify ${(round.verifyMs / 1000).toFixed(2)} s`}`);
}
const binnacleMs = median(rounds.map((r) => r.binnacleMs));
const ourBad = [...ours.values()].filter((o) => o.errors.length > 0).length;
console.log(`binnacle   load+validate+convert  ${(binnacleMs / 1000).toFixed(2).padStart(7)} s   ${ourBad} with errors`);

if (!canVerify) {
  recorder.save({ settings, rounds, summary: { directories: dirs.length, binnacleMs: spread(rounds.map((r) => r.binnacleMs)), binnacleWithErrors: ourBad } satisfies BundleSummary, goals: [] });
  process.exit(0);
}
const goMs = median(rounds.map((r) => r.verifyMs ?? NaN));
const goBad = [...theirs.values()].filter((o) => o.errors.length > 0).length;
console.log(`operator-verify manifests (Go)    ${(goMs / 1000).toFixed(2).padStart(7)} s   ${goBad} with errors`);
console.log(`time ratio binnacle/go: ${(binnacleMs / goMs).toFixed(2)} (Go includes one process start per bundle; medians of ${ROUNDS} rounds)`);

let both = 0;
let neither = 0;
const onlyOurs: string[] = [];
const onlyTheirs: string[] = [];
const ourRules: Record<string, number> = {};
for (const d of dirs) {
  const a = ours.get(d)?.errors ?? [];
  const b = theirs.get(d)?.errors ?? [];
  if (a.length > 0 && b.length > 0) both++;
  else if (a.length === 0 && b.length === 0) neither++;
  else if (a.length > 0) {
    onlyOurs.push(`${path.relative(CORPUS, d)}\n    ${a.slice(0, 3).join('\n    ')}`);
    for (const e of a) {
      const rule = e.split(':')[0] ?? e;
      ourRules[rule] = (ourRules[rule] ?? 0) + 1;
    }
  } else onlyTheirs.push(`${path.relative(CORPUS, d)}\n    ${b.slice(0, 3).join('\n    ')}`);
}
console.log(`agree: ${both} both find errors, ${neither} both clean; differ: ${onlyOurs.length} only binnacle, ${onlyTheirs.length} only operator-verify`);
if (onlyOurs.length > 0) {
  console.log('\nonly binnacle finds errors (by rule):', ourRules);
  for (const x of onlyOurs) console.log(`  ${x}`);
}
if (onlyTheirs.length > 0) {
  console.log('\nonly operator-verify finds errors:');
  for (const x of onlyTheirs) console.log(`  ${x}`);
}
recorder.save({
  settings,
  rounds,
  summary: {
    directories: dirs.length,
    binnacleMs: spread(rounds.map((r) => r.binnacleMs)),
    verifyMs: spread(rounds.map((r) => r.verifyMs ?? NaN)),
    timeRatio: binnacleMs / goMs,
    binnacleWithErrors: ourBad,
    verifyWithErrors: goBad,
    agree: { bothErrors: both, bothClean: neither },
    differ: { onlyBinnacle: onlyOurs.map((x) => x.split('\n')[0] ?? x), onlyVerify: onlyTheirs.map((x) => x.split('\n')[0] ?? x) },
  } satisfies BundleSummary,
  goals: [],
});
