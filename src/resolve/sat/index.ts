/**
 * The SAT core of the resolver. It knows nothing of packages: it takes variables with string
 * identifiers and Deppy-style constraints (mandatory, prohibited, dependency with ordered
 * preferences, conflict, at-most), returns the most preferred solution, or a minimal set of
 * input constraints that clash. A conflict and time budget bounds every call
 * (`SatBudgetError`). The OLM rules in `src/resolve` build problems for it.
 */
export type {
  AppliedConstraint,
  AtMostConstraint,
  ConflictConstraint,
  Constraint,
  DependencyConstraint,
  MandatoryConstraint,
  ProhibitedConstraint,
  Solution,
  SolveOptions,
  SolveResult,
  SolveStats,
  Unsatisfiable,
  Variable,
} from './types.js';
export { describeConstraint } from './types.js';
export { solve } from './solve.js';
export { SatBudgetError, SatInputError } from './errors.js';
export { Cdcl, type Lit, type SolveOutcome } from './cdcl.js';
