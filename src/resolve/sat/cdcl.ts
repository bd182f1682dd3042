/**
 * A small deterministic CDCL SAT solver: two watched literals, first-UIP clause learning,
 * VSIDS with a binary heap, phase saving (initial phase false, so unforced variables stay
 * unselected), Luby restarts and incremental solving under assumptions. When assumptions
 * make the formula unsatisfiable it reports which of them clash (MiniSat's analyzeFinal).
 *
 * Literals are numbers: variable `v` (0-based) is `2v` when positive and `2v + 1` when negated.
 */
import { SatBudgetError } from './errors.js';

export type Lit = number;

export const pos = (v: number): Lit => v * 2;
export const neg = (v: number): Lit => v * 2 + 1;
export const varOf = (l: Lit): number => l >> 1;
export const negate = (l: Lit): Lit => l ^ 1;

export interface Budget {
  /** Conflicts allowed over the life of the solver (all calls together). */
  maxConflicts: number;
  /** Wall-clock deadline, `performance.now()` milliseconds. */
  deadline: number;
}

const TIME_OUT = 'gave up: the time budget ran out before an answer was found';

export type SolveOutcome = { status: 'sat' } | { status: 'unsat'; core: Lit[] };

const NO_REASON = -1;

export class Cdcl {
  private nVars = 0;
  private clauses: Lit[][] = [];
  private watches: number[][] = [];
  /** Per variable: 0 unassigned, 1 true, -1 false. */
  private assign: Int8Array = new Int8Array(16);
  private level: Int32Array = new Int32Array(16);
  private reason: Int32Array = new Int32Array(16);
  private phase: Int8Array = new Int8Array(16);
  private activity: Float64Array = new Float64Array(16);
  private seen: Uint8Array = new Uint8Array(16);
  private heap: number[] = [];
  private heapIndex: Int32Array = new Int32Array(16).fill(-1);
  private trail: Lit[] = [];
  private trailLim: number[] = [];
  private qhead = 0;
  private varInc = 1;
  private ok = true;
  private modelValues: Int8Array = new Int8Array(0);
  conflicts = 0;
  decisions = 0;
  propagations = 0;
  private readonly budget: Budget;

  constructor(budget: Budget) {
    this.budget = budget;
  }

  get numVars(): number {
    return this.nVars;
  }

  newVar(): number {
    const v = this.nVars++;
    if (v >= this.assign.length) this.grow(Math.max(16, this.assign.length * 2));
    this.watches.push([], []);
    this.reason[v] = NO_REASON;
    this.heapInsert(v);
    return v;
  }

  private grow(size: number): void {
    const g8 = (a: Int8Array): Int8Array => {
      const b = new Int8Array(size);
      b.set(a);
      return b;
    };
    this.assign = g8(this.assign);
    this.phase = g8(this.phase);
    const lv = new Int32Array(size);
    lv.set(this.level);
    this.level = lv;
    const rs = new Int32Array(size);
    rs.set(this.reason);
    this.reason = rs;
    const ac = new Float64Array(size);
    ac.set(this.activity);
    this.activity = ac;
    const sn = new Uint8Array(size);
    sn.set(this.seen);
    this.seen = sn;
    const hi = new Int32Array(size).fill(-1);
    hi.set(this.heapIndex);
    this.heapIndex = hi;
  }

  private litValue(l: Lit): number {
    const a = this.assign[l >> 1] ?? 0;
    return l & 1 ? -a : a;
  }

  /** Value of a variable in the last model found: true, false. */
  modelValue(v: number): boolean {
    return this.modelValues[v] === 1;
  }

  /** Value fixed at decision level 0 (implied by the clauses alone), or undefined. */
  fixedValue(l: Lit): boolean | undefined {
    const v = l >> 1;
    if (this.assign[v] === 0 || this.level[v] !== 0) return undefined;
    return this.litValue(l) > 0;
  }

  /** Adds a clause; only at decision level 0 (the solver backtracks there first). */
  addClause(lits: readonly Lit[]): void {
    if (!this.ok) return;
    this.cancelUntil(0);
    const sorted = [...new Set(lits)].sort((a, b) => a - b);
    const out: Lit[] = [];
    for (let i = 0; i < sorted.length; i++) {
      const l = sorted[i] ?? 0;
      if (i + 1 < sorted.length && sorted[i + 1] === (l ^ 1)) return; // tautology
      const val = this.litValue(l);
      if (val > 0 && this.level[l >> 1] === 0) return; // already satisfied
      if (val < 0 && this.level[l >> 1] === 0) continue; // already false
      out.push(l);
    }
    if (out.length === 0) {
      this.ok = false;
      return;
    }
    if (out.length === 1) {
      this.enqueue(out[0] ?? 0, NO_REASON);
      if (this.propagate() !== NO_REASON) this.ok = false;
      return;
    }
    this.attach(out);
  }

  private attach(c: Lit[]): number {
    const idx = this.clauses.length;
    this.clauses.push(c);
    this.watches[c[0] ?? 0]?.push(idx);
    this.watches[c[1] ?? 0]?.push(idx);
    return idx;
  }

  private decisionLevel(): number {
    return this.trailLim.length;
  }

  private enqueue(l: Lit, reason: number): void {
    const v = l >> 1;
    this.assign[v] = l & 1 ? -1 : 1;
    this.level[v] = this.decisionLevel();
    this.reason[v] = reason;
    this.trail.push(l);
  }

  /** Unit propagation; returns the index of a conflicting clause or NO_REASON. */
  private propagate(): number {
    while (this.qhead < this.trail.length) {
      const p = this.trail[this.qhead++] ?? 0;
      this.propagations++;
      const falseLit = p ^ 1;
      const ws = this.watches[falseLit] ?? [];
      let i = 0;
      let j = 0;
      let conflict = NO_REASON;
      while (i < ws.length) {
        const ci = ws[i++] ?? 0;
        const c = this.clauses[ci] ?? [];
        if (c[0] === falseLit) {
          c[0] = c[1] ?? 0;
          c[1] = falseLit;
        }
        const first = c[0] ?? 0;
        if (this.litValue(first) > 0) {
          ws[j++] = ci;
          continue;
        }
        let moved = false;
        for (let k = 2; k < c.length; k++) {
          const lk = c[k] ?? 0;
          if (this.litValue(lk) >= 0) {
            c[1] = lk;
            c[k] = falseLit;
            this.watches[lk]?.push(ci);
            moved = true;
            break;
          }
        }
        if (moved) continue;
        ws[j++] = ci;
        if (this.litValue(first) < 0) {
          conflict = ci;
          while (i < ws.length) ws[j++] = ws[i++] ?? 0;
        } else {
          this.enqueue(first, ci);
        }
      }
      ws.length = j;
      if (conflict !== NO_REASON) {
        this.qhead = this.trail.length;
        return conflict;
      }
    }
    return NO_REASON;
  }

  private cancelUntil(lvl: number): void {
    if (this.decisionLevel() <= lvl) return;
    const start = this.trailLim[lvl] ?? 0;
    for (let i = this.trail.length - 1; i >= start; i--) {
      const l = this.trail[i] ?? 0;
      const v = l >> 1;
      this.phase[v] = this.assign[v] ?? 0;
      this.assign[v] = 0;
      this.reason[v] = NO_REASON;
      if (this.heapIndex[v] === -1) this.heapInsert(v);
    }
    this.trail.length = start;
    this.trailLim.length = lvl;
    this.qhead = start;
  }

  private bump(v: number): void {
    const a = (this.activity[v] ?? 0) + this.varInc;
    this.activity[v] = a;
    if (a > 1e100) {
      for (let i = 0; i < this.nVars; i++) this.activity[i] = (this.activity[i] ?? 0) * 1e-100;
      this.varInc *= 1e-100;
    }
    const hi = this.heapIndex[v] ?? -1;
    if (hi >= 0) this.heapUp(hi);
  }

  /** First-UIP learning: returns the learnt clause (asserting literal first) and backjump level. */
  private analyze(confl: number): { learnt: Lit[]; btLevel: number } {
    const learnt: Lit[] = [0];
    let pathC = 0;
    let p: Lit = -1;
    let index = this.trail.length - 1;
    let ci = confl;
    const toClear: number[] = [];
    for (;;) {
      const c = this.clauses[ci] ?? [];
      for (let k = p === -1 ? 0 : 1; k < c.length; k++) {
        const q = c[k] ?? 0;
        const v = q >> 1;
        if (this.seen[v] === 0 && (this.level[v] ?? 0) > 0) {
          this.seen[v] = 1;
          toClear.push(v);
          this.bump(v);
          if (this.level[v] === this.decisionLevel()) pathC++;
          else learnt.push(q);
        }
      }
      while (this.seen[(this.trail[index] ?? 0) >> 1] === 0) index--;
      p = this.trail[index] ?? 0;
      index--;
      ci = this.reason[p >> 1] ?? NO_REASON;
      this.seen[p >> 1] = 0;
      pathC--;
      if (pathC <= 0) break;
    }
    learnt[0] = p ^ 1;
    for (const v of toClear) this.seen[v] = 0;
    return { learnt, btLevel: this.placeSecondWatch(learnt) };
  }

  /** Moves the literal of the highest level after the asserting one; that level is the backjump target. */
  private placeSecondWatch(learnt: Lit[]): number {
    if (learnt.length < 2) return 0;
    const lvl = (k: number): number => this.level[(learnt[k] ?? 0) >> 1] ?? 0;
    let maxI = 1;
    for (let k = 2; k < learnt.length; k++) if (lvl(k) > lvl(maxI)) maxI = k;
    const tmp = learnt[1] ?? 0;
    learnt[1] = learnt[maxI] ?? 0;
    learnt[maxI] = tmp;
    return lvl(1);
  }

  /** Which assumptions force `p` false: walks the implication graph back to decisions. */
  private analyzeFinal(p: Lit): Lit[] {
    const out: Lit[] = [p ^ 1];
    if (this.decisionLevel() === 0) return out;
    this.seen[p >> 1] = 1;
    const start = this.trailLim[0] ?? 0;
    for (let i = this.trail.length - 1; i >= start; i--) {
      const l = this.trail[i] ?? 0;
      const v = l >> 1;
      if (this.seen[v] === 0) continue;
      const r = this.reason[v] ?? NO_REASON;
      if (r === NO_REASON) {
        if ((this.level[v] ?? 0) > 0) out.push(l);
      } else {
        const c = this.clauses[r] ?? [];
        for (let k = 1; k < c.length; k++) {
          const u = (c[k] ?? 0) >> 1;
          if ((this.level[u] ?? 0) > 0) this.seen[u] = 1;
        }
        // The implied literal may not sit first if the clause was not normalised yet.
        if (c[0] !== l) for (const q of c) if ((this.level[q >> 1] ?? 0) > 0 && q !== l) this.seen[q >> 1] = 1;
      }
      this.seen[v] = 0;
    }
    this.seen[p >> 1] = 0;
    return out;
  }

  private checkBudget(): void {
    if (this.conflicts > this.budget.maxConflicts) {
      throw new SatBudgetError(`gave up after ${this.conflicts} conflicts (limit ${this.budget.maxConflicts})`);
    }
    if ((this.conflicts & 63) === 0 && performance.now() > this.budget.deadline) {
      throw new SatBudgetError(TIME_OUT);
    }
  }

  /**
   * Solves under `assumptions`. On unsat, `core` is a subset of the assumptions that
   * cannot all hold (empty when the clauses alone are unsatisfiable).
   */
  solve(assumptions: readonly Lit[]): SolveOutcome {
    if (!this.ok) return { status: 'unsat', core: [] };
    this.cancelUntil(0);
    if (this.propagate() !== NO_REASON) {
      this.ok = false;
      return { status: 'unsat', core: [] };
    }
    let restartIdx = 0;
    let conflictsUntilRestart = 100 * luby(restartIdx);
    let steps = 0;
    for (;;) {
      const confl = this.propagate();
      if (confl !== NO_REASON) {
        this.conflicts++;
        conflictsUntilRestart--;
        this.checkBudget();
        if (this.decisionLevel() === 0) {
          this.ok = false;
          return { status: 'unsat', core: [] };
        }
        const { learnt, btLevel } = this.analyze(confl);
        this.cancelUntil(btLevel);
        const first = learnt[0] ?? 0;
        if (learnt.length === 1) this.enqueue(first, NO_REASON);
        else this.enqueue(first, this.attach(learnt));
        this.varInc /= 0.95;
        continue;
      }
      if (++steps % 4096 === 0 && performance.now() > this.budget.deadline) {
        throw new SatBudgetError(TIME_OUT);
      }
      if (conflictsUntilRestart <= 0) {
        restartIdx++;
        conflictsUntilRestart = 100 * luby(restartIdx);
        this.cancelUntil(0);
        continue;
      }
      let next: Lit = -1;
      while (this.decisionLevel() < assumptions.length) {
        const a = assumptions[this.decisionLevel()] ?? 0;
        const val = this.litValue(a);
        if (val > 0) {
          this.trailLim.push(this.trail.length); // dummy level keeps levels aligned
        } else if (val < 0) {
          const core = this.analyzeFinal(a ^ 1);
          this.cancelUntil(0);
          return { status: 'unsat', core };
        } else {
          next = a;
          break;
        }
      }
      if (next === -1) {
        const v = this.pickBranchVar();
        if (v === -1) {
          this.modelValues = this.assign.slice(0, this.nVars);
          this.cancelUntil(0);
          return { status: 'sat' };
        }
        next = this.phase[v] === 1 ? v * 2 : v * 2 + 1;
        this.decisions++;
      }
      this.trailLim.push(this.trail.length);
      this.enqueue(next, NO_REASON);
    }
  }

  private pickBranchVar(): number {
    while (this.heap.length > 0) {
      const v = this.heapPop();
      if (this.assign[v] === 0) return v;
    }
    return -1;
  }

  // --- binary max-heap on activity; ties go to the lower variable index (determinism) ---
  private before(a: number, b: number): boolean {
    const x = this.activity[a] ?? 0;
    const y = this.activity[b] ?? 0;
    return x > y || (x === y && a < b);
  }

  private heapInsert(v: number): void {
    this.heapIndex[v] = this.heap.length;
    this.heap.push(v);
    this.heapUp(this.heap.length - 1);
  }

  private heapUp(i: number): void {
    const v = this.heap[i] ?? 0;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pv = this.heap[parent] ?? 0;
      if (!this.before(v, pv)) break;
      this.heap[i] = pv;
      this.heapIndex[pv] = i;
      i = parent;
    }
    this.heap[i] = v;
    this.heapIndex[v] = i;
  }

  private heapPop(): number {
    const top = this.heap[0] ?? 0;
    const last = this.heap.pop() ?? 0;
    this.heapIndex[top] = -1;
    if (this.heap.length > 0) {
      let i = 0;
      const n = this.heap.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const child = r < n && this.before(this.heap[r] ?? 0, this.heap[l] ?? 0) ? r : l;
        const cv = this.heap[child] ?? 0;
        if (!this.before(cv, last)) break;
        this.heap[i] = cv;
        this.heapIndex[cv] = i;
        i = child;
      }
      this.heap[i] = last;
      this.heapIndex[last] = i;
    }
    return top;
  }
}

/** The Luby sequence 1 1 2 1 1 2 4 ... used for restart intervals. */
function luby(i: number): number {
  let size = 1;
  let seq = 0;
  while (size < i + 1) {
    seq++;
    size = 2 * size + 1;
  }
  let x = i;
  while (size - 1 !== x) {
    size = (size - 1) >> 1;
    seq--;
    x = x % size;
  }
  return 2 ** seq;
}
