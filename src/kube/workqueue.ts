/**
 * A rate-limited work queue with client-go's semantics:
 * - a key waiting in the queue is there once (dedup), however often it is added;
 * - a key being processed is never handed to a second worker; if added meanwhile, it is
 *   queued again when `done` is called (so no update is lost);
 * - `addRateLimited` delays a key by a per-key exponential backoff that `forget` resets;
 * - `shutDown` wakes waiting workers; `shutDownWithDrain` also waits for in-flight keys.
 */

export interface BackoffOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseDelayMs: 5, maxDelayMs: 1000 * 1000 };

/** Per-key exponential backoff: base · 2^failures, capped. */
export class ExponentialBackoff {
  private readonly failures = new Map<string, number>();
  constructor(private readonly opts: BackoffOptions = DEFAULT_BACKOFF) {}

  /** The delay before `key`'s next try, counting this failure; `baseDelayMs` overrides the queue's base. */
  next(key: string, baseDelayMs = this.opts.baseDelayMs): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(baseDelayMs * 2 ** n, this.opts.maxDelayMs);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}

type K = string;

export class WorkQueue {
  private readonly queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly waiters: ((key: K | undefined) => void)[] = [];
  private readonly timers = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  private readonly drainWaiters: (() => void)[] = [];
  private shuttingDown = false;
  readonly backoff: ExponentialBackoff;
  /** Told of each key queued (not one already waiting) and each retry: the workqueue metrics. */
  observer: { added(): void; retried(): void } | undefined;

  constructor(backoff: BackoffOptions = DEFAULT_BACKOFF) {
    this.backoff = new ExponentialBackoff(backoff);
  }

  /** Queues `key` now (a no-op if it is already waiting). */
  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.observer?.added();
    if (this.processing.has(key)) return; // re-queued by done()
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      waiter(key);
    } else {
      this.queue.push(key);
    }
  }

  /** Queues `key` after `delayMs`; an earlier pending time for the same key wins. */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.timers.get(key);
    if (pending !== undefined) {
      if (pending.at <= at) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { at, timer });
  }

  /** Queues `key` after its next backoff delay. */
  addRateLimited(key: K): void {
    this.observer?.retried();
    this.addAfter(key, this.backoff.next(key));
  }

  /** Resets `key`'s backoff (after a success). */
  forget(key: K): void {
    this.backoff.forget(key);
  }

  /** Waits for the next key; undefined once the queue is shut down. */
  get(): Promise<K | undefined> {
    if (this.shuttingDown && this.queue.length === 0) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` processed; queues it again if it was added while being processed. */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
    if (this.processing.size === 0) for (const w of this.drainWaiters.splice(0)) w();
  }

  get length(): number {
    return this.queue.length;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** Shuts down and waits until every key being processed is done. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return;
    await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }
}
