/**
 * A rollout: one new revision of a release carried out. The pending revision is recorded,
 * the pre-hooks run, objects are applied phase by phase (namespaces, RBAC, CRDs and their
 * establishment, config, workloads, services, webhooks), what the previous revisions had and
 * this one has not is pruned (only what still carries this owner's marks), health is awaited,
 * the post-hooks run, and the revision is recorded deployed, the one before superseded and the
 * history trimmed. Install, upgrade and rollback are rollouts (install.ts, rollback.ts).
 */
import type { Logger } from 'pino';
import type { DriftSpec } from '../api/types.js';
import { FIELD_MANAGER } from '../kube/client.js';
import { waitCrdsEstablished } from '../kube/crd-established.js';
import { isAlreadyExists, isTransient } from '../kube/errors.js';
import { sleepWithoutWorker } from '../kube/reconcile-context.js';
import { describeRef, refOf, type KubeObject, type ObjectRef } from '../kube/types.js';
import { formatDuration, pollUntil } from '../util/deadline.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { findQuiet, waitIntervalMs, type ActionConfig } from './action-config.js';
import { appliesField, DRIFT_HANDOVER_MANAGER, handoverObject, ignoredUnchanged, withoutPointers } from './drift-policy.js';
import { unhealthySummary, waitForHealthy } from './health.js';
import { handOverHelmFields } from './helm-fields.js';
import { runHooks, type HookEvent } from './hooks.js';
import { isOwnedBy, keptByResourcePolicy } from './ownership.js';
import { applyOrder, deleteOrder, groupByPhase, identityOf, type PhaseGroup } from './phases.js';
import { PREFLIGHT_CONCURRENCY, type Preflight } from './preflight.js';
import { releaseSwitchHold, switchUnion, type UnionSwitchPatch } from './union-switch.js';
import { dedupe, withNamespaces } from './prepare.js';
import { helmTime, parseManifestAsync, toManifest } from './release.js';
import type { ChartInfo, ConfineCheck, HealthReport, ObjectRef as Ref, Owner, ReleaseContent, ReleaseRef, ReleaseRevision, ReleaseStatus, WaitStrategy } from './types.js';

/** One revision to roll out: what it holds, what it came from, and how. */
export interface Rollout extends Omit<Preflight, 'live'> {
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
  /** The release's revisions before this one, as read at the start of the run: what to supersede and trim. */
  history: readonly ReleaseRevision[];
  waitForHealth: boolean;
  /** Which rules judge health (health.ts); `hookOnly` waits for nothing but the hooks. */
  waitStrategy?: WaitStrategy | undefined;
  healthTimeoutMs: number;
  /** A chart release's content: its manifest is what is recorded, its hooks run around the apply. */
  content?: ReleaseContent | undefined;
  inputDigest?: string | undefined;
  /** The owner's generation the revision is made at (recorded). */
  ownerGeneration?: number | undefined;
  /** The owner's own values (recorded; ApplyRequest.ownerValues). */
  ownerValues?: Record<string, unknown> | undefined;
  /** The hook events of this operation (pre-/post-install, -upgrade or -rollback); none when hooks are off. */
  hookEvents?: { pre: HookEvent; post: HookEvent } | undefined;
  drift?: DriftSpec | undefined;
  /** What hooks may hold (the release's scope). */
  confine?: ConfineCheck | undefined;
  /** The deployed revision's objects: an ignored field this revision does not change is left out of what is applied. */
  baseline: Map<string, KubeObject>;
  /** Objects the revision records but does not apply now (of optional APIs not yet served): a repair applies them once served. */
  deferred?: readonly KubeObject[];
}

export interface RolloutOutcome {
  ok: boolean;
  applied: Ref[];
  pruned: Ref[];
  health: HealthReport;
  message: string;
}

export const EMPTY_HEALTH: HealthReport = { healthy: false, objects: [] };

/** The newest revision with one of `statuses`. */
export function lastWith(history: readonly ReleaseRevision[], statuses: readonly ReleaseStatus[]): ReleaseRevision | undefined {
  return [...history].reverse().find((r) => statuses.includes(r.status));
}

/**
 * Objects any revision since the last deployed one may have left live: that revision's and
 * every later one's (each failed or interrupted run may have applied part of its manifest;
 * Helm reads only the latest, and orphans what an earlier failed run applied). With no
 * deployed revision, every revision's. History is trimmed only once a revision deploys, after
 * its prune, so no revision that counts here has been trimmed.
 */
export async function previousObjects(history: readonly ReleaseRevision[]): Promise<KubeObject[]> {
  const deployed = lastWith(history, ['deployed']);
  const since = deployed === undefined ? history : history.filter((r) => r.revision >= deployed.revision);
  const out: KubeObject[] = [];
  for (const r of since) out.push(...(await parseManifestAsync(r.manifest, `release ${r.namespace}/${r.name} revision ${r.revision}`)));
  return out;
}

/** The deployed revision's objects by identity, namespaces filled in. */
export async function baselineOf(cfg: ActionConfig, deployed: ReleaseRevision | undefined, release: ReleaseRef): Promise<Map<string, KubeObject>> {
  if (deployed === undefined) return new Map();
  const objects = await withNamespaces(cfg.client, await parseManifestAsync(deployed.manifest, `release ${release.namespace}/${release.name} revision ${deployed.revision}`), release.namespace);
  return new Map(objects.map((o) => [identityOf(o), o]));
}

/** Carries out one rollout (see the top of this file). */
export async function rollout(cfg: ActionConfig, r: Rollout, log: Logger): Promise<RolloutOutcome> {
  const applied: ObjectRef[] = [];
  const pruned: ObjectRef[] = [];
  const previous = await withNamespaces(cfg.client, r.previous, r.release.namespace);
  let hooks = r.content?.hooks ?? [];
  const hookOpts = { client: cfg.client, owner: r.owner, release: r.release, logger: log, timeoutMs: r.healthTimeoutMs, pollIntervalMs: Math.min(cfg.pollIntervalMs, 500), confine: r.confine };
  let record: ReleaseRevision | undefined;
  /** The record as it now stands, with the hooks' last runs. */
  const current = (rec: ReleaseRevision): ReleaseRevision => (rec.content === undefined ? rec : { ...rec, content: { ...rec.content, hooks } });
  const fail = async (message: string, health: HealthReport = EMPTY_HEALTH): Promise<RolloutOutcome> => {
    log.error({ reason: message }, 'revision failed');
    if (record !== undefined) await cfg.history.setStatus(current(record), 'failed', message);
    return { ok: false, applied, pruned, health, message };
  };
  let begun = false;
  /** Records the pending revision (unless it was already) and runs the pre-event hooks, saying why they failed. */
  const begin = async (): Promise<string | undefined> => {
    begun = true;
    record ??= await writePending(cfg, r);
    if (r.hookEvents === undefined) return undefined;
    const pre = await runHooks(hooks, r.hookEvents.pre, hookOpts);
    hooks = pre.hooks;
    return pre.ok ? undefined : pre.message;
  };
  try {
    if (cfg.history.recordsOutsideRelease === true) record = await writePending(cfg, r);
    for (const group of groupByPhase(r.objects)) {
      // Helm's records live in the release namespace, which the first phase may create; the
      // pre-event hooks run once the namespaces exist.
      if (group.phase !== 'namespaces' && !begun) {
        const hookFailure = await begin();
        if (hookFailure !== undefined) return await fail(hookFailure);
      }
      await applyGroup(cfg, group, r, applied, log);
    }
    if (!begun) {
      const hookFailure = await begin();
      if (hookFailure !== undefined) return await fail(hookFailure);
    }
  } catch (err) {
    return fail(applyFailure(err, r, record !== undefined));
  }

  try {
    await prune(cfg, r, previous, pruned, log);
  } catch (err) {
    if (isTransient(err)) throw err;
    return fail(`prune failed: ${errorMessage(err)}`);
  }

  let health: HealthReport = { healthy: true, objects: applied.map((ref) => ({ ref, healthy: true, reason: 'applied' })) };
  if (r.waitForHealth && r.waitStrategy !== 'hookOnly') {
    health = await waitForHealthy(cfg.client, r.objects, { timeoutMs: r.healthTimeoutMs, intervalMs: cfg.pollIntervalMs, logger: log, ...(r.waitStrategy === undefined ? {} : { strategy: r.waitStrategy }) });
    if (!health.healthy) return fail(`not healthy after ${r.healthTimeoutMs} ms: ${unhealthySummary(health)}`, health);
  }
  if (r.hookEvents !== undefined) {
    const post = await runHooks(hooks, r.hookEvents.post, hookOpts);
    hooks = post.hooks;
    if (!post.ok) return fail(post.message, health);
  }
  if (record === undefined) return fail('no revision was recorded');
  await trimHistory(cfg, await markDeployed(cfg, r, current(record)));
  log.info({ applied: applied.length, pruned: pruned.length }, r.description);
  return { ok: true, applied, pruned, health, message: r.description };
}

/**
 * Why applying failed the revision, or the error rethrown when it says nothing of the revision:
 * another run recorded it first, or the API server is restarting (5xx, unreachable, timed out;
 * the caller retries with backoff, and the next run settles the pending revision). Only a
 * verdict on the objects fails the revision (and removes a first install, rolls back).
 */
function applyFailure(err: unknown, r: Rollout, recorded: boolean): string {
  if (isAlreadyExists(err) && !recorded) {
    throw new BinnacleError('transient', 'RELEASE_CONFLICT', `release ${r.release.namespace}/${r.release.name}: revision ${r.version} was recorded by another run at the same time; retry`, { cause: err });
  }
  if (isTransient(err)) throw err;
  return `apply failed: ${errorMessage(err)}`;
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

/**
 * Makes the strategy switch preflight decided on (union-switch.ts; of what is applied, drift rules
 * kept) so that the apply of `intent` after it is accepted; a cut-short switch's hold (`held`) is
 * handed over either way.
 */
export async function switchBeforeApply(cfg: ActionConfig, intent: KubeObject, patch: UnionSwitchPatch | undefined, held: boolean, log: Logger): Promise<void> {
  if (patch === undefined) {
    if (held) await releaseSwitchHold(cfg.client, refOf(intent));
    return;
  }
  await switchUnion(cfg.client, intent, patch);
  log.info({ object: describeRef(refOf(intent)), patch }, 'update strategy switched before the apply (the member the API server filled in dropped)');
}

/** Applies one phase's objects in order (replacing those that must be, forcing those taken over); CRDs then wait to be Established. */
async function applyGroup(cfg: ActionConfig, group: PhaseGroup, r: Rollout, applied: ObjectRef[], log: Logger): Promise<void> {
  // Kind by kind in order; the objects of one kind side by side, as Helm's client creates and
  // updates them (kube.Client batchPerform). `applied` says what was applied, in order.
  for (const batch of kindBatches(group.objects)) {
    const results = await Promise.allSettled(
      batch.map(async (obj) => {
        if (r.unchanged.has(identityOf(obj))) return;
        if (r.replace.has(identityOf(obj))) await deleteForReplacement(cfg, obj, log);
        else if (r.helmHeld.has(identityOf(obj)) && (await handOverHelmFields(cfg.client, obj))) log.info({ object: describeRef(refOf(obj)) }, "the helm CLI's fields handed to Binnacle's field manager");
        const intent = await intentOf(cfg, obj, r.drift, r.baseline);
        if (!r.replace.has(identityOf(obj))) await switchBeforeApply(cfg, intent, r.switchFirst.get(identityOf(obj)), r.switchHeld.has(identityOf(obj)), log);
        await cfg.client.apply(intent, { force: r.takeOver.has(identityOf(obj)) });
      }),
    );
    results.forEach((res, i) => {
      const obj = batch[i];
      if (res.status === 'fulfilled' && obj !== undefined) applied.push(refOf(obj));
    });
    const failed = results.find((res): res is PromiseRejectedResult => res.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }
  if (group.phase === 'crds') await waitEstablished(cfg, group.objects);
}

async function waitEstablished(cfg: ActionConfig, crds: readonly KubeObject[]): Promise<void> {
  // Names the server refused are a verdict on the release; a CRD it has not got to yet is retried with backoff.
  await waitCrdsEstablished(cfg.client, crds.map((c) => c.metadata.name ?? ''), { timeoutMs: cfg.crdTimeoutMs, intervalMs: waitIntervalMs(cfg) });
  // New kinds are served now: forget cached discovery so they map to resources, and the
  // schemas' index so their (new) schemas are read.
  cfg.client.invalidateDiscovery();
  cfg.schemas?.invalidate?.();
}

/**
 * Deletes the previous objects this revision no longer has, adding each deleted one to
 * `pruned` as it goes. Only what still carries this owner's marks (someone may have taken it
 * over since), never what Helm's resource policy keeps, and never the release's own Namespace:
 * that holds the release's Helm records and, as in a tenant's namespace, everything else there.
 */
async function prune(cfg: ActionConfig, r: Rollout, previous: readonly KubeObject[], pruned: ObjectRef[], log: Logger): Promise<void> {
  const keep = new Set(r.objects.map(identityOf));
  for (const old of deleteOrder(dedupe(previous).filter((o) => !keep.has(identityOf(o))))) {
    const ref = refOf(old);
    if (old.kind === 'Namespace' && old.apiVersion === 'v1' && old.metadata.name === r.release.namespace) {
      log.warn({ object: describeRef(ref) }, "kept: the release's own namespace is removed only by uninstalling the release");
      continue;
    }
    const live = await findQuiet(cfg.client, ref);
    if (live === undefined || !isOwnedBy(live, r.owner, r.release)) continue;
    if (keptByResourcePolicy(old, live)) {
      log.info({ object: describeRef(ref) }, 'kept by helm.sh/resource-policy');
      continue;
    }
    if (await cfg.client.delete(ref, { propagationPolicy: 'Background' })) pruned.push(ref);
    log.info({ object: describeRef(ref) }, 'pruned');
  }
}

/**
 * Deletes an object the API server will not change in place, and waits until it is gone (its
 * dependents first: a Deployment's ReplicaSets and Pods), so that it can be created anew.
 */
async function deleteForReplacement(cfg: ActionConfig, obj: KubeObject, log: Logger): Promise<void> {
  const ref = refOf(obj);
  log.warn({ object: describeRef(ref) }, 'the API server refuses this change in place: replacing the object (force)');
  await cfg.client.delete(ref, { propagationPolicy: 'Foreground' });
  const gone = await pollUntil(() => findQuiet(cfg.client, ref), (live) => live === undefined, { timeoutMs: cfg.replaceTimeoutMs, intervalMs: waitIntervalMs(cfg), sleep: sleepWithoutWorker });
  if (!gone.done) {
    const finalizers = gone.value?.metadata.finalizers ?? [];
    throw new BinnacleError(
      'transient',
      'REPLACE_TIMEOUT',
      `${describeRef(ref)}: deleted to be replaced, but still there after ${formatDuration(cfg.replaceTimeoutMs)}${finalizers.length > 0 ? ` (held by finalizers ${finalizers.join(', ')})` : ''}`,
    );
  }
}

/**
 * What to apply of `obj`: without the ignored fields that this revision does not change from
 * `baseline` (the deployed revision's objects; undefined for a repair, which changes nothing),
 * so that server-side apply does not take them back from whoever set them. A field our field
 * manager still holds is first handed to DRIFT_HANDOVER_MANAGER at its live value: letting go
 * of a field no one else holds would delete it. An object to create is applied whole.
 */
export async function intentOf(cfg: ActionConfig, obj: KubeObject, drift: DriftSpec | undefined, baseline: Map<string, KubeObject> | undefined): Promise<KubeObject> {
  const unchanged = ignoredUnchanged(obj, drift, baseline);
  if (unchanged.length === 0) return obj;
  const live = await findQuiet(cfg.client, refOf(obj));
  if (live === undefined) return obj;
  for (const p of unchanged) {
    const handover = appliesField(live, FIELD_MANAGER, p) ? handoverObject(live, p) : undefined;
    if (handover !== undefined) await cfg.client.apply(handover, { fieldManager: DRIFT_HANDOVER_MANAGER, force: true });
  }
  return withoutPointers(obj, unchanged);
}

/** Success: `record` (this revision) is deployed, every earlier deployed one superseded. */
async function markDeployed(cfg: ActionConfig, r: Rollout, record: ReleaseRevision): Promise<ReleaseRevision[]> {
  const after: ReleaseRevision[] = [];
  for (const old of r.history) {
    if (old.revision === r.version) continue;
    after.push(old.status === 'deployed' ? await cfg.history.setStatus(old, 'superseded') : old);
  }
  after.push(await cfg.history.setStatus(record, 'deployed', r.description));
  return after;
}

/**
 * Drops the oldest revisions beyond maxHistory, as helm's --history-max does; `history` is the
 * release's revisions now, its newest deployed (no revision after the deployed one is dropped:
 * previousObjects needs them).
 */
export async function trimHistory(cfg: ActionConfig, history: readonly ReleaseRevision[]): Promise<void> {
  if (cfg.maxHistory <= 0) return;
  const excess = history.length - cfg.maxHistory;
  if (excess <= 0) return;
  await cfg.history.remove(history.filter((r) => r.status !== 'deployed').slice(0, excess));
}

async function writePending(cfg: ActionConfig, r: Rollout): Promise<ReleaseRevision> {
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
    manifest: r.content?.manifest ?? toManifest(applyOrder([...r.objects, ...(r.deferred ?? [])])),
    owner: r.owner,
    ...(r.inputDigest === undefined ? {} : { inputDigest: r.inputDigest }),
    ...(r.ownerGeneration === undefined ? {} : { ownerGeneration: r.ownerGeneration }),
    ...(r.ownerValues === undefined ? {} : { ownerValues: r.ownerValues }),
    ...(r.content === undefined ? {} : { content: r.content }),
  };
  await cfg.history.create(rev);
  return rev;
}
