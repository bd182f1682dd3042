/** Reading a release's history for an operation: revisions left pending by an interrupted run are marked failed first. */
import type { ActionConfig } from './action-config.js';
import { INTERRUPTED } from './decide.js';
import type { ReleaseRevision } from './types.js';

/**
 * Marks every pending revision failed ("interrupted"), as `helm` would need by hand and Flux's
 * unlock does; answers the history as it now stands.
 */
export async function settle(cfg: ActionConfig, history: readonly ReleaseRevision[], pending: readonly ReleaseRevision[] = history.filter((r) => r.status.startsWith('pending-'))): Promise<ReleaseRevision[]> {
  const out = [...history];
  for (const rev of pending) {
    const i = out.findIndex((r) => r.revision === rev.revision);
    if (i < 0) continue;
    cfg.logger.warn({ release: `${rev.namespace}/${rev.name}`, revision: rev.revision }, 'revision was left pending by an interrupted run; marking it failed');
    out[i] = await cfg.history.setStatus(rev, 'failed', `${rev.description}${INTERRUPTED}`);
  }
  return out;
}
