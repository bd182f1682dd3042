/** The applier's errors, with stable codes. */
import { BinnacleError, type ValidationResult } from '../util/errors.js';

/**
 * Preflight said no: an object belongs to someone else, a CRD change is unsafe, or the API
 * server rejects an object. Thrown before anything was changed; `result` lists every reason.
 */
export class ApplyRefusedError extends BinnacleError {
  readonly result: ValidationResult;
  constructor(result: ValidationResult) {
    super('terminal', 'APPLY_REFUSED', `${result.subject}: refusing to apply, nothing was changed:\n${result.render()}`);
    this.result = result;
  }
}
