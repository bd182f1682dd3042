/** What the reconcilers' in-memory fakes share: a failure armed for one call, and the conflict they fail with. */
import { KubeApiError } from '../kube/errors.js';

/** A failure armed for the next call only (a finalizer patch that conflicts, say). */
export class NextFailure {
  private err: Error | undefined;

  arm(err: Error): void {
    this.err = err;
  }

  /** The armed failure as a rejection, once; undefined when none is armed. */
  take(): Promise<never> | undefined {
    const err = this.err;
    this.err = undefined;
    return err === undefined ? undefined : Promise.reject(err);
  }
}

/** The API server's answer to a write made against an older resourceVersion. */
export function conflict(): KubeApiError {
  return new KubeApiError(409, 'Conflict', 'the object has been modified');
}
