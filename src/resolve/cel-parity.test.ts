/**
 * Both CEL evaluators (the hand-written one in cel.ts, and @bufbuild/cel behind the same contract
 * in cel-bufbuild.test-helper.ts) against OLM's own answers: every olm.constraint CEL rule of
 * OLM's tests (test/vendor/*\/olm-constraint-cel-rules.json) and of Binnacle's, and probes
 * (testdata/cel/binnacle-rules.json), over twelve candidate bundles (testdata/cel/inputs.json).
 * OLM's answers (testdata/cel/olm-verdicts.json) come from operator-framework/api v0.27.0's CEL
 * environment (hack/bench-tools/olm-cel/verdicts.sh).
 *
 * What counts as the same answer is what the resolver sees: a rule holds for a candidate exactly
 * when OLM says true. A rule OLM refuses to compile must be refused by the evaluator too, when it
 * compiles (CelError) or by never holding. Every difference is listed below with its reason; a new
 * one, or a listed one that went away, fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { CelError, compileCel, type CompiledRule } from './cel.js';
import { compileCelBufbuild } from './cel-bufbuild.test-helper.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DATA = path.join(import.meta.dirname, 'testdata', 'cel');

interface Rule {
  id: string;
  rule: string;
  expected?: { input?: string; answer: boolean | 'rejected' | 'accepted' };
}
interface Input {
  name: string;
  properties: { type: string; value: unknown }[];
  cluster: Record<string, unknown>;
}
interface Verdict {
  id: string;
  rule: string;
  env: 'olm' | 'cluster';
  compileError?: string;
  results?: Record<string, boolean | 'error'>;
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));
const vendored = readdirSync(path.join(ROOT, 'test', 'vendor'))
  .map((d) => path.join(ROOT, 'test', 'vendor', d, 'olm-constraint-cel-rules.json'))
  .filter((f) => existsSync(f));
const ruleFiles = [...vendored, path.join(DATA, 'binnacle-rules.json')];
const rules = ruleFiles.flatMap((f) => (readJson(f) as { rules: Rule[] }).rules);
const inputs = (readJson(path.join(DATA, 'inputs.json')) as { inputs: Input[] }).inputs;
const verdicts = new Map((readJson(path.join(DATA, 'olm-verdicts.json')) as { rules: Verdict[] }).rules.map((v) => [v.id, v]));

/** One answer that is not OLM's: the rule, the candidate (or "*" for a compile-time refusal), OLM's answer and the evaluator's. */
type Difference = string;

/** What an evaluator answered that OLM did not, over every rule and input. */
function differences(compile: (source: string) => CompiledRule): { differences: Difference[]; refusedAtCompile: number; refusedByNeverHolding: number } {
  const out: Difference[] = [];
  let refusedAtCompile = 0;
  let refusedByNeverHolding = 0;
  for (const r of rules) {
    const v = verdicts.get(r.id);
    assert.ok(v !== undefined && v.rule === r.rule, `${r.id}: no OLM verdict for this rule; run hack/bench-tools/olm-cel/verdicts.sh`);
    let compiled: CompiledRule | CelError;
    try {
      compiled = compile(r.rule);
    } catch (e) {
      if (!(e instanceof CelError)) throw e;
      compiled = e;
    }
    if (v.compileError !== undefined) {
      if (compiled instanceof CelError) refusedAtCompile++;
      else {
        const held = inputs.filter((i) => compiled.matches(i.properties, i.cluster)).map((i) => i.name);
        if (held.length === 0) refusedByNeverHolding++;
        else out.push(`${r.id} * olm=refused got=holds for ${held.join(',')}`);
      }
      continue;
    }
    for (const i of inputs) {
      const olm = v.results?.[i.name];
      assert.ok(olm !== undefined, `${r.id}: no OLM answer over ${i.name}; run hack/bench-tools/olm-cel/verdicts.sh`);
      const got = compiled instanceof CelError ? 'refused' : compiled.matches(i.properties, i.cluster);
      if ((olm === true) !== (got === true)) out.push(`${r.id} ${i.name} olm=${String(olm)} got=${String(got)}`);
    }
  }
  return { differences: out, refusedAtCompile, refusedByNeverHolding };
}

/** Where a rule's differences are the same over many inputs, the list names the rule and the inputs once. */
function summarize(diffs: Difference[]): string[] {
  const byRule = new Map<string, string[]>();
  for (const d of diffs) {
    const [id = '', input = '', ...rest] = d.split(' ');
    const key = `${id} ${rest.join(' ')}`;
    byRule.set(key, [...(byRule.get(key) ?? []), input]);
  }
  return [...byRule]
    .map(([key, ins]) => {
      const [id, ...rest] = key.split(' ');
      return `${id ?? ''} [${ins.length === inputs.length ? 'every input' : ins.join(',')}] ${rest.join(' ')}`;
    })
    .sort();
}

test('the parity data: every rule has OLM verdicts, and they agree with what the rule sources expect', () => {
  assert.ok(rules.length >= 90, `only ${rules.length} rules`);
  assert.equal(new Set(rules.map((r) => r.id)).size, rules.length, 'rule ids are unique');
  assert.equal(verdicts.size, rules.length, 'olm-verdicts.json is for exactly these rules; run hack/bench-tools/olm-cel/verdicts.sh');
  let checked = 0;
  for (const r of rules) {
    const v = verdicts.get(r.id);
    assert.ok(v !== undefined && v.rule === r.rule, r.id);
    const want = r.expected;
    if (want === undefined) continue;
    checked++;
    if (want.answer === 'rejected') assert.ok(v.compileError !== undefined, `${r.id}: OLM should refuse it`);
    else if (want.answer === 'accepted') assert.equal(v.compileError, undefined, r.id);
    else assert.equal(v.results?.[want.input ?? ''], want.answer, r.id);
  }
  assert.equal(checked, 14, 'the expectations stated by OLM’s tests: api 6, operator-registry 5, operator-lifecycle-manager 3');
});

test('the hand-written evaluator answers as OLM does, but for the listed differences', (t) => {
  const r = differences(compileCel);
  t.diagnostic(`OLM refuses ${r.refusedAtCompile + r.refusedByNeverHolding} rules when they compile: cel.ts refuses ${r.refusedAtCompile} then, the others never hold`);
  assert.deepEqual(summarize(r.differences), [
    // Backtracking patterns cel.ts refuses (so that a catalog's rule cannot hang the resolver) but RE2 runs.
    'binnacle/20 [every input] olm=true got=false',
    'binnacle/21 [every input] olm=true got=false',
    'binnacle/23 [every input] olm=true got=false',
    'binnacle/26 [every input] olm=true got=false',
    'binnacle/27 [every input] olm=true got=false',
    // matches() looks at no subject longer than 1,000 characters.
    'binnacle/35 [every input] olm=true got=false',
    // A number from JSON is a double in CEL, and double + int has no overload: cel.ts adds them.
    'probe/16 [odd-values] olm=error got=true',
    // OLM's type checker has no int == double (the CEL spec's runtime equality does); cel.ts has no checker.
    'probe/22 [*] olm=refused got=holds for olm-api-test,olm-resolver-opB,registry-etcd-certified,binnacle-db,label-first,db-1.0.0,db-3.0.0-deprecated,prerelease,loose-version,not-a-version,odd-values,empty',
    // No `/`.
    'probe/28 [olm-resolver-opB,registry-etcd-certified,binnacle-db,label-first,db-1.0.0,db-3.0.0-deprecated,prerelease,loose-version,not-a-version,odd-values] olm=true got=refused',
  ]);
});

test('@bufbuild/cel with OLM’s semver_compare answers as OLM does, but for one rule OLM’s type checker refuses', (t) => {
  const r = differences(compileCelBufbuild);
  t.diagnostic(`OLM refuses ${r.refusedAtCompile + r.refusedByNeverHolding} rules when they compile: @bufbuild/cel refuses ${r.refusedAtCompile} then, the others never hold`);
  assert.deepEqual(summarize(r.differences), [
    // OLM's type checker has no int == double (the CEL spec's runtime equality does); @bufbuild/cel 0.6.1 exports no checker.
    'probe/22 [*] olm=refused got=holds for olm-api-test,olm-resolver-opB,registry-etcd-certified,binnacle-db,label-first,db-1.0.0,db-3.0.0-deprecated,prerelease,loose-version,not-a-version,odd-values,empty',
  ]);
});

test('both evaluators name the same variables a rule reads (which decides a cluster rule), where both compile it', () => {
  let compared = 0;
  for (const r of rules) {
    let hand: CompiledRule;
    try {
      hand = compileCel(r.rule);
    } catch {
      continue;
    }
    assert.deepEqual([...compileCelBufbuild(r.rule).references].sort(), [...hand.references].sort(), r.id);
    compared++;
  }
  assert.ok(compared >= 80, `only ${compared} rules compiled by both`);
});
