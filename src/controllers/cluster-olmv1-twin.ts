/**
 * OLM v1's ClusterExtension and ClusterCatalog (`olm.operatorframework.io/v1`), reconciled by
 * Binnacle's own engine through a twin: for each OLM v1 object, a `binnacle.dev` object of the
 * same kind and name whose spec is converted from it (src/api/olmv1/convert.ts), owned by it and
 * labelled as its twin. The twin is reconciled by the same controllers as any of Binnacle's
 * objects (resolution, BundleDeployments, the release engine, the catalog store and server);
 * this adapter only keeps the twin's spec equal to the conversion and writes the twin's status
 * back into OLM v1's conditions and reasons.
 *
 * Why a twin rather than teaching each reconciler a second kind: the installed state, the
 * resolution lock, `binnacle status | history | plan | approve` and the console all key on
 * `binnacle.dev` objects by name; a twin is seen by all of them unchanged, and a name taken in
 * both groups is refused here, in one place, instead of colliding in every index.
 *
 * Steps: HandleFinalizer → Convert → Twin → Report. Deleting the OLM v1 object deletes its twin
 * and waits until the twin is gone (its own finalizer uninstalls); the ownerReference deletes
 * the twin too should the OLM v1 object go without this finalizer.
 */
import type { Logger } from 'pino';
import type { ConditionSpec, TwinSpec } from '../api/olmv1/convert.js';
import { twinCaughtUp } from '../api/olmv1/convert.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION, withoutManagerFinalizers } from '../api/olmv1/types.js';
import { olmv1TwinOf } from '../api/olmv1/twin.js';
import { API_VERSION, FINALIZER_CLEANUP, GROUP } from '../api/types.js';
import type { ObjectReader, ObjectWriter, StatusWriter } from '../kube/ports.js';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { applyStatus, Conditions, CONTINUE, ensureFinalizer, isDeleting, methodSteps, reconcileSteps, sameStatus, stop, type StepOutcome } from './common.js';


export type TwinClient = Pick<ObjectReader, 'get' | 'find'> & Pick<ObjectWriter, 'apply' | 'delete' | 'patch' | 'update'> & Pick<StatusWriter, 'applyStatus'>;

/** What a kind's adapter says: its twin's spec, and its status from the twin's. */
export interface TwinKind<V extends KubeObject, B extends KubeObject> {
  kind: 'ClusterExtension' | 'ClusterCatalog';
  /** The twin's spec (and annotations), or why the OLM v1 object cannot have one as written. */
  twinSpec(v1: V): TwinSpec<B['spec']>;
  /** Labels the twin carries besides LABEL_OLMV1_TWIN_OF. */
  twinLabels(v1: V): Record<string, string>;
  /** When the spec cannot be converted: the conditions that say so. */
  refused(reason: string, message: string): ConditionSpec[];
  /** The OLM v1 status, from a twin that has reconciled its current spec. */
  status(v1: V, twin: B): Promise<{ conditions: ConditionSpec[]; fields: Record<string, unknown>; requeueAfterMs?: number | undefined }>;
  /** Metadata the OLM v1 object should carry (catalogd's metadata.name label); undefined: none missing. */
  defaults?(v1: V): Record<string, unknown> | undefined;
}

interface State<V extends KubeObject, B extends KubeObject> {
  v1: V;
  conditions: Conditions;
  logger: Logger;
  /** Status fields besides conditions. */
  fields: Record<string, unknown>;
  body?: TwinSpec<B['spec']> & { ok: true };
  twin?: B | undefined;
  writeStatus: boolean;
}

export class Olmv1TwinReconciler<V extends KubeObject, B extends KubeObject> implements Reconciler {
  constructor(
    private readonly client: TwinClient,
    private readonly k: TwinKind<V, B>,
  ) {}

  private v1Ref(name: string): { apiVersion: string; kind: string; name: string } {
    return { apiVersion: OLMV1_API_VERSION, kind: this.k.kind, name };
  }

  private twinRef(name: string): { apiVersion: string; kind: string; name: string } {
    return { apiVersion: API_VERSION, kind: this.k.kind, name };
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined> {
    let v1: V;
    try {
      v1 = await this.client.get<V>(this.v1Ref(req.name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const prev = (v1.status ?? {}) as Record<string, unknown>;
    const fields = Object.fromEntries(Object.entries(prev).filter(([k]) => k !== 'conditions'));
    const state: State<V, B> = { v1, conditions: new Conditions((v1.status as { conditions?: never } | undefined)?.conditions, v1.metadata.generation), logger: ctx.logger, fields, writeStatus: true };
    const steps = methodSteps<State<V, B>, Olmv1TwinReconciler<V, B>>(this, ['handleFinalizer', 'convert', 'twin', 'report']);
    return reconcileSteps(steps, state, ctx.logger, {
      write: (s) => this.writeStatus(s),
      onError: (s, err) => {
        s.conditions.set('Progressing', true, 'Retrying', err instanceof Error ? err.message : String(err));
        s.writeStatus = true;
      },
    });
  }

  private async writeStatus(s: State<V, B>): Promise<void> {
    if (!s.writeStatus) return;
    const status = { ...s.fields, conditions: s.conditions.toArray() };
    const before = (s.v1.status ?? {}) as Record<string, unknown>;
    if (sameStatus(status, { ...before, conditions: before.conditions ?? [] })) return;
    await applyStatus(this.client, s.v1, status);
  }

  /**
   * This adapter's twin to keep: the `binnacle.dev` object of the name labelled with this object's
   * UID. Claiming is wider than trusting (api/olmv1/twin.ts, which also wants the controller
   * reference): the next apply restores a reference removed by hand, and a label planted by someone
   * else only hands their object to this one, whose spec then rules it; what a twin is trusted with
   * (taking over OLM v1's objects, the commands writing the OLM v1 object) asks for both.
   */
  private isOurTwin(twin: KubeObject, v1: V): boolean {
    const uid = v1.metadata.uid;
    return uid !== undefined && uid !== '' && (olmv1TwinOf(twin) === uid || twin.metadata.labels?.[LABEL_OLMV1_TWIN_OF] === uid);
  }

  async handleFinalizer(s: State<V, B>): Promise<StepOutcome> {
    const name = s.v1.metadata.name ?? '';
    if (!isDeleting(s.v1)) {
      await ensureFinalizer(this.client, s.v1, FINALIZER_CLEANUP);
      const defaults = this.k.defaults?.(s.v1);
      if (defaults !== undefined) await this.client.patch(this.v1Ref(name), { metadata: defaults });
      return CONTINUE;
    }
    s.writeStatus = false;
    const twin = await this.client.find<B>(this.twinRef(name));
    if (twin !== undefined && this.isOurTwin(twin, s.v1)) {
      // The twin's own finalizer uninstalls what it installed; this one waits for that.
      if (!isDeleting(twin)) {
        s.logger.info({ twin: name }, 'OLM v1 object deleted: deleting its binnacle.dev twin');
        // That very object: one of the same name made since (not a twin) is never deleted for it.
        await this.client.delete(this.twinRef(name), { preconditions: { uid: twin.metadata.uid ?? '' } });
      }
      return stop({ requeueAfterMs: 2_000 });
    }
    // Moved over from OLM v1: operator-controller's and catalogd's own finalizers name caches only
    // they keep; with Binnacle serving the kind nothing else would ever remove them.
    const finalizers = s.v1.metadata.finalizers ?? [];
    const kept = withoutManagerFinalizers(finalizers);
    if (kept.length !== finalizers.length) await this.client.patch(this.v1Ref(name), { metadata: { finalizers: kept, resourceVersion: s.v1.metadata.resourceVersion } });
    return stop();
  }

  convert(s: State<V, B>): Promise<StepOutcome> {
    const body = this.k.twinSpec(s.v1);
    if (body.ok) {
      s.body = body;
      return Promise.resolve(CONTINUE);
    }
    for (const c of this.k.refused(body.reason, body.message)) s.conditions.set(c.type, c.status, c.reason, c.message);
    // Terminal until the object changes; an admin who configures an installer restarts the manager, which looks again.
    return Promise.resolve(stop());
  }

  async twin(s: State<V, B>): Promise<StepOutcome> {
    const name = s.v1.metadata.name ?? '';
    const body = s.body;
    if (body === undefined) return stop();
    const existing = await this.client.find<B>(this.twinRef(name));
    if (existing !== undefined && !this.isOurTwin(existing, s.v1)) {
      const message = isDeleting(existing)
        ? `the binnacle.dev ${this.k.kind} ${name} is being deleted; waiting for it to go before making this object's twin`
        : `a binnacle.dev ${this.k.kind} named ${name} exists and is not this object's twin: one name cannot be served in both API groups; rename one of them`;
      for (const c of this.k.refused(isDeleting(existing) ? 'Retrying' : 'Blocked', message)) s.conditions.set(c.type, c.status, c.reason, c.message);
      return stop({ requeueAfterMs: isDeleting(existing) ? 2_000 : 60_000 });
    }
    const ownerReferences = [{ apiVersion: OLMV1_API_VERSION, kind: this.k.kind, name, uid: s.v1.metadata.uid ?? '', controller: true }];
    if (existing !== undefined && olmv1TwinOf(existing) !== s.v1.metadata.uid) {
      // Claimed by its label alone: its spec is replaced whole first, so that nothing set beside the
      // converted fields (by whoever planted or edited it) stays in what becomes a trusted twin.
      await this.client.update({ ...existing, metadata: { ...existing.metadata, ownerReferences }, spec: body.spec });
    }
    const twin = {
      apiVersion: API_VERSION,
      kind: this.k.kind,
      metadata: {
        name,
        labels: { ...withoutBinnacleLabels(this.k.twinLabels(s.v1)), [LABEL_OLMV1_TWIN_OF]: s.v1.metadata.uid ?? '' },
        ...(Object.keys(body.annotations).length === 0 ? {} : { annotations: body.annotations }),
        ownerReferences,
      },
      spec: body.spec,
    };
    s.twin = await this.client.apply<B>(twin, { force: true });
    return CONTINUE;
  }

  async report(s: State<V, B>): Promise<StepOutcome> {
    const twin = s.twin;
    // Until the twin has reconciled this spec, its status speaks for an older one: the twin's own status update calls back.
    if (twin === undefined || !twinCaughtUp(twin)) {
      if (s.conditions.get('Progressing') === undefined) s.conditions.set('Progressing', true, 'Retrying', `waiting for the binnacle.dev ${this.k.kind} ${twin?.metadata.name ?? ''} to reconcile`);
      return stop();
    }
    const out = await this.k.status(s.v1, twin);
    for (const c of out.conditions) s.conditions.set(c.type, c.status, c.reason, c.message);
    s.fields = out.fields;
    return stop(out.requeueAfterMs === undefined ? undefined : { requeueAfterMs: Math.max(1_000, out.requeueAfterMs) });
  }
}

/**
 * The OLM v1 object's labels, but Binnacle's own (`binnacle.dev/…`): those act on a twin (an owner
 * kind and name make a PlatformOperator claim it and delete it on every reconcile), and whoever may
 * label an OLM v1 object is not thereby the one who sets them.
 */
function withoutBinnacleLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([k]) => !k.startsWith(`${GROUP}/`)));
}
