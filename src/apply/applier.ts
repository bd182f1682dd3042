/**
 * The Applier: applies one release's objects to the cluster and records each revision.
 * A run is: validate the request → preflight (ownership, CRD safety, server dry-run; refuse
 * before changing anything) → apply phase by phase → prune what the previous revision had
 * and this one has not → wait for health → record deployed, or record failed and roll back.
 */
import type { Logger } from 'pino';
import type { DriftSpec } from '../api/types.js';
import { FIELD_MANAGER } from '../kube/client.js';
import type { SchemaSource } from '../kube/openapi.js';
import { isAlreadyExists, isInvalid, isNotFound, isTransient } from '../kube/errors.js';
import { describeRef, refOf, type KubeObject, type ObjectRef } from '../kube/types.js';
import { canonicalJson } from '../util/canonical-json.js';
import { formatDuration, pollUntil } from '../util/deadline.js';
import { BinnacleError, errorMessage, ValidationResult } from '../util/errors.js';
import { checkCrdUpgrade } from './crd-safety.js';
import { objectDrift } from './drift.js';
import { appliesField, DRIFT_HANDOVER_MANAGER, driftMode, handoverObject, ignoredPointers, valueAt, withoutPointers } from './drift-policy.js';
import { isFirstInstall, removeFailedInstall } from './atomic.js';
import { ApplyRefusedError } from './errors.js';
import { probeOnce, unhealthySummary, waitForHealthy } from './health.js';
import { waitCrdsEstablished } from '../kube/crd-established.js';
import { makeLenient, type LenientObjects } from './leniency.js';
import { isOwnedBy, describeOwner, keptByResourcePolicy, ownerName, stampOwnership } from './ownership.js';
import { applyOrder, deleteOrder, groupByPhase, identityOf, type PhaseGroup } from './phases.js';
import { runHooks, type HookEvent } from './hooks.js';
import { helmTime, parseManifest, toManifest } from './release.js';
import { ReleaseStore } from './release-store.js';
import { validateRequest } from './request.js';
import { mapLimit } from '../util/map-limit.js';
import type { ApplyRequest, ApplyResult, ChartInfo, ConfineCheck, DriftReport, HealthReport, ObjectDrift, Owner, ReleaseContent, ReleaseRef, ReleaseRevision, ReleaseStatus } from './types.js';

/** The narrow slice of the Kubernetes client the applier uses. */
import type { ApplierClient } from './types.js';

export type { ApplierClient };

export interface ApplierOptions {
  client: ApplierClient;
  logger: Logger;
  /** How long to wait for new CRDs to be Established; default 60 s. */
  crdTimeoutMs?: number;
  /** How long an object deleted to be replaced (force) may take to go (its dependents first); default 120 s. */
  replaceTimeoutMs?: number;
  /** Probe interval for health and CRDs; default 1 s. */
  pollIntervalMs?: number;
  /** Revisions kept after a successful run, oldest dropped first (never the deployed one); default 10 as in operator-controller; 0 keeps all. */
  maxHistory?: number;
  /** The server's schemas, to drop fields they do not declare (as OLM does); without them nothing is dropped. */
  schemas?: SchemaSource;
}

const DEFAULT_HEALTH_TIMEOUT_MS = 5 * 60_000;

interface Rollout {
  owner: Owner;
  release: ReleaseRef;
  objects: KubeObject[];
  chart: ChartInfo;
  config: Record<string, unknown>;
  version: number;
  pending: ReleaseStatus;
  description: string;
  firstDeployed: string;
  /** Objects earlier revisions applied: candidates for pruning. */
  previous: KubeObject[];
  /** The release's revisions before this one, as read at the start of the run: what to supersede and trim, without listing them again. */
  history: readonly ReleaseRevision[];
  /** Live objects found in preflight that we own or adopt: applied with force. */
  takeOver: Set<string>;
  /** Live objects the API server refuses to change in place (force): deleted, then created. */
  replace: Set<string>;
  /** Objects this revision applies as the deployed one did, live still as applied: nothing to apply. */
  unchanged: Set<string>;
  waitForHealth: boolean;
  healthTimeoutMs: number;
  /** A chart release's content: its manifest is what is recorded, its hooks run around the apply. */
  content?: ReleaseContent | undefined;
  inputDigest?: string | undefined;
  /** The hook events of this operation (pre-/post-install, -upgrade or -rollback); none when hooks are off. */
  hookEvents?: { pre: HookEvent; post: HookEvent } | undefined;
  drift?: DriftSpec | undefined;
  /** The deployed revision's objects: an ignored field this revision does not change is left out of what is applied. */
  baseline: Map<string, KubeObject>;
}

interface RolloutOutcome {
  ok: boolean;
  applied: ObjectRef[];
  pruned: ObjectRef[];
  health: HealthReport;
  message: string;
}

const EMPTY_HEALTH: HealthReport = { healthy: false, objects: [] };

export class Applier {
  private readonly client: ApplierClient;
  private readonly logger: Logger;
  private readonly store: ReleaseStore;
  private readonly crdTimeoutMs: number;
  private readonly replaceTimeoutMs: number;
  private readonly pollIntervalMs: number;
  /** CRDs to be Established and replaced objects to go: usually quick, so probed more often than health. */
  private get waitIntervalMs(): number {
    return Math.min(this.pollIntervalMs, 250);
  }
  private readonly maxHistory: number;
  private readonly schemas: SchemaSource | undefined;

  constructor(opts: ApplierOptions) {
    this.client = opts.client;
    this.logger = opts.logger;
    this.store = new ReleaseStore(opts.client);
    this.crdTimeoutMs = opts.crdTimeoutMs ?? 60_000;
    this.replaceTimeoutMs = opts.replaceTimeoutMs ?? 120_000;
    this.pollIntervalMs = opts.pollIntervalMs ?? 1000;
    this.maxHistory = opts.maxHistory ?? 10;
    this.schemas = opts.schemas;
  }

  /** Every revision of `release`, oldest first. */
  history(release: ReleaseRef): Promise<ReleaseRevision[]> {
    return this.store.history(release);
  }

  /** The deployed revision, if any. */
  async currentRevision(release: ReleaseRef): Promise<ReleaseRevision | undefined> {
    const history = await this.store.history(release);
    return lastWith(history, ['deployed']);
  }

  /**
   * Installs or upgrades. Throws `ApplyRefusedError` (nothing changed) when an object belongs
   * to someone else or a CRD change is unsafe, `ValidationError` for a malformed request.
   * Apply and health failures are answered as `status: 'failed'` or `'rolled-back'`; a failed
   * first install is removed unless `keepFailedInstall`. Objects of optional APIs the cluster
   * does not serve are skipped, and fields their schema does not declare dropped, as OLM does.
   */
  async apply(req: ApplyRequest): Promise<ApplyResult> {
    validateRequest(req);
    const lenient = await makeLenient(req.objects, { client: this.client, schemas: this.schemas });
    if (lenient.dropped.length > 0 || lenient.skipped.length > 0) {
      this.logger.warn(
        { release: `${req.release.namespace}/${req.release.name}`, droppedFields: lenient.dropped.length, skipped: lenient.skipped.length },
        'dropping fields the schemas do not declare; skipping objects of optional APIs the cluster does not serve',
      );
    }
    const result = await this.applyObjects({ ...req, objects: lenient.objects });
    // A repair re-applies the recorded manifest, made lenient on its own: what it skipped or
    // dropped is reported as well, or a no-change reconcile would say nothing was skipped.
    return { ...result, droppedFields: [...lenient.dropped, ...(result.droppedFields ?? [])], skipped: [...lenient.skipped, ...(result.skipped ?? [])] };
  }

  /** `apply` of exactly these objects. */
  private async applyObjects(req: ApplyRequest): Promise<ApplyResult> {
    // A copy: settling an interrupted revision changes it in place.
    const history = req.history === undefined ? await this.store.history(req.release) : [...req.history];
    await this.settleInterrupted(history);
    assertReleaseOwner(history, req.owner, req.release);
    const objects = withOwnerReference(await this.prepare(req.objects, req.owner, req.release), req);
    const chart = req.chart ?? { name: req.owner.name, version: '0.0.0' };
    const config = req.values ?? {};
    // Before the new objects' preflight: a kept revision checks what it re-applies, itself.
    const kept = await this.keepRevision(req, history, objects, chart, config);
    if (kept !== undefined) return kept;
    const latest = history.at(-1);
    const deployed = lastWith(history, ['deployed']);
    const baseline = await this.baselineOf(deployed, req.release);
    const same = await this.sameAsDeployed(objects, baseline, req);
    const { takeOver, replace, unchanged } = await this.preflight(objects, req.owner, req.release, req.adopt === true, req.force === true, { same, watched: req.watched });

    const version = (latest?.revision ?? 0) + 1;
    const upgrade = deployed !== undefined;
    const log = this.logger.child({ release: `${req.release.namespace}/${req.release.name}`, revision: version });
    log.info({ objects: objects.length, upgrade }, upgrade ? 'upgrading release' : 'installing release');
    const outcome = await this.rollout(
      {
        owner: req.owner,
        release: req.release,
        objects,
        chart,
        config,
        version,
        pending: upgrade ? 'pending-upgrade' : 'pending-install',
        description: upgrade ? 'Upgrade complete' : 'Install complete',
        firstDeployed: history[0]?.firstDeployed ?? helmTime(new Date()),
        previous: this.previousObjects(history),
        history,
        takeOver,
        replace,
        unchanged,
        waitForHealth: req.waitForHealth ?? true,
        healthTimeoutMs: req.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS,
        content: req.content,
        inputDigest: req.inputDigest,
        hookEvents: req.content === undefined || req.disableHooks === true ? undefined : upgrade ? { pre: 'pre-upgrade', post: 'post-upgrade' } : { pre: 'pre-install', post: 'post-install' },
        drift: req.drift,
        baseline,
      },
      log,
    );
    if (outcome.ok) return { revision: version, status: 'deployed', ...pick(outcome) };
    return this.afterFailedRollout(req, history, version, outcome, log);
  }

  /**
   * When no new revision is due, what re-applying the current one answers: the same inputs as
   * the deployed revision, inputs that already failed and were rolled back, or (without an input
   * digest) the same objects, chart and values. Undefined when a new revision is due.
   */
  private async keepRevision(req: ApplyRequest, history: ReleaseRevision[], objects: KubeObject[], chart: ChartInfo, config: Record<string, unknown>): Promise<ApplyResult | undefined> {
    const latest = history.at(-1);
    const deployed = lastWith(history, ['deployed']);
    /** The recorded objects of `rev`, re-applied. */
    const reapply = async (rev: ReleaseRevision): Promise<ApplyResult> => {
      const stored = await this.storedObjects(rev, req);
      await this.assertConfined(stored.objects, req.confine, req.release, `revision ${rev.revision}`);
      // No server dry run: a repair changes nothing the real apply would not refuse the same way,
      // and a refused repair fails nothing (the revision stays deployed). The objects read here
      // are the ones drift is judged against.
      const checked = await this.preflight(stored.objects, req.owner, req.release, req.adopt === true, false, { repair: true, watched: req.watched });
      const repaired = await this.repair(req, rev, stored.objects, checked.takeOver, checked.live);
      return { ...repaired, droppedFields: stored.dropped, skipped: stored.skipped };
    };
    if (latest !== undefined && latest.status === 'deployed' && req.inputDigest !== undefined && latest.inputDigest === req.inputDigest) {
      // Same chart and values: re-apply what the deployed revision recorded, not this render,
      // so templates that are not deterministic (randAlphaNum, now, genCA) never loop.
      return reapply(latest);
    }
    // These exact inputs already failed and were rolled back: no retry loop until they change
    // (Flux's default remediation); the running revision is kept and repaired.
    const failedBefore = req.inputDigest === undefined || deployed === undefined ? undefined : history.find((r) => r.status === 'failed' && r.inputDigest === req.inputDigest && r.revision < deployed.revision);
    if (failedBefore !== undefined && deployed !== undefined) {
      const kept = await reapply(deployed);
      return {
        ...kept,
        status: kept.status === 'deployed' ? 'rolled-back' : kept.status,
        message: `revision ${failedBefore.revision} with these inputs failed (${failedBefore.description}) and was rolled back; revision ${deployed.revision} keeps running until the chart or values change`,
      };
    }
    if (latest !== undefined && latest.status === 'deployed' && req.inputDigest === undefined && isSameRevision(latest, objects, chart, config)) {
      const checked = await this.preflight(objects, req.owner, req.release, req.adopt === true, false, { repair: true, watched: req.watched });
      return this.repair(req, latest, objects, checked.takeOver, checked.live);
    }
    return undefined;
  }

  /** A new revision that did not roll out: a first install is removed, an upgrade rolled back (unless told otherwise). */
  private async afterFailedRollout(req: ApplyRequest, history: ReleaseRevision[], version: number, outcome: RolloutOutcome, log: Logger): Promise<ApplyResult> {
    const deployed = lastWith(history, ['deployed']);
    if (req.keepFailedInstall !== true && isFirstInstall(history)) {
      log.warn({ reason: outcome.message }, 'install failed; removing it');
      const removal = await removeFailedInstall(outcome.message, () => this.uninstall({ owner: req.owner, release: req.release }));
      return { revision: version, status: 'failed', ...pick(outcome), message: removal.message, ...(removal.removed === undefined ? {} : { removed: removal.removed }) };
    }
    if (req.autoRollback === false || deployed === undefined) {
      return { revision: version, status: 'failed', ...pick(outcome) };
    }
    log.warn({ to: deployed.revision, reason: outcome.message }, 'upgrade failed; rolling back');
    const back = await this.rollbackTo(req.release, deployed, { healthTimeoutMs: req.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS, waitForHealth: req.waitForHealth ?? true, force: req.rollbackForce === true, drift: req.drift, confine: req.confine }).catch((err: unknown) => {
      // The rollback must wait (an object of the release still being deleted, e.g. one replaced
      // by force and held by a finalizer): retried with backoff, saying why the upgrade failed.
      if (err instanceof BinnacleError && err.code === 'OBJECT_TERMINATING') {
        throw new BinnacleError(err.errorClass, err.code, `revision ${version} failed (${outcome.message}); the rollback to revision ${deployed.revision} waits: ${err.message}`, { cause: err });
      }
      throw err;
    });
    const message = `revision ${version} failed (${outcome.message}); ${back.status === 'deployed' ? `rolled back to revision ${deployed.revision} as revision ${back.revision}` : `rollback failed: ${back.message}`}`;
    return {
      revision: back.revision,
      status: back.status === 'deployed' ? 'rolled-back' : 'failed',
      applied: outcome.applied,
      pruned: outcome.pruned,
      health: outcome.health,
      message,
    };
  }

  /** Re-applies an earlier good revision (default: the last one before the current) as a new revision. */
  async rollback(opts: { release: ReleaseRef; toRevision?: number; healthTimeoutMs?: number; waitForHealth?: boolean; force?: boolean; drift?: DriftSpec }): Promise<ApplyResult> {
    const history = await this.store.history(opts.release);
    const where = `release ${opts.release.namespace}/${opts.release.name}`;
    if (history.length === 0) throw new BinnacleError('input', 'RELEASE_NOT_FOUND', `${where} has no revisions`);
    await this.settleInterrupted(history);
    let target: ReleaseRevision | undefined;
    if (opts.toRevision !== undefined) {
      target = history.find((r) => r.revision === opts.toRevision);
      if (target === undefined) throw new BinnacleError('input', 'ROLLBACK_NO_TARGET', `${where} has no revision ${opts.toRevision} (have ${history.map((r) => r.revision).join(', ')})`);
    } else {
      const latest = history.at(-1)?.revision ?? 0;
      target = lastWith(history.filter((r) => r.revision < latest), ['deployed', 'superseded']);
      if (target === undefined) throw new BinnacleError('input', 'ROLLBACK_NO_TARGET', `${where} has no earlier good revision to roll back to`);
    }
    return this.rollbackTo(opts.release, target, { healthTimeoutMs: opts.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS, waitForHealth: opts.waitForHealth ?? true, force: opts.force === true, drift: opts.drift });
  }

  /**
   * Deletes every object the release holds that is still labelled ours, CRDs last, then its
   * release records. As OLM v1 does on ClusterExtension deletion (a Helm uninstall of the
   * rendered bundle), CRDs are deleted too, and with them their custom resources.
   */
  async uninstall(opts: { owner: Owner; release: ReleaseRef; disableHooks?: boolean; hookTimeoutMs?: number; confine?: ConfineCheck }): Promise<{ deleted: ObjectRef[] }> {
    const history = await this.store.history(opts.release);
    if (history.length === 0) return { deleted: [] };
    assertReleaseOwner(history, opts.owner, opts.release);
    const objects = dedupe(await this.withNamespaces(this.previousObjects(history), opts.release.namespace));
    let hooks = opts.disableHooks === true ? [] : (history.at(-1)?.content?.hooks ?? []);
    if (hooks.length > 0 && opts.confine !== undefined) {
      // Recorded hooks are as trusted as the record (ApplyRequest.confine): out of scope, none runs; the uninstall goes on.
      const where = `release ${opts.release.namespace}/${opts.release.name}`;
      const problems = await opts.confine(hooks.flatMap((h) => parseManifest(h.manifest, `${where} hook ${h.name}`)));
      if (problems.length > 0) {
        this.logger.warn({ release: `${opts.release.namespace}/${opts.release.name}`, problems }, 'the recorded delete hooks hold what the release may not; running none');
        hooks = [];
      }
    }
    const hookOpts = { client: this.client, owner: opts.owner, release: opts.release, logger: this.logger, timeoutMs: opts.hookTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS, pollIntervalMs: Math.min(this.pollIntervalMs, 500) };
    const pre = await runHooks(hooks, 'pre-delete', hookOpts);
    if (!pre.ok) throw new BinnacleError('terminal', 'HOOK_FAILED', `uninstall of release ${opts.release.namespace}/${opts.release.name}: ${pre.message}`);
    const deleted: ObjectRef[] = [];
    for (const o of deleteOrder(objects)) {
      const ref = refOf(o);
      const live = await this.findQuiet(ref);
      if (live === undefined || !isOwnedBy(live, opts.owner, opts.release)) continue;
      if (keptByResourcePolicy(o, live)) {
        this.logger.info({ object: describeRef(ref) }, 'kept by helm.sh/resource-policy');
        continue;
      }
      if (await this.client.delete(ref, { propagationPolicy: 'Background' })) deleted.push(ref);
    }
    const post = await runHooks(hooks, 'post-delete', hookOpts);
    if (!post.ok) this.logger.warn({ release: `${opts.release.namespace}/${opts.release.name}`, reason: post.message }, 'post-delete hook failed');
    await this.store.deleteAll(opts.release, history);
    this.logger.info({ release: `${opts.release.namespace}/${opts.release.name}`, deleted: deleted.length }, 'uninstalled release');
    return { deleted };
  }

  // --- steps -------------------------------------------------------------------

  /**
   * The release is already at this exact revision: re-apply its objects to undo drift (a
   * level-triggered controller calls apply on every resync) without recording a new revision,
   * and probe health once instead of waiting, so the caller can requeue. By the drift rules:
   * Warn only compares, Off neither compares nor applies; ignored fields are left to others.
   */
  private async repair(req: ApplyRequest, current: ReleaseRevision, objects: KubeObject[], takeOver: Set<string>, live: LiveObjects | undefined): Promise<ApplyResult> {
    const applied: ObjectRef[] = [];
    const base = { revision: current.revision, pruned: [] };
    const mode = driftMode(req.drift);
    let drift: DriftReport | undefined;
    try {
      const drifted = mode === 'Off' ? [] : await this.driftOf(objects, req.drift, live);
      if (mode !== 'Off') drift = { mode, drifted: drifted.map((d) => d.drift) };
      if (mode === 'Repair') {
        // Only what differs is applied (helm-operator patches only a non-empty diff): an object
        // that matches its manifest costs the one read it was compared with. One with ignored
        // fields is applied still, so that a field Binnacle holds is handed over (intentOf).
        const differs = new Set(drifted.map((d) => identityOf(d.object)));
        for (const obj of applyOrder(objects)) {
          if (differs.has(identityOf(obj)) || ignoredPointers(obj, req.drift).length > 0) await this.client.apply(await this.intentOf(obj, req.drift, undefined), { force: takeOver.has(identityOf(obj)) });
          applied.push(refOf(obj));
        }
      }
    } catch (err) {
      // Nothing new was deployed, so there is nothing to roll back; the revision stays deployed.
      return { ...base, status: 'failed', applied, health: EMPTY_HEALTH, message: `revision ${current.revision} unchanged; re-applying it failed: ${errorMessage(err)}`, ...(drift === undefined ? {} : { drift }) };
    }
    const health = req.waitForHealth === false ? { healthy: true, objects: objects.map((o) => ({ ref: refOf(o), healthy: true, reason: mode === 'Repair' ? 'applied' : 'not re-applied (drift mode)' })) } : await probeOnce(this.client, objects);
    const message = health.healthy ? `revision ${current.revision} unchanged and healthy` : `revision ${current.revision} unchanged; not yet healthy: ${unhealthySummary(health)}`;
    // Warn and Off apply nothing; the revision's objects are still what the release holds (callers list and watch them).
    const held = mode === 'Repair' ? applied : objects.map(refOf);
    return { ...base, status: 'deployed', applied: held, health, message, ...(drift === undefined ? {} : { drift }) };
  }

  /** How the live objects differ from `objects`, ignored fields left out; `live` holds objects already read (by the preflight). */
  private async driftOf(objects: readonly KubeObject[], drift: DriftSpec | undefined, live: LiveObjects | undefined): Promise<{ object: KubeObject; drift: ObjectDrift }[]> {
    const found: { object: KubeObject; drift: ObjectDrift }[] = [];
    for (const o of objects) {
      const known = live?.get(identityOf(o));
      const reader = known === undefined ? this.client : { find: () => Promise.resolve(known.object) };
      const d = await objectDrift(reader, o, ignoredPointers(o, drift));
      if (d !== undefined) found.push({ object: o, drift: d });
    }
    return found;
  }

  /**
   * What to apply of `obj`: without the ignored fields that this revision does not change from
   * `baseline` (the deployed revision's objects; undefined for a repair, which changes nothing),
   * so that server-side apply does not take them back from whoever set them. A field our field
   * manager still holds is first handed to DRIFT_HANDOVER_MANAGER at its live value: letting go
   * of a field no one else holds would delete it. An object to create is applied whole.
   */
  private async intentOf(obj: KubeObject, drift: DriftSpec | undefined, baseline: Map<string, KubeObject> | undefined): Promise<KubeObject> {
    const pointers = ignoredPointers(obj, drift);
    if (pointers.length === 0) return obj;
    const before = baseline === undefined ? obj : baseline.get(identityOf(obj));
    if (before === undefined) return obj;
    const live = await this.findQuiet(refOf(obj));
    if (live === undefined) return obj;
    const unchanged = pointers.filter((p) => valueAt(obj, p) !== undefined && canonicalJson(valueAt(obj, p)) === canonicalJson(valueAt(before, p)));
    for (const p of unchanged) {
      const handover = appliesField(live, FIELD_MANAGER, p) ? handoverObject(live, p) : undefined;
      if (handover !== undefined) await this.client.apply(handover, { fieldManager: DRIFT_HANDOVER_MANAGER, force: true });
    }
    return withoutPointers(obj, unchanged);
  }

  /** The deployed revision's objects by identity, namespaces filled in. */
  private async baselineOf(deployed: ReleaseRevision | undefined, release: ReleaseRef): Promise<Map<string, KubeObject>> {
    if (deployed === undefined) return new Map();
    const objects = await this.withNamespaces(parseManifest(deployed.manifest, `release ${release.namespace}/${release.name} revision ${deployed.revision}`), release.namespace);
    return new Map(objects.map((o) => [identityOf(o), o]));
  }

  /**
   * The objects of this revision exactly as the deployed revision applied them (prepared the same
   * way, ownership marks included; none with ignored drift fields): each costs the read preflight
   * makes, and is applied only if that read finds it changed (preflight's `unchanged`). Helm's
   * upgrade likewise patches only a non-empty three-way diff. Measured at 100 loki-distributed
   * CRs, the server dry run and apply of unchanged objects were a quarter of the operator's
   * requests. Nothing is the same when the deployed objects cannot be prepared (a kind gone).
   */
  private async sameAsDeployed(objects: readonly KubeObject[], baseline: Map<string, KubeObject>, req: ApplyRequest): Promise<Set<string>> {
    if (baseline.size === 0) return new Set();
    let before: KubeObject[];
    try {
      before = withOwnerReference(await this.prepare([...baseline.values()], req.owner, req.release), req);
    } catch (err) {
      if (err instanceof ApplyRefusedError) return new Set();
      throw err;
    }
    const applied = new Map(before.map((o) => [identityOf(o), canonicalJson(o)]));
    return new Set(objects.filter((o) => ignoredPointers(o, req.drift).length === 0 && applied.get(identityOf(o)) === canonicalJson(o)).map(identityOf));
  }

  private async rollbackTo(release: ReleaseRef, target: ReleaseRevision, how: { healthTimeoutMs: number; waitForHealth: boolean; force: boolean; drift?: DriftSpec | undefined; confine?: ConfineCheck | undefined }): Promise<ApplyResult> {
    const { healthTimeoutMs, waitForHealth, force } = how;
    const history = await this.store.history(release);
    const owner = target.owner ?? history.at(-1)?.owner;
    if (owner === undefined) throw new BinnacleError('terminal', 'RELEASE_NOT_OWNED', `release ${release.namespace}/${release.name} revision ${target.revision} records no Binnacle owner`);
    const version = (history.at(-1)?.revision ?? 0) + 1;
    let checked: Preflight;
    let objects: KubeObject[];
    try {
      // A chart release's manifest is Helm's: namespaces and ownership marks are added here.
      objects = await this.prepare(parseManifest(target.manifest, `release ${release.namespace}/${release.name} revision ${target.revision}`), owner, release);
      const hooks = (target.content?.hooks ?? []).flatMap((h) => parseManifest(h.manifest, `release ${release.namespace}/${release.name} revision ${target.revision} hook ${h.name}`));
      await this.assertConfined([...objects, ...hooks], how.confine, release, `revision ${target.revision}`);
      checked = await this.preflight(objects, owner, release, false, force);
    } catch (err) {
      if (!(err instanceof ApplyRefusedError)) throw err;
      return { revision: version - 1, status: 'failed', applied: [], pruned: [], health: EMPTY_HEALTH, message: err.message };
    }
    const log = this.logger.child({ release: `${release.namespace}/${release.name}`, revision: version });
    log.info({ to: target.revision }, 'rolling back');
    const outcome = await this.rollout(
      {
        owner,
        release,
        objects,
        chart: target.chart,
        config: target.config,
        version,
        pending: 'pending-rollback',
        description: `Rollback to ${target.revision}`,
        firstDeployed: history[0]?.firstDeployed ?? target.firstDeployed,
        previous: this.previousObjects(history),
        history,
        ...checked,
        waitForHealth,
        healthTimeoutMs,
        content: target.content,
        inputDigest: target.inputDigest,
        hookEvents: target.content === undefined ? undefined : { pre: 'pre-rollback', post: 'post-rollback' },
        drift: how.drift,
        baseline: await this.baselineOf(lastWith(history, ['deployed']), release),
      },
      log,
    );
    return { revision: version, status: outcome.ok ? 'deployed' : 'failed', ...pick(outcome) };
  }

  private async rollout(r: Rollout, log: Logger): Promise<RolloutOutcome> {
    const applied: ObjectRef[] = [];
    const pruned: ObjectRef[] = [];
    const groups = groupByPhase(r.objects);
    const previous = await this.withNamespaces(r.previous, r.release.namespace);
    let hooks = r.content?.hooks ?? [];
    const hookOpts = { client: this.client, owner: r.owner, release: r.release, logger: log, timeoutMs: r.healthTimeoutMs, pollIntervalMs: Math.min(this.pollIntervalMs, 500) };
    let record: ReleaseRevision | undefined;
    /** The record as it now stands, with the hooks' last runs. */
    const current = (rec: ReleaseRevision): ReleaseRevision => (rec.content === undefined ? rec : { ...rec, content: { ...rec.content, hooks } });
    const fail = async (message: string, health: HealthReport = EMPTY_HEALTH): Promise<RolloutOutcome> => {
      log.error({ reason: message }, 'revision failed');
      if (record !== undefined) await this.store.setStatus(current(record), 'failed', message);
      return { ok: false, applied, pruned, health, message };
    };
    /** Records the pending revision and runs the pre-event hooks, saying why they failed. */
    const begin = async (): Promise<{ rec: ReleaseRevision; hookFailure?: string }> => {
      const rec = await this.writePending(r);
      if (r.hookEvents === undefined) return { rec };
      const pre = await runHooks(hooks, r.hookEvents.pre, hookOpts);
      hooks = pre.hooks;
      return pre.ok ? { rec } : { rec, hookFailure: pre.message };
    };
    try {
      for (const group of groups) {
        // The record lives in the release namespace, which the first phase may create.
        if (group.phase !== 'namespaces' && record === undefined) {
          const started = await begin();
          record = started.rec;
          if (started.hookFailure !== undefined) return await fail(started.hookFailure);
        }
        await this.applyGroup(group, r, applied, log);
      }
      if (record === undefined) {
        const started = await begin();
        record = started.rec;
        if (started.hookFailure !== undefined) return await fail(started.hookFailure);
      }
    } catch (err) {
      // Another run recorded this revision first: not a failure of ours to roll back.
      if (isAlreadyExists(err) && record === undefined) {
        throw new BinnacleError('transient', 'RELEASE_CONFLICT', `release ${r.release.namespace}/${r.release.name}: revision ${r.version} was recorded by another run at the same time; retry`, { cause: err });
      }
      // An API server restarting (5xx, unreachable, timed out) says nothing of the release:
      // the caller retries with backoff, and the next run settles the pending revision. Only a
      // verdict on the objects fails the revision (and removes a first install, rolls back).
      if (isTransient(err)) throw err;
      return fail(`apply failed: ${errorMessage(err)}`);
    }

    try {
      await this.prune(r, previous, pruned, log);
    } catch (err) {
      if (isTransient(err)) throw err;
      return fail(`prune failed: ${errorMessage(err)}`);
    }

    let health: HealthReport = { healthy: true, objects: applied.map((ref) => ({ ref, healthy: true, reason: 'applied' })) };
    if (r.waitForHealth) {
      health = await waitForHealthy(this.client, r.objects, { timeoutMs: r.healthTimeoutMs, intervalMs: this.pollIntervalMs, logger: log });
      if (!health.healthy) return fail(`not healthy after ${r.healthTimeoutMs} ms: ${unhealthySummary(health)}`, health);
    }
    if (r.hookEvents !== undefined) {
      const post = await runHooks(hooks, r.hookEvents.post, hookOpts);
      hooks = post.hooks;
      if (!post.ok) return fail(post.message, health);
    }

    await this.trimHistory(r.release, await this.markDeployed(r, current(record)));
    log.info({ applied: applied.length, pruned: pruned.length }, r.description);
    return { ok: true, applied, pruned, health, message: r.description };
  }

  /** Applies one phase's objects in order (replacing those that must be, forcing those taken over); CRDs then wait to be Established. */
  private async applyGroup(group: PhaseGroup, r: Rollout, applied: ObjectRef[], log: Logger): Promise<void> {
    // Kind by kind in order; the objects of one kind side by side, as Helm's client creates and
    // updates them (kube.Client batchPerform). `applied` says what was applied, in order.
    for (const batch of kindBatches(group.objects)) {
      const results = await Promise.allSettled(
        batch.map(async (obj) => {
          if (r.unchanged.has(identityOf(obj))) return;
          if (r.replace.has(identityOf(obj))) await this.deleteForReplacement(obj, log);
          await this.client.apply(await this.intentOf(obj, r.drift, r.baseline), { force: r.takeOver.has(identityOf(obj)) });
        }),
      );
      results.forEach((res, i) => {
        const obj = batch[i];
        if (res.status === 'fulfilled' && obj !== undefined) applied.push(refOf(obj));
      });
      const failed = results.find((res): res is PromiseRejectedResult => res.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    }
    if (group.phase === 'crds') await this.waitEstablished(group.objects);
  }

  /** Deletes the previous objects this revision no longer has, adding each deleted one to `pruned` as it goes. */
  private async prune(r: Rollout, previous: readonly KubeObject[], pruned: ObjectRef[], log: Logger): Promise<void> {
    const keep = new Set(r.objects.map(identityOf));
    for (const old of deleteOrder(dedupe(previous).filter((o) => !keep.has(identityOf(o))))) {
      const ref = refOf(old);
      const live = await this.findQuiet(ref);
      // Only what still carries our marks: someone may have taken it over since.
      if (live === undefined || !isOwnedBy(live, r.owner, r.release)) continue;
      if (keptByResourcePolicy(old, live)) {
        log.info({ object: describeRef(ref) }, 'kept by helm.sh/resource-policy');
        continue;
      }
      if (await this.client.delete(ref, { propagationPolicy: 'Background' })) pruned.push(ref);
      log.info({ object: describeRef(ref) }, 'pruned');
    }
  }

  /** Success: `record` (this revision) is deployed, every earlier deployed one superseded. */
  private async markDeployed(r: Rollout, record: ReleaseRevision): Promise<ReleaseRevision[]> {
    const after: ReleaseRevision[] = [];
    for (const old of r.history) {
      if (old.revision === r.version) continue;
      after.push(old.status === 'deployed' ? await this.store.setStatus(old, 'superseded') : old);
    }
    after.push(await this.store.setStatus(record, 'deployed', r.description));
    return after;
  }

  /** Drops the oldest revisions beyond maxHistory, as helm's --history-max does; `history` is the release's revisions now. */
  private async trimHistory(release: ReleaseRef, history: readonly ReleaseRevision[]): Promise<void> {
    if (this.maxHistory <= 0) return;
    const excess = history.length - this.maxHistory;
    if (excess <= 0) return;
    await this.store.deleteAll(release, history.filter((r) => r.status !== 'deployed').slice(0, excess));
  }

  private async writePending(r: Rollout): Promise<ReleaseRevision> {
    const now = helmTime(new Date());
    const rev: ReleaseRevision = {
      name: r.release.name,
      namespace: r.release.namespace,
      revision: r.version,
      status: r.pending,
      description: `${r.pending === 'pending-install' ? 'Install' : r.pending === 'pending-rollback' ? 'Rollback' : 'Upgrade'} in progress`,
      firstDeployed: r.firstDeployed,
      lastDeployed: now,
      chart: r.chart,
      config: r.config,
      manifest: r.content?.manifest ?? toManifest(applyOrder(r.objects)),
      owner: r.owner,
      ...(r.inputDigest === undefined ? {} : { inputDigest: r.inputDigest }),
      ...(r.content === undefined ? {} : { content: r.content }),
    };
    await this.store.create({ ...rev, version: rev.revision }, r.owner);
    return rev;
  }

  /**
   * Objects of a recorded manifest with their namespaces: a chart release's manifest is Helm's,
   * which leaves namespaced objects without one (Helm fills it in when it applies). A kind the
   * cluster no longer serves is left as it is: there is nothing of it to find.
   */
  private async withNamespaces(objects: readonly KubeObject[], namespace: string): Promise<KubeObject[]> {
    const out: KubeObject[] = [];
    for (const o of objects) {
      if (o.metadata.namespace !== undefined && o.metadata.namespace !== '') {
        out.push(o);
        continue;
      }
      let namespaced = false;
      try {
        namespaced = (await this.client.resourceFor(o.apiVersion, o.kind)).namespaced;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      out.push(namespaced ? { ...o, metadata: { ...o.metadata, namespace } } : o);
    }
    return out;
  }

  /**
   * What the deployed revision recorded, ready to apply again: its manifest's objects plus the
   * request's objects that are not in any manifest (a chart's crds/), made lenient the same way.
   */
  private async storedObjects(rev: ReleaseRevision, req: ApplyRequest): Promise<LenientObjects> {
    const recorded = parseManifest(rev.manifest, `release ${rev.namespace}/${rev.name} revision ${rev.revision}`);
    const lenient = await makeLenient(recorded, { client: this.client, schemas: this.schemas });
    const prepared = withOwnerReference(await this.prepare(lenient.objects, req.owner, req.release), req);
    const inManifest = new Set(prepared.map(identityOf));
    const extra = (await this.prepare(req.objects, req.owner, req.release)).filter((o) => !inManifest.has(identityOf(o)) && o.kind === 'CustomResourceDefinition');
    return { objects: [...prepared, ...extra], skipped: lenient.skipped, dropped: lenient.dropped };
  }

  /** A pending revision left by a run that died is marked failed, as `helm` would need by hand. */
  private async settleInterrupted(history: ReleaseRevision[]): Promise<void> {
    for (const [i, rev] of history.entries()) {
      if (!rev.status.startsWith('pending-')) continue;
      this.logger.warn({ revision: rev.revision }, 'revision was left pending by an interrupted run; marking it failed');
      history[i] = await this.store.setStatus(rev, 'failed', `${rev.description}: interrupted`);
    }
  }

  /** Stamps ownership, fills in namespaces of namespaced kinds, and drops server-owned fields. */
  private async prepare(objects: readonly KubeObject[], owner: Owner, release: ReleaseRef): Promise<KubeObject[]> {
    const crdScopes = new Map<string, boolean>();
    for (const o of objects) {
      if (o.kind !== 'CustomResourceDefinition') continue;
      const spec = (o.spec ?? {}) as { group?: unknown; names?: { kind?: unknown }; scope?: unknown };
      if (typeof spec.group === 'string' && typeof spec.names?.kind === 'string') crdScopes.set(`${spec.group}/${spec.names.kind}`, spec.scope !== 'Cluster');
    }
    const problems = new ValidationResult(`release ${release.namespace}/${release.name}`);
    const out: KubeObject[] = [];
    for (const o of objects) {
      const group = o.apiVersion.includes('/') ? o.apiVersion.slice(0, o.apiVersion.indexOf('/')) : '';
      let namespaced = crdScopes.get(`${group}/${o.kind}`);
      if (namespaced === undefined) {
        try {
          namespaced = (await this.client.resourceFor(o.apiVersion, o.kind)).namespaced;
        } catch (err) {
          if (!isNotFound(err)) throw err;
          problems.error('apply.unknown-kind', `${o.kind} ${o.metadata.name ?? ''}: the cluster serves no ${o.kind} in ${o.apiVersion} and no CRD in this release defines it`, { field: `${o.kind}/${o.metadata.name ?? ''}` });
          continue;
        }
      }
      // Server-owned fields would make the apply fail or fight the server.
      const { uid: _uid, resourceVersion: _rv, generation: _gen, creationTimestamp: _ct, deletionTimestamp: _dt, managedFields: _mf, ...metadata } = o.metadata;
      if (namespaced && (metadata.namespace === undefined || metadata.namespace === '')) metadata.namespace = release.namespace;
      if (!namespaced) delete metadata.namespace;
      const clean: KubeObject = { ...o, metadata };
      delete clean.status;
      out.push(stampOwnership(clean, owner, release));
    }
    if (!problems.ok) throw new ApplyRefusedError(problems);
    return out;
  }

  /**
   * Checks every object before anything changes: who owns the live object, whether a CRD
   * change is safe, and whether the API server accepts the object (server dry-run). Throws
   * with all problems; answers the identities to apply with force (ours, or adopted).
   */
  private async preflight(
    objects: readonly KubeObject[],
    owner: Owner,
    release: ReleaseRef,
    adopt: boolean,
    force = false,
    how: { repair?: boolean; same?: Set<string>; watched?: ApplyRequest['watched'] } = {},
  ): Promise<Preflight> {
    const repair = how.repair === true;
    const found: PreflightFindings = { result: new ValidationResult(`release ${release.namespace}/${release.name}`), takeOver: new Set<string>(), replace: new Set<string>(), unchanged: new Set<string>(), terminating: [], live: new Map(), dryRun: !repair };
    const { result, terminating } = found;
    // The release records live in the release namespace: it must exist or be part of the release.
    // A repair read its deployed record there: it exists.
    const createsNamespace = objects.some((o) => o.kind === 'Namespace' && o.apiVersion === 'v1' && o.metadata.name === release.namespace);
    const namespaceMissing = repair || createsNamespace ? Promise.resolve(false) : this.findQuiet({ apiVersion: 'v1', kind: 'Namespace', name: release.namespace }).then((ns) => ns === undefined);
    // Objects are checked side by side (their reads and dry runs are independent), and their
    // findings gathered in the objects' order: one round trip or two, not two per object.
    const perObject = await mapLimit(objects, PREFLIGHT_CONCURRENCY, async (obj) => {
      const mine: PreflightFindings = { result: new ValidationResult(result.subject), takeOver: new Set(), replace: new Set(), unchanged: new Set(), terminating: [], live: new Map(), dryRun: found.dryRun };
      const same = how.same?.has(identityOf(obj)) === true;
      // What a watch holds stands in for the read only where nothing new is to be written: a
      // repair, or an object as the deployed revision applied it. A new or changed object is read.
      const watched = repair || same ? how.watched : undefined;
      await this.preflightObject(obj, { owner, release, adopt, force, same, ...(watched === undefined ? {} : { watched }) }, mine);
      return mine;
    });
    if (await namespaceMissing) {
      result.error('apply.release-namespace', `namespace ${release.namespace} does not exist and the release does not create it; its records cannot be stored`, { field: 'release.namespace' });
    }
    for (const mine of perObject) mergeFindings(found, mine);
    if (!result.ok) throw new ApplyRefusedError(result);
    if (terminating.length > 0) {
      throw new BinnacleError('transient', 'OBJECT_TERMINATING', `release ${release.namespace}/${release.name}: ${terminating.join(', ')} ${terminating.length === 1 ? 'is' : 'are'} being deleted; applying once ${terminating.length === 1 ? 'it is' : 'they are'} gone`);
    }
    return { takeOver: found.takeOver, replace: found.replace, unchanged: found.unchanged, live: found.live };
  }

  /** Preflight of one object: readable, not being deleted, ours (or adopted), a safe CRD change, accepted by a server dry run. */
  private async preflightObject(obj: KubeObject, o: PreflightOptions, found: PreflightFindings): Promise<void> {
    const ref = refOf(obj);
    const what = describeRef(ref);
    let live: KubeObject | undefined;
    try {
      live = o.watched?.(ref) ?? (await this.findQuiet(ref));
    } catch (err) {
      found.result.error('apply.read', `${what}: cannot read it: ${errorMessage(err)}`, { field: what });
      return;
    }
    found.live.set(identityOf(obj), { object: live });
    if (live?.metadata.deletionTimestamp !== undefined) {
      // Going away (an earlier release's uninstall, a CRD's custom resources being cleaned up):
      // applying now would be undone, and who owns it says nothing. Wait for it, then apply.
      found.terminating.push(`${what} (${describeOwner(live)})`);
      return;
    }
    if (live !== undefined && !claimLive(obj, live, o, found)) return;
    if (!found.dryRun) return;
    // As the deployed revision applied it, and live still so: no dry run, and nothing to apply.
    if (o.same && live !== undefined && isOwnedBy(live, o.owner, o.release) && appliedByBinnacle(live) && (await objectDrift({ find: () => Promise.resolve(live) }, obj)) === undefined) {
      found.unchanged.add(identityOf(obj));
      return;
    }
    try {
      await this.client.apply(obj, { dryRun: true, force: found.takeOver.has(identityOf(obj)) });
    } catch (err) {
      noteDryRunRefusal(err, obj, live, o.force, found);
    }
  }

  /**
   * Deletes an object the API server will not change in place, and waits until it is gone (its
   * dependents first: a Deployment's ReplicaSets and Pods), so that it can be created anew.
   */
  private async deleteForReplacement(obj: KubeObject, log: Logger): Promise<void> {
    const ref = refOf(obj);
    log.warn({ object: describeRef(ref) }, 'the API server refuses this change in place: replacing the object (force)');
    await this.client.delete(ref, { propagationPolicy: 'Foreground' });
    const gone = await pollUntil(() => this.findQuiet(ref), (live) => live === undefined, { timeoutMs: this.replaceTimeoutMs, intervalMs: this.waitIntervalMs });
    if (!gone.done) {
      const finalizers = gone.value?.metadata.finalizers ?? [];
      throw new BinnacleError(
        'transient',
        'REPLACE_TIMEOUT',
        `${describeRef(ref)}: deleted to be replaced, but still there after ${formatDuration(this.replaceTimeoutMs)}${finalizers.length > 0 ? ` (held by finalizers ${finalizers.join(', ')})` : ''}`,
      );
    }
  }

  private async waitEstablished(crds: readonly KubeObject[]): Promise<void> {
    // Names the server refused are a verdict on the release; a CRD it has not got to yet is retried with backoff.
    await waitCrdsEstablished(this.client, crds.map((c) => c.metadata.name ?? ''), { timeoutMs: this.crdTimeoutMs, intervalMs: this.waitIntervalMs });
    // New kinds are served now: forget cached discovery so they map to resources, and the
    // schemas' index so their (new) schemas are read.
    this.client.invalidateDiscovery();
    this.schemas?.invalidate?.();
  }

  /** Objects named by the latest revision and the last deployed one (a failed run may have applied some). */
  private previousObjects(history: readonly ReleaseRevision[]): KubeObject[] {
    const revs = new Set<ReleaseRevision>();
    const latest = history.at(-1);
    if (latest !== undefined) revs.add(latest);
    const deployed = lastWith(history, ['deployed']);
    if (deployed !== undefined) revs.add(deployed);
    return [...revs].flatMap((r) => parseManifest(r.manifest, `release ${r.namespace}/${r.name} revision ${r.revision}`));
  }

  /** Refuses (ApplyRefusedError) to apply a recorded revision holding what the release may not (ApplyRequest.confine). */
  private async assertConfined(objects: readonly KubeObject[], confine: ConfineCheck | undefined, release: ReleaseRef, what: string): Promise<void> {
    if (confine === undefined) return;
    const problems = await confine(objects);
    if (problems.length === 0) return;
    const result = new ValidationResult(`release ${release.namespace}/${release.name}`);
    for (const p of problems) result.error('apply.out-of-scope', `${what} as recorded: ${p}`, { field: 'release record' });
    throw new ApplyRefusedError(result);
  }

  /** GET that also answers undefined when the kind itself is not served (its CRD is gone). */
  private async findQuiet(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return await this.client.find(ref);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

/** Namespaced objects in the release namespace get the request's owner reference (a Helm operator's CR owns them). */
function withOwnerReference(objects: KubeObject[], req: ApplyRequest): KubeObject[] {
  const ref = req.ownerReference;
  if (ref === undefined || ref.uid === '') return objects;
  const owned = { ...ref, controller: true, blockOwnerDeletion: true };
  return objects.map((o) =>
    o.metadata.namespace !== req.release.namespace || o.kind === 'CustomResourceDefinition'
      ? o
      : { ...o, metadata: { ...o.metadata, ownerReferences: [...(o.metadata.ownerReferences ?? []).filter((r) => r.uid !== ref.uid), owned] } },
  );
}


function isSameRevision(rev: ReleaseRevision, objects: readonly KubeObject[], chart: ChartInfo, config: Record<string, unknown>): boolean {
  return rev.manifest === toManifest(applyOrder(objects)) && canonicalJson(rev.chart) === canonicalJson(chart) && canonicalJson(rev.config) === canonicalJson(config);
}

function pick(o: RolloutOutcome): Omit<ApplyResult, 'revision' | 'status'> {
  return { applied: o.applied, pruned: o.pruned, health: o.health, message: o.message };
}

function lastWith(history: readonly ReleaseRevision[], statuses: readonly ReleaseStatus[]): ReleaseRevision | undefined {
  return [...history].reverse().find((r) => statuses.includes(r.status));
}

function dedupe(objects: readonly KubeObject[]): KubeObject[] {
  const seen = new Map<string, KubeObject>();
  for (const o of objects) if (!seen.has(identityOf(o))) seen.set(identityOf(o), o);
  return [...seen.values()];
}

/** A release recorded under another owner is not ours to change. */
function assertReleaseOwner(history: readonly ReleaseRevision[], owner: Owner, release: ReleaseRef): void {
  // The latest revision that names an owner: a `helm rollback` by hand may have written one without.
  const recorded = [...history].reverse().find((r) => r.owner !== undefined)?.owner;
  // A record without an owner namespace predates it; records live in the release namespace.
  const sameNamespace = recorded?.namespace === undefined || recorded.namespace === owner.namespace;
  if (history.length > 0 && (recorded === undefined || recorded.kind !== owner.kind || recorded.name !== owner.name || !sameNamespace)) {
    throw new BinnacleError(
      'terminal',
      'RELEASE_NOT_OWNED',
      `release ${release.namespace}/${release.name} belongs to ${recorded === undefined ? 'a Helm user (no Binnacle owner recorded)' : ownerName(recorded)}, not ${ownerName(owner)}`,
    );
  }
}

interface Preflight {
  /** Live objects we own or adopt: applied with force (their fields other managers set are taken over). */
  takeOver: Set<string>;
  /** With force: live objects whose change the API server refuses as immutable, to delete and create. */
  replace: Set<string>;
  /** Objects as the deployed revision applied them (`same`), live still matching and applied by Binnacle: left alone. */
  unchanged: Set<string>;
  /** What each object's read found (undefined: it does not exist), by identity. */
  live: LiveObjects;
}

/** Objects as one read found them, by identity; `object` undefined when there was none. */
type LiveObjects = Map<string, { object: KubeObject | undefined }>;

/** How a preflight runs: for whom, and whether it may adopt others' objects and replace immutable ones. */
interface PreflightOptions {
  owner: Owner;
  release: ReleaseRef;
  adopt: boolean;
  force: boolean;
  /** The object is as the deployed revision applied it (sameAsDeployed). */
  same?: boolean;
  /** Where the object is looked up before it is read (ApplyRequest.watched). */
  watched?: (ref: ObjectRef) => KubeObject | undefined;
}

/** Some Apply of Binnacle's own field manager holds fields of `live`: what it applied is its own, not adopted. */
function appliedByBinnacle(live: KubeObject): boolean {
  const entries = (live.metadata as { managedFields?: { manager?: string; operation?: string }[] }).managedFields ?? [];
  return entries.some((e) => e.manager === FIELD_MANAGER && e.operation === 'Apply');
}

/** What a preflight finds, object by object: the problems, and the objects that are going away. */
interface PreflightFindings extends Preflight {
  result: ValidationResult;
  terminating: string[];
  /** Whether each object is also put to a server dry run. */
  dryRun: boolean;
}

/** Runs of consecutive objects of one kind (applyOrder sorts them by kind), each applied side by side. */
function kindBatches(objects: readonly KubeObject[]): KubeObject[][] {
  const batches: KubeObject[][] = [];
  for (const o of objects) {
    const last = batches.at(-1);
    if (last?.[0]?.kind === o.kind && last[0].apiVersion === o.apiVersion && last.length < PREFLIGHT_CONCURRENCY) last.push(o);
    else batches.push([o]);
  }
  return batches;
}

/** How many objects of a release are checked at once. */
const PREFLIGHT_CONCURRENCY = 8;

/** One object's findings added to the whole's. */
function mergeFindings(into: PreflightFindings, from: PreflightFindings): void {
  into.result.problems.push(...from.result.problems);
  into.result.children.push(...from.result.children);
  for (const id of from.takeOver) into.takeOver.add(id);
  for (const id of from.replace) into.replace.add(id);
  for (const id of from.unchanged) into.unchanged.add(id);
  into.terminating.push(...from.terminating);
  for (const [id, live] of from.live) into.live.set(id, live);
}

/**
 * An object that exists already: refused unless ours or adopted, else taken over (applied with
 * force), a CRD only with a safe change. Answers whether to go on to the dry run.
 */
function claimLive(obj: KubeObject, live: KubeObject, o: PreflightOptions, found: PreflightFindings): boolean {
  const { owner, release } = o;
  const what = describeRef(refOf(obj));
  if (!isOwnedBy(live, owner, release) && !o.adopt) {
    found.result.error('apply.not-owned', `${what} already exists and belongs to ${describeOwner(live)}, not ${ownerName(owner)} (release ${release.namespace}/${release.name}); refusing to take it over (adopt to override)`, { field: what });
    return false;
  }
  found.takeOver.add(identityOf(obj));
  if (obj.kind === 'CustomResourceDefinition') {
    const safety = checkCrdUpgrade(live, obj);
    if (!safety.ok) found.result.children.push(safety);
  }
  return true;
}

/** The server dry run refused `obj`: a problem, unless the refusal is no verdict (retried, or checked at apply) or force replaces it. */
function noteDryRunRefusal(err: unknown, obj: KubeObject, live: KubeObject | undefined, force: boolean, found: PreflightFindings): void {
  // NotFound: its namespace or CRD comes earlier in this same release; checked when applied.
  // A transient failure (5xx, unreachable) is no verdict on the object: retried, not refused.
  if (isTransient(err)) throw err;
  if (isNotFound(err)) return;
  const what = describeRef(refOf(obj));
  const immutable = live !== undefined && isImmutableRefusal(err);
  if (immutable && force && replaceable(obj)) {
    found.replace.add(identityOf(obj));
    return;
  }
  const hint = !immutable ? '' : replaceable(obj) ? ' (an upgrade with force deletes and re-creates it: helm --force, the upgrade-force annotation)' : ` (a ${obj.kind} is never replaced: deleting it would delete its data)`;
  found.result.error('apply.rejected', `${what}: the API server rejects it: ${errorMessage(err)}${hint}`, { field: what });
}

/** Kinds whose deletion deletes data (custom resources, a namespace's contents, volumes): never replaced. */
const NEVER_REPLACED = new Set(['CustomResourceDefinition', 'Namespace', 'PersistentVolume', 'PersistentVolumeClaim']);

function replaceable(obj: KubeObject): boolean {
  return !NEVER_REPLACED.has(obj.kind);
}

/**
 * The API server's answer to changing what cannot change: 422 Invalid with one of its
 * validators' phrasings ("field is immutable", a Service's "may not change once set", a
 * StatefulSet's "updates to statefulset spec for fields other than … are forbidden").
 */
function isImmutableRefusal(err: unknown): boolean {
  return isInvalid(err) && /immutable|may not change once set|updates to \S+ spec for fields other than/i.test(errorMessage(err));
}
