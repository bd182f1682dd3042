/**
 * How the client spares a shared API server, as client-go's rest client does: a token bucket per
 * identity gates the start of every request (client-go's `rest.Config.QPS`/`Burst`, one limiter
 * per config), and an answer that asks the client to come back later (429, or a 5xx with
 * `Retry-After`) is sent again after the wait it names, a bounded number of times.
 *
 * The default, and why (docs/api-server-load.md says more): no client-side limit, as
 * controller-runtime since v0.15 (operator-sdk's helm-operator, Flux's controllers): its
 * `config.GetConfig` sets QPS -1, "we can rely on API priority and fairness". The API server's
 * Priority and Fairness sorts requests by identity and answers 429 with `Retry-After` when a
 * level is full, which the client waits out (below). A fixed client-side limit guesses the
 * server's capacity from the client; at 1,000 CRs Binnacle's resync alone asks about 17
 * reconciles a second, and a limit set for a quiet cluster holds back a busy one's work while
 * the server has room. `--kube-api-qps` sets one where an admin wants it (client-go's QPS, per
 * identity: the manager's own, and each ServiceAccount or user it impersonates, as a separate
 * rest.Config would have its own limiter), with `--kube-api-burst` (default 100).
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Requests per second and the burst a token bucket allows. */
export interface RateLimit {
  qps: number;
  burst: number;
}

/** Binnacle's default client-side limit (see above): none. */
export const DEFAULT_RATE_LIMIT: Readonly<RateLimit> | false = false;

/** The burst of a limit given by its QPS alone (kube-scheduler's, with its 50 QPS). */
export const DEFAULT_BURST = 100;

/** Time as the limiter and the retries see it: real by default, a test's own in unit tests. */
export interface Clock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Resolves after `ms`; rejects when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal === undefined ? {} : { signal }),
};

/**
 * A token bucket (golang.org/x/time/rate's, which client-go's limiter is): it holds up to
 * `burst` tokens, gains `qps` a second, and each request takes one. A request that finds none
 * reserves the next one still to come and waits for it, so waiting requests go in the order they
 * came and the rate holds however many wait.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly limit: Readonly<RateLimit>,
    private readonly clock: Clock,
  ) {
    if (!(limit.qps > 0) || !Number.isFinite(limit.qps)) throw new RangeError(`qps must be a positive number, not ${limit.qps}`);
    if (!Number.isSafeInteger(limit.burst) || limit.burst < 1) throw new RangeError(`burst must be a whole number ≥ 1, not ${limit.burst}`);
    this.tokens = limit.burst;
    this.last = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    if (now > this.last) this.tokens = Math.min(this.limit.burst, this.tokens + ((now - this.last) / 1000) * this.limit.qps);
    this.last = Math.max(this.last, now);
  }

  /** Takes a token, one still to come when none is left: answers how many ms to wait for it (0: none). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.limit.qps) * 1000;
  }

  /** Gives back a reserved token that was not used (its request was abandoned while it waited). */
  unreserve(): void {
    this.refill();
    this.tokens = Math.min(this.limit.burst, this.tokens + 1);
  }

  /** Waits for a token; answers how many ms it waited. A wait aborted by `signal` gives its token back. */
  async take(signal?: AbortSignal): Promise<number> {
    const wait = this.reserve();
    if (wait <= 0) return 0;
    try {
      await this.clock.sleep(wait, signal);
    } catch (err) {
      this.unreserve();
      throw err;
    }
    return wait;
  }

  /** As full as a new bucket: forgetting it changes nothing. */
  isFull(): boolean {
    this.refill();
    return this.tokens >= this.limit.burst;
  }
}

/** Past this many identities, buckets that are full again (idle) are forgotten. */
const KEEP_IDLE_BUCKETS = 256;

/** One token bucket per identity, made when the identity first sends a request. */
export class RateLimiters {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    readonly limit: Readonly<RateLimit>,
    private readonly clock: Clock,
  ) {
    new TokenBucket(limit, clock); // checks the limit now, not at the first request
  }

  for(identity: string): TokenBucket {
    let bucket = this.buckets.get(identity);
    if (bucket === undefined) {
      if (this.buckets.size >= KEEP_IDLE_BUCKETS) for (const [k, b] of this.buckets) if (b.isFull()) this.buckets.delete(k);
      bucket = new TokenBucket(this.limit, this.clock);
      this.buckets.set(identity, bucket);
    }
    return bucket;
  }

  get size(): number {
    return this.buckets.size;
  }
}

/**
 * How many times one request is sent again after an answer that asks for it: client-go's
 * (rest.Request's maxRetries).
 */
export const MAX_RETRIES = 10;
/** The longest Retry-After honoured as given: API Priority and Fairness never asks more (apiserver's droppedRequestsTracker, maxRetryAfter). */
export const MAX_RETRY_AFTER_S = 32;
/** The backoff under the server's Retry-After: 250 ms, doubling with each retry of a request, up to 8 s. */
export const RETRY_BACKOFF_BASE_MS = 250;
export const RETRY_BACKOFF_MAX_MS = 8_000;
/** Each wait is lengthened by up to this fraction, at random, so that requests refused together do not come back together. */
export const RETRY_JITTER = 0.25;

/**
 * The `Retry-After` header in whole seconds, as client-go reads it (strconv.Atoi: an integer, no
 * HTTP date), held to 0…MAX_RETRY_AFTER_S; undefined when missing or not a number.
 */
export function retryAfterSeconds(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\s*[-+]?\d+\s*$/.test(value)) return undefined;
  return Math.min(MAX_RETRY_AFTER_S, Math.max(0, Number(value)));
}

/**
 * Whether an answer is to be sent again, and after how long (ms); undefined: it is the answer.
 * As client-go's `checkWait`: a 429, or any 5xx, that carries a Retry-After, for every verb.
 * API Priority and Fairness refuses a request with 429 before it runs (the filter sits before the
 * handler), so a write refused so is safe to send again; a 5xx with Retry-After is the server
 * shutting down or timing out, and a write it may have done meets its own trace when sent again
 * (create: AlreadyExists, update: a resourceVersion Conflict, apply: the same result).
 *
 * The wait is the larger of Retry-After and the backoff for this `retry` (1 for the first),
 * lengthened by up to RETRY_JITTER at random.
 */
export function retryDelayMs(status: number, retryAfter: string | string[] | undefined, retry: number, random: () => number = Math.random): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  const seconds = retryAfterSeconds(retryAfter);
  if (seconds === undefined) return undefined;
  const backoff = Math.min(RETRY_BACKOFF_MAX_MS, RETRY_BACKOFF_BASE_MS * 2 ** Math.max(0, retry - 1));
  return Math.max(seconds * 1000, backoff) * (1 + RETRY_JITTER * random());
}

/** What the client tells its throttling observers: a wait for the limiter, or a retry the server asked for. */
export type ThrottleEvent =
  | { type: 'wait'; ms: number; verb: string; resource: string }
  | { type: 'retry'; ms: number; status: number; method: string; verb: string; resource: string };
