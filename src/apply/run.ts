/**
 * Carrying out a release decision (decide.ts) with the operations: what a reconciler calls once
 * it has decided and, for a new revision, rendered. Pending revisions the decision names are
 * settled first; then install/upgrade (install.ts), repair (repair.ts), keep (a repair reported
 * as the rollback it is), rollback (rollback.ts) or refuse. No operation decides again.
 *
 * `applyRelease` is the whole of it for a caller that has its objects already (`binnacle
 * release apply`, tests): read the history, decide, carry out.
 */
import { canonicalJson, inputDigestOf } from '../util/canonical-json.js';
import { BinnacleError } from '../util/errors.js';
import type { ActionConfig } from './action-config.js';
import { decideRelease, needsRender, type ReleaseDecision } from './decide.js';
import { settle } from './history.js';
import { DEFAULT_HEALTH_TIMEOUT_MS, installOrUpgrade } from './install.js';
import { repair } from './repair.js';
import { rollbackHowOf, rollbackTo } from './rollback.js';
import { trimHistory } from './rollout.js';
import type { ApplyRequest, ApplyResult, OperationRequest, ReleaseRevision } from './types.js';

/** The digest a request's objects, chart and values make, for a caller that has no input digest of its own. */
export function requestDigest(req: Pick<ApplyRequest, 'objects' | 'chart' | 'values' | 'content'>): string {
  // In any order: the same objects listed otherwise are the same revision.
  const objects = req.objects.map((o) => canonicalJson(o)).sort();
  return inputDigestOf({ objects, chart: req.chart ?? null, values: req.values ?? {}, manifest: req.content?.manifest ?? null });
}

/**
 * Carries out `decision` for the release `req` names; `history` is what the decision was made
 * from. A decision that makes a new revision needs `objects` (the render); one that does not
 * never looks at them. Throws RELEASE_NOT_OWNED / RELEASE_REFUSED (terminal) for a refusal.
 */
export async function runDecision(cfg: ActionConfig, decision: ReleaseDecision, req: OperationRequest, history: readonly ReleaseRevision[], rendered?: Omit<ApplyRequest, keyof OperationRequest>): Promise<ApplyResult> {
  if (decision.action === 'refuse') throw new BinnacleError('terminal', decision.code, `release ${req.release.namespace}/${req.release.name}: ${decision.reason}`);
  const settled = await settle(cfg, history, decision.settle);
  switch (decision.action) {
    case 'install':
    case 'upgrade': {
      if (rendered === undefined) throw new BinnacleError('internal', 'RENDER_MISSING', `release ${req.release.namespace}/${req.release.name}: a new revision (${decision.action}) needs the render`);
      return installOrUpgrade(cfg, { ...req, ...rendered }, decision, settled);
    }
    case 'repair': {
      const repaired = await repair(cfg, req, decision.revision);
      // A run that died between deploying and trimming left the history long: trimmed here.
      await trimHistory(cfg, settled);
      return repaired;
    }
    case 'keep': {
      const kept = await repair(cfg, req, decision.revision);
      await trimHistory(cfg, settled);
      return { ...kept, status: kept.status === 'deployed' ? 'rolled-back' : kept.status, message: decision.reason };
    }
    case 'rollback': {
      cfg.logger.warn({ release: `${req.release.namespace}/${req.release.name}`, to: decision.to.revision, why: decision.reason }, 'rolling the deployed revision out again');
      return rollbackTo(cfg, req.release, decision.to, settled, rollbackHowOf(req, DEFAULT_HEALTH_TIMEOUT_MS));
    }
  }
}

/** Reads the history, decides and carries out the decision for objects already at hand. */
export async function applyRelease(cfg: ActionConfig, req: ApplyRequest): Promise<ApplyResult & { decision: ReleaseDecision }> {
  const { revisions } = await cfg.history.read();
  const inputDigest = req.inputDigest ?? requestDigest(req);
  const decision = decideRelease(revisions, { owner: req.owner, inputDigest, ...(req.autoRollback === undefined ? {} : { autoRollback: req.autoRollback }) });
  const { owner: _o, release: _r, ...rest } = req;
  const rendered = needsRender(decision) ? { ...rest, inputDigest } : undefined;
  return { ...(await runDecision(cfg, decision, req, revisions, rendered)), decision };
}
