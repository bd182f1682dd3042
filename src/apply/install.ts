/**
 * Install and upgrade, as Helm's `action.Install` and `action.Upgrade`: a new revision made from
 * freshly rendered objects. Made lenient first (objects of optional APIs the cluster does not
 * serve skipped, undeclared fields dropped, both reported), prepared (ownership, namespaces),
 * checked in preflight before anything changes, then rolled out (rollout.ts). A failed first
 * install is removed, as `helm install --atomic` does, unless kept; a failed upgrade is rolled
 * back to the revision it came from, unless told otherwise.
 */
import type { Logger } from 'pino';
import { canonicalJson } from '../util/canonical-json.js';
import type { KubeObject } from '../kube/types.js';
import type { ActionConfig } from './action-config.js';
import { removeFailedInstall } from './atomic.js';
import type { ReleaseDecision } from './decide.js';
import { ignoredPointers } from './drift-policy.js';
import { ApplyRefusedError, ObjectTerminatingError } from './errors.js';
import { makeLenient } from './leniency.js';
import { identityOf } from './phases.js';
import { hookObjectsOf, type HookEvent } from './hooks.js';
import { preflight, type Preflight } from './preflight.js';
import { isOwnedBy } from './ownership.js';
import { prepare, withOwnerReference } from './prepare.js';
import { helmTime } from './release.js';
import { validateRequest } from './request.js';
import { rollbackHowOf, rollbackTo } from './rollback.js';
import { baselineOf, previousObjects, rollout, trimHistory, type RolloutOutcome } from './rollout.js';
import { uninstall } from './uninstall.js';
import type { ApplyRequest, ApplyResult, ReleaseRevision } from './types.js';

export const DEFAULT_HEALTH_TIMEOUT_MS = 5 * 60_000;

type NewRevision = Extract<ReleaseDecision, { action: 'install' | 'upgrade' }>;

/**
 * Rolls out a new revision of `req.objects`: an install when `decision` is one (nothing to
 * upgrade from), an upgrade from `decision.from` otherwise. `history` is the release's revisions
 * as the decision saw them, pending ones settled. Throws ApplyRefusedError (nothing changed)
 * when an object belongs to someone else or a CRD change is unsafe, ValidationError for a
 * malformed request.
 */
export async function installOrUpgrade(cfg: ActionConfig, req: ApplyRequest, decision: NewRevision, history: readonly ReleaseRevision[]): Promise<ApplyResult> {
  validateRequest(req);
  const lenient = await makeLenient(req.objects, { client: cfg.client, schemas: cfg.schemas });
  if (lenient.dropped.length > 0 || lenient.skipped.length > 0) {
    cfg.logger.warn(
      { release: `${req.release.namespace}/${req.release.name}`, droppedFields: lenient.dropped.length, skipped: lenient.skipped.length },
      'dropping fields the schemas do not declare; skipping objects of optional APIs the cluster does not serve',
    );
  }
  const objects = withOwnerReference(await prepare(cfg.client, lenient.objects, req.owner, req.release), req);
  const from = decision.action === 'upgrade' ? decision.from : undefined;
  const baseline = await baselineOf(cfg, from, req.release);
  const same = await sameAsDeployed(cfg, objects, baseline, req);
  const upgrade = from !== undefined;
  const hookEvents = hookEventsOf(req, upgrade);
  const hooks = hookEvents === undefined ? [] : await hookObjectsOf(cfg.client, req.content?.hooks ?? [], [hookEvents.pre, hookEvents.post], req.release.namespace);
  const checked = await preflight(cfg, objects, req.owner, req.release, { adopt: req.adopt, conflictPolicy: req.conflictPolicy, force: req.force === true, same, watched: req.watched, crdUpgradeSafety: req.crdUpgradeSafety, hooks, intent: { drift: req.drift, baseline } });
  const version = (history.at(-1)?.revision ?? 0) + 1;
  const log = cfg.logger.child({ release: `${req.release.namespace}/${req.release.name}`, revision: version });
  log.info({ objects: objects.length, upgrade, why: decision.reason }, upgrade ? 'upgrading release' : 'installing release');
  const outcome = await rollout(
    cfg,
    {
      owner: req.owner,
      release: req.release,
      objects,
      chart: req.chart ?? { name: req.owner.name, version: '0.0.0' },
      config: req.values ?? {},
      version,
      pending: upgrade ? 'pending-upgrade' : 'pending-install',
      description: upgrade ? 'Upgrade complete' : 'Install complete',
      firstDeployed: history[0]?.firstDeployed ?? helmTime(new Date()),
      previous: await previousObjects(history),
      history,
      takeOver: checked.takeOver,
      replace: checked.replace,
      unchanged: checked.unchanged,
      helmHeld: checked.helmHeld,
      switchFirst: checked.switchFirst,
      switchHeld: checked.switchHeld,
      waitForHealth: req.waitForHealth ?? true,
      waitStrategy: req.waitStrategy,
      healthTimeoutMs: req.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS,
      content: req.content,
      inputDigest: req.inputDigest,
      ownerGeneration: req.generation,
      ownerValues: req.ownerValues,
      hookEvents,
      drift: req.drift,
      confine: req.confine,
      baseline,
      deferred: skippedObjects(req.objects, lenient.skipped),
    },
    log,
  );
  const result = outcome.ok ? { revision: version, status: 'deployed' as const, ...pick(outcome) } : await afterFailure(cfg, req, decision, version, outcome, log, takenOver(checked, req, history));
  return { ...result, droppedFields: lenient.dropped, skipped: lenient.skipped };
}

/**
 * The objects this revision found there that were there before the release's first try, by
 * identity: not its own yet, or made before its first revision (`firstDeployed`, which every
 * later revision carries): a failed try stamps what it took over, and the next try still must not
 * delete it (adopted objects, operator-controller's when moving over from OLM v1).
 */
function takenOver(checked: Preflight, req: ApplyRequest, history: readonly ReleaseRevision[]): string[] {
  const first = Date.parse(history[0]?.firstDeployed ?? '');
  // creationTimestamp has whole seconds: only an object made in an earlier second counts.
  const madeBefore = (o: KubeObject): boolean => Number.isFinite(first) && Date.parse(o.metadata.creationTimestamp ?? '') < Math.floor(first / 1000) * 1000;
  return [...checked.live].filter(([, l]) => l.object !== undefined && (!isOwnedBy(l.object, req.owner, req.release) || madeBefore(l.object))).map(([id]) => id);
}

/** The hook events an install or upgrade runs (none without a chart's content, or with hooks disabled). */
function hookEventsOf(req: ApplyRequest, upgrade: boolean): { pre: HookEvent; post: HookEvent } | undefined {
  if (req.content === undefined || req.disableHooks === true) return undefined;
  return upgrade ? { pre: 'pre-upgrade', post: 'post-upgrade' } : { pre: 'pre-install', post: 'post-install' };
}

/**
 * A new revision that did not roll out: a first install is removed, an upgrade rolled back (unless
 * told otherwise). A first install that found objects of others there (`existed`: taken over, as
 * operator-controller's are when a cluster moves over from OLM v1, or adopted) is kept instead:
 * removing it would delete what was running before it (the next reconcile tries again).
 */
async function afterFailure(cfg: ActionConfig, req: ApplyRequest, decision: NewRevision, version: number, outcome: RolloutOutcome, log: Logger, existed: readonly string[]): Promise<ApplyResult> {
  if (decision.action === 'install') {
    if (req.keepFailedInstall === true) {
      // Kept failed tries are tried again: their records stay within the history's limit.
      await trimHistory(cfg, (await cfg.history.read()).revisions);
      return { revision: version, status: 'failed', ...pick(outcome) };
    }
    if (existed.length > 0) {
      log.warn({ reason: outcome.message, existed: existed.length }, 'install failed; kept: it took over objects that were there before it');
      await trimHistory(cfg, (await cfg.history.read()).revisions);
      return { revision: version, status: 'failed', ...pick(outcome), message: `${outcome.message}; the failed install is kept, not removed: it took over ${existed.length} object${existed.length === 1 ? '' : 's'} that existed before it (${existed.slice(0, 3).join(', ')}${existed.length > 3 ? ', …' : ''}), which removing it would delete` };
    }
    log.warn({ reason: outcome.message }, 'install failed; removing it');
    const removal = await removeFailedInstall(outcome.message, () => uninstall(cfg, { owner: req.owner, release: req.release, ...(req.confine === undefined ? {} : { confine: req.confine }) }));
    return { revision: version, status: 'failed', ...pick(outcome), message: removal.message, ...(removal.removed === undefined ? {} : { removed: removal.removed }) };
  }
  const deployed = decision.from;
  if (req.autoRollback === false) return { revision: version, status: 'failed', ...pick(outcome) };
  if (deployed.movedOver === true) {
    // Its record's fields are not Binnacle's to vouch for (decide.ts): not applied again.
    log.warn({ to: deployed.revision, reason: outcome.message }, 'upgrade failed; not rolled back to a revision that moved over from Helm\'s records');
    await trimHistory(cfg, (await cfg.history.read()).revisions);
    return { revision: version, status: 'failed', ...pick(outcome), message: `${outcome.message}; not rolled back: revision ${deployed.revision} moved over from Helm's records, whose fields Binnacle did not write, and is not applied again from its record` };
  }
  log.warn({ to: deployed.revision, reason: outcome.message }, 'upgrade failed; rolling back');
  const now = await cfg.history.read();
  const back = await rollbackTo(cfg, req.release, deployed, now.revisions, rollbackHowOf(req, DEFAULT_HEALTH_TIMEOUT_MS)).catch((err: unknown) => {
    // The rollback must wait (an object of the release still being deleted, e.g. one replaced
    // by force and held by a finalizer): retried with backoff, saying why the upgrade failed.
    if (err instanceof ObjectTerminatingError) {
      throw new ObjectTerminatingError(err.refs, `revision ${version} failed (${outcome.message}); the rollback to revision ${deployed.revision} waits: ${err.message}`, { cause: err });
    }
    throw err;
  });
  const message = `revision ${version} failed (${outcome.message}); ${back.status === 'deployed' ? `rolled back to revision ${deployed.revision} as revision ${back.revision}` : `rollback failed: ${back.message}`}`;
  return { revision: back.revision, status: back.status === 'deployed' ? 'rolled-back' : 'failed', applied: outcome.applied, pruned: outcome.pruned, health: outcome.health, message };
}

/** The request's objects that leniency skipped (their API is not served yet). */
function skippedObjects(objects: readonly KubeObject[], skipped: readonly { object: { apiVersion: string; kind: string; name: string; namespace?: string | undefined } }[]): KubeObject[] {
  const ids = new Set(skipped.map((s) => `${s.object.apiVersion}/${s.object.kind}/${s.object.name}`));
  return objects.filter((o) => ids.has(`${o.apiVersion}/${o.kind}/${o.metadata.name ?? ''}`));
}

export function pick(o: RolloutOutcome): Omit<ApplyResult, 'revision' | 'status'> {
  return { applied: o.applied, pruned: o.pruned, health: o.health, message: o.message };
}

/**
 * The objects of this revision exactly as the deployed revision applied them (prepared the same
 * way, ownership marks included; none with ignored drift fields): each costs the read preflight
 * makes, and is applied only if that read finds it changed (preflight's `unchanged`). Helm's
 * upgrade likewise patches only a non-empty three-way diff. Nothing is the same when the
 * deployed objects cannot be prepared (a kind gone).
 */
async function sameAsDeployed(cfg: ActionConfig, objects: readonly KubeObject[], baseline: Map<string, KubeObject>, req: ApplyRequest): Promise<Set<string>> {
  if (baseline.size === 0) return new Set();
  let before: KubeObject[];
  try {
    before = withOwnerReference(await prepare(cfg.client, [...baseline.values()], req.owner, req.release), req);
  } catch (err) {
    if (err instanceof ApplyRefusedError) return new Set();
    throw err;
  }
  const applied = new Map(before.map((o) => [identityOf(o), canonicalJson(o)]));
  return new Set(objects.filter((o) => ignoredPointers(o, req.drift).length === 0 && applied.get(identityOf(o)) === canonicalJson(o)).map(identityOf));
}
