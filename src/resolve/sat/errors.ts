/** Errors of the SAT core; callers branch on `code`. */
import { BinnacleError } from '../../util/errors.js';

/** The search used up its conflict or time budget: the problem is too hard to answer in bounds. */
export class SatBudgetError extends BinnacleError {
  constructor(message: string) {
    super('terminal', 'RESOLVE_BUDGET_EXCEEDED', `resolution ${message}; the problem is too hard to decide within bounds (narrow it with channels or version ranges, or raise the budget)`);
  }
}

/** The problem given to the solver is malformed (duplicate or unknown variable identifiers). */
export class SatInputError extends BinnacleError {
  constructor(message: string) {
    super('internal', 'RESOLVE_BAD_PROBLEM', message);
  }
}
