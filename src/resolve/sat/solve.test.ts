import { test } from 'node:test';
import assert from 'node:assert/strict';
import { solve } from './solve.js';
import { SatBudgetError, SatInputError } from './errors.js';
import type { Constraint, Variable } from './types.js';

const v = (id: string, ...constraints: Constraint[]): Variable => ({ id, constraints });
const mandatory: Constraint = { kind: 'mandatory' };
const prohibited: Constraint = { kind: 'prohibited' };
const dep = (...ids: string[]): Constraint => ({ kind: 'dependency', ids });
const conflict = (id: string): Constraint => ({ kind: 'conflict', id });
const atMost = (n: number, ...ids: string[]): Constraint => ({ kind: 'atMost', n, ids });

function ids(r: ReturnType<typeof solve>): string[] {
  assert.equal(r.satisfiable, true);
  return r.satisfiable ? r.selected.map((x) => x.id) : [];
}

test('prefers earlier dependency candidates', () => {
  const r = solve([v('a', mandatory, dep('b', 'c')), v('b'), v('c')]);
  assert.deepEqual(ids(r), ['a', 'b']);
});

test('falls back to a later candidate when the earlier one is prohibited', () => {
  const r = solve([v('a', mandatory, dep('b', 'c')), v('b', prohibited), v('c')]);
  assert.deepEqual(ids(r), ['a', 'c']);
});

test('falls back when the earlier candidate conflicts with a later mandatory variable', () => {
  const r = solve([v('a', mandatory, dep('b', 'c')), v('b', conflict('x')), v('c'), v('x', mandatory)]);
  assert.deepEqual(ids(r), ['a', 'c', 'x']);
});

test('a choice already satisfied by an earlier pick picks nothing new', () => {
  const r = solve([v('a', mandatory, dep('b', 'c')), v('d', mandatory, dep('c', 'b')), v('b'), v('c')]);
  assert.deepEqual(ids(r), ['a', 'd', 'b']);
});

test('at-most limits selection', () => {
  const r = solve([
    v('a', mandatory, dep('x1', 'x2')),
    v('b', mandatory, dep('x2', 'x1')),
    v('x1'),
    v('x2'),
    v('pkg', atMost(1, 'x1', 'x2')),
  ]);
  assert.deepEqual(ids(r), ['a', 'b', 'x1']);
});

test('selects nothing when nothing is mandatory', () => {
  assert.deepEqual(ids(solve([v('a', dep('b')), v('b')])), []);
});

test('unsat core names exactly the clashing constraints', () => {
  const r = solve([v('a', mandatory, dep('b')), v('b', prohibited), v('c', mandatory), v('d', conflict('c'))]);
  assert.equal(r.satisfiable, false);
  if (r.satisfiable) return;
  const core = r.core.map((a) => `${a.variable.id}:${a.constraint.kind}`).sort();
  assert.deepEqual(core, ['a:dependency', 'a:mandatory', 'b:prohibited']);
});

test('an empty dependency of a mandatory variable is a two-constraint core', () => {
  const r = solve([v('a', mandatory, dep())]);
  assert.equal(r.satisfiable, false);
  if (!r.satisfiable) assert.equal(r.core.length, 2);
});

test('rejects duplicate and unknown identifiers', () => {
  assert.throws(() => solve([v('a'), v('a')]), SatInputError);
  assert.throws(() => solve([v('a', dep('zz'))]), SatInputError);
});

test('a dependency cycle is fine', () => {
  const r = solve([v('a', mandatory, dep('b')), v('b', dep('c')), v('c', dep('a'))]);
  assert.deepEqual(ids(r), ['a', 'b', 'c']);
});

test('pigeonhole 9 into 8 runs out of budget with a clear error, not a hang', () => {
  // Each pigeon picks one hole; each hole holds one pigeon. Unsat, exponential for resolution.
  const holes = Array.from({ length: 8 }, (_, h) => `h${h}`);
  const vars: Variable[] = [];
  for (let p = 0; p < 9; p++) {
    const mine = holes.map((h) => `p${p}${h}`);
    vars.push(v(`p${p}`, mandatory, dep(...mine)));
    for (const m of mine) vars.push(v(m));
  }
  for (const h of holes) vars.push(v(`cap-${h}`, atMost(1, ...Array.from({ length: 9 }, (_, p) => `p${p}${h}`))));
  const started = performance.now();
  assert.throws(() => solve(vars, { maxConflicts: 2000 }), (e: unknown) => e instanceof SatBudgetError && e.code === 'RESOLVE_BUDGET_EXCEEDED');
  assert.ok(performance.now() - started < 5000);
});

// --- random instances against brute force -------------------------------------------------

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomProblem(seed: number): Variable[] {
  const r = rng(seed);
  const n = 2 + Math.floor(r() * 7);
  const names = Array.from({ length: n }, (_, i) => `v${i}`);
  const pick = (): string => names[Math.floor(r() * n)] ?? 'v0';
  return names.map((id) => {
    const cs: Constraint[] = [];
    if (r() < 0.3) cs.push(mandatory);
    if (r() < 0.07) cs.push(prohibited);
    if (r() < 0.6) cs.push(dep(...Array.from({ length: Math.floor(r() * 4) }, pick)));
    if (r() < 0.2) cs.push(dep(...Array.from({ length: 1 + Math.floor(r() * 3) }, pick)));
    if (r() < 0.25) cs.push(conflict(pick()));
    if (r() < 0.15) cs.push(atMost(Math.floor(r() * 3), ...Array.from({ length: 2 + Math.floor(r() * 3) }, pick)));
    return v(id, ...cs);
  });
}

// Constraint objects may be shared between variables, so a constraint is named by `id#index`.
function satisfies(vars: readonly Variable[], on: ReadonlySet<string>, only?: Set<string>): boolean {
  for (const x of vars) {
    for (const [k, c] of x.constraints.entries()) {
      if (only !== undefined && !only.has(`${x.id}#${k}`)) continue;
      const s = on.has(x.id);
      switch (c.kind) {
        case 'mandatory':
          if (!s) return false;
          break;
        case 'prohibited':
          if (s) return false;
          break;
        case 'dependency':
          if (s && !c.ids.some((i) => on.has(i))) return false;
          break;
        case 'conflict':
          if (s && on.has(c.id)) return false;
          break;
        case 'atMost':
          if (new Set(c.ids.filter((i) => on.has(i))).size > c.n) return false;
          break;
      }
    }
  }
  return true;
}

function allModels(vars: readonly Variable[], only?: Set<string>): Set<string>[] {
  const out: Set<string>[] = [];
  for (let m = 0; m < 1 << vars.length; m++) {
    const on = new Set(vars.filter((_, i) => (m >> i) & 1).map((x) => x.id));
    if (satisfies(vars, on, only)) out.push(on);
  }
  return out;
}

/** Deppy's preference, replayed on a model: the candidate index taken at each choice. */
function trace(vars: readonly Variable[], model: ReadonlySet<string>): { steps: number[]; picked: Set<string> } {
  const byId = new Map(vars.map((x) => [x.id, x]));
  const queue: string[][] = vars.filter((x) => x.constraints.some((c) => c.kind === 'mandatory')).map((x) => [x.id]);
  const picked = new Set<string>();
  const steps: number[] = [];
  for (let q = 0; q < queue.length; q++) {
    const choice = queue[q] ?? [];
    if (choice.some((c) => picked.has(c))) continue;
    const at = choice.findIndex((c) => model.has(c));
    assert.ok(at >= 0, 'a model always satisfies its choices');
    steps.push(at);
    const id = choice[at] ?? '';
    picked.add(id);
    for (const c of byId.get(id)?.constraints ?? []) if (c.kind === 'dependency' && c.ids.length > 0) queue.push([...c.ids]);
  }
  return { steps, picked };
}

function lexLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

test('random instances agree with brute force (optimality, minimality, cores)', () => {
  let sat = 0;
  let unsat = 0;
  for (let seed = 1; seed <= 600; seed++) {
    const vars = randomProblem(seed);
    const models = allModels(vars);
    const r = solve(vars);
    if (models.length === 0) {
      unsat++;
      assert.equal(r.satisfiable, false, `seed ${seed}: expected unsat`);
      if (r.satisfiable) continue;
      const core = new Set(r.core.map((a) => `${a.variable.id}#${a.variable.constraints.indexOf(a.constraint)}`));
      assert.equal(allModels(vars, core).length, 0, `seed ${seed}: core is not unsatisfiable`);
      for (const c of core) {
        const less = new Set(core);
        less.delete(c);
        assert.ok(allModels(vars, less).length > 0, `seed ${seed}: core is not minimal`);
      }
      continue;
    }
    sat++;
    assert.equal(r.satisfiable, true, `seed ${seed}: expected sat`);
    if (!r.satisfiable) continue;
    const got = new Set(r.selected.map((x) => x.id));
    assert.ok(satisfies(vars, got), `seed ${seed}: result violates a constraint`);
    const mine = trace(vars, got);
    for (const m of models) {
      const t = trace(vars, m);
      assert.ok(!lexLess(t.steps, mine.steps), `seed ${seed}: a more preferred model exists`);
      if (t.steps.join() === mine.steps.join()) assert.ok(m.size >= got.size, `seed ${seed}: a smaller equal model exists`);
    }
  }
  assert.ok(sat > 100 && unsat > 50, `mix of cases: ${sat} sat, ${unsat} unsat`);
});

test('an at-most constraint too large to encode is refused, not a memory blow-up', () => {
  const names = Array.from({ length: 5000 }, (_, i) => `x${i}`);
  assert.throws(() => solve([...names.map((id) => v(id)), v('cap', atMost(2500, ...names))]), SatBudgetError);
  // Large but fine: at most 1 of 5000.
  const r = solve([...names.map((id) => v(id)), v('cap', atMost(1, ...names)), v('root', mandatory, dep(...names))]);
  assert.deepEqual(ids(r), ['x0', 'root']);
});
