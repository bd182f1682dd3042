/**
 * Deppy-compatible search over the CDCL solver.
 *
 * Every input constraint gets a selector literal that switches it on, so the same solver can
 * answer "is this subset of constraints satisfiable?" — which is how the minimal core is found.
 *
 * Preference: mandatory variables are the first choices; each selected variable adds a choice
 * per dependency constraint (queue order, as Deppy's search does). A choice already satisfied by
 * an earlier pick is skipped; otherwise its first candidate that still leaves the whole problem
 * satisfiable is picked. Picks are never undone, so the result is the lexicographically most
 * preferred one, and it selects exactly the picked variables (nothing more is ever needed:
 * every pick's dependencies are picks too), which is also the fewest for that preference.
 */
import { Cdcl, neg, pos, type Lit } from './cdcl.js';
import { SatBudgetError, SatInputError } from './errors.js';

const MAX_COUNTER_CELLS = 4_000_000;
import type { AppliedConstraint, SolveOptions, SolveResult, Variable } from './types.js';

interface Encoded {
  solver: Cdcl;
  varIndex: Map<string, number>;
  /** Selector variable per applied constraint, in input order. */
  selectors: { applied: AppliedConstraint; lit: Lit }[];
}

function encode(variables: readonly Variable[], solver: Cdcl): Encoded {
  const varIndex = new Map<string, number>();
  for (const v of variables) {
    if (varIndex.has(v.id)) throw new SatInputError(`variable "${v.id}" is defined twice`);
    varIndex.set(v.id, solver.newVar());
  }
  const lookup = (id: string, from: string): number => {
    const x = varIndex.get(id);
    if (x === undefined) throw new SatInputError(`a constraint of "${from}" names unknown variable "${id}"`);
    return x;
  };
  const selectors: Encoded['selectors'] = [];
  for (const variable of variables) {
    const subject = lookup(variable.id, variable.id);
    for (const constraint of variable.constraints) {
      const sel = solver.newVar();
      const off = neg(sel);
      selectors.push({ applied: { variable, constraint }, lit: pos(sel) });
      switch (constraint.kind) {
        case 'mandatory':
          solver.addClause([off, pos(subject)]);
          break;
        case 'prohibited':
          solver.addClause([off, neg(subject)]);
          break;
        case 'dependency':
          solver.addClause([off, neg(subject), ...constraint.ids.map((id) => pos(lookup(id, variable.id)))]);
          break;
        case 'conflict':
          solver.addClause([off, neg(subject), neg(lookup(constraint.id, variable.id))]);
          break;
        case 'atMost':
          encodeAtMost(
            solver,
            off,
            constraint.n,
            constraint.ids.map((id) => lookup(id, variable.id)),
          );
          break;
      }
    }
  }
  return { solver, varIndex, selectors };
}

/** Sinz's sequential counter; only the clauses that forbid overflow are switched by `off`. */
function encodeAtMost(solver: Cdcl, off: Lit, n: number, xs: readonly number[]): void {
  const items = [...new Set(xs)];
  if (n >= items.length) return;
  // The counter needs n·k auxiliary variables; refuse sizes that would exhaust memory.
  if (n * items.length > MAX_COUNTER_CELLS) {
    throw new SatBudgetError(`gave up: an at-most-${n} constraint over ${items.length} variables is too large to encode`);
  }
  if (n <= 0) {
    for (const x of items) solver.addClause([off, neg(x)]);
    return;
  }
  // s[i][j] <=> at least j+1 of items[0..i] are selected (only the => direction is needed).
  let prev: number[] = [];
  items.forEach((x, i) => {
    const cur: number[] = [];
    for (let j = 0; j < n; j++) cur.push(solver.newVar());
    solver.addClause([neg(x), pos(cur[0] ?? 0)]);
    for (let j = 0; j < n; j++) {
      const pj = prev[j];
      if (pj !== undefined) solver.addClause([neg(pj), pos(cur[j] ?? 0)]);
      const pjm = prev[j - 1];
      if (j > 0 && pjm !== undefined) solver.addClause([neg(x), neg(pjm), pos(cur[j] ?? 0)]);
    }
    const full = prev[n - 1];
    if (i > 0 && full !== undefined) solver.addClause([off, neg(x), neg(full)]);
    prev = cur;
  });
}

/** Solves `variables`; see the module comment for what "most preferred" means. */
export function solve(variables: readonly Variable[], options: SolveOptions = {}): SolveResult {
  const solver = new Cdcl({
    maxConflicts: options.maxConflicts ?? 200_000,
    deadline: performance.now() + (options.timeoutMs ?? 10_000),
  });
  const enc = encode(variables, solver);
  let satCalls = 0;
  const stats = (): SolveResult['stats'] => ({
    satCalls,
    conflicts: solver.conflicts,
    decisions: solver.decisions,
    propagations: solver.propagations,
  });
  const allOn = enc.selectors.map((s) => s.lit);

  satCalls++;
  const first = solver.solve(allOn);
  if (first.status === 'unsat') {
    const core = minimiseCore(solver, enc, first.core, () => satCalls++);
    return { satisfiable: false, core, stats: stats() };
  }

  const idx = (id: string): number => enc.varIndex.get(id) ?? -1;
  const picked = new Set<number>();
  const assumptions: Lit[] = [...allOn];
  const queue: number[][] = [];
  for (const v of variables) {
    if (v.constraints.some((c) => c.kind === 'mandatory')) queue.push([idx(v.id)]);
  }
  const byIndex = new Map<number, Variable>();
  for (const v of variables) byIndex.set(idx(v.id), v);

  for (let q = 0; q < queue.length; q++) {
    const choice = queue[q] ?? [];
    if (choice.some((c) => picked.has(c))) continue;
    const chosen = firstFeasible(solver, choice, assumptions, () => satCalls++);
    if (chosen === -1) {
      // Cannot happen: the subject of this choice is picked, so some model selects a candidate.
      throw new SatInputError('internal error: a dependency choice had no feasible candidate');
    }
    picked.add(chosen);
    assumptions.push(pos(chosen));
    for (const c of byIndex.get(chosen)?.constraints ?? []) {
      if (c.kind === 'dependency' && c.ids.length > 0) queue.push(c.ids.map(idx));
    }
  }
  const selected = variables.filter((v) => picked.has(idx(v.id)));
  return { satisfiable: true, selected, stats: stats() };
}

/** The first candidate of a choice some model selects with everything picked so far; -1 when none is. */
function firstFeasible(solver: Cdcl, choice: readonly number[], assumptions: readonly Lit[], count: () => void): number {
  for (const cand of choice) {
    if (solver.fixedValue(pos(cand)) === false) continue;
    // The last model satisfies every assumption so far: if it selects cand, cand is feasible.
    if (solver.modelValue(cand)) return cand;
    count();
    if (solver.solve([...assumptions, pos(cand)]).status === 'sat') return cand;
  }
  return -1;
}

/** Deletion-based minimisation of an unsatisfiable set of selectors. */
function minimiseCore(solver: Cdcl, enc: Encoded, initial: readonly Lit[], count: () => void): AppliedConstraint[] {
  const order = new Map(enc.selectors.map((s, i) => [s.lit, i]));
  let core = [...new Set(initial)].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  let i = 0;
  while (i < core.length) {
    const without = core.filter((_, k) => k !== i);
    count();
    const r = solver.solve(without);
    if (r.status === 'unsat') {
      // The solver's own core may be smaller still; keep the order and continue at position i.
      const smaller = new Set(r.core);
      core = without.filter((l) => smaller.has(l));
    } else {
      i++;
    }
  }
  const bySel = new Map(enc.selectors.map((s) => [s.lit, s.applied]));
  return core.flatMap((l) => {
    const a = bySel.get(l);
    return a === undefined ? [] : [a];
  });
}
