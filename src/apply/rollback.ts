/**
 * Rollback, as Helm's `action.Rollback`: an earlier good revision's record rolled out again as
 * a new revision (`Rollback to N`), its hooks run as pre-/post-rollback. Used by `binnacle
 * rollback` and `binnacle release rollback`, by a failed upgrade (automatic rollback), and by
 * the release decision when an unfinished revision must give way to the deployed one. What the
 * record holds (objects and hooks) must fit the release's scope: records are never trusted to.
 */
import type { DriftSpec } from '../api/types.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError } from '../util/errors.js';
import type { ActionConfig } from './action-config.js';
import { ApplyRefusedError } from './errors.js';
import { preflight, type Preflight } from './preflight.js';
import { prepare, withOwnerReference } from './prepare.js';
import { parseManifest, parseManifestAsync } from './release.js';
import { assertConfined } from './repair.js';
import { baselineOf, EMPTY_HEALTH, lastWith, previousObjects, rollout } from './rollout.js';
import { settle } from './history.js';
import type { ApplyResult, ConfineCheck, ReleaseRef, OperationRequest, ReleaseRevision } from './types.js';

export interface RollbackHow {
  healthTimeoutMs: number;
  waitForHealth: boolean;
  waitStrategy?: OperationRequest['waitStrategy'];
  force: boolean;
  drift?: DriftSpec | undefined;
  confine?: ConfineCheck | undefined;
  ownerReference?: OperationRequest['ownerReference'];
  crdUpgradeSafety?: OperationRequest['crdUpgradeSafety'];
  conflictPolicy?: OperationRequest['conflictPolicy'];
}

/** Re-applies an earlier good revision (default: the last one before the current) as a new revision. */
/** How a request rolls back: its health wait, force, drift rules, confinement and owner reference. */
export function rollbackHowOf(req: Pick<OperationRequest, 'healthTimeoutMs' | 'waitForHealth' | 'waitStrategy' | 'rollbackForce' | 'drift' | 'confine' | 'ownerReference' | 'crdUpgradeSafety' | 'conflictPolicy'>, defaultTimeoutMs: number): RollbackHow {
  return { healthTimeoutMs: req.healthTimeoutMs ?? defaultTimeoutMs, waitForHealth: req.waitForHealth ?? true, waitStrategy: req.waitStrategy, force: req.rollbackForce === true, drift: req.drift, confine: req.confine, ownerReference: req.ownerReference, crdUpgradeSafety: req.crdUpgradeSafety, conflictPolicy: req.conflictPolicy };
}

export async function rollback(cfg: ActionConfig, opts: { release: ReleaseRef; toRevision?: number } & Partial<RollbackHow>): Promise<ApplyResult> {
  const history = await settle(cfg, (await cfg.history.read()).revisions);
  const where = `release ${opts.release.namespace}/${opts.release.name}`;
  if (history.length === 0) throw new BinnacleError('input', 'RELEASE_NOT_FOUND', `${where} has no revisions`);
  let target: ReleaseRevision | undefined;
  if (opts.toRevision !== undefined) {
    target = history.find((r) => r.revision === opts.toRevision);
    if (target === undefined) throw new BinnacleError('input', 'ROLLBACK_NO_TARGET', `${where} has no revision ${opts.toRevision} (have ${history.map((r) => r.revision).join(', ')})`);
  } else {
    const latest = history.at(-1)?.revision ?? 0;
    target = lastWith(
      history.filter((r) => r.revision < latest),
      ['deployed', 'superseded'],
    );
    if (target === undefined) throw new BinnacleError('input', 'ROLLBACK_NO_TARGET', `${where} has no earlier good revision to roll back to`);
  }
  return rollbackTo(cfg, opts.release, target, history, { healthTimeoutMs: opts.healthTimeoutMs ?? 5 * 60_000, waitForHealth: opts.waitForHealth ?? true, waitStrategy: opts.waitStrategy, force: opts.force === true, drift: opts.drift, confine: opts.confine, ownerReference: opts.ownerReference });
}

/** Rolls `target`'s record out as the next revision; `history` is the release's revisions now. */
export async function rollbackTo(cfg: ActionConfig, release: ReleaseRef, target: ReleaseRevision, history: readonly ReleaseRevision[], how: RollbackHow): Promise<ApplyResult> {
  const owner = target.owner ?? history.at(-1)?.owner;
  if (owner === undefined) throw new BinnacleError('terminal', 'RELEASE_NOT_OWNED', `release ${release.namespace}/${release.name} revision ${target.revision} records no Binnacle owner`);
  const version = (history.at(-1)?.revision ?? 0) + 1;
  let checked: Preflight;
  let objects: KubeObject[];
  const baseline = await baselineOf(cfg, lastWith(history, ['deployed']), release);
  try {
    // A chart release's manifest is Helm's: namespaces and ownership marks are added here.
    objects = withOwnerReference(await prepare(cfg.client, await parseManifestAsync(target.manifest, `release ${release.namespace}/${release.name} revision ${target.revision}`), owner, release), { release, ownerReference: how.ownerReference });
    const hooks = (target.content?.hooks ?? []).flatMap((h) => parseManifest(h.manifest, `release ${release.namespace}/${release.name} revision ${target.revision} hook ${h.name}`));
    await assertConfined([...objects, ...hooks], how.confine, release, `revision ${target.revision}`);
    checked = await preflight(cfg, objects, owner, release, { force: how.force, crdUpgradeSafety: how.crdUpgradeSafety, conflictPolicy: how.conflictPolicy, intent: { drift: how.drift, baseline } });
  } catch (err) {
    if (!(err instanceof ApplyRefusedError)) throw err;
    return { revision: version - 1, status: 'failed', applied: [], pruned: [], health: EMPTY_HEALTH, message: err.message };
  }
  const log = cfg.logger.child({ release: `${release.namespace}/${release.name}`, revision: version });
  log.info({ to: target.revision }, 'rolling back');
  const outcome = await rollout(
    cfg,
    {
      owner,
      release,
      objects,
      chart: target.chart,
      config: target.config,
      ownerValues: target.ownerValues,
      version,
      pending: 'pending-rollback',
      description: `Rollback to ${target.revision}`,
      firstDeployed: history[0]?.firstDeployed ?? target.firstDeployed,
      previous: await previousObjects(history),
      history,
      takeOver: checked.takeOver,
      replace: checked.replace,
      unchanged: checked.unchanged,
      helmHeld: checked.helmHeld,
      switchFirst: checked.switchFirst,
      switchHeld: checked.switchHeld,
      waitForHealth: how.waitForHealth,
      waitStrategy: how.waitStrategy,
      healthTimeoutMs: how.healthTimeoutMs,
      content: target.content,
      inputDigest: target.inputDigest,
      hookEvents: target.content === undefined ? undefined : { pre: 'pre-rollback', post: 'post-rollback' },
      drift: how.drift,
      confine: how.confine,
      baseline,
    },
    log,
  );
  return { revision: version, status: outcome.ok ? 'deployed' : 'failed', applied: outcome.applied, pruned: outcome.pruned, health: outcome.health, message: outcome.message };
}
