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
 *   cap, so a failing object never spins; a success resets it. With the caught `error` beside
 *   it, an `input` or `terminal` one is not looked at again until the object changes, as if
 *   thrown (below);
 * - throws: what happens next follows the error's class (util/errors.ts `ErrorClass`), decided
 *   by `failureAction` and nowhere else:
 *   - `transient` (or a dropped connection, a timeout): requeued with per-key exponential backoff;
 *   - `input` or `terminal`: retrying cannot help; logged, not requeued until the object changes
 *     (an informer event, or its resync);
 *   - `internal`, or anything that is not a BinnacleError: a bug in Binnacle; logged with its
 *     stack and requeued with backoff (the bug may be in a path that state can route around).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { BinnacleError, TerminalError, errorMessage } from '../util/errors.js';
import { isTransient } from './errors.js';
import type { Informer } from './informer.js';
import { objectKey, splitKey, type KubeObject } from './types.js';
import { WorkQueue, type BackoffOptions } from './workqueue.js';
import type { ControllerMetrics } from './metrics.js';
import { inReconcile } from './reconcile-context.js';

export interface ReconcileRequest {
  key: string;
  namespace?: string;
  name: string;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
  /** Failed, as status says: retried with backoff (see the top of this file), not after requeueAfterMs. */
  failed?: boolean;
  /** With `failed`: the longest the backoff may grow to, for a failure the world mends without an event to tell us (an object in the way removed, a namespace created). */
  retryCapMs?: number;
  /** The error the failure was caught as: its class decides whether it is retried (`failureAction`). */
  error?: unknown;
}

/** The first retry of a reconcile that returned `failed`; each further one doubles it. */
export const FAILED_RETRY_BASE_MS = 1000;

/** What the runner does after a reconcile threw (see the top of this file). */
export type FailureAction = 'retry' | 'retry-as-bug' | 'wait-for-change';

/**
 * The one rule from a thrown error to what the runner does next, by the error's class. Only a
 * reconciler's own verdict that the object as written cannot work (a TerminalError) waits for
 * the object to change. Everything else is retried with capped backoff, whatever its class:
 * the cluster (a role granted, a CRD installed), a registry or a git server (content republished)
 * can change while the object stays as it is. A bug is also logged with its stack.
 */
export function failureAction(err: unknown): FailureAction {
  // Before the class: a wrapper that adds context keeps a transient cause retryable.
  if (isTransient(err)) return 'retry';
  if (!(err instanceof BinnacleError)) return 'retry-as-bug';
  if (err.errorClass === 'internal') return 'retry-as-bug';
  return err instanceof TerminalError ? 'wait-for-change' : 'retry';
}

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
  /**
   * Stopping, finish only the reconciles in flight and drop what is queued (a follower, whose
   * work the leader takes over); by default what is queued is reconciled too (client-go's drain).
   */
  dropQueuedOnStop?: boolean;
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
  private readonly dropQueuedOnStop: boolean;
  private readonly logger: Logger;
  private readonly workers: number;
  private readonly metrics: ControllerMetrics | undefined;
  private readonly informers: Informer[] = [];

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.dropQueuedOnStop = opts.dropQueuedOnStop === true;
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

  /**
   * Runs workers until `signal` aborts, then lets in-flight reconciles finish. The workers are
   * permits: a reconcile waiting for the world (a hook Job, an object being deleted) sleeps
   * without its permit (`sleepWithoutWorker`), so a tenant's hung Jobs do not hold every
   * worker of a kind; its key stays in flight, so no other reconcile of it starts meanwhile.
   */
  async run(signal: AbortSignal): Promise<void> {
    // Stopped before its caches synced (a follower that wins the lease at once): nothing to drain.
    const aborted = new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    await Promise.race([Promise.all(this.informers.map((i) => i.waitForSync())), aborted]);
    if (signal.aborted) return;
    const stop = (): void => void this.queue.shutDownWithDrain();
    signal.addEventListener('abort', stop, { once: true });
    this.metrics?.setMaxWorkers(this.name, this.workers);
    const permits = new WorkerPermits(this.workers);
    const running = new Set<Promise<void>>();
    for (;;) {
      // The key first, then a worker: a worker held while the queue is empty would keep a
      // reconcile waking from its sleep from ever going on.
      const key = await this.queue.get();
      if (key === undefined) break;
      if (signal.aborted && this.dropQueuedOnStop) {
        this.queue.done(key);
        break;
      }
      await permits.acquire();
      // Stopped while it waited for a worker: not started either.
      if (signal.aborted && this.dropQueuedOnStop) {
        permits.release();
        this.queue.done(key);
        break;
      }
      const one = this.runKey(key, signal, permits).finally(() => running.delete(one));
      running.add(one);
    }
    await Promise.all(running);
    signal.removeEventListener('abort', stop);
    // What was dropped is no one's work now: the depth gauge must not keep reading it.
    if (this.dropQueuedOnStop) this.metrics?.setDepth(this.name, 0);
  }

  private async runKey(key: string, signal: AbortSignal, permits: WorkerPermits): Promise<void> {
    this.metrics?.setDepth(this.name, this.queue.length);
    const held = new HeldPermit(permits, this.workers, (delta) => this.metrics?.activeWorkers(this.name, delta));
    try {
      await this.processOne(key, signal, (ms, atMostMs) => held.sleep(ms, atMostMs));
    } finally {
      held.finish();
      this.queue.done(key);
    }
  }

  /** One reconcile of `key`, with the outcome turned into queue actions. Exposed for tests. */
  async processOne(key: string, signal: AbortSignal, sleepWithoutWorker?: (ms: number, atMostMs?: number) => Promise<void>): Promise<void> {
    const { namespace, name } = splitKey(key);
    const req: ReconcileRequest = namespace === undefined ? { key, name } : { key, namespace, name };
    const logger = this.logger.child({ key });
    const started = process.hrtime.bigint();
    let outcome: 'success' | 'requeue' | 'error' | 'terminal' = 'success';
    try {
      const result = await inReconcile({ controller: this.name, key, ...(sleepWithoutWorker === undefined ? {} : { sleepWithoutWorker }) }, () => this.reconciler.reconcile(req, { logger, signal }));
      if (result?.failed === true && result.error !== undefined && failureAction(result.error) === 'wait-for-change') {
        outcome = this.failed(key, result.error, logger);
        return;
      }
      if (result?.failed === true) {
        outcome = 'error';
        const delay = Math.min(this.queue.backoff.next(key, FAILED_RETRY_BASE_MS), result.retryCapMs ?? Infinity);
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
      outcome = this.failed(key, err, logger);
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics?.observe(this.name, outcome, seconds);
      logger.debug({ outcome, seconds: Math.round(seconds * 1000) / 1000 }, 'reconciled');
    }
  }

  /** Turns a thrown error into queue actions, by `failureAction`. */
  private failed(key: string, err: unknown, logger: Logger): 'error' | 'terminal' {
    const code = err instanceof BinnacleError ? err.code : undefined;
    switch (failureAction(err)) {
      case 'wait-for-change':
        this.queue.forget(key);
        logger.error({ code, errorClass: err instanceof BinnacleError ? err.errorClass : undefined, err: errorMessage(err) }, 'reconcile failed; not retrying until the object changes');
        return 'terminal';
      case 'retry-as-bug':
        logger.error({ code, err: errorMessage(err), stack: err instanceof Error ? err.stack : undefined, retries: this.queue.backoff.retries(key) }, 'reconcile failed: a bug in Binnacle; retrying with backoff');
        this.queue.addRateLimited(key);
        return 'error';
      case 'retry':
        logger.warn({ code, err: errorMessage(err), retries: this.queue.backoff.retries(key) }, 'reconcile failed; retrying with backoff');
        this.queue.addRateLimited(key);
        return 'error';
    }
  }
}

/** How long a reconcile asleep without its worker sleeps when `asleep` of them are, for `workers` workers. */
export function sleepStretch(ms: number, asleep: number, workers: number, atMostMs = Infinity): number {
  return Math.max(ms, Math.min(ms * Math.max(1, asleep / workers), atMostMs, MAX_STRETCHED_SLEEP_MS));
}

/** The longest a stretched sleep grows to, whatever the number of sleepers. */
export const MAX_STRETCHED_SLEEP_MS = 30_000;
/**
 * How many reconciles of a controller sleep without a worker at once, per worker: each still
 * holds what it rendered and a pending revision. A sleep past that holds its worker, so a
 * controller has at most (1 + ASLEEP_PER_WORKER) × workers reconciles begun, and a free worker
 * always takes the next key.
 */
export const ASLEEP_PER_WORKER = 8;
/** A new key is served at least every this many permits, however many reconciles come back from sleep. */
const NEW_KEY_EVERY = 4;

/**
 * A controller's N workers as N permits. A reconcile coming back from a sleep without its
 * permit is served before a new key is taken: work begun finishes before more is started.
 */
export class WorkerPermits {
  private free: number;
  private sleeping = 0;
  private gone = 0;
  private served = 0;
  private readonly returning: (() => void)[] = [];
  private readonly starting: (() => void)[] = [];

  constructor(n: number) {
    this.free = n;
  }

  /** Waits for a permit; `returning` ones go first. */
  acquire(returning = false): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => (returning ? this.returning : this.starting).push(resolve));
  }

  release(): void {
    // Work begun goes first, but a new key (a spec fix, a deletion) is never held back for long.
    const newKeyTurn = this.starting.length > 0 && ++this.served % NEW_KEY_EVERY === 0;
    const next = (newKeyTurn ? this.starting.shift() : undefined) ?? this.returning.shift() ?? this.starting.shift();
    if (next === undefined) this.free++;
    else next();
  }

  /** Counts sleeps of reconciles without a permit; answers how many there are. */
  asleep(delta: number): number {
    this.sleeping += delta;
    return this.sleeping;
  }

  /** Counts reconciles that gave their permit back and have not taken one again; answers how many. */
  away(delta: number): number {
    this.gone += delta;
    return this.gone;
  }
}

/**
 * The permit one reconcile holds, given back while it sleeps and taken again (first in line)
 * when it wakes. Concurrent sleeps of one reconcile give back one permit; a sleep by something
 * the reconcile left running after it finished is a plain sleep.
 */
class HeldPermit {
  private holding = true;
  private finished = false;
  private retaking: Promise<void> | undefined;
  private isAway = false;

  constructor(
    private readonly permits: WorkerPermits,
    private readonly workers: number,
    private readonly active: (delta: number) => void,
  ) {
    active(1);
  }

  async sleep(ms: number, atMostMs?: number): Promise<void> {
    // Too many away already: this one keeps its worker (and sleeps as asked, unstretched).
    if (this.holding && this.permits.away(0) >= this.workers * ASLEEP_PER_WORKER) return sleep(ms);
    if (this.holding) {
      this.holding = false;
      this.isAway = true;
      this.permits.away(1);
      this.permits.release();
      this.active(-1);
    }
    const asleep = this.permits.asleep(1);
    try {
      // Many sleepers look again less often, so that together they ask about as often as the
      // workers would: a thousand hung hooks must not become a thousand polls a second.
      await sleep(sleepStretch(ms, asleep, this.workers, atMostMs));
    } finally {
      this.permits.asleep(-1);
      if (!this.holding && !this.finished) {
        this.retaking ??= this.permits.acquire(true).then(() => {
          this.retaking = undefined;
          this.back();
          if (this.finished) {
            this.permits.release();
            return;
          }
          this.holding = true;
          this.active(1);
        });
        await this.retaking;
      }
    }
  }

  /** No longer away without a permit: retaken, or finished. */
  private back(): void {
    if (!this.isAway) return;
    this.isAway = false;
    this.permits.away(-1);
  }

  finish(): void {
    this.finished = true;
    // Away with no retake coming (a sleep it left behind): not away any more. A retake under way says so when it lands.
    if (this.retaking === undefined) this.back();
    if (!this.holding) return;
    this.holding = false;
    this.permits.release();
    this.active(-1);
  }
}
