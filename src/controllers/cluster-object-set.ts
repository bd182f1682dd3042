/**
 * OLM v1's ClusterObjectSet (`olm.operatorframework.io/v1`, operator-controller v1.11's
 * BoxcutterRuntime revision) applied as it says: its phases in order, each object server-side
 * applied with the revision as its controller, and the next phase only once every object of
 * this one passes the revision's progression probes. Objects may sit inline or in immutable
 * Secrets; what the phases resolved to is pinned by digest in status the first time, and a
 * revision whose referenced content later differs is Blocked rather than applied.
 *
 * Steps: HandleDeletion → Identity → VerifySecrets → Resolve → Archive → Finalizer → Apply, status
 * written once. Upstream's conditions, reasons and messages are kept (users and
 * upstream's own e2e scenarios match on them).
 *
 * Identity: the objects are applied as the OLM v1 installer the admin gave the manager
 * (`--olmv1-installer`), the identity operator-controller's own ServiceAccount is upstream: who
 * may create ClusterObjectSets may act as it (docs/trust-model.md). Without one, nothing is applied.
 *
 * Differences from upstream, said where they are: the objects are not watched; a revision still
 * rolling out is looked at again every few seconds (POLL_MS), a finished one at the resync.
 */
import { gunzipSync } from 'node:zlib';
import type { Logger } from 'pino';
import {
  BUNDLE_VERSION_ANNOTATION,
  effectiveCollisionProtection,
  OBJECT_SET_FIELD_MANAGER,
  OBJECT_SET_FINALIZER,
  OBJECT_SET_KIND,
  OWNER_NAME_LABEL,
  observedPhasesChanged,
  phaseDigest,
  probeObject,
  type ClusterObjectSet,
  type CollisionProtection,
  type ObjectSourceRef,
  type ObservedPhase,
} from '../api/olmv1/object-set.js';
import type { InstallerIdentity } from '../api/olmv1/convert.js';
import { OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { impersonationFor } from '../apply/preflight-permissions.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { ControllerClient, IdentityClient } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { applyStatus, CONTINUE, Conditions, ensureFinalizer, isDeleting, methodSteps, reconcileSteps, removeFinalizer, sameStatus, stop, type StepOutcome } from './common.js';

/** How often a revision still rolling out (or archiving) is looked at again: its objects are not watched. */
export const POLL_MS = 5_000;
/** What a gzipped object in a Secret may inflate to (operator-controller's bound). */
export const MAX_REF_BYTES = 10 * 1024 * 1024;

export type ObjectSetClient = Pick<ControllerClient, 'get' | 'find' | 'list' | 'patch' | 'applyStatus' | 'impersonate'>;

export interface ClusterObjectSetOptions {
  client: ObjectSetClient;
  /** Who applies the objects (`--olmv1-installer`); none: every revision is Blocked saying so. */
  installer?: InstallerIdentity | undefined;
  clock?: () => Date;
}

interface ResolvedObject {
  object: KubeObject;
  collisionProtection: CollisionProtection;
}

interface State {
  cos: ClusterObjectSet;
  conditions: Conditions;
  observedPhases: ObservedPhase[] | undefined;
  logger: Logger;
  writeStatus: boolean;
  phases: { name: string; objects: ResolvedObject[] }[];
  installer?: IdentityClient;
  /** Minutes left before the progress deadline, when there is one and the revision has not succeeded. */
  deadline: { exceeded: boolean; remainingMs: number } | undefined;
}

class Retry extends Error {}

export class ClusterObjectSetReconciler implements Reconciler {
  private readonly clock: () => Date;
  constructor(private readonly o: ClusterObjectSetOptions) {
    this.clock = o.clock ?? (() => new Date());
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let cos: ClusterObjectSet;
    try {
      cos = await this.o.client.get<ClusterObjectSet>({ apiVersion: OLMV1_API_VERSION, kind: OBJECT_SET_KIND, name: req.name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const state: State = {
      cos,
      conditions: new Conditions(cos.status?.conditions, cos.metadata.generation),
      observedPhases: cos.status?.observedPhases,
      logger: ctx.logger,
      writeStatus: true,
      phases: [],
      deadline: this.deadline(cos),
    };
    const steps = methodSteps<State, ClusterObjectSetReconciler>(this, ['handleDeletion', 'identity', 'verifySecrets', 'resolve', 'archive', 'finalizer', 'apply']);
    return reconcileSteps(steps, state, ctx.logger, {
      write: (s) => this.writeStatus(s),
      onError: (s, err) => this.retrying(s, err instanceof Error ? err.message : String(err)),
    });
  }

  private async writeStatus(s: State): Promise<void> {
    const status = { conditions: s.conditions.toArray(), ...(s.observedPhases === undefined ? {} : { observedPhases: s.observedPhases }) };
    const before = { conditions: s.cos.status?.conditions ?? [], ...(s.cos.status?.observedPhases === undefined ? {} : { observedPhases: s.cos.status.observedPhases }) };
    if (sameStatus(status, before)) return;
    await applyStatus(this.o.client, s.cos, status);
  }

  private deadline(cos: ClusterObjectSet): State['deadline'] {
    const minutes = cos.spec.progressDeadlineMinutes ?? 0;
    if (minutes <= 0 || cos.spec.lifecycleState === 'Archived' || isDeleting(cos)) return undefined;
    if (cos.status?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True') === true) return undefined;
    const created = Date.parse(cos.metadata.creationTimestamp ?? '');
    if (Number.isNaN(created)) return undefined;
    const remainingMs = created + minutes * 60_000 - this.clock().getTime();
    return { exceeded: remainingMs <= 0, remainingMs };
  }

  /** Progressing as upstream's markAsProgressing: a reason that is not Succeeded turns into ProgressDeadlineExceeded once the deadline has passed. */
  private progressing(s: State, reason: string, message: string): void {
    if (reason !== 'Succeeded' && s.deadline?.exceeded === true) {
      s.conditions.set('Progressing', false, 'ProgressDeadlineExceeded', `Revision has not rolled out for ${s.cos.spec.progressDeadlineMinutes ?? 0} minute(s). Last status: ${message}`);
      return;
    }
    s.conditions.set('Progressing', true, reason, message);
  }

  private retrying(s: State, message: string, deadline = true): void {
    if (!deadline) s.deadline = undefined;
    this.progressing(s, 'Retrying', message);
    if (s.conditions.get('Available') !== undefined) s.conditions.set('Available', 'Unknown', 'Reconciling', message);
  }

  private blocked(s: State, message: string): StepOutcome {
    s.conditions.set('Progressing', false, 'Blocked', message);
    return stop();
  }

  /** A deleted revision: its objects go with it (each names it as owner); only the finalizer is ours to drop. */
  async handleDeletion(s: State): Promise<StepOutcome> {
    if (!isDeleting(s.cos)) return CONTINUE;
    s.writeStatus = false;
    await removeFinalizer(this.o.client, s.cos, OBJECT_SET_FINALIZER);
    return stop();
  }

  /** Every Secret a phase draws objects from must be immutable, or the revision could change under its digest. */
  async verifySecrets(s: State): Promise<StepOutcome> {
    const refs = new Map<string, ObjectSourceRef>();
    for (const p of s.cos.spec.phases ?? []) for (const o of p.objects) if (o.ref !== undefined && o.ref.name !== '') refs.set(`${o.ref.namespace ?? ''}/${o.ref.name}`, o.ref);
    const mutable: string[] = [];
    for (const [key, ref] of refs) {
      const secret = await (s.installer as IdentityClient).find({ apiVersion: 'v1', kind: 'Secret', namespace: ref.namespace ?? '', name: ref.name });
      if (secret !== undefined && (secret as { immutable?: boolean }).immutable !== true) mutable.push(key);
    }
    if (mutable.length > 0) return this.blocked(s, `the following secrets are not immutable (referenced secrets must have immutable set to true): ${mutable.join(', ')}`);
    return CONTINUE;
  }

  /** The phases' objects, inline or read from their Secrets, and their digests pinned the first time. */
  async resolve(s: State): Promise<StepOutcome> {
    const observed: ObservedPhase[] = [];
    for (const phase of s.cos.spec.phases ?? []) {
      const objects: ResolvedObject[] = [];
      for (const o of phase.objects) {
        let object: KubeObject;
        if (o.object !== undefined) object = structuredClone(o.object);
        else if (o.ref !== undefined && o.ref.name !== '') object = await this.objectFromSecret(s.installer as IdentityClient, o.ref, phase.name);
        else throw new Retry(`object in phase ${JSON.stringify(phase.name)} has neither object nor ref`);
        objects.push({ object, collisionProtection: effectiveCollisionProtection(s.cos.spec.collisionProtection, phase.collisionProtection, o.collisionProtection) });
      }
      observed.push({ name: phase.name, digest: phaseDigest(phase.name, objects.map((r) => r.object)) });
      s.phases.push({ name: phase.name, objects });
    }
    if (s.observedPhases === undefined || s.observedPhases.length === 0) {
      s.observedPhases = observed;
      return CONTINUE;
    }
    const changed = observedPhasesChanged(s.observedPhases, observed);
    return changed === undefined ? CONTINUE : this.blocked(s, changed);
  }

  /** Read as the installer: a revision reaches only the Secrets its installer may read. */
  private async objectFromSecret(ic: IdentityClient, ref: ObjectSourceRef, phase: string): Promise<KubeObject> {
    const where = `Secret ${ref.namespace ?? ''}/${ref.name}`;
    const secret = await ic.find<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'Secret', namespace: ref.namespace ?? '', name: ref.name });
    if (secret === undefined) throw new Retry(`resolving ref in phase ${JSON.stringify(phase)}: getting ${where}: not found`);
    const encoded = secret.data?.[ref.key];
    if (encoded === undefined) throw new Retry(`resolving ref in phase ${JSON.stringify(phase)}: key ${JSON.stringify(ref.key)} not found in ${where}`);
    let bytes = Buffer.from(encoded, 'base64');
    if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
      try {
        bytes = gunzipSync(bytes, { maxOutputLength: MAX_REF_BYTES });
      } catch (err) {
        const over = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
        throw new Retry(`resolving ref in phase ${JSON.stringify(phase)}: ${over ? `decompressed data for key ${JSON.stringify(ref.key)} in ${where} exceeds maximum size (${MAX_REF_BYTES} bytes)` : `decompressing key ${JSON.stringify(ref.key)} in ${where}: ${(err as Error).message}`}`);
      }
    }
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      // Not the parser's message: it quotes the text, and a Secret's content must not reach a status.
      throw new Retry(`resolving ref in phase ${JSON.stringify(phase)}: unmarshaling object from key ${JSON.stringify(ref.key)} in ${where}: not valid JSON`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as KubeObject).kind !== 'string' || typeof (value as KubeObject).apiVersion !== 'string') {
      throw new Retry(`resolving ref in phase ${JSON.stringify(phase)}: key ${JSON.stringify(ref.key)} in ${where} is not a Kubernetes object (apiVersion and kind)`);
    }
    return value as KubeObject;
  }

  identity(s: State): Promise<StepOutcome> {
    if (this.o.installer === undefined) return Promise.resolve(this.blocked(s, 'no identity to apply ClusterObjectSets as: start the manager with --olmv1-installer=<namespace>/<service account>'));
    s.installer = this.o.client.impersonate(impersonationFor(this.o.installer));
    return Promise.resolve(CONTINUE);
  }

  /** Archived: the objects this revision controls are deleted (not those another revision took over), then it lets go. */
  async archive(s: State): Promise<StepOutcome> {
    if (s.cos.spec.lifecycleState !== 'Archived') return CONTINUE;
    const ic = s.installer as IdentityClient;
    let remaining = 0;
    for (const { object } of s.phases.flatMap((p) => p.objects)) {
      const live = await ic.find(refOf(object));
      if (live === undefined || controllerUid(live) !== s.cos.metadata.uid) continue;
      remaining++;
      if (!isDeleting(live)) await ic.delete(refOf(object), { propagationPolicy: 'Background' });
    }
    if (remaining > 0) {
      this.retrying(s, 'removing revision resources that are not owned by another revision', false);
      return stop({ requeueAfterMs: POLL_MS });
    }
    const archived = s.conditions.get('Progressing')?.reason === 'Archived' && s.conditions.get('Available')?.reason === 'Archived';
    if (!archived) {
      s.conditions.set('Progressing', false, 'Archived', 'revision is archived');
      s.conditions.set('Available', 'Unknown', 'Archived', 'revision is archived');
      return stop({ requeueAfterMs: 100 });
    }
    await removeFinalizer(this.o.client, s.cos, OBJECT_SET_FINALIZER);
    return stop();
  }

  async finalizer(s: State): Promise<StepOutcome> {
    await ensureFinalizer(this.o.client, s.cos, OBJECT_SET_FINALIZER);
    return CONTINUE;
  }

  /** Phase by phase: collisions checked before anything of the phase is written, then applied and probed. */
  async apply(s: State): Promise<StepOutcome> {
    const ic = s.installer as IdentityClient;
    const version = s.cos.metadata.annotations?.[BUNDLE_VERSION_ANNOTATION] ?? '';
    const siblings = await this.siblings(s.cos);
    const failures: string[] = [];
    for (const [i, phase] of s.phases.entries()) {
      const collisions: string[] = [];
      const lives: (KubeObject | undefined)[] = [];
      for (const r of phase.objects) {
        const live = await ic.find(refOf(r.object));
        lives.push(live);
        const why = live === undefined ? undefined : collision(live, s.cos, siblings, r.collisionProtection);
        if (why !== undefined) collisions.push(`${describe(r.object)}: ${why}`);
      }
      if (collisions.length > 0) {
        this.retrying(s, `revision object collisions in phase ${i}\n${collisions.join('\n\n')}`);
        return stop({ requeueAfterMs: 10_000 });
      }
      for (const [j, r] of phase.objects.entries()) {
        const wanted = this.owned(r.object, s.cos);
        // Already as the revision says: not written again (a revision rolling out is looked at every few seconds).
        const seen = lives[j];
        const applied = seen !== undefined && holds(seen, wanted) ? seen : await ic.apply(wanted, { fieldManager: OBJECT_SET_FIELD_MANAGER, force: true });
        const probe = probeObject(s.cos.spec.progressionProbes ?? [], applied);
        // As upstream: the first object of a phase that does not pass speaks for the phase.
        if (probe.status !== 'True' && failures.length === 0) failures.push(`Object ${describe(applied)}: ${probe.messages.join(' and ')}`);
      }
      if (failures.length > 0) break;
    }
    if (failures.length > 0) {
      s.conditions.set('Available', false, 'ProbeFailure', failures.join('\n'));
      this.progressing(s, 'RollingOut', `Revision ${version} is rolling out.`);
      return stop({ requeueAfterMs: POLL_MS });
    }
    // Complete: older revisions of the same owner are archived, as upstream hands over.
    for (const old of siblings.filter((o) => o.spec.revision < s.cos.spec.revision)) {
      await this.o.client.patch({ apiVersion: OLMV1_API_VERSION, kind: OBJECT_SET_KIND, name: old.metadata.name ?? '' }, { spec: { lifecycleState: 'Archived' } });
    }
    this.progressing(s, 'Succeeded', `Revision ${version} has rolled out.`);
    s.conditions.set('Available', true, 'ProbesSucceeded', 'Objects are available and pass all probes.');
    s.conditions.set('Succeeded', true, 'Succeeded', 'Revision succeeded rolling out.');
    return stop();
  }

  /** The object as this revision applies it: labelled with the owner's name, controlled by the revision. */
  private owned(object: KubeObject, cos: ClusterObjectSet): KubeObject {
    return {
      ...object,
      metadata: {
        ...object.metadata,
        labels: { ...object.metadata.labels, [OWNER_NAME_LABEL]: cos.metadata.labels?.[OWNER_NAME_LABEL] ?? '' },
        ownerReferences: [{ apiVersion: OLMV1_API_VERSION, kind: OBJECT_SET_KIND, name: cos.metadata.name ?? '', uid: cos.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
    };
  }

  /** Other active revisions of the same owner (by its label); a revision without the label has none. */
  private async siblings(cos: ClusterObjectSet): Promise<ClusterObjectSet[]> {
    const owner = cos.metadata.labels?.[OWNER_NAME_LABEL];
    if (owner === undefined) return [];
    const list = await this.o.client.list<ClusterObjectSet>(OLMV1_API_VERSION, OBJECT_SET_KIND, { labelSelector: `${OWNER_NAME_LABEL}=${owner}` });
    return list.items.filter((r) => r.metadata.name !== cos.metadata.name && r.spec.lifecycleState !== 'Archived' && !isDeleting(r));
  }
}

function refOf(o: KubeObject): { apiVersion: string; kind: string; name: string; namespace?: string } {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '', ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) };
}

/** An object as upstream's messages name it: `Kind.group/version namespace/name` (`PersistentVolumeClaim.v1 ns/claim`). */
function describe(o: KubeObject): string {
  return `${o.kind}.${o.apiVersion} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

/**
 * Whether `live` already holds everything `wanted` sets (a leaf equal, an object's keys each held,
 * an array of the same length held element by element): what the API server adds (defaults,
 * status, others' fields) does not count.
 */
export function holds(live: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted)) return Array.isArray(live) && live.length === wanted.length && wanted.every((w, i) => holds(live[i], w));
  if (typeof wanted === 'object' && wanted !== null) {
    if (typeof live !== 'object' || live === null || Array.isArray(live)) return false;
    return Object.entries(wanted).every(([k, v]) => holds((live as Record<string, unknown>)[k], v));
  }
  return live === wanted;
}

function controllerUid(o: KubeObject): string | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
}

/**
 * Why an existing object may not be taken by this revision, or undefined when it may: its own,
 * a sibling revision's (handed over), else as the collision protection says (Prevent: never;
 * IfNoController: only with no controller; None: always).
 */
export function collision(live: KubeObject, cos: ClusterObjectSet, siblings: readonly ClusterObjectSet[], protection: CollisionProtection): string | undefined {
  const controller = live.metadata.ownerReferences?.find((r) => r.controller === true);
  if (controller?.uid !== undefined && controller.uid === cos.metadata.uid) return undefined;
  if (controller !== undefined && controller.kind === OBJECT_SET_KIND && siblings.some((r) => r.metadata.uid === controller.uid)) return undefined;
  if (protection === 'None') return undefined;
  if (protection === 'IfNoController') return controller === undefined ? undefined : `controlled by ${controller.kind} ${controller.name}`;
  return controller === undefined ? 'exists and is not owned by this revision (collisionProtection Prevent)' : `controlled by ${controller.kind} ${controller.name} (collisionProtection Prevent)`;
}
