/**
 * OLM v1's ClusterObjectSet (`olm.operatorframework.io/v1`, operator-controller v1.11's
 * BoxcutterRuntime revision) applied as it says: its phases in order, each object applied with
 * the revision as its controller, and the next phase only once every object of this one passes
 * the revision's progression probes. Objects may sit inline or in immutable Secrets; what the
 * phases resolved to is pinned by digest in status the first time, and a revision whose
 * referenced content later differs is Blocked rather than applied.
 *
 * Steps: HandleDeletion → Identity → VerifySecrets → Resolve → Validate → Archive → Finalizer →
 * Apply, status written once. Upstream's conditions and reasons are kept, and its messages where
 * users and its e2e scenarios match on them (probes, Blocked, the deadline).
 *
 * Objects as boxcutter's object engine treats them: one that is not there is created (never
 * applied over something that appeared meanwhile); one this revision controls is applied when it
 * differs; one an older revision of the same owner controls is taken over, one a newer revision
 * controls is left to it (only probed); anything else is a collision unless collisionProtection
 * allows it (IfNoController: nothing controls it and nothing else holds it; None: anything, the
 * other owners kept as non-controllers). Each carries the revision annotation and managed-by
 * label operator-controller sets. Archiving deletes phase by phase, last phase first, each
 * delete conditional on the object read (its uid and resourceVersion).
 *
 * Identity: the objects and the Secrets are read and written as the OLM v1 installer the admin
 * gave the manager (`--olmv1-installer`), the identity operator-controller's own ServiceAccount is
 * upstream: who may create ClusterObjectSets may act as it (docs/trust-model.md). Without one,
 * nothing is applied.
 *
 * Differences from upstream, said where they are: the objects are not watched; a revision still
 * rolling out is looked at again every few seconds (POLL_MS), a finished one at the resync.
 */
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
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
import { fieldDrift } from '../apply/drift.js';
import { describeOwner, heldBySomeone, MANAGED_BY_LABEL } from '../apply/ownership.js';
import { impersonationFor } from '../apply/preflight-permissions.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import type { ControllerClient, IdentityClient } from '../kube/ports.js';
import type { KubeObject, OwnerReference } from '../kube/types.js';
import { BinnacleError } from '../util/errors.js';
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { applyStatus, CONTINUE, Conditions, ensureFinalizer, isDeleting, methodSteps, reconcileSteps, removeFinalizer, sameStatus, stop, type StepOutcome } from './common.js';

const gunzipAsync = promisify(gunzip);

/** How often a revision still rolling out (or archiving) is looked at again: its objects are not watched. */
export const POLL_MS = 5_000;
/** What one gzipped object in a Secret may inflate to (operator-controller's bound). */
export const MAX_REF_BYTES = 10 * 1024 * 1024;
/** What all of a revision's objects drawn from Secrets may come to, inflated: past it the revision is refused by name. */
export const MAX_REVISION_REF_BYTES = 64 * 1024 * 1024;
/** The annotation boxcutter keeps each object's revision in (`<system prefix>/revision`), and its managed-by value. */
export const REVISION_ANNOTATION = 'olm.operatorframework.io/revision';
const MANAGED_BY = 'olm.operatorframework.io';

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

type Secret = KubeObject & { data?: Record<string, string>; immutable?: boolean };

interface State {
  cos: ClusterObjectSet;
  conditions: Conditions;
  observedPhases: ObservedPhase[] | undefined;
  logger: Logger;
  writeStatus: boolean;
  phases: { name: string; objects: ResolvedObject[] }[];
  installer?: IdentityClient;
  /** Each referenced Secret read once per reconcile (by `namespace/name`): the one checked immutable is the one read. */
  secrets: Map<string, Secret | undefined>;
  /** Minutes left before the progress deadline, when there is one and the revision has not succeeded. */
  deadline: { exceeded: boolean; remainingMs: number } | undefined;
}

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
      secrets: new Map(),
      deadline: this.deadline(cos),
    };
    const steps = methodSteps<State, ClusterObjectSetReconciler>(this, ['handleDeletion', 'identity', 'verifySecrets', 'resolve', 'validate', 'archive', 'finalizer', 'apply']);
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

  identity(s: State): Promise<StepOutcome> {
    if (this.o.installer === undefined) return Promise.resolve(this.blocked(s, 'no identity to apply ClusterObjectSets as: start the manager with --olmv1-installer=<namespace>/<service account>'));
    s.installer = this.o.client.impersonate(impersonationFor(this.o.installer));
    return Promise.resolve(CONTINUE);
  }

  /**
   * Every Secret a phase draws objects from, read once as the installer, must be immutable, or
   * the revision could change under its digest; the same read gives the content (Resolve).
   */
  async verifySecrets(s: State): Promise<StepOutcome> {
    const ic = s.installer as IdentityClient;
    for (const p of s.cos.spec.phases ?? []) {
      for (const o of p.objects) {
        if (o.ref === undefined || o.ref.name === '') continue;
        const key = `${o.ref.namespace ?? ''}/${o.ref.name}`;
        if (!s.secrets.has(key)) s.secrets.set(key, await ic.find<Secret>({ apiVersion: 'v1', kind: 'Secret', namespace: o.ref.namespace ?? '', name: o.ref.name }));
      }
    }
    const mutable = [...s.secrets].filter(([, secret]) => secret !== undefined && secret.immutable !== true).map(([key]) => key);
    if (mutable.length > 0) return this.blocked(s, `the following secrets are not immutable (referenced secrets must have immutable set to true): ${mutable.join(', ')}`);
    return CONTINUE;
  }

  /** The phases' objects, inline or from their Secrets, and their digests pinned the first time. */
  async resolve(s: State): Promise<StepOutcome> {
    const observed: ObservedPhase[] = [];
    const budget = { left: MAX_REVISION_REF_BYTES };
    for (const phase of s.cos.spec.phases ?? []) {
      const objects: ResolvedObject[] = [];
      for (const o of phase.objects) {
        let object: KubeObject;
        if (o.object !== undefined) object = structuredClone(o.object);
        else if (o.ref !== undefined && o.ref.name !== '') object = await this.objectFromSecret(s, o.ref, phase.name, budget);
        else throw new BinnacleError('transient', 'OBJECT_SET_RESOLVE', `object in phase ${JSON.stringify(phase.name)} has neither object nor ref`);
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

  private async objectFromSecret(s: State, ref: ObjectSourceRef, phase: string, budget: { left: number }): Promise<KubeObject> {
    const where = `Secret ${ref.namespace ?? ''}/${ref.name}`;
    // Retried with backoff: a Secret may yet be made, or made again with the pinned content.
    const fail = (why: string): BinnacleError => new BinnacleError('transient', 'OBJECT_SET_RESOLVE', `resolving ref in phase ${JSON.stringify(phase)}: ${why}`);
    const secret = s.secrets.get(`${ref.namespace ?? ''}/${ref.name}`);
    if (secret === undefined) throw fail(`getting ${where}: not found`);
    const encoded = secret.data?.[ref.key];
    if (encoded === undefined) throw fail(`key ${JSON.stringify(ref.key)} not found in ${where}`);
    let bytes = Buffer.from(encoded, 'base64');
    if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
      try {
        // Inflated off the event loop, and never past its bound.
        bytes = await gunzipAsync(bytes, { maxOutputLength: MAX_REF_BYTES });
      } catch (err) {
        const over = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
        throw fail(over ? `decompressed data for key ${JSON.stringify(ref.key)} in ${where} exceeds maximum size (${MAX_REF_BYTES} bytes)` : `decompressing key ${JSON.stringify(ref.key)} in ${where}: ${(err as Error).message}`);
      }
    }
    budget.left -= bytes.length;
    if (budget.left < 0) throw fail(`the objects this revision draws from Secrets come to more than ${MAX_REVISION_REF_BYTES} bytes (at key ${JSON.stringify(ref.key)} in ${where}); split it into revisions of their own`);
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      // Not the parser's message: it quotes the text, and a Secret's content must not reach a status.
      throw fail(`unmarshaling object from key ${JSON.stringify(ref.key)} in ${where}: not valid JSON`);
    }
    // Everything after walks the object recursively (the digest, the comparison): a deep one could exhaust the stack.
    if (nestsDeeperThan(value, MAX_NESTING)) throw fail(`the object at key ${JSON.stringify(ref.key)} in ${where} nests deeper than ${MAX_NESTING} levels`);
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as KubeObject).kind !== 'string' || typeof (value as KubeObject).apiVersion !== 'string') {
      throw fail(`key ${JSON.stringify(ref.key)} in ${where} is not a Kubernetes object (apiVersion and kind)`);
    }
    return value as KubeObject;
  }

  /** As boxcutter's revision and phase validation: each object once in the revision, and no metadata only the API server or an owner sets. */
  validate(s: State): Promise<StepOutcome> {
    const seen = new Map<string, string>();
    const problems: string[] = [];
    for (const [i, phase] of s.phases.entries()) {
      for (const { object } of phase.objects) {
        const id = describe(object);
        const first = seen.get(id);
        if (first !== undefined) problems.push(`${id} is in phase ${JSON.stringify(first)} and again in phase ${JSON.stringify(phase.name)}`);
        else seen.set(id, phase.name);
        const meta = object.metadata as Record<string, unknown>;
        const set = ['ownerReferences', 'finalizers', 'uid', 'generation', 'resourceVersion', 'generateName', 'creationTimestamp', 'deletionTimestamp'].filter((k) => meta[k] !== undefined);
        if (set.length > 0) problems.push(`phase ${i} validation error: ${id} sets metadata.${set.join(', metadata.')}, which only the API server or an owner sets`);
        if ((object.metadata.name ?? '') === '') problems.push(`phase ${i} validation error: an object of kind ${object.kind} has no metadata.name`);
      }
    }
    if (problems.length === 0) return Promise.resolve(CONTINUE);
    this.retrying(s, `revision validation error: ${problems.join('; ')}`);
    return Promise.resolve(stop({ requeueAfterMs: 10_000 }));
  }

  /**
   * Archived: the objects this revision controls are deleted, phase by phase from the last (an
   * operator in an earlier phase may still have to finalize what a later one made), each delete
   * conditional on the object read; then it says Archived and lets go.
   */
  async archive(s: State): Promise<StepOutcome> {
    if (s.cos.spec.lifecycleState !== 'Archived') return CONTINUE;
    const ic = s.installer as IdentityClient;
    for (const phase of [...s.phases].reverse()) {
      let remaining = 0;
      for (const { object } of phase.objects) {
        const live = await ic.find(refOf(object));
        if (live === undefined || controllerUid(live) !== s.cos.metadata.uid) continue;
        remaining++;
        if (isDeleting(live)) continue;
        try {
          await ic.delete(refOf(object), { propagationPolicy: 'Background', preconditions: { uid: live.metadata.uid ?? '', resourceVersion: live.metadata.resourceVersion ?? '' } });
        } catch (err) {
          // Changed since it was read (another revision took it over, say): looked at again next time.
          if (!isConflict(err) && !isNotFound(err)) throw err;
        }
      }
      if (remaining > 0) {
        this.retrying(s, 'removing revision resources that are not owned by another revision', false);
        return stop({ requeueAfterMs: POLL_MS });
      }
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

  /** Phase by phase: collisions checked before anything of the phase is written, then written and probed. */
  async apply(s: State): Promise<StepOutcome> {
    const ic = s.installer as IdentityClient;
    const version = s.cos.metadata.annotations?.[BUNDLE_VERSION_ANNOTATION] ?? '';
    const siblings = await this.siblings(s.cos);
    const failures: string[] = [];
    for (const [i, phase] of s.phases.entries()) {
      const collisions: string[] = [];
      const plans: Plan[] = [];
      for (const r of phase.objects) {
        const plan = planObject(await ic.find(refOf(r.object)), s.cos, siblings, r.collisionProtection);
        if (plan.action === 'collision') collisions.push(`${describe(r.object)}: ${plan.why}`);
        plans.push(plan);
      }
      if (collisions.length > 0) {
        this.retrying(s, `revision object collisions in phase ${i}\n${collisions.join('\n\n')}`);
        return stop({ requeueAfterMs: 10_000 });
      }
      for (const [j, r] of phase.objects.entries()) {
        const plan = plans[j] as Plan;
        const applied = await this.write(ic, this.owned(r.object, s.cos, plan), plan);
        if (applied === undefined) {
          this.retrying(s, `${describe(r.object)} appeared while the revision was creating it: looked at again`);
          return stop({ requeueAfterMs: 1_000 });
        }
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
    // Complete: older revisions of the same owner are archived, as upstream hands over (as the installer: never with the manager's own power).
    for (const old of siblings.filter((o) => o.spec.revision < s.cos.spec.revision && o.spec.lifecycleState !== 'Archived')) {
      await ic.patch({ apiVersion: OLMV1_API_VERSION, kind: OBJECT_SET_KIND, name: old.metadata.name ?? '' }, { spec: { lifecycleState: 'Archived' } });
    }
    this.progressing(s, 'Succeeded', `Revision ${version} has rolled out.`);
    s.conditions.set('Available', true, 'ProbesSucceeded', 'Objects are available and pass all probes.');
    s.conditions.set('Succeeded', true, 'Succeeded', 'Revision succeeded rolling out.');
    return stop();
  }

  /** Creates, applies or leaves the object as its plan says; undefined when one appeared between the read and the create. */
  private async write(ic: IdentityClient, wanted: KubeObject, plan: Plan): Promise<KubeObject | undefined> {
    if (plan.action === 'create') {
      try {
        return await ic.create(wanted);
      } catch (err) {
        if (isAlreadyExists(err)) return undefined;
        throw err;
      }
    }
    const live = plan.live;
    // A newer revision's, only probed; one already as the revision says, not written again.
    if (plan.action === 'leave' || (plan.action === 'update' && fieldDrift(wanted, live, OBJECT_SET_FIELD_MANAGER).length === 0)) return live;
    return ic.apply(wanted, { fieldManager: OBJECT_SET_FIELD_MANAGER, force: true });
  }

  /** The object as this revision writes it: its owner's name label, managed-by, the revision annotation, and the revision as controller (other owners kept, none a controller). */
  private owned(object: KubeObject, cos: ClusterObjectSet, plan: Plan): KubeObject {
    const others = (plan.live?.metadata.ownerReferences ?? []).filter((r) => r.uid !== cos.metadata.uid).map((r) => ({ ...r, controller: false }));
    const ours: OwnerReference = { apiVersion: OLMV1_API_VERSION, kind: OBJECT_SET_KIND, name: cos.metadata.name ?? '', uid: cos.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
    return {
      ...object,
      metadata: {
        ...object.metadata,
        labels: { ...object.metadata.labels, [OWNER_NAME_LABEL]: cos.metadata.labels?.[OWNER_NAME_LABEL] ?? '', [MANAGED_BY_LABEL]: MANAGED_BY },
        annotations: { ...object.metadata.annotations, [REVISION_ANNOTATION]: String(cos.spec.revision) },
        // Every other owner the object has stays, none a controller (left out, a forced apply would drop the ones this manager once wrote).
        ownerReferences: [...others, ours],
      },
    };
  }

  /** Other revisions of the same owner (by its label), archived ones too; a revision without the label has none. */
  private async siblings(cos: ClusterObjectSet): Promise<ClusterObjectSet[]> {
    const owner = cos.metadata.labels?.[OWNER_NAME_LABEL];
    if (owner === undefined) return [];
    const list = await this.o.client.list<ClusterObjectSet>(OLMV1_API_VERSION, OBJECT_SET_KIND, { labelSelector: `${OWNER_NAME_LABEL}=${owner}` });
    return list.items.filter((r) => r.metadata.name !== cos.metadata.name && !isDeleting(r));
  }
}

/** What the revision does with one object: create it, update its own, adopt it, leave it to a newer revision, or refuse (a collision). */
export type Plan = { action: 'create'; live?: undefined } | { action: 'update' | 'adopt' | 'leave'; live: KubeObject } | { action: 'collision'; why: string; live: KubeObject };

/**
 * boxcutter's object situations: ours; a sibling revision's (archived or older: adopt, newer:
 * leave it, the same number: a collision); another controller's (only None adopts it); no controller (Prevent
 * refuses; so does anything else when Binnacle, Helm or a revision holds it, since a revision's
 * orphan would be deleted by the garbage collector once adopted).
 */
export function planObject(live: KubeObject | undefined, cos: ClusterObjectSet, siblings: readonly ClusterObjectSet[], protection: CollisionProtection): Plan {
  if (live === undefined) return { action: 'create' };
  const controller = live.metadata.ownerReferences?.find((r) => r.controller === true);
  if (controller !== undefined && controller.uid === cos.metadata.uid) return { action: 'update', live };
  const sibling = controller?.kind === OBJECT_SET_KIND ? siblings.find((r) => r.metadata.uid === controller.uid) : undefined;
  if (sibling !== undefined) return siblingPlan(live, sibling, cos);
  if (controller !== undefined) return protection === 'None' ? { action: 'adopt', live } : { action: 'collision', why: `controlled by ${describeOwner(live)} (collisionProtection ${protection})`, live };
  if (protection === 'Prevent') return { action: 'collision', why: `exists and is not owned by this revision (collisionProtection Prevent)`, live };
  if (protection === 'IfNoController' && (heldBySomeone(live) || live.metadata.annotations?.[REVISION_ANNOTATION] !== undefined)) return { action: 'collision', why: `held by ${live.metadata.annotations?.[REVISION_ANNOTATION] !== undefined ? 'a ClusterObjectSet revision that let go of it' : describeOwner(live)} (collisionProtection IfNoController)`, live };
  return { action: 'adopt', live };
}

/**
 * An object a sibling revision controls: an archived one is letting go of it (one still Blocked may
 * never delete it), an older one hands it over, a newer one keeps it. Older and newer by the
 * revisions' own spec.revision, not by the object's annotation (boxcutter reads that one, but anyone
 * who edits the object can drop it; the controlling revision cannot be mistaken).
 */
function siblingPlan(live: KubeObject, sibling: ClusterObjectSet, cos: ClusterObjectSet): Plan {
  if (sibling.spec.lifecycleState === 'Archived') return { action: 'adopt', live };
  const theirs = sibling.spec.revision;
  if (theirs > cos.spec.revision) return { action: 'leave', live };
  if (theirs < cos.spec.revision) return { action: 'adopt', live };
  return { action: 'collision', why: `controlled by ClusterObjectSet ${sibling.metadata.name ?? ''} at the same revision ${theirs}`, live };
}

function refOf(o: KubeObject): { apiVersion: string; kind: string; name: string; namespace?: string } {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '', ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) };
}

/** An object as upstream's messages name it: `Kind.group/version namespace/name` (`PersistentVolumeClaim.v1 ns/claim`). */
function describe(o: KubeObject): string {
  return `${o.kind}.${o.apiVersion} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

function controllerUid(o: KubeObject): string | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
}
