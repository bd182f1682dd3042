/**
 * The fuzzing harness shared by test/fuzz/*.test.ts: every loader gets generated inputs (fast-check,
 * fixed seed) and each input must end, within a time bound, in either an answer or a specific
 * error (a BinnacleError, or the loader's documented error type, with a message) — never a
 * TypeError/RangeError/ReferenceError out of our own code, never a hang — and must write nothing
 * outside the directory it was given (the sandbox's parent tree is compared before and after).
 *
 * Generators must reach bad input, not only the happy path: at least MIN_ERROR_SHARE of each
 * loader's inputs must end in a specific error, and at least one in an answer, or the run fails.
 *
 * - `BINNACLE_FUZZ_SEED`: the seed (default fixed, printed with every run so a failure replays).
 * - `BINNACLE_FUZZ_RUNS`: inputs per loader (default: a CI-sized sample per loader; `npm run fuzz`
 *   sets 10,000). Setting it makes the run on-demand: see `BINNACLE_FUZZ_SHRINK`.
 * - `BINNACLE_FUZZ_SHRINK`: `1` shrinks a failing input to a small one before reporting it, `0`
 *   reports the first failing input as generated. Default: shrink in an on-demand run
 *   (`BINNACLE_FUZZ_RUNS` set, as `npm run fuzz` sets it); not in CI's fixed-seed sample, which
 *   reports the input unshrunk with the command that replays and shrinks it.
 * - `BINNACLE_FUZZ_SHRINK_SECONDS`: how long shrinking may take (default 600): after it, the
 *   smallest failing input found so far is reported (an input that hangs costs its whole time
 *   bound per try, so a hang could otherwise shrink for hours).
 * - `BINNACLE_FUZZ_REPORT`: a file each loader's figures are appended to (one JSON line each),
 *   which `hack/fuzz.sh` prints as a table.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { BinnacleError, ValidationError } from '../../src/util/errors.js';

export { fc };

export const DEFAULT_SEED = 20261123;

export function fuzzSeed(): number {
  const raw = process.env.BINNACLE_FUZZ_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  const n = Number(raw);
  assert.ok(Number.isSafeInteger(n), `BINNACLE_FUZZ_SEED must be an integer, got "${raw}"`);
  return n;
}

/** Inputs per loader: BINNACLE_FUZZ_RUNS when set, else the CI-sized `ci`. */
export function fuzzRuns(ci: number): number {
  const raw = process.env.BINNACLE_FUZZ_RUNS;
  if (raw === undefined || raw === '') return ci;
  const n = Number(raw);
  assert.ok(Number.isSafeInteger(n) && n > 0, `BINNACLE_FUZZ_RUNS must be a positive integer, got "${raw}"`);
  return n;
}

/** Whether failures shrink: BINNACLE_FUZZ_SHRINK when set, else only in an on-demand run (BINNACLE_FUZZ_RUNS set). */
export function fuzzShrinks(): boolean {
  const raw = process.env.BINNACLE_FUZZ_SHRINK;
  if (raw !== undefined && raw !== '') {
    assert.ok(raw === '0' || raw === '1', `BINNACLE_FUZZ_SHRINK must be 0 or 1, got "${raw}"`);
    return raw === '1';
  }
  const runs = process.env.BINNACLE_FUZZ_RUNS;
  return runs !== undefined && runs !== '';
}

function shrinkSeconds(): number {
  const raw = process.env.BINNACLE_FUZZ_SHRINK_SECONDS;
  if (raw === undefined || raw === '') return 600;
  const n = Number(raw);
  assert.ok(Number.isFinite(n) && n > 0, `BINNACLE_FUZZ_SHRINK_SECONDS must be a positive number, got "${raw}"`);
  return n;
}

/**
 * The least share of a loader's inputs that must end in a specific error: below it the generator
 * mostly tests the happy path, and the run fails. hack/fuzz.sh reads it from the figures.
 */
export const MIN_ERROR_SHARE = 1 / 3;

export interface Figures {
  loader: string;
  seed: number;
  inputs: number;
  answers: number;
  /** Inputs that ended in a specific error (thrown, or an answer that is the loader's refusal: FuzzOptions.refusal). */
  errors: number;
  /** errors / inputs. */
  errorShare: number;
  /** MIN_ERROR_SHARE, for hack/fuzz.sh to judge the share by. */
  minErrorShare: number;
  /** Inputs that failed, by kind (a run stops at the first, so each is 0 or 1). */
  crashes: number;
  hangs: number;
  /** Inputs that changed something outside their directory. */
  outsideWrites: number;
  maxMs: number;
  /** Wall time of the whole run. */
  seconds: number;
  /** Whether a failing input was shrunk before it was reported. */
  shrink: boolean;
  /** How many inputs exercised each named case (FuzzOptions.cases). */
  cases: Record<string, number>;
  /** Error codes (or class names) seen, with counts. */
  codes: Record<string, number>;
  /** The first message seen for each code (cut to 160 characters). */
  samples: Record<string, string>;
}

/** Error classes that come from a bug in our code, wherever they appear in the cause chain. */
const BUG_CLASSES = ['TypeError', 'RangeError', 'ReferenceError', 'AssertionError', 'EvalError', 'InternalError'];

function isBug(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 10) return !(err instanceof Error);
  if (BUG_CLASSES.includes(err.constructor.name) || BUG_CLASSES.includes(err.name)) return true;
  return err.cause !== undefined && err.cause instanceof Error && isBug(err.cause, depth + 1);
}

/** A specific error: one of `allowed` (BinnacleError by default), with a message, not caused by a bug. */
export function classify(err: unknown, allowed: readonly (abstract new (...args: never[]) => Error)[]): { ok: true; code: string; message: string } | { ok: false; why: string } {
  const kinds = allowed.length === 0 ? [BinnacleError] : allowed;
  if (!(err instanceof Error)) return { ok: false, why: `threw a non-Error: ${String(err)}` };
  if (!kinds.some((k) => err instanceof k)) return { ok: false, why: `threw ${err.constructor.name}: ${err.message}\n${err.stack ?? ''}` };
  if (err.message.trim() === '') return { ok: false, why: `${err.constructor.name} with an empty message` };
  if (isBug(err)) {
    const cause = err.cause instanceof Error ? `${err.cause.constructor.name}: ${err.cause.message}\n${err.cause.stack ?? ''}` : '';
    return { ok: false, why: `${err.constructor.name} wraps a bug: ${err.message}\n${cause}` };
  }
  return { ok: true, code: codeOf(err), message: err.message };
}

/** A BinnacleError's code (a ValidationError's with its first error's rule, so the tally shows which rules were reached), else the class name. */
function codeOf(err: Error): string {
  if (err instanceof ValidationError) {
    const rule = err.result.errors()[0]?.rule;
    return rule === undefined ? err.code : `${err.code}:${rule}`;
  }
  return err instanceof BinnacleError ? err.code : err.constructor.name;
}

/**
 * A directory tree for one loader: `root/l1/l2/l3/l4/work` is what the loader may write to;
 * `root/outside` holds files an escape would overwrite, and anything new anywhere under `root`
 * except `work` is an escape. Four levels of nesting catch `..` chains up to four deep.
 */
export class Sandbox {
  private baseline = '';
  private constructor(
    readonly root: string,
    readonly work: string,
  ) {}

  static async create(loader: string): Promise<Sandbox> {
    const root = await mkdtemp(join(tmpdir(), `binnacle-fuzz-${loader}-`));
    const work = join(root, 'l1', 'l2', 'l3', 'l4', 'work');
    await mkdir(work, { recursive: true });
    await mkdir(join(root, 'outside', 'dir'), { recursive: true });
    await writeFile(join(root, 'outside', 'secret'), 'do not touch\n', { mode: 0o644 });
    await writeFile(join(root, 'outside', 'dir', 'victim'), 'do not touch either\n', { mode: 0o644 });
    const s = new Sandbox(root, work);
    s.baseline = await s.snapshot();
    return s;
  }

  /** Paths an input may point at to escape: the outside files, absolute and relative to `work`. */
  get targets(): string[] {
    return [join(this.root, 'outside', 'secret'), join(this.root, 'outside', 'dir'), join(this.root, 'outside'), this.root];
  }

  /** Everything under root except `work`: path, type, mode, size, content hash, link target. */
  async snapshot(dir = this.root): Promise<string> {
    const lines: string[] = [];
    for (const name of (await readdir(dir)).sort()) {
      const abs = join(dir, name);
      if (abs === this.work) continue;
      const st = await lstat(abs);
      const rel = relative(this.root, abs);
      if (st.isDirectory()) {
        lines.push(`${rel}/ ${(st.mode & 0o7777).toString(8)}`);
        lines.push(await this.snapshot(abs));
      } else if (st.isSymbolicLink()) lines.push(`${rel} -> ${await readlink(abs)}`);
      else if (st.isFile()) lines.push(`${rel} ${(st.mode & 0o7777).toString(8)} ${st.size} ${createHash('sha256').update(await readFile(abs)).digest('hex')}`);
      else lines.push(`${rel} special`);
    }
    return lines.join('\n');
  }

  /** Fails when anything outside `work` changed; then empties `work` for the next input. */
  async check(): Promise<string | undefined> {
    const now = await this.snapshot();
    let why: string | undefined;
    if (now !== this.baseline) why = `wrote outside its directory:\n--- before\n${this.baseline}\n--- after\n${now}`;
    await rm(this.work, { recursive: true, force: true });
    await mkdir(this.work, { recursive: true });
    return why;
  }

  async dispose(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

export interface FuzzOptions<T> {
  /** Inputs in CI (BINNACLE_FUZZ_RUNS overrides). */
  ciRuns: number;
  /** Inputs in a full run instead of BINNACLE_FUZZ_RUNS (a loader too slow for 10,000). */
  fullRuns?: number;
  /** Each input's time bound (default 10 s, generous for a loaded 2-core machine). */
  timeoutMs?: number;
  /** Documented error types besides BinnacleError. */
  errors?: readonly (abstract new (...args: never[]) => Error)[];
  /** Checked after every input when given. */
  sandbox?: Sandbox;
  /**
   * For a loader whose refusals are answers (an HTTP server answers a bad request with a 4xx and
   * a JSON error): the refusal's code and message when `answer` is one, counted as a specific
   * error; undefined when it is an answer. A refusal with an empty message is a failure.
   */
  refusal?: (answer: unknown, input: T) => { code: string; message: string } | undefined;
  /** Extra check of an answer; returns why it is wrong. */
  checkAnswer?: (answer: unknown, input: T) => string | undefined | Promise<string | undefined>;
  /** The named cases an input exercises, tallied in the figures. */
  cases?: (input: T) => readonly string[];
  /** Cases that must each have been exercised at least once by the end of the run. */
  requireCases?: readonly string[];
  /** Checked after every input (e.g. that a long-lived engine still answers); returns why it is broken. */
  afterEach?: () => Promise<string | undefined>;
}

function withTimeout<R>(p: Promise<R>, ms: number): Promise<R> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HangError(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

class HangError extends Error {}

/**
 * Runs `run` over generated inputs; fails (with fast-check's counterexample, seed and path) on the
 * first crash, hang or escape, shrinking the input first when `fuzzShrinks()`. Fails too when
 * fewer than MIN_ERROR_SHARE of the inputs ended in a specific error, or none in an answer. Prints
 * and returns the figures.
 */
export async function fuzz<T>(loader: string, arb: fc.Arbitrary<T>, run: (input: T) => unknown, opts: FuzzOptions<T>): Promise<Figures> {
  const seed = fuzzSeed();
  const numRuns = opts.fullRuns !== undefined && process.env.BINNACLE_FUZZ_RUNS !== undefined && process.env.BINNACLE_FUZZ_RUNS !== '' ? opts.fullRuns : fuzzRuns(opts.ciRuns);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const shrink = fuzzShrinks();
  const shrinkBudgetMs = shrinkSeconds() * 1000;
  const allowed = [BinnacleError, ...(opts.errors ?? [])];
  const fig: Figures = { loader, seed, inputs: 0, answers: 0, errors: 0, errorShare: 0, minErrorShare: MIN_ERROR_SHARE, crashes: 0, hangs: 0, outsideWrites: 0, maxMs: 0, seconds: 0, shrink, cases: {}, codes: {}, samples: {} };
  const runStarted = performance.now();
  /** Set at the first failure: from then on fast-check only tries smaller inputs, which are not counted. */
  let shrinkStarted: number | undefined;
  let firstWhy = '';
  /** The failure of the last smaller failing input: fast-check's counterexample once shrinking ends. */
  let shrunkWhy = '';
  let shrinks = 0;
  const property = fc.asyncProperty(arb, async (input) => {
    const counted = shrinkStarted === undefined;
    // Past the budget every smaller input passes untried, so fast-check stops at the smallest failing one so far.
    if (shrinkStarted !== undefined && performance.now() - shrinkStarted > shrinkBudgetMs) return;
    const started = performance.now();
    const outcome = await outcomeOf(run, input, timeoutMs);
    const ms = performance.now() - started;
    const escaped = opts.sandbox === undefined ? undefined : await opts.sandbox.check();
    if (counted) countInput(fig, input, ms, opts);
    const verdict = escaped === undefined ? await judge(outcome, input, opts, allowed) : { why: escaped, kind: 'outsideWrites' as const };
    const why = await failureOf(verdict, opts);
    if (why === undefined) {
      if (counted) countPassed(fig, verdict);
      return;
    }
    if (counted) {
      fig['kind' in verdict ? verdict.kind : 'crashes']++;
      firstWhy = why;
      shrinkStarted = performance.now();
    } else {
      shrinks++;
      shrunkWhy = why;
    }
    throw new Error(`${loader}: ${why}`);
  });
  let failure: unknown;
  try {
    await fc.assert(property, { seed, numRuns, endOnFailure: !shrink });
  } catch (err) {
    failure = err;
  }
  fig.seconds = (performance.now() - runStarted) / 1000;
  fig.errorShare = fig.inputs === 0 ? 0 : fig.errors / fig.inputs;
  report(fig);
  if (failure !== undefined) {
    const replay = `BINNACLE_FUZZ_SEED=${seed} BINNACLE_FUZZ_RUNS=${numRuns} bash hack/fuzz.sh ${testFile()}`;
    const shrunk = shrink ? `shrunk in ${shrinks} smaller failing inputs (fast-check's counterexample below is the smallest)` : `not shrunk (BINNACLE_FUZZ_SHRINK=0, or CI's sample); replay and shrink: ${replay}`;
    const smallest = shrinks === 0 ? '' : `\n--- the smallest failing input's failure\n${cut(shrunkWhy, 4000)}`;
    throw new Error(
      `fuzzing ${loader} failed (replay: ${replay}); the first failing input was ${shrunk}\n--- the first failing input's failure\n${cut(firstWhy, 4000)}${smallest}\n--- fast-check\n${cut(failure instanceof Error ? failure.message : JSON.stringify(failure))}`,
    );
  }
  assert.deepEqual({ crashes: fig.crashes, hangs: fig.hangs, outsideWrites: fig.outsideWrites }, { crashes: 0, hangs: 0, outsideWrites: 0 });
  const missed = (opts.requireCases ?? []).filter((c) => (fig.cases[c] ?? 0) === 0);
  assert.deepEqual(missed, [], `${loader}: no input exercised ${missed.join(', ')}`);
  assert.equal(fig.inputs, numRuns, `${loader}: ran ${fig.inputs} of ${numRuns} inputs`);
  assert.ok(fig.errorShare >= MIN_ERROR_SHARE, `${loader}: only ${fig.errors} of ${fig.inputs} inputs (${percent(fig.errorShare)}) ended in a specific error, under ${percent(MIN_ERROR_SHARE)}: the generator hardly reaches invalid input`);
  assert.ok(fig.answers > 0, `${loader}: no input was accepted: the generator never reaches valid input`);
  return fig;
}

/** The input's answer or its error, within the timeout. */
async function outcomeOf<T>(run: (input: T) => unknown, input: T, timeoutMs: number): Promise<{ answer: unknown } | { error: unknown }> {
  try {
    return { answer: await withTimeout(Promise.resolve().then(() => run(input)), timeoutMs) };
  } catch (err) {
    return { error: err };
  }
}

function countInput<T>(fig: Figures, input: T, ms: number, opts: FuzzOptions<T>): void {
  fig.inputs++;
  fig.maxMs = Math.max(fig.maxMs, ms);
  for (const c of opts.cases?.(input) ?? []) fig.cases[c] = (fig.cases[c] ?? 0) + 1;
}

/** An input that passed: an answer, or a specific error (counted by its code, with a sample message). */
function countPassed(fig: Figures, verdict: Verdict): void {
  if ('answer' in verdict) fig.answers++;
  else if ('code' in verdict) {
    fig.errors++;
    fig.codes[verdict.code] = (fig.codes[verdict.code] ?? 0) + 1;
    fig.samples[verdict.code] ??= verdict.message.slice(0, 160);
  }
}

/** Why the input failed: its verdict's reason, else what `afterEach` finds broken after it; undefined when it passed. */
async function failureOf<T>(verdict: Verdict, opts: FuzzOptions<T>): Promise<string | undefined> {
  if ('why' in verdict) return verdict.why;
  if (opts.afterEach === undefined) return undefined;
  const broken = await opts.afterEach();
  return broken === undefined ? undefined : `after this input: ${broken}`;
}

type Verdict = { answer: true } | { code: string; message: string } | { why: string; kind: 'crashes' | 'hangs' | 'outsideWrites' };

/** What one outcome is: an answer, a specific error (thrown, or a refusal answered), or a failure and its kind. */
async function judge<T>(outcome: { answer: unknown } | { error: unknown }, input: T, opts: FuzzOptions<T>, allowed: readonly (abstract new (...args: never[]) => Error)[]): Promise<Verdict> {
  if ('answer' in outcome) {
    const why = opts.checkAnswer === undefined ? undefined : await opts.checkAnswer(outcome.answer, input);
    if (why !== undefined) return { why, kind: 'crashes' };
    const refused = opts.refusal?.(outcome.answer, input);
    if (refused === undefined) return { answer: true };
    if (refused.message.trim() === '') return { why: `refusal ${refused.code} with an empty message`, kind: 'crashes' };
    return refused;
  }
  if (outcome.error instanceof HangError) return { why: outcome.error.message, kind: 'hangs' };
  const c = classify(outcome.error, allowed);
  return c.ok ? { code: c.code, message: c.message } : { why: c.why, kind: 'crashes' };
}

/** The test file being run, for the replay command (node's test runner runs one file per process). */
function testFile(): string {
  const file = process.argv.find((a) => a.endsWith('.test.ts'));
  return file === undefined ? '' : relative(process.cwd(), file);
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** Long counterexamples (a 10,000-character rule) are cut in the middle. */
function cut(text: string, max = 6000): string {
  return text.length <= max ? text : `${text.slice(0, max / 2)}\n… (${text.length - max} characters cut) …\n${text.slice(-max / 2)}`;
}

function report(fig: Figures): void {
  const codes = Object.entries(fig.codes)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');
  console.log(
    `fuzz ${fig.loader}: seed ${fig.seed}, ${fig.inputs} inputs in ${fig.seconds.toFixed(1)} s, ${fig.answers} answers, ${fig.errors} specific errors (${percent(fig.errorShare)}), ${fig.crashes} crashes, ${fig.hangs} hangs, ${fig.outsideWrites} outside writes, max ${fig.maxMs.toFixed(0)} ms/input${codes === '' ? '' : ` [${codes}]`}`,
  );
  const cases = Object.entries(fig.cases).sort((a, b) => a[0].localeCompare(b[0]));
  if (cases.length > 0) console.log(`  cases: ${cases.map(([c, k]) => `${c}×${k}`).join(' ')}`);
  if (process.env.BINNACLE_FUZZ_SAMPLES === '1') for (const [c, m] of Object.entries(fig.samples)) console.log(`  ${c}: ${m.replace(/\n/g, ' ')}`);
  const file = process.env.BINNACLE_FUZZ_REPORT;
  if (file !== undefined && file !== '') appendFileSync(file, `${JSON.stringify(fig)}\n`);
}

// ---- arbitraries shared by the loaders ----

/** Strings that tend to break parsers and path handling. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '.',
    '..',
    '../../../x',
    '/etc/passwd',
    'a\0b',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    '0',
    '-1',
    '1e400',
    'NaN',
    'null',
    'true',
    '~',
    '*',
    '<<',
    '{{ .Values.x }}',
    '\ufeff',
    '\u202e',
    '日本語',
    '\ud800',
    'v1.0.0',
    '1.0.0-rc.1+build.5',
    '>=1.0.0 <2.0.0',
    'x'.repeat(300),
    'a/b/c',
    'example.com/op:v1',
    'quay.io/x/y@sha256:' + '0'.repeat(64),
  ),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

/** Any JSON-ish value, with the nasty strings and numbers mixed in. */
export const nastyValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    fc.constantFrom(null, true, false, 0, -0, -1, 1.5, 2 ** 53, Number.MAX_VALUE, -Number.MAX_VALUE, 1e21),
    fc.integer(),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(nastyString, tie('v'), { maxKeys: 4 }),
  ),
})).v;

export interface Mutation {
  /** Child choices from the top: each picks a key/index modulo the children there. */
  path: number[];
  op: 'replace' | 'delete' | 'add' | 'wrap' | 'empty';
  key: string;
  value: unknown;
}

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  path: fc.array(fc.nat(), { maxLength: 8 }),
  op: fc.constantFrom('replace', 'replace', 'replace', 'delete', 'add', 'wrap', 'empty'),
  key: nastyString,
  value: nastyValue,
});

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** Applies a mutation to a deep copy of `doc`: a structure-aware change somewhere in the tree. */
export function mutate(doc: unknown, m: Mutation): unknown {
  const copy = structuredClone(doc);
  const holder: Record<string, unknown> = { root: copy };
  let parent: Record<string, unknown> | unknown[] = holder;
  let key: string | number = 'root';
  for (const step of m.path) {
    const cur: unknown = (parent as Record<string | number, unknown>)[key];
    if (!isObj(cur)) break;
    const keys: (string | number)[] = Array.isArray(cur) ? cur.map((_, i) => i) : Object.keys(cur);
    if (keys.length === 0) break;
    parent = cur;
    key = keys[step % keys.length] as string | number;
  }
  const p = parent as Record<string | number, unknown>;
  const cur = p[key];
  switch (m.op) {
    case 'replace':
      p[key] = m.value;
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else Reflect.deleteProperty(p, key);
      break;
    case 'add':
      if (Array.isArray(cur)) cur.push(m.value);
      else if (isObj(cur)) Object.defineProperty(cur, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      else p[key] = m.value;
      break;
    case 'wrap':
      p[key] = [cur];
      break;
    case 'empty':
      p[key] = Array.isArray(cur) ? [] : isObj(cur) ? {} : '';
      break;
  }
  return holder.root;
}

export interface ByteMutation {
  at: number;
  op: 'truncate' | 'insert' | 'flip' | 'none';
  bytes: string;
}

export const byteMutationArb: fc.Arbitrary<ByteMutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('none', 'none', 'none', 'truncate', 'insert', 'flip'),
  bytes: fc.oneof(fc.constantFrom('{', '}', '[', ']', '"', ':', '\n', '- ', '&a ', '*a', '!!binary ', '%YAML 1.1\n', '---\n', '\t', '\\', '\0'), fc.string({ maxLength: 6 })),
});

/** Text-level damage: cut, insert or overwrite at a position. */
export function mutateText(text: string, m: ByteMutation): string {
  if (m.op === 'none' || text.length === 0) return text;
  const at = m.at % (text.length + 1);
  if (m.op === 'truncate') return text.slice(0, at);
  if (m.op === 'insert') return text.slice(0, at) + m.bytes + text.slice(at);
  return text.slice(0, at) + m.bytes + text.slice(at + m.bytes.length);
}

/**
 * A targeted corruption: one real place in a document (any node, picked by `at` modulo their
 * number, the root included) given what loaders most often mishandle there, by the kind of value
 * it holds: `null`; the key removed (a required field missing); a value of another JSON type; an
 * oversized value (a string past every name and label limit, a long list, a wide object); the
 * list element it sits in repeated (a duplicate name); a near miss of a valid value (a version or
 * range that is almost semver, an image reference that is almost one, a name that breaks DNS
 * rules, base64 that is not). Unlike `mutate`, which puts random values at random depths, each
 * corruption is one valid document with one thing wrong, which is where specific errors come from.
 */
export interface Corruption {
  at: number;
  op: 'null' | 'delete' | 'wrong-type' | 'oversized' | 'duplicate' | 'near-miss';
  /** Chooses among the op's values. */
  pick: number;
}

export const corruptionArb: fc.Arbitrary<Corruption> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('null', 'delete', 'wrong-type', 'oversized', 'duplicate', 'near-miss', 'near-miss'),
  pick: fc.nat(),
});

type Path = (string | number)[];

/** Every node's path, depth first, the root (`[]`) first. */
function pathsOf(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x: unknown, i) => pathsOf(x, [...at, i], out));
  else if (isObj(v)) for (const k of Object.keys(v)) pathsOf(v[k], [...at, k], out);
  return out;
}

function getAt(root: unknown, path: Path): unknown {
  let cur = root;
  for (const k of path) cur = isObj(cur) ? (cur as Record<string | number, unknown>)[k] : undefined;
  return cur;
}

/** Sets (or with `remove`, deletes) the value at a non-root path. */
function setAt(root: unknown, path: Path, value: unknown, remove = false): void {
  const parent = getAt(root, path.slice(0, -1));
  const key = path[path.length - 1];
  if (!isObj(parent) || key === undefined) return;
  if (remove && Array.isArray(parent)) parent.splice(Number(key), 1);
  else if (remove) Reflect.deleteProperty(parent, key);
  else Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
}

const choose = <V>(xs: readonly V[], pick: number): V => xs[pick % xs.length] as V;

const SEMVER_LIKE = /^v?\d+\.\d+/;
const RANGE_LIKE = /[<>=~^]|\|\||\.x\b/;
const IMAGE_LIKE = /^[a-z0-9.-]+(:\d+)?\/[^\s]+[:@]/;
const BASE64_LIKE = /^[A-Za-z0-9+/]{8,}={0,2}$/;

/** A value close to `v` that a strict reader refuses. */
function nearMiss(v: unknown, pick: number): unknown {
  if (typeof v === 'number') return choose([-1, 0.5, 2 ** 53 + 2, -0], pick);
  if (typeof v === 'boolean') return choose(['true', 1, 'yes'], pick);
  if (Array.isArray(v)) return choose<unknown>([[], [null], [[]]], pick);
  if (isObj(v)) return choose<unknown>([{}, { '': '' }, JSON.parse('{"__proto__": {}, "constructor": null}')], pick);
  if (typeof v !== 'string') return '';
  if (RANGE_LIKE.test(v)) return choose(['>=', `${v} <`, `${v} ||`, v.replace(/\d+/, 'x.y'), '>=1.0.0 <=0.1.0 !', '~~1.0', '=>=1.0.0', `${v},,`], pick);
  if (SEMVER_LIKE.test(v)) return choose(['1.0', `v${v.replace(/^v/, '')}`, '01.0.0', `${v}-`, `${v}+`, `${v}.0`, '99999999999999999999.0.0', '1.0.0-01', ' 1.0.0', ''], pick);
  if (IMAGE_LIKE.test(v)) return choose([v.toUpperCase(), `${v}@sha256:abc`, v.replace(/[:@].*$/, ':'), `http://${v}`, `${v} `, ':tag'], pick);
  if (BASE64_LIKE.test(v)) return choose([`${v}=`, v.slice(1), `${v}!`, v.replace(/=+$/, '')], pick);
  return choose(['', ' ', v.toUpperCase() === v ? `${v}_` : v.toUpperCase(), `${v}/x`, `-${v}`, `${v}.`, '..', `${v}\n`, '__proto__', 'constructor'], pick);
}

/** A value of another JSON type than `v`'s. */
function wrongType(v: unknown, pick: number): unknown {
  if (typeof v === 'string') return choose([1, true, [v], { value: v }], pick);
  if (typeof v === 'number' || typeof v === 'boolean') return choose([String(v), [v], { value: v }], pick);
  if (Array.isArray(v)) return choose([{}, 'x', 1, v[0] ?? null], pick);
  if (isObj(v)) return choose([[], 'x', 0, [v]], pick);
  return choose(['x', 1, [], {}], pick);
}

/** `v` too big for any limit a loader might have, but cheap to write and read. */
function oversized(v: unknown, pick: number): unknown {
  const size = choose([64, 300, 70_000], pick);
  if (typeof v === 'string') return (v === '' ? 'x' : v).repeat(Math.ceil(size / Math.max(1, v.length))).slice(0, size);
  if (typeof v === 'number') return choose([2 ** 53, Number.MAX_VALUE, 1e21, -(2 ** 63)], pick);
  if (Array.isArray(v)) return Array.from({ length: Math.min(size, 300) }, (_, i): unknown => structuredClone((v as unknown[])[i % Math.max(1, v.length)] ?? 'x'));
  if (isObj(v)) return { ...v, ...Object.fromEntries(Array.from({ length: Math.min(size, 300) }, (_, i) => [`k${i}`, 'x'.repeat(i % 64)])) };
  return 'x'.repeat(size);
}

/** Applies a corruption to a deep copy of `doc`. */
export function corrupt(doc: unknown, c: Corruption): unknown {
  const holder: Record<string, unknown> = { root: structuredClone(doc) };
  const paths = pathsOf(holder.root).map((p) => ['root', ...p]);
  const path = choose(paths, c.at);
  const cur = getAt(holder, path);
  switch (c.op) {
    case 'null':
      setAt(holder, path, null);
      break;
    case 'delete':
      setAt(holder, path, undefined, path.length > 1);
      break;
    case 'wrong-type':
      setAt(holder, path, wrongType(cur, c.pick));
      break;
    case 'oversized':
      setAt(holder, path, oversized(cur, c.pick));
      break;
    case 'near-miss':
      setAt(holder, path, nearMiss(cur, c.pick));
      break;
    case 'duplicate': {
      // The element of the nearest list at or above this place, repeated in that list.
      let i = path.length - 1;
      while (i > 0 && !Array.isArray(getAt(holder, path.slice(0, i)))) i--;
      const list = getAt(holder, path.slice(0, i));
      if (i > 0 && Array.isArray(list)) list.push(structuredClone(getAt(holder, path.slice(0, i + 1))));
      else if (Array.isArray(cur) && cur.length > 0) cur.push(structuredClone(cur[c.pick % cur.length]));
      else setAt(holder, path, [cur, cur]);
      break;
    }
  }
  return holder.root;
}
