/** The applier's errors, with stable codes. */
import type { ObjectRef } from '../kube/types.js';
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

/**
 * Preflight found objects of the release still being deleted (an earlier release's uninstall, a
 * CRD whose custom resources are being cleaned up): applying now would be undone. Transient: the
 * release is applied once they are gone. `refs` names them, so that whoever retries can be woken
 * when they go.
 */
export class ObjectTerminatingError extends BinnacleError {
  readonly refs: readonly ObjectRef[];
  constructor(refs: readonly ObjectRef[], message: string, options?: { cause?: unknown }) {
    super('transient', 'OBJECT_TERMINATING', message, options);
    this.refs = refs;
  }
}
