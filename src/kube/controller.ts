/**
 * The controller runner: informers feed keys into a rate-limited work queue, and N workers
 * call a reconciler for each key. The reconciler is level-triggered: it is told only *which*
 * object to look at, never what changed, and reads the current state itself.
 *
 * What a reconcile's outcome means:
 * - returns nothing or `{}`: done; the key's backoff is reset;
 * - returns `{ requeueAfterMs }`: done for now, look again after that long;
 * - returns `{ failed: true }`: it failed in a way its status explains (bad input, a refused
 *   release): looked at again after the key's exponential backoff, from 1 s up to the queue's
 *   cap, so a failing object never spins; a success resets it;
 * - throws a `TerminalError`: retrying cannot help; logged, not requeued;
 * - throws anything else: requeued with per-key exponential backoff.
 */
import type { Logger } from 'pino';
import { TerminalError, errorMessage } from '../util/errors.js';
import type { Informer } from './informer.js';
import { objectKey, splitKey, type KubeObject } from './types.js';
import { WorkQueue, type BackoffOptions } from './workqueue.js';
import type { ControllerMetrics } from './metrics.js';

export interface ReconcileRequest {
  key: string;
  namespace?: string;
  name: string;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
  /** Failed, as status says: retried with backoff (see the top of this file), not after requeueAfterMs. */
  failed?: boolean;
}

/** The first retry of a reconcile that returned `failed`; each further one doubles it. */
export const FAILED_RETRY_BASE_MS = 1000;

export interface ReconcileContext {
  logger: Logger;
  signal: AbortSignal;
}

export interface Reconciler {
  reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult | undefined>;
}

/** Adapts a function to the Reconciler contract. */
export function reconcilerFunc(fn: Reconciler['reconcile']): Reconciler {
  return { reconcile: fn };
}

export interface ControllerOptions {
  name: string;
  reconciler: Reconciler;
  logger: Logger;
  workers?: number;
  backoff?: BackoffOptions;
  metrics?: ControllerMetrics;
}

/** Maps an event's object to the keys to reconcile (default: the object's own key). */
export type KeyMapper<T extends KubeObject> = (obj: T) => string[];

/** Decides whether an update is worth a reconcile (adds and deletes always are). */
export type UpdatePredicate<T extends KubeObject> = (oldObj: T, newObj: T) => boolean;

/**
 * Updates that change what a controller must do: the spec (generation), labels, annotations,
 * finalizers or deletion. Status-only writes (the controller's own) are left out, so writing
 * status does not trigger another reconcile. Resyncs (old === new) pass.
 */
export function specOrMetadataChanged<T extends KubeObject>(oldObj: T, newObj: T): boolean {
  if (oldObj === newObj) return true;
  const a = oldObj.metadata;
  const b = newObj.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? [])
  );
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconciler: Reconciler;
  private readonly logger: Logger;
  private readonly workers: number;
  private readonly metrics: ControllerMetrics | undefined;
  private readonly informers: Informer[] = [];

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.reconciler = opts.reconciler;
    this.logger = opts.logger.child({ controller: opts.name });
    this.workers = opts.workers ?? 2;
    this.queue = new WorkQueue(opts.backoff);
    this.metrics = opts.metrics;
    const m = opts.metrics;
    if (m !== undefined) this.queue.observer = { added: () => m.added(this.name), retried: () => m.retried(this.name) };
  }

  /** Enqueues keys for every add/update/delete the informer sees. */
  watch<T extends KubeObject>(informer: Informer<T>, mapper: KeyMapper<T> = (o) => [objectKey(o.metadata)], predicate?: UpdatePredicate<T>): this {
    const enqueue = (obj: T): void => {
      for (const k of mapper(obj)) this.enqueue(k);
    };
    informer.addHandlers({
      add: enqueue,
      update: (old, obj) => {
        if (predicate === undefined || predicate(old, obj)) enqueue(obj);
      },
      delete: enqueue,
    });
    this.informers.push(informer as unknown as Informer);
    return this;
  }

  enqueue(key: string): void {
    this.queue.add(key);
    this.metrics?.setDepth(this.name, this.queue.length);
  }

  /** Runs workers until `signal` aborts, then lets in-flight reconciles finish. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(this.informers.map((i) => i.waitForSync()));
    const stop = (): void => void this.queue.shutDownWithDrain();
    signal.addEventListener('abort', stop, { once: true });
    this.metrics?.setMaxWorkers(this.name, this.workers);
    const workers = Array.from({ length: this.workers }, () => this.worker(signal));
    await Promise.all(workers);
    signal.removeEventListener('abort', stop);
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      this.metrics?.setDepth(this.name, this.queue.length);
      this.metrics?.activeWorkers(this.name, 1);
      try {
        await this.processOne(key, signal);
      } finally {
        this.metrics?.activeWorkers(this.name, -1);
        this.queue.done(key);
      }
    }
  }

  /** One reconcile of `key`, with the outcome turned into queue actions. Exposed for tests. */
  async processOne(key: string, signal: AbortSignal): Promise<void> {
    const { namespace, name } = splitKey(key);
    const req: ReconcileRequest = namespace === undefined ? { key, name } : { key, namespace, name };
    const logger = this.logger.child({ key });
    const started = process.hrtime.bigint();
    let outcome: 'success' | 'requeue' | 'error' | 'terminal' = 'success';
    try {
      const result = await this.reconciler.reconcile(req, { logger, signal });
      if (result?.failed === true) {
        outcome = 'error';
        const delay = this.queue.backoff.next(key, FAILED_RETRY_BASE_MS);
        logger.info({ retryInMs: delay, retries: this.queue.backoff.retries(key) }, 'reconcile failed as status says; retrying with backoff');
        this.queue.addAfter(key, delay);
        return;
      }
      this.queue.forget(key);
      if (result?.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
        outcome = 'requeue';
        this.queue.addAfter(key, result.requeueAfterMs);
      }
    } catch (err) {
      if (err instanceof TerminalError) {
        outcome = 'terminal';
        this.queue.forget(key);
        logger.error({ reason: err.reason, err: err.message }, 'reconcile failed terminally; not retrying');
      } else {
        outcome = 'error';
        logger.warn({ err: errorMessage(err), retries: this.queue.backoff.retries(key) }, 'reconcile failed; retrying with backoff');
        this.queue.addRateLimited(key);
      }
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics?.observe(this.name, outcome, seconds);
    }
  }
}
