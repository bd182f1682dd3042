/**
 * Repair: the release is already at the revision these inputs make, so nothing is rendered and
 * no revision recorded; the deployed revision's recorded objects are compared with the live ones
 * and what differs is applied again (drift), by the drift rules (Warn only compares, Off neither
 * compares nor applies; ignored fields are left to others). Health is probed once, not waited
 * for, so a level-triggered caller looks again. What a record holds is checked against the
 * release's scope first: a record is never trusted to stay inside it.
 */
import { describeRef, refOf, type KubeObject, type ObjectRef } from '../kube/types.js';
import { errorMessage, ValidationResult } from '../util/errors.js';
import type { ActionConfig } from './action-config.js';
import { objectDrift } from './drift.js';
import { driftMode, ignoredPointers } from './drift-policy.js';
import { ApplyRefusedError } from './errors.js';
import { probeOnce, unhealthySummary } from './health.js';
import { makeLenient, type LenientObjects } from './leniency.js';
import { applyOrder, identityOf } from './phases.js';
import { handOverHelmFields } from './helm-fields.js';
import { preflight, type LiveObjects, type Preflight } from './preflight.js';
import { prepare, withOwnerReference } from './prepare.js';
import { parseManifestAsync } from './release.js';
import { EMPTY_HEALTH, intentOf, switchBeforeApply } from './rollout.js';
import type { ApplyResult, ConfineCheck, DriftReport, ObjectDrift, ReleaseRef, OperationRequest, ReleaseRevision } from './types.js';

/** Re-applies what `rev` recorded where the cluster drifted from it (see the top of this file). */
export async function repair(cfg: ActionConfig, req: OperationRequest, rev: ReleaseRevision): Promise<ApplyResult> {
  const stored = await recordedObjects(cfg, rev, req);
  await assertConfined(stored.objects, req.confine, req.release, `revision ${rev.revision}`);
  // No server dry run: a repair changes nothing the real apply would not refuse the same way,
  // and a refused repair fails nothing (the revision stays deployed). The objects read here
  // are the ones drift is judged against.
  const checked = await preflight(cfg, stored.objects, req.owner, req.release, { adopt: req.adopt, conflictPolicy: req.conflictPolicy, repair: true, watched: req.watched, crdUpgradeSafety: req.crdUpgradeSafety, intent: { drift: req.drift, baseline: undefined } });
  const repaired = await repairObjects(cfg, req, rev, stored.objects, checked);
  return { ...repaired, droppedFields: stored.dropped, skipped: stored.skipped };
}

/** What `rev` recorded, ready to apply again: its manifest's objects, made lenient and prepared. */
async function recordedObjects(cfg: ActionConfig, rev: ReleaseRevision, req: OperationRequest): Promise<LenientObjects> {
  const recorded = await parseManifestAsync(rev.manifest, `release ${rev.namespace}/${rev.name} revision ${rev.revision}`);
  const lenient = await makeLenient(recorded, { client: cfg.client, schemas: cfg.schemas });
  const prepared = withOwnerReference(await prepare(cfg.client, lenient.objects, req.owner, req.release), req);
  return { objects: prepared, skipped: lenient.skipped, dropped: lenient.dropped };
}

/** Refuses (ApplyRefusedError) to apply a recorded revision holding what the release may not (OperationRequest.confine). */
export async function assertConfined(objects: readonly KubeObject[], confine: ConfineCheck | undefined, release: ReleaseRef, what: string): Promise<void> {
  if (confine === undefined) return;
  const problems = await confine(objects);
  if (problems.length === 0) return;
  const result = new ValidationResult(`release ${release.namespace}/${release.name}`);
  for (const p of problems) result.error('apply.out-of-scope', `${what} as recorded: ${p}`, { field: 'release record' });
  throw new ApplyRefusedError(result);
}

async function repairObjects(cfg: ActionConfig, req: OperationRequest, current: ReleaseRevision, objects: KubeObject[], checked: Pick<Preflight, 'takeOver' | 'live' | 'helmHeld' | 'switchFirst' | 'switchHeld'>): Promise<ApplyResult> {
  const { takeOver, live, helmHeld, switchFirst, switchHeld } = checked;
  const applied: ObjectRef[] = [];
  const base = { revision: current.revision, pruned: [] };
  const mode = driftMode(req.drift);
  let drift: DriftReport | undefined;
  try {
    const drifted = mode === 'Off' ? [] : await driftOf(cfg, objects, req, live);
    if (mode !== 'Off') drift = { mode, drifted: drifted.map((d) => d.drift) };
    if (mode === 'Repair') {
      // Only what differs is applied (helm-operator patches only a non-empty diff): an object
      // that matches its manifest costs the one read it was compared with. One with ignored
      // fields is applied still, so that a field Binnacle holds is handed over (intentOf), and
      // one the helm CLI holds fields of (a `helm upgrade` by hand), whose fields are Binnacle's first.
      const differs = new Set(drifted.map((d) => identityOf(d.object)));
      for (const obj of applyOrder(objects)) {
        const id = identityOf(obj);
        if (helmHeld.has(id)) await handOverHelmFields(cfg.client, obj);
        if (differs.has(id) || helmHeld.has(id) || ignoredPointers(obj, req.drift).length > 0) {
          const intent = await intentOf(cfg, obj, req.drift, undefined);
          await switchBeforeApply(cfg, intent, switchFirst.get(id), switchHeld.has(id), cfg.logger);
          await cfg.client.apply(intent, { force: takeOver.has(id) });
        }
        applied.push(refOf(obj));
      }
    }
  } catch (err) {
    // Nothing new was deployed, so there is nothing to roll back; the revision stays deployed.
    return { ...base, status: 'failed', applied, health: EMPTY_HEALTH, message: `revision ${current.revision} unchanged; re-applying it failed: ${errorMessage(err)}`, ...(drift === undefined ? {} : { drift }) };
  }
  const health =
    req.waitForHealth === false || req.waitStrategy === 'hookOnly'
      ? { healthy: true, objects: objects.map((o) => ({ ref: refOf(o), healthy: true, reason: mode === 'Repair' ? 'applied' : 'not re-applied (drift mode)' })) }
      : await probeOnce(cfg.client, objects, objects, req.waitStrategy);
  const message = health.healthy ? `revision ${current.revision} unchanged and healthy` : `revision ${current.revision} unchanged; not yet healthy: ${unhealthySummary(health)}`;
  // Warn and Off apply nothing; the revision's objects are still what the release holds (callers list and watch them).
  const held = mode === 'Repair' ? applied : objects.map(refOf);
  if (drift !== undefined && drift.drifted.length > 0) cfg.logger.info({ release: `${req.release.namespace}/${req.release.name}`, drifted: drift.drifted.map((d) => describeRef(d)) }, mode === 'Repair' ? 'repaired drift' : 'drift found');
  return { ...base, status: 'deployed', applied: held, health, message, ...(drift === undefined ? {} : { drift }) };
}

/** How the live objects differ from `objects`, ignored fields left out; `live` holds objects already read (by the preflight). */
async function driftOf(cfg: ActionConfig, objects: readonly KubeObject[], req: OperationRequest, live: LiveObjects): Promise<{ object: KubeObject; drift: ObjectDrift }[]> {
  const found: { object: KubeObject; drift: ObjectDrift }[] = [];
  for (const o of objects) {
    const known = live.get(identityOf(o));
    const reader = known === undefined ? cfg.client : { find: () => Promise.resolve(known.object) };
    const d = await objectDrift(reader, o, ignoredPointers(o, req.drift));
    if (d !== undefined) found.push({ object: o, drift: d });
  }
  return found;
}
