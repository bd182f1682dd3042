/**
 * `compileCel` over @bufbuild/cel (a maintained, conformance-tested CEL for ECMAScript) instead of
 * the hand-written evaluator in cel.ts: the same `CompiledRule` contract, the same `CelError`,
 * OLM's `semver_compare` (olm-semver.ts) as a custom function. cel-parity.test.ts runs both over
 * the parity data against OLM's own answers, and bench/cel.ts times both; see cel.ts's header for
 * what they found.
 *
 * @bufbuild/cel 0.6.1 exports no type checker, so, like the hand-written evaluator, a rule that
 * OLM refuses when it compiles (an unknown function, a result that is not a bool) is refused
 * only when it runs: it never holds.
 */
import { CelScalar, celEnv, celFunc, isCelError, parse, plan } from '@bufbuild/cel';
import { CelError, MAX_CEL_NESTING, type CompiledRule } from './cel.js';
import { olmSemverCompare } from './olm-semver.js';

type Expr = ReturnType<typeof parse>['expr'];

/** Longest rule compiled: the parser and planner recurse, and real rules are a few hundred characters. */
export const MAX_CEL_LENGTH = 10_000;

const semverCompare = celFunc('semver_compare', [CelScalar.DYN, CelScalar.DYN], CelScalar.INT, (a, b) => {
  const order = olmSemverCompare(a, b);
  if (typeof order !== 'number') throw new CelError(order.error);
  return BigInt(order);
});

const ENV = celEnv({ funcs: [semverCompare] });

/** Refuses a rule nesting brackets or prefix operators deeper than MAX_CEL_NESTING (outside string literals). */
function checkNesting(source: string): void {
  let depth = 0;
  let prefix = 0;
  let quote = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i] ?? '';
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    if (c === '!' || c === '-') prefix++;
    else if (!/\s/.test(c)) prefix = 0;
    if (depth > MAX_CEL_NESTING || prefix > MAX_CEL_NESTING) throw new CelError(`the rule nests more than ${MAX_CEL_NESTING} levels deep at ${i}`);
  }
}

/** Identifiers an expression reads that no enclosing comprehension (macro) binds. */
function freeIdentifiers(e: Expr | undefined, bound: ReadonlySet<string>, out: Set<string>): void {
  if (e === undefined) return;
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr':
      if (!bound.has(k.value.name)) out.add(k.value.name);
      return;
    case 'selectExpr':
      freeIdentifiers(k.value.operand, bound, out);
      return;
    case 'callExpr':
      freeIdentifiers(k.value.target, bound, out);
      for (const a of k.value.args) freeIdentifiers(a, bound, out);
      return;
    case 'listExpr':
      for (const x of k.value.elements) freeIdentifiers(x, bound, out);
      return;
    case 'structExpr':
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') freeIdentifiers(entry.keyKind.value, bound, out);
        freeIdentifiers(entry.value, bound, out);
      }
      return;
    case 'comprehensionExpr': {
      const c = k.value;
      freeIdentifiers(c.iterRange, bound, out);
      freeIdentifiers(c.accuInit, bound, out);
      const inner = new Set([...bound, c.iterVar, c.iterVar2, c.accuVar].filter((v) => v !== ''));
      freeIdentifiers(c.loopCondition, inner, out);
      freeIdentifiers(c.loopStep, inner, out);
      freeIdentifiers(c.result, inner, out);
      return;
    }
    default:
      return;
  }
}

/** Compiles a rule with @bufbuild/cel; throws `CelError` when it does not parse. */
export function compileCelBufbuild(source: string): CompiledRule {
  if (source.length > MAX_CEL_LENGTH) throw new CelError(`the rule is too long: more than ${MAX_CEL_LENGTH} characters`);
  checkNesting(source);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (e) {
    throw new CelError(e instanceof Error ? e.message : String(e));
  }
  const run = plan(ENV, parsed);
  const references = new Set<string>();
  freeIdentifiers(parsed.expr, new Set(), references);
  const test = (variables: Readonly<Record<string, unknown>>): boolean => {
    const r = run(variables as Parameters<typeof run>[0]);
    return !isCelError(r) && r === true;
  };
  return {
    source,
    references,
    matches: (properties, cluster) => test(cluster === undefined ? { properties } : { properties, cluster }),
    test,
  };
}
