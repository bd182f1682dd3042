import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cdcl, neg, pos, type Lit } from './cdcl.js';
import { SatBudgetError } from './errors.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const budget = (): { maxConflicts: number; deadline: number } => ({ maxConflicts: 1_000_000, deadline: performance.now() + 60_000 });
const holds = (clause: readonly Lit[], m: number): boolean => clause.some((l) => (((m >> (l >> 1)) & 1) === 1) !== ((l & 1) === 1));

test('random 3-SAT near the threshold agrees with brute force, with and without assumptions', () => {
  let sat = 0;
  let unsat = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const n = 4 + Math.floor(r() * 9);
    const m = Math.round(n * (3.6 + r() * 1.4));
    const clauses: Lit[][] = Array.from({ length: m }, () =>
      Array.from({ length: 3 }, () => {
        const v = Math.floor(r() * n);
        return r() < 0.5 ? pos(v) : neg(v);
      }),
    );
    const assumptions: Lit[] = Array.from({ length: Math.floor(r() * 3) }, () => {
      const v = Math.floor(r() * n);
      return r() < 0.5 ? pos(v) : neg(v);
    });
    const s = new Cdcl(budget());
    for (let i = 0; i < n; i++) s.newVar();
    for (const c of clauses) s.addClause(c);
    const all = [...clauses, ...assumptions.map((a) => [a])];
    let expected = false;
    for (let a = 0; a < 1 << n && !expected; a++) if (all.every((c) => holds(c, a))) expected = true;
    const out = s.solve(assumptions);
    assert.equal(out.status === 'sat', expected, `seed ${seed}`);
    if (out.status === 'sat') {
      sat++;
      let model = 0;
      for (let i = 0; i < n; i++) if (s.modelValue(i)) model |= 1 << i;
      assert.ok(all.every((c) => holds(c, model)), `seed ${seed}: model violates a clause`);
    } else {
      unsat++;
      // The core is a subset of the assumptions that is unsat together with the clauses.
      for (const l of out.core) assert.ok(assumptions.includes(l), `seed ${seed}: core has a non-assumption`);
      const withCore = [...clauses, ...out.core.map((a) => [a])];
      for (let a = 0; a < 1 << n; a++) assert.ok(!withCore.every((c) => holds(c, a)), `seed ${seed}: core is satisfiable`);
    }
  }
  assert.ok(sat > 50 && unsat > 50, `${sat} sat, ${unsat} unsat`);
});

test('the conflict budget turns into SatBudgetError', () => {
  // Pigeonhole 10 into 9 as plain clauses.
  const s = new Cdcl({ maxConflicts: 500, deadline: performance.now() + 60_000 });
  const p = 10;
  const h = 9;
  const x = (i: number, j: number): number => i * h + j;
  for (let k = 0; k < p * h; k++) s.newVar();
  for (let i = 0; i < p; i++) s.addClause(Array.from({ length: h }, (_, j) => pos(x(i, j))));
  for (let j = 0; j < h; j++) for (let a = 0; a < p; a++) for (let b = a + 1; b < p; b++) s.addClause([neg(x(a, j)), neg(x(b, j))]);
  assert.throws(() => s.solve([]), SatBudgetError);
});

test('incremental: learnt clauses survive between calls and answers stay right', () => {
  const s = new Cdcl(budget());
  const a = s.newVar();
  const b = s.newVar();
  const c = s.newVar();
  s.addClause([neg(a), pos(b)]);
  s.addClause([neg(b), pos(c)]);
  const r1 = s.solve([pos(a), neg(c)]);
  assert.equal(r1.status, 'unsat');
  assert.deepEqual(r1.status === 'unsat' ? [...r1.core].sort() : [], [pos(a), neg(c)].sort());
  assert.equal(s.solve([pos(a)]).status, 'sat');
  assert.equal(s.modelValue(c), true);
  assert.equal(s.solve([neg(c)]).status, 'sat');
  assert.equal(s.modelValue(a), false);
});
