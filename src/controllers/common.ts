/**
 * What every Binnacle reconciler shares: the pipeline of named steps over typed state,
 * status written through the status subresource with server-side apply (so only Binnacle's
 * own fields change and nothing else is touched), finalizers, and conditions.
 */
import type { Logger } from 'pino';
import type { ObjectWriter, StatusWriter } from '../kube/ports.js';
import type { ReconcileResult } from '../kube/controller.js';
import { setCondition, type Condition, type KubeObject } from '../kube/types.js';
import { canonicalJson } from '../util/canonical-json.js';

export const STATUS_MANAGER = 'binnacle-status';

/** A step either lets the pipeline go on, or stops it with a result (e.g. requeue later). */
export type StepOutcome = { done: false } | { done: true; result?: ReconcileResult };
export const CONTINUE: StepOutcome = { done: false };
export const stop = (result?: ReconcileResult): StepOutcome => (result === undefined ? { done: true } : { done: true, result });

export interface Step<S> {
  name: string;
  run: (state: S) => Promise<StepOutcome>;
}

/** The names of `T`'s methods that are steps over `S`. */
export type StepMethodName<T, S> = { [K in keyof T]: T[K] extends (state: S) => Promise<StepOutcome> ? K : never }[keyof T] & string;

/**
 * A reconciler's pipeline from its step methods, in order: each step is named after its method
 * (`handleFinalizer` logs as `HandleFinalizer`), so a step's name has one source.
 */
export function methodSteps<S, T>(owner: T, methods: readonly StepMethodName<T, S>[]): Step<S>[] {
  return methods.map((method) => ({
    name: method.charAt(0).toUpperCase() + method.slice(1),
    run: (state: S) => (owner[method] as (state: S) => Promise<StepOutcome>).call(owner, state),
  }));
}

/**
 * A step that takes this long is logged at info with its time, ended or failed: a reconcile that
 * stands still says where (a 1,000-CR bench's manager once did nothing for 60 s with nothing
 * logged, and which step held it could not be told afterwards).
 */
export const SLOW_STEP_MS = 10_000;

/** Runs steps in order, stopping at the first that says so (or throws). */
export async function runSteps<S>(steps: readonly Step<S>[], state: S, logger: Logger, slowMs = SLOW_STEP_MS): Promise<ReconcileResult | undefined> {
  for (const step of steps) {
    logger.debug({ step: step.name }, 'step');
    const started = performance.now();
    let outcome: StepOutcome | undefined;
    try {
      outcome = await step.run(state);
    } finally {
      const ms = performance.now() - started;
      if (ms >= slowMs) logger.info({ step: step.name, seconds: Math.round(ms / 100) / 10, ended: outcome !== undefined }, 'slow step');
    }
    if (outcome.done) return outcome.result;
  }
  return undefined;
}

/**
 * One reconcile: the steps, then status written once, when the state still wants it (not once
 * the object is gone with nothing left to say). A throw no step expected is given to `onError`
 * (which says it in a condition), written once, and rethrown for backoff; a failed write then is
 * logged, so the step's error is the one thrown.
 */
export async function reconcileSteps<S extends { writeStatus: boolean }>(
  steps: readonly Step<S>[],
  state: S,
  logger: Logger,
  status: { write: (state: S) => Promise<unknown>; onError: (state: S, err: unknown) => void },
): Promise<ReconcileResult | undefined> {
  let result: ReconcileResult | undefined;
  try {
    result = await runSteps(steps, state, logger);
  } catch (err) {
    status.onError(state, err);
    if (state.writeStatus) await status.write(state).catch((writeErr: unknown) => logger.warn({ err: writeErr instanceof Error ? writeErr.message : String(writeErr) }, 'cannot write status'));
    throw err;
  }
  if (state.writeStatus) await status.write(state);
  return result;
}

/** Whether two statuses say the same (key order aside): an unchanged status is not written again. */
export function sameStatus(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Builds the next conditions list from the previous one, keeping transition times. */
export class Conditions {
  private list: Condition[];
  constructor(
    previous: readonly Condition[] | undefined,
    private readonly generation: number | undefined,
  ) {
    this.list = [...(previous ?? [])];
  }

  set(type: string, status: boolean | 'Unknown', reason: string, message: string): this {
    const s = status === 'Unknown' ? 'Unknown' : status ? 'True' : 'False';
    const next: Omit<Condition, 'lastTransitionTime'> = { type, status: s, reason, message };
    if (this.generation !== undefined) next.observedGeneration = this.generation;
    this.list = setCondition(this.list, next);
    return this;
  }

  remove(type: string): this {
    this.list = this.list.filter((c) => c.type !== type);
    return this;
  }

  get(type: string): Condition | undefined {
    return this.list.find((c) => c.type === type);
  }

  toArray(): Condition[] {
    return [...this.list].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  }
}

/** Writes `status` of a cluster-scoped or namespaced object with SSA on the status subresource. */
export async function applyStatus(client: Pick<StatusWriter, 'applyStatus'>, obj: KubeObject, status: Record<string, unknown>): Promise<KubeObject> {
  const metadata: KubeObject['metadata'] = { name: obj.metadata.name ?? '' };
  if (obj.metadata.namespace !== undefined) metadata.namespace = obj.metadata.namespace;
  return client.applyStatus({ apiVersion: obj.apiVersion, kind: obj.kind, metadata, status }, { fieldManager: STATUS_MANAGER, force: true });
}

/** Adds `finalizer` if missing; answers true when it had to (the caller may go on). */
export async function ensureFinalizer(client: Pick<ObjectWriter, 'patch'>, obj: KubeObject, finalizer: string): Promise<boolean> {
  const finalizers = obj.metadata.finalizers ?? [];
  if (finalizers.includes(finalizer)) return false;
  const ref = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
  // resourceVersion makes this a conditional update: a concurrent change makes it fail and requeue.
  const patched = await client.patch(ref, { metadata: { finalizers: [...finalizers, finalizer], resourceVersion: obj.metadata.resourceVersion } });
  obj.metadata.finalizers = patched.metadata.finalizers ?? [];
  obj.metadata.resourceVersion = patched.metadata.resourceVersion ?? '';
  return true;
}

export async function removeFinalizer(client: Pick<ObjectWriter, 'patch'>, obj: KubeObject, finalizer: string): Promise<void> {
  const finalizers = obj.metadata.finalizers ?? [];
  if (!finalizers.includes(finalizer)) return;
  const ref = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
  await client.patch(ref, { metadata: { finalizers: finalizers.filter((f) => f !== finalizer), resourceVersion: obj.metadata.resourceVersion } });
}

export function isDeleting(obj: KubeObject): boolean {
  return obj.metadata.deletionTimestamp !== undefined;
}
