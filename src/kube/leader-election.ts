/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's rules: a candidate
 * takes the lease only when its holder has not renewed it within the lease duration *as this
 * candidate observed it* (local clock, so clock skew between machines does not matter); the
 * leader renews every retry period and gives up leadership if it cannot renew within the
 * renew deadline. Updates use the Lease's resourceVersion, so two candidates never both win.
 *
 * Leadership is also a write fence (`WriteFence`): it stays valid for the renew deadline after
 * the start of the last successful renewal, judged on the local clock at each write. A leader
 * that was paused (SIGSTOP, a long GC, a starved machine) finds on waking that its deadline
 * passed and refuses the write before anything else runs, even before the renew loop notices;
 * other candidates wait a whole lease duration (longer than the renew deadline) from when they
 * saw that renewal, so the old leader's last write comes before the new leader's first.
 */
import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { BinnacleError } from '../util/errors.js';
import type { WriteFence } from './client.js';
import type { ObjectReader, ObjectWriter } from './ports.js';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import type { KubeObject } from './types.js';
import { errorMessage } from '../util/errors.js';

/** The manager's leader-election Lease unless its caller names another: its holder is `<host>_<pid>`, a Pod's name first in a cluster. */
export const LEADER_LEASE_NAME = 'binnacle-manager';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** What taking and renewing a Lease takes: read it, create it, update it at the resourceVersion read. */
export type LeaseClient = Pick<ObjectReader, 'find'> & Pick<ObjectWriter, 'create' | 'update'>;

export interface LeaderElectionOptions {
  client: LeaseClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
  /**
   * Called once this candidate leads; `signal` aborts when leadership is lost or the elector
   * stops. Writes made for the leader go through a client fenced with `fence`
   * (`client.fenced(fence)`), so none reaches the API server once leadership may be gone.
   */
  onStartedLeading: (signal: AbortSignal, fence: WriteFence) => void | Promise<void>;
  /**
   * Called when this candidate stops leading: at once when leadership is lost (`lost`: the
   * lease could not be renewed within the renew deadline), without waiting for the leader's
   * work to wind down; after that work has finished when the elector was asked to stop.
   */
  onStoppedLeading?: (lost: boolean) => void;
  onNewLeader?: (identity: string) => void;
}

/** Lease times are MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private readonly o: Required<Omit<LeaderElectionOptions, 'onStoppedLeading' | 'onNewLeader'>> & Pick<LeaderElectionOptions, 'onStoppedLeading' | 'onNewLeader'>;
  private observedRecord = '';
  private observedTime = 0;
  private lastLeader = '';
  private leading = false;
  /** When the last call of `tryAcquireOrRenew` started: a renewal counts from its start. */
  private lastAttempt = 0;

  constructor(opts: LeaderElectionOptions) {
    this.o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
    if (this.o.renewDeadlineMs >= this.o.leaseDurationMs) throw new BinnacleError('input', 'LEADER_ELECTION_OPTIONS', 'renewDeadline must be shorter than leaseDuration');
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Campaigns, leads, and returns when `signal` aborts (releasing the lease) or leadership is lost. */
  async run(signal: AbortSignal): Promise<void> {
    // Acquire.
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) break;
      await sleep(this.jitter(this.o.retryPeriodMs), undefined, { signal }).catch(() => undefined);
    }
    if (signal.aborted) return;

    this.leading = true;
    let lastRenew = this.lastAttempt;
    const leadership = new AbortController();
    const onAbort = (): void => leadership.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const expired = (): boolean => Date.now() - lastRenew > this.o.renewDeadlineMs;
    let lostLease = false;
    const lose = (why: string): void => {
      if (leadership.signal.aborted) return;
      lostLease = true;
      this.leading = false;
      this.o.logger.error({ lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity }, `leader election lost: ${why}`);
      leadership.abort();
    };
    const fence: WriteFence = {
      signal: leadership.signal,
      check: (what) => {
        if (!leadership.signal.aborted && expired()) lose(`no renewal within the renew deadline (${this.o.renewDeadlineMs} ms)`);
        if (leadership.signal.aborted) throw new BinnacleError('transient', 'LEADERSHIP_LOST', `${what}: refused, this manager no longer holds the leader Lease ${this.o.namespace}/${this.o.name}`);
      },
    };
    // Leadership ends at the renew deadline even when a renewal hangs or the loop is starved.
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const armDeadline = (): void => {
      clearTimeout(deadline);
      deadline = setTimeout(() => {
        if (expired()) lose(`no renewal within the renew deadline (${this.o.renewDeadlineMs} ms)`);
        else armDeadline();
      }, Math.max(1, lastRenew + this.o.renewDeadlineMs + 1 - Date.now()));
    };
    armDeadline();
    this.o.logger.info({ lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity }, 'became leader');
    const work = Promise.resolve(this.o.onStartedLeading(leadership.signal, fence)).catch((err: unknown) => {
      this.o.logger.error({ err: errorMessage(err) }, 'leader work failed');
      leadership.abort();
    });

    // Renew until we cannot, or until asked to stop.
    while (!leadership.signal.aborted) {
      await sleep(this.o.retryPeriodMs, undefined, { signal: leadership.signal }).catch(() => undefined);
      if (leadership.signal.aborted) break;
      // A renewal that comes back after the deadline does not revive leadership: the fence has
      // already refused writes, and another candidate may have acted on the expiry.
      if (expired()) {
        lose(`no renewal within the renew deadline (${this.o.renewDeadlineMs} ms)`);
        break;
      }
      if (await this.tryAcquireOrRenew(lastRenew + this.o.renewDeadlineMs)) {
        if (!leadership.signal.aborted && Date.now() - this.lastAttempt <= this.o.renewDeadlineMs) {
          lastRenew = this.lastAttempt;
          armDeadline();
        }
      } else if (expired()) {
        lose('failed to renew the lease within the renew deadline');
      }
    }
    clearTimeout(deadline);
    signal.removeEventListener('abort', onAbort);
    this.leading = false;
    if (lostLease) {
      // controller-runtime exits here; the caller decides, without waiting for in-flight work
      // (its writes are already refused by the fence).
      this.o.onStoppedLeading?.(true);
      await work;
      return;
    }
    await work;
    await this.release();
    this.o.onStoppedLeading?.(false);
  }

  private jitter(ms: number): number {
    return ms * (1 + Math.random() * 0.2);
  }

  private leaseRef(): { apiVersion: string; kind: string; namespace: string; name: string } {
    return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: this.o.namespace, name: this.o.name };
  }

  /**
   * One round: take or renew the lease if allowed. Answers whether this candidate holds it.
   * `notAfter` (epoch ms): a renewal that would be sent later than this is not sent (a leader
   * paused between reading and writing the Lease must not write it after its deadline).
   */
  async tryAcquireOrRenew(notAfter = Infinity): Promise<boolean> {
    const now = new Date();
    this.lastAttempt = now.getTime();
    const durationSeconds = Math.max(1, Math.round(this.o.leaseDurationMs / 1000));
    let lease: Lease | undefined;
    try {
      lease = await this.o.client.find<Lease>(this.leaseRef());
    } catch (err) {
      this.o.logger.warn({ err: errorMessage(err) }, 'cannot read lease');
      return false;
    }
    if (lease === undefined) return this.createLease(now, durationSeconds);

    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    this.observe(holder, JSON.stringify({ holder, renew: spec.renewTime ?? '' }));
    const heldByOther = holder !== '' && holder !== this.o.identity;
    const expiresAt = this.observedTime + (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (heldByOther && expiresAt > now.getTime()) return false;
    return this.takeLease(lease, now, durationSeconds, notAfter);
  }

  /** No Lease yet: this candidate creates it, holding it; another that created it first wins. */
  private async createLease(now: Date, durationSeconds: number): Promise<boolean> {
    try {
      await this.o.client.create<Lease>({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.o.name, namespace: this.o.namespace },
        spec: { holderIdentity: this.o.identity, leaseDurationSeconds: durationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
      });
      this.observe(this.o.identity, JSON.stringify({ holder: this.o.identity, renew: microTime(now) }));
      return true;
    } catch (err) {
      if (!isAlreadyExists(err)) this.o.logger.warn({ err: errorMessage(err) }, 'cannot create lease');
      return false;
    }
  }

  /** Renews the lease this candidate holds, or takes over one that expired (a transition); a write that lost the race fails quietly. */
  private async takeLease(lease: Lease, now: Date, durationSeconds: number, notAfter: number): Promise<boolean> {
    const spec = lease.spec ?? {};
    const renewing = (spec.holderIdentity ?? '') === this.o.identity;
    const next: Lease = {
      ...lease,
      spec: {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: renewing && spec.acquireTime !== undefined ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (renewing ? 0 : 1),
      },
    };
    if (Date.now() > notAfter) return false;
    try {
      await this.o.client.update<Lease>(next);
      this.observe(this.o.identity, JSON.stringify({ holder: this.o.identity, renew: next.spec?.renewTime ?? '' }));
      return true;
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) this.o.logger.warn({ err: errorMessage(err) }, 'cannot update lease');
      return false;
    }
  }

  private observe(holder: string, record: string): void {
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedTime = Date.now();
    }
    if (holder !== this.lastLeader) {
      this.lastLeader = holder;
      if (holder !== '') this.o.onNewLeader?.(holder);
    }
  }

  /** Gives the lease up so another candidate need not wait for it to expire. */
  async release(): Promise<void> {
    try {
      const lease = await this.o.client.find<Lease>(this.leaseRef());
      if (lease?.spec?.holderIdentity !== this.o.identity) return;
      await this.o.client.update<Lease>({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) } });
    } catch (err) {
      this.o.logger.warn({ err: errorMessage(err) }, 'cannot release lease');
    }
  }
}
