/**
 * The subset of CEL that OLM's `olm.constraint` rules use, evaluated against one candidate
 * bundle's `properties` (a list of `{type, value}`): literals, `properties`, field access,
 * `==` `!=` `<` `<=` `>` `>=` `in`, `&&` `||` `!`, `+` `-`, `?:`, parentheses, lists, map
 * literals, `semver_compare(a, b)` (OLM's, in olm-semver.ts), `size(x)`, `x.size()`, the macros
 * `has`, `exists`, `all`, `exists_one`, `filter`, `map`, and the string methods `startsWith`,
 * `endsWith`, `contains`, `matches`. Errors inside `&&`/`||`, `exists` and `all` are absorbed by a
 * decisive other side, as in CEL.
 *
 * Besides `properties`, a rule may read `cluster`: facts about the cluster it would be installed
 * on (`cluster.kubeVersion`, `cluster.platform`, and on OpenShift `cluster.openShiftVersion`;
 * see `cluster-constraints.ts`). A rule that reads only `cluster` constrains the bundle itself
 * rather than naming a dependency.
 *
 * Where it answers unlike OLM (cel-parity.test.ts lists each case, against OLM's own answers for
 * every olm.constraint CEL rule of OLM's tests and Binnacle's): `matches()` refuses patterns that
 * backtrack for ever and subjects over 1,000 characters, so that a catalog's rule cannot hang the
 * resolver (RE2 runs them); no `*` `/` `%`; one kind of number (CEL's int and double, and so
 * `3.0 + 1` from JSON, which OLM refuses); and no type checker, so a rule OLM refuses when it
 * compiles (an unknown function, `1 == 1.0`, a result that is not a bool) is refused here when it
 * runs: it never holds.
 *
 * Why not @bufbuild/cel 0.6.1, the maintained, conformance-tested CEL for JavaScript (issue: adopt
 * it if it answers the same and costs no more; measured by bench/cel.ts, its figures, raw rounds
 * and verdicts in bench/results/cel/2026-12-02T03-50-30Z-0f01d5c.json and README.md's "CEL"
 * table, generated from it):
 * - Answers: behind this file's contract (cel-bufbuild.test-helper.ts, OLM's semver_compare as a
 *   custom function) it answers as OLM on all 105 parity rules x 12 inputs but `1 == 1.0`, which
 *   OLM's type checker refuses and 0.6.1 exports no checker for. It was better than this file at
 *   first (map literals, has(), ?:, exists over errors, own keys); those are fixed here now. Both
 *   CLIs resolve the bench's catalog the same.
 * - Start-up to one answer, bundled as the CLI bundles: more CPU, wall time and peak RSS than
 *   this file, inlined and more so from node_modules (as the bundle leaves packages it does not
 *   inline).
 * - Compiling a rule takes it many times longer (its PEG parser); evaluating one, somewhat longer.
 * - `binnacle resolve --all-packages` over 100 packages with 480 CEL rules: more CPU and peak
 *   RSS, the resolution alone most of all (each resolution compiles a bundle's rules three times,
 *   in checkCluster and twice in requirementsOf).
 * So it costs more in start-up, resolution speed and memory, and is not adopted.
 */
import { olmSemverCompare } from './olm-semver.js';
import { isRecord } from '../util/object.js';

type Expr =
  | { k: 'lit'; v: unknown }
  | { k: 'id'; name: string }
  | { k: 'list'; items: Expr[] }
  | { k: 'map'; entries: { key: Expr; value: Expr }[] }
  | { k: 'field'; of: Expr; name: string }
  | { k: 'has'; of: Expr; name: string }
  | { k: 'index'; of: Expr; at: Expr }
  | { k: 'call'; fn: string; target?: Expr; args: Expr[] }
  | { k: 'unary'; op: '!' | '-'; x: Expr }
  | { k: 'cond'; test: Expr; then: Expr; otherwise: Expr }
  | { k: 'bin'; op: string; l: Expr; r: Expr };

export class CelError extends Error {}

/** Longest string `matches()` looks at: with the pattern limits below, a match stays fast. */
export const MAX_MATCH_SUBJECT = 1000;
const MAX_UNBOUNDED_REPEATS = 3;

/**
 * A RegExp for `matches()`, refusing what could backtrack for ever (CEL's RE2 never does, and a
 * catalog's rule must not hang the resolver): backreferences and lookaround (not RE2 either), a
 * repeated group that itself repeats or alternates (`(a+)+`, `(a|a)*`), and more than three
 * unbounded repeats in all.
 */
function safeRegExp(pattern: string): RegExp {
  if (/\\[1-9]|\\k<|\(\?<?[=!]/.test(pattern)) throw new CelError(`matches(): "${pattern}" uses a backreference or lookaround, which CEL's regular expressions do not have`);
  refuseRunawayRepeats(pattern);
  try {
    return new RegExp(pattern);
  } catch {
    throw new CelError(`matches(): "${pattern}" is not a valid regular expression`);
  }
}

/** What a group of a pattern holds so far: a repeat, or an alternation. */
interface PatternGroup {
  repeats: boolean;
  alternates: boolean;
}

/** The state of one scan of a pattern: the groups open around the current character, outermost first. */
interface PatternScan {
  pattern: string;
  groups: PatternGroup[];
  unbounded: number;
}

/** Walks `pattern` outside escapes and character classes, refusing repeated repeats and too many unbounded repeats. */
function refuseRunawayRepeats(pattern: string): void {
  const scan: PatternScan = { pattern, groups: [{ repeats: false, alternates: false }], unbounded: 0 };
  let lastGroup: PatternGroup | undefined;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      lastGroup = undefined;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    const closed = lastGroup;
    lastGroup = undefined;
    if (c === '[') inClass = true;
    else if (c === '(') i += openGroup(scan, i);
    else if (c === ')' && scan.groups.length > 1) lastGroup = scan.groups.pop();
    else if (c === '|') for (const g of scan.groups.slice(1)) g.alternates = true;
    else if (c === '*' || c === '+' || c === '?' || c === '{') checkRepeat(scan, i, closed);
  }
}

/** Opens a group at `(` (index `i`); returns how many characters of its `(?…` prefix to skip. */
function openGroup(scan: PatternScan, i: number): number {
  scan.groups.push({ repeats: false, alternates: false });
  return /^\?(?::|<[^>]*>|P<[^>]*>|[a-zA-Z-]*:)/.exec(scan.pattern.slice(i + 1))?.[0].length ?? 0; // (?:…), (?<name>…)
}

/** Checks the repeat operator at index `i`, `closed` being the group it follows if any, and records it. */
function checkRepeat(scan: PatternScan, i: number, closed: PatternGroup | undefined): void {
  const { pattern } = scan;
  const c = pattern[i];
  if (c === '?' && /[*+?}]/.test(pattern[i - 1] ?? '')) return; // lazy marker
  const unboundedRepeat = c === '*' || c === '+' || (c === '{' && /^\{\d*,\}/.test(pattern.slice(i)));
  if (closed !== undefined && (closed.repeats || closed.alternates) && c !== '?') {
    throw new CelError(`matches(): "${pattern}" repeats a group that itself repeats or alternates, which can take exponential time`);
  }
  if (unboundedRepeat && ++scan.unbounded > MAX_UNBOUNDED_REPEATS) throw new CelError(`matches(): "${pattern}" has more than ${MAX_UNBOUNDED_REPEATS} unbounded repeats`);
  for (const g of scan.groups) g.repeats = true;
}

interface Token {
  t: 'num' | 'str' | 'id' | 'op' | 'end';
  v: string;
  at: number;
}

/** Reads a quoted string starting at `start`; returns its value and the index after it. */
function readString(src: string, start: number): { value: string; end: number } {
  const quote = src[start];
  let j = start + 1;
  let value = '';
  while (j < src.length && src[j] !== quote) {
    if (src[j] === '\\' && j + 1 < src.length) {
      const e = src[j + 1] ?? '';
      value += e === 'n' ? '\n' : e === 't' ? '\t' : e;
      j += 2;
    } else {
      value += src[j] ?? '';
      j++;
    }
  }
  if (j >= src.length) throw new CelError(`unterminated string at ${start}`);
  return { value, end: j + 1 };
}

/**
 * Limits that keep a hostile rule from exhausting the stack (the parser and evaluator recurse):
 * at most this many tokens, and at most this much nesting of parentheses, lists, calls and unary
 * operators. Real `olm.constraint` rules are a few dozen tokens.
 */
export const MAX_CEL_TOKENS = 2000;
export const MAX_CEL_NESTING = 100;

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    if (out.length >= MAX_CEL_TOKENS) throw new CelError(`the rule is too long: more than ${MAX_CEL_TOKENS} tokens`);
    const c = src[i] ?? '';
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const at = i;
    if (/[0-9]/.test(c)) {
      let j = i;
      while (j < src.length && /[0-9.]/.test(src[j] ?? '')) j++;
      if (src[j] === 'u') j++;
      out.push({ t: 'num', v: src.slice(i, j).replace(/u$/, ''), at });
      i = j;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[A-Za-z0-9_]/.test(src[j] ?? '')) j++;
      out.push({ t: 'id', v: src.slice(i, j), at });
      i = j;
    } else if (c === '"' || c === "'") {
      const str = readString(src, i);
      out.push({ t: 'str', v: str.value, at });
      i = str.end;
    } else {
      const two = src.slice(i, i + 2);
      if (['==', '!=', '<=', '>=', '&&', '||'].includes(two)) {
        out.push({ t: 'op', v: two, at });
        i += 2;
      } else if ('()[]{}.,:?!<>+-'.includes(c)) {
        out.push({ t: 'op', v: c, at });
        i++;
      } else {
        throw new CelError(`unexpected character "${c}" at ${at}`);
      }
    }
  }
  out.push({ t: 'end', v: '', at: src.length });
  return out;
}

class Parser {
  private p = 0;
  private depth = 0;
  constructor(private readonly toks: Token[]) {}

  /** Runs a nested parse, refusing nesting deeper than MAX_CEL_NESTING. */
  private nested<T>(at: number, parse: () => T): T {
    if (++this.depth > MAX_CEL_NESTING) throw new CelError(`the rule nests more than ${MAX_CEL_NESTING} levels deep at ${at}`);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private peek(): Token {
    return this.toks[this.p] ?? { t: 'end', v: '', at: 0 };
  }
  private take(): Token {
    const t = this.peek();
    this.p++;
    return t;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }
  private expect(v: string): void {
    const t = this.take();
    if (t.t !== 'op' || t.v !== v) throw new CelError(`expected "${v}" at ${t.at}`);
  }

  parseAll(): Expr {
    const e = this.or();
    const t = this.peek();
    if (t.t !== 'end') throw new CelError(`unexpected "${t.v}" at ${t.at}`);
    return e;
  }
  private or(): Expr {
    return this.nested(this.peek().at, () => this.conditional());
  }
  /** `test ? then : otherwise`, the loosest binding: CEL's `ConditionalOr ["?" ConditionalOr ":" Expr]`. */
  private conditional(): Expr {
    const test = this.orChain();
    if (!this.isOp('?')) return test;
    this.take();
    const then = this.orChain();
    this.expect(':');
    return { k: 'cond', test, then, otherwise: this.or() };
  }
  private orChain(): Expr {
    let l = this.and();
    while (this.isOp('||')) {
      this.take();
      l = { k: 'bin', op: '||', l, r: this.and() };
    }
    return l;
  }
  private and(): Expr {
    let l = this.rel();
    while (this.isOp('&&')) {
      this.take();
      l = { k: 'bin', op: '&&', l, r: this.rel() };
    }
    return l;
  }
  private rel(): Expr {
    let l = this.add();
    for (;;) {
      const t = this.peek();
      const isRel = (t.t === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(t.v)) || (t.t === 'id' && t.v === 'in');
      if (!isRel) return l;
      this.take();
      l = { k: 'bin', op: t.v, l, r: this.add() };
    }
  }
  private add(): Expr {
    let l = this.unary();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.take().v;
      l = { k: 'bin', op, l, r: this.unary() };
    }
    return l;
  }
  private unary(): Expr {
    if (this.isOp('!') || this.isOp('-')) {
      const t = this.take();
      return { k: 'unary', op: t.v === '!' ? '!' : '-', x: this.nested(t.at, () => this.unary()) };
    }
    return this.postfix();
  }
  private args(): Expr[] {
    this.expect('(');
    const args: Expr[] = [];
    if (!this.isOp(')')) {
      args.push(this.or());
      while (this.isOp(',')) {
        this.take();
        args.push(this.or());
      }
    }
    this.expect(')');
    return args;
  }
  /** The macro `has(x.f)`: whether map `x` has the key `f`. */
  private has(at: number): Expr {
    const args = this.args();
    const [arg] = args;
    if (args.length !== 1 || arg?.k !== 'field') throw new CelError(`has() needs one field selection, like has(x.f), at ${at}`);
    return { k: 'has', of: arg.of, name: arg.name };
  }
  /** The items of a list or map literal up to `close`, each read by `item`; a trailing comma is allowed, as in CEL. */
  private items<T>(close: string, item: () => T): T[] {
    const out: T[] = [];
    while (!this.isOp(close)) {
      out.push(item());
      if (!this.isOp(',')) break;
      this.take();
    }
    this.expect(close);
    return out;
  }
  private postfix(): Expr {
    let e = this.primary();
    for (;;) {
      if (this.isOp('.')) {
        this.take();
        const name = this.take();
        if (name.t !== 'id') throw new CelError(`expected a name after "." at ${name.at}`);
        if (this.isOp('(')) e = { k: 'call', fn: name.v, target: e, args: this.args() };
        else e = { k: 'field', of: e, name: name.v };
      } else if (this.isOp('[')) {
        this.take();
        const at = this.or();
        this.expect(']');
        e = { k: 'index', of: e, at };
      } else {
        return e;
      }
    }
  }
  private primary(): Expr {
    const t = this.take();
    if (t.t === 'num') {
      const n = Number(t.v);
      if (Number.isNaN(n)) throw new CelError(`bad number "${t.v}" at ${t.at}`);
      return { k: 'lit', v: n };
    }
    if (t.t === 'str') return { k: 'lit', v: t.v };
    if (t.t === 'id') {
      if (t.v === 'true') return { k: 'lit', v: true };
      if (t.v === 'false') return { k: 'lit', v: false };
      if (t.v === 'null') return { k: 'lit', v: null };
      if (t.v === 'has' && this.isOp('(')) return this.has(t.at);
      if (this.isOp('(')) return { k: 'call', fn: t.v, args: this.args() };
      return { k: 'id', name: t.v };
    }
    if (t.t === 'op' && t.v === '(') {
      const e = this.or();
      this.expect(')');
      return e;
    }
    if (t.t === 'op' && t.v === '[') return { k: 'list', items: this.items(']', () => this.or()) };
    if (t.t === 'op' && t.v === '{') {
      const entries = this.items('}', () => {
        const key = this.or();
        this.expect(':');
        return { key, value: this.or() };
      });
      return { k: 'map', entries };
    }
    throw new CelError(t.t === 'end' ? 'unexpected end of rule' : `unexpected "${t.v}" at ${t.at}`);
  }
}

export interface CompiledRule {
  source: string;
  /** The variables the rule reads (macro variables such as `p` in `exists(p, …)` left out). */
  references: ReadonlySet<string>;
  /** True when the candidate's properties (and the cluster, if given) satisfy the rule; false on a runtime error. */
  matches(properties: readonly { type: string; value: unknown }[], cluster?: Record<string, unknown>): boolean;
  /** True when the rule holds over these variables; false on a runtime error (e.g. an undeclared one). */
  test(variables: Readonly<Record<string, unknown>>): boolean;
}

/** Compiles a rule; throws `CelError` with the position when it does not parse. */
export function compileCel(source: string): CompiledRule {
  const ast = new Parser(tokenize(source)).parseAll();
  const test = (variables: Readonly<Record<string, unknown>>): boolean => {
    try {
      return evaluate(ast, new Map<string, unknown>(Object.entries(variables))) === true;
    } catch (e) {
      if (e instanceof CelError) return false;
      throw e;
    }
  };
  return {
    source,
    references: freeIdentifiers(ast, new Set()),
    matches: (properties, cluster) => test(cluster === undefined ? { properties } : { properties, cluster }),
    test,
  };
}

/** Identifiers an expression reads that no enclosing macro binds. */
function freeIdentifiers(e: Expr, bound: ReadonlySet<string>, out = new Set<string>()): Set<string> {
  if (e.k === 'id') {
    if (!bound.has(e.name)) out.add(e.name);
    return out;
  }
  const [v, body] = e.k === 'call' ? e.args : [];
  if (e.k === 'call' && e.target !== undefined && MACROS.includes(e.fn) && v?.k === 'id' && body !== undefined) {
    // A macro binds its variable in its body: `x` in `list.all(x, x > 1)` is not free.
    freeIdentifiers(e.target, bound, out);
    freeIdentifiers(body, new Set([...bound, v.name]), out);
    return out;
  }
  for (const sub of subexpressions(e)) freeIdentifiers(sub, bound, out);
  return out;
}

/** The expressions directly inside `e`, in source order. */
function subexpressions(e: Expr): Expr[] {
  switch (e.k) {
    case 'lit':
    case 'id':
      return [];
    case 'list':
      return e.items;
    case 'map':
      return e.entries.flatMap((x) => [x.key, x.value]);
    case 'field':
    case 'has':
      return [e.of];
    case 'index':
      return [e.of, e.at];
    case 'unary':
      return [e.x];
    case 'cond':
      return [e.test, e.then, e.otherwise];
    case 'bin':
      return [e.l, e.r];
    case 'call':
      return e.target === undefined ? e.args : [e.target, ...e.args];
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new CelError('no ordering between these values');
}

function evaluate(e: Expr, env: Map<string, unknown>): unknown {
  switch (e.k) {
    case 'lit':
      return e.v;
    case 'id':
      if (!env.has(e.name)) throw new CelError(`undeclared reference "${e.name}"`);
      return env.get(e.name);
    case 'list':
      return e.items.map((x) => evaluate(x, env));
    case 'map':
      return mapLiteral(e.entries, env);
    case 'field':
    case 'index':
      return access(e, env);
    case 'has': {
      const o = evaluate(e.of, env);
      if (!isRecord(o)) throw new CelError(`has(): no map to look for "${e.name}" in`);
      return Object.hasOwn(o, e.name);
    }
    case 'unary': {
      const x = evaluate(e.x, env);
      if (e.op === '!') {
        if (typeof x !== 'boolean') throw new CelError('"!" needs a bool');
        return !x;
      }
      if (typeof x !== 'number') throw new CelError('"-" needs a number');
      return -x;
    }
    case 'cond': {
      const test = evaluate(e.test, env);
      if (typeof test !== 'boolean') throw new CelError('"?:" needs a bool before "?"');
      return evaluate(test ? e.then : e.otherwise, env);
    }
    case 'bin':
      return binary(e.op, e.l, e.r, env);
    case 'call':
      return call(e, env);
  }
}

/** `x.name` (a map's own key) and `x[at]` (a list's index or a map's own key). */
function access(e: Extract<Expr, { k: 'field' | 'index' }>, env: Map<string, unknown>): unknown {
  const o = evaluate(e.of, env);
  if (e.k === 'field') {
    if (!isRecord(o) || !Object.hasOwn(o, e.name)) throw new CelError(`no such key "${e.name}"`);
    return o[e.name];
  }
  const at = evaluate(e.at, env);
  if (Array.isArray(o) && typeof at === 'number' && at >= 0 && at < o.length) return o[at] as unknown;
  if (isRecord(o) && typeof at === 'string' && Object.hasOwn(o, at)) return o[at];
  throw new CelError('index out of range');
}

/** A map literal: string keys only (the maps rules read, JSON objects, have no others), each once. */
function mapLiteral(entries: readonly { key: Expr; value: Expr }[], env: Map<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const { key, value } of entries) {
    const k = evaluate(key, env);
    if (typeof k !== 'string') throw new CelError('a map literal\'s keys must be strings here');
    if (Object.hasOwn(out, k)) throw new CelError(`a map literal has the key "${k}" twice`);
    out[k] = evaluate(value, env);
  }
  return out;
}

function logical(op: '&&' | '||', l: Expr, r: Expr, env: Map<string, unknown>): boolean {
  const decisive = op === '||';
  let err: CelError | undefined;
  let lv: unknown;
  try {
    lv = evaluate(l, env);
    if (lv === decisive) return decisive;
  } catch (x) {
    if (!(x instanceof CelError)) throw x;
    err = x;
  }
  const rv = evaluate(r, env);
  if (rv === decisive) return decisive;
  if (err !== undefined) throw err;
  if (typeof lv !== 'boolean' || typeof rv !== 'boolean') throw new CelError(`"${op}" needs bools`);
  return !decisive;
}

function binary(op: string, l: Expr, r: Expr, env: Map<string, unknown>): unknown {
  if (op === '&&' || op === '||') return logical(op, l, r, env);
  const a = evaluate(l, env);
  const b = evaluate(r, env);
  switch (op) {
    case '==':
      return deepEqual(a, b);
    case '!=':
      return !deepEqual(a, b);
    case '<':
      return compare(a, b) < 0;
    case '<=':
      return compare(a, b) <= 0;
    case '>':
      return compare(a, b) > 0;
    case '>=':
      return compare(a, b) >= 0;
    case 'in':
      return contains(b, a);
    case '+':
      return plus(a, b);
    case '-':
      if (typeof a === 'number' && typeof b === 'number') return a - b;
      throw new CelError('"-" needs numbers');
    default:
      throw new CelError(`unknown operator "${op}"`);
  }
}

/** `a in b`: an element of a list, or a key of a map. */
function contains(b: unknown, a: unknown): boolean {
  if (Array.isArray(b)) return b.some((x) => deepEqual(x, a));
  if (isRecord(b) && typeof a === 'string') return Object.hasOwn(b, a);
  throw new CelError('"in" needs a list or map');
}

/** `+` adds numbers and joins strings or lists. */
function plus(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') return a + b;
  if (typeof a === 'string' && typeof b === 'string') return a + b;
  if (Array.isArray(a) && Array.isArray(b)) return [...(a as unknown[]), ...(b as unknown[])];
  throw new CelError('"+" needs two numbers, strings or lists');
}

const MACROS = ['exists', 'all', 'exists_one', 'filter', 'map'];

function call(e: Extract<Expr, { k: 'call' }>, env: Map<string, unknown>): unknown {
  if (e.target !== undefined && MACROS.includes(e.fn)) return macro(e, e.target, env);
  return builtin(e, env);
}

function macro(e: Extract<Expr, { k: 'call' }>, target: Expr, env: Map<string, unknown>): unknown {
  const [v, body] = e.args;
  if (v?.k !== 'id' || body === undefined || e.args.length !== 2) throw new CelError(`${e.fn}() needs a variable and an expression`);
  const list = evaluate(target, env);
  if (!Array.isArray(list)) throw new CelError(`${e.fn}() needs a list`);
  const value = (x: unknown): unknown => evaluate(body, new Map(env).set(v.name, x));
  const test = (x: unknown): boolean => {
    const b = value(x);
    if (typeof b !== 'boolean') throw new CelError(`${e.fn}() needs an expression that is a bool`);
    return b;
  };
  switch (e.fn) {
    case 'exists':
      return decide(list, test, true);
    case 'all':
      return decide(list, test, false);
    case 'exists_one':
      return list.filter(test).length === 1;
    case 'filter':
      return list.filter(test);
    default:
      return list.map(value);
  }
}

/**
 * exists() (`decisive` true) and all() (false), as CEL folds them with `||` and `&&`: one element
 * whose test is `decisive` decides, whatever errors others raise; otherwise the first error stands.
 */
function decide(list: readonly unknown[], test: (x: unknown) => boolean, decisive: boolean): boolean {
  let err: CelError | undefined;
  for (const x of list) {
    try {
      if (test(x) === decisive) return decisive;
    } catch (e) {
      if (!(e instanceof CelError)) throw e;
      err ??= e;
    }
  }
  if (err !== undefined) throw err;
  return !decisive;
}

function builtin(e: Extract<Expr, { k: 'call' }>, env: Map<string, unknown>): unknown {
  const target = e.target === undefined ? undefined : evaluate(e.target, env);
  const args = e.args.map((a) => evaluate(a, env));
  const str = (x: unknown): string => {
    if (typeof x !== 'string') throw new CelError(`${e.fn}() needs strings`);
    return x;
  };
  switch (e.fn) {
    case 'semver_compare': {
      const [a, b] = e.target === undefined ? args : [target, ...args];
      const order = olmSemverCompare(a, b);
      if (typeof order !== 'number') throw new CelError(order.error);
      return order;
    }
    case 'size': {
      const x = e.target === undefined ? args[0] : target;
      if (typeof x === 'string' || Array.isArray(x)) return x.length;
      if (isRecord(x)) return Object.keys(x).length;
      throw new CelError('size() needs a string, list or map');
    }
    case 'startsWith':
      return str(target).startsWith(str(args[0]));
    case 'endsWith':
      return str(target).endsWith(str(args[0]));
    case 'contains':
      return str(target).includes(str(args[0]));
    case 'matches': {
      const subject = str(target);
      if (subject.length > MAX_MATCH_SUBJECT) throw new CelError(`matches(): the string is longer than ${MAX_MATCH_SUBJECT} characters`);
      return safeRegExp(str(args[0])).test(subject);
    }
    case 'string':
    case 'int': {
      // Only scalars convert: a list or map (maybe without a prototype) has no string or number form.
      const x = args[0];
      if (x !== null && typeof x === 'object') throw new CelError(`${e.fn}() needs a string, number or bool`);
      return e.fn === 'string' ? String(x) : Math.trunc(Number(x));
    }
    default:
      throw new CelError(`unknown function ${e.fn}()`);
  }
}
