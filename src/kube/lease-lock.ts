/**
 * A mutex across processes on a `coordination.k8s.io/v1` Lease, for short critical sections
 * that must not interleave even while two managers overlap (a leader that lost its lease may
 * still be finishing a reconcile). It takes the Lease with the leader-election rules
 * (`leader-election.ts`: conditional updates, expiry judged on the local clock), renews it while
 * sections run, and gives it up once no caller of this process is waiting (or has come for
 * `holdIdleMs` after the last section). Within one process, callers queue in order first, so
 * only one of them asks the API server at a time, and back-to-back sections do not take and
 * give up the Lease each time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { BinnacleError } from '../util/errors.js';
import { LeaderElector, type LeaseClient } from './leader-election.js';

export interface LeaseLockOptions {
  client: LeaseClient;
  namespace: string;
  name: string;
  /** This process; must differ between processes. */
  identity: string;
  logger: Logger;
  /** How long a holder that stopped renewing keeps the lock (default 15 s). */
  leaseDurationMs?: number;
  /** How often to try while another process holds it (default 200 ms). */
  retryMs?: number;
  /**
   * How long the Lease is kept (renewed) after the last section, for the next one (default 0:
   * given up at once). Each give-up and take is a write, and a take makes readers of caches
   * list the API server (`acquisitions`): sections that come every few seconds, as a
   * reconciler's requeues do, should not pay that each time while the API server is busy.
   */
  holdIdleMs?: number;
}

export class LeaseLock {
  private readonly elector: LeaderElector;
  private readonly leaseDurationMs: number;
  private readonly retryMs: number;
  private tail: Promise<void> = Promise.resolve();
  /** Callers in this process waiting for or inside a section. */
  private queued = 0;
  /** Renews the Lease while this process holds it (across back-to-back sections). */
  private renewal: ReturnType<typeof setInterval> | undefined;
  private renewedAt = 0;
  /** The pending give-up of a Lease held idle (`holdIdleMs`). */
  private idleGiveUp: ReturnType<typeof setTimeout> | undefined;
  /** Set by close(): no Lease is held idle any more. */
  private closed = false;
  /**
   * How many times this process has taken the Lease anew. A section that finds it changed since
   * the last one cannot know what another process wrote in between (readers of caches go to the
   * API server then); back-to-back sections of one holding see the same number.
   */
  acquisitions = 0;

  constructor(private readonly o: LeaseLockOptions) {
    this.leaseDurationMs = o.leaseDurationMs ?? 15_000;
    this.retryMs = o.retryMs ?? 200;
    this.elector = new LeaderElector({
      client: o.client,
      namespace: o.namespace,
      name: o.name,
      identity: o.identity,
      logger: o.logger,
      leaseDurationMs: this.leaseDurationMs,
      renewDeadlineMs: Math.floor(this.leaseDurationMs * 0.66),
      onStartedLeading: () => undefined,
    });
  }

  get where(): string {
    return `Lease ${this.o.namespace}/${this.o.name}`;
  }

  /**
   * Runs `fn` holding the lock. Waits at most `timeoutMs` (default: the lease duration and a
   * few seconds, so a crashed holder's lease can expire) and then throws `LOCK_BUSY`.
   */
  async withLock<T>(fn: () => Promise<T>, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
    const before = this.tail;
    let done: () => void = () => undefined;
    this.tail = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.queued++;
    if (this.idleGiveUp !== undefined) {
      clearTimeout(this.idleGiveUp);
      this.idleGiveUp = undefined;
    }
    try {
      await before;
      // Held since an earlier section: only trusted while renewals keep succeeding.
      if (this.renewal === undefined || Date.now() - this.renewedAt > this.leaseDurationMs / 2) {
        await this.acquire(opts.timeoutMs ?? this.leaseDurationMs + 5_000, opts.signal);
        this.acquisitions++;
        this.renewedAt = Date.now();
        this.renewal ??= setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseDurationMs / 3)));
      }
      return await fn();
    } finally {
      this.queued--;
      // Back-to-back sections of this process keep the Lease; the last one gives it up (or has it given up once idle).
      if (this.queued === 0 && this.renewal !== undefined) {
        if ((this.o.holdIdleMs ?? 0) > 0 && !this.closed) this.giveUpWhenIdle(this.o.holdIdleMs ?? 0);
        else await this.giveUp();
      }
      done();
    }
  }

  private async giveUp(): Promise<void> {
    if (this.renewal !== undefined) clearInterval(this.renewal);
    this.renewal = undefined;
    await this.elector.release();
  }

  /**
   * Gives the Lease up after `ms` unless a section comes first. The give-up queues like a
   * section, so a section that comes while it is being written waits for it and takes the Lease anew.
   */
  private giveUpWhenIdle(ms: number): void {
    this.idleGiveUp = setTimeout(() => {
      this.idleGiveUp = undefined;
      void this.queueGiveUp();
    }, ms);
    this.idleGiveUp.unref();
  }

  private queueGiveUp(): Promise<void> {
    const before = this.tail;
    let done: () => void = () => undefined;
    this.tail = new Promise<void>((resolve) => {
      done = resolve;
    });
    return before
      .then(async () => {
        if (this.queued === 0 && this.renewal !== undefined) await this.giveUp();
      })
      .catch((err: unknown) => this.o.logger.warn({ lease: this.where, err: err instanceof Error ? err.message : String(err) }, 'cannot give the Lease up; it expires'))
      .finally(() => done());
  }

  /**
   * The process is stopping: the next holder need not wait for the Lease to expire. One held idle
   * is given up now; a section still running gives it up as it ends, not `holdIdleMs` later.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.idleGiveUp !== undefined) {
      clearTimeout(this.idleGiveUp);
      this.idleGiveUp = undefined;
    }
    if (this.queued === 0 && this.renewal !== undefined) await this.queueGiveUp();
  }

  private async renew(): Promise<void> {
    if (await this.elector.tryAcquireOrRenew()) this.renewedAt = Date.now();
  }

  private async acquire(timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await this.elector.tryAcquireOrRenew()) return;
      if (signal?.aborted === true) throw new BinnacleError('transient', 'LOCK_ABORTED', `stopped while waiting for ${this.where}`);
      if (Date.now() > deadline) throw new BinnacleError('transient', 'LOCK_BUSY', `${this.where} is held by another process; try again`);
      await sleep(this.retryMs);
    }
  }
}
