/**
 * Helm's `--atomic` for a first install: when the first revision of a release fails, what it
 * created is removed with its release records, so that a failed install leaves nothing behind
 * but the caller's status. The caller may ask to keep it for debugging.
 */
import { errorMessage } from '../util/errors.js';
import type { ObjectRef, ReleaseRevision } from './types.js';

/** Whether a failure now is the failure of a first install: no revision was ever deployed. */
export function isFirstInstall(history: readonly ReleaseRevision[]): boolean {
  return !history.some((r) => r.status === 'deployed' || r.status === 'superseded');
}

export interface RemovedInstall {
  message: string;
  /** What was deleted; undefined when removing failed (the release is still there). */
  removed: ObjectRef[] | undefined;
}

/** Runs `uninstall` after a failed first install and says what happened. */
export async function removeFailedInstall(failure: string, uninstall: () => Promise<{ deleted: ObjectRef[] }>): Promise<RemovedInstall> {
  try {
    const { deleted } = await uninstall();
    return {
      message: `install failed: ${failure}; removed the failed install (${deleted.length} objects and its release records; keepFailedInstall keeps a failed install for debugging)`,
      removed: deleted,
    };
  } catch (err) {
    return { message: `install failed: ${failure}; removing the failed install failed too: ${errorMessage(err)}`, removed: undefined };
  }
}
