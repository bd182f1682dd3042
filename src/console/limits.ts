/**
 * What one person may take of the console: requests at a steady rate (a token bucket per person)
 * and a few live streams (each holds Kubernetes watches open), within a cap for everyone. A person
 * past a limit gets 429; the others keep what they have.
 */

export interface LimitOptions {
  /** Requests per second per person, sustained (default 20). */
  ratePerSecond?: number;
  /** Requests a person may send at once (default 120: a catalog page's first load reads the icons of every card in view). */
  burst?: number;
  /** Live streams per person (default 8). */
  streamsPerPerson?: number;
  /** Live streams in all (default 64). */
  streamsTotal?: number;
}

const MAX_BUCKETS = 10_000;

/** A token bucket per key. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly rate: number;
  private readonly burst: number;

  constructor(
    opts: LimitOptions = {},
    private readonly now: () => number = () => Date.now(),
  ) {
    this.rate = opts.ratePerSecond ?? 20;
    this.burst = opts.burst ?? 120;
  }

  /** Takes one request for `key`: undefined when allowed, else the seconds until one is (Retry-After). */
  take(key: string): number | undefined {
    const now = this.now();
    let b = this.buckets.get(key);
    if (b === undefined) {
      if (this.buckets.size >= MAX_BUCKETS) this.prune(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.rate);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.rate));
  }

  /** Forgets buckets that are full again (they would start full anyway), and the oldest if that is not enough. */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((now - b.at) / 1000) * this.rate >= this.burst) this.buckets.delete(k);
    for (const k of this.buckets.keys()) {
      if (this.buckets.size < MAX_BUCKETS) break;
      this.buckets.delete(k);
    }
  }
}

/** Counts open live streams per key and in all. */
export class StreamSlots {
  private readonly open = new Map<string, number>();
  private total = 0;
  private readonly perPerson: number;
  private readonly max: number;

  constructor(opts: LimitOptions = {}) {
    this.perPerson = opts.streamsPerPerson ?? 8;
    this.max = opts.streamsTotal ?? 64;
  }

  /** A release function for a slot, or why none is free. */
  acquire(key: string): { release: () => void } | { problem: string } {
    const mine = this.open.get(key) ?? 0;
    if (mine >= this.perPerson) return { problem: `${mine} live streams open already: at most ${this.perPerson} per person (close a tab)` };
    if (this.total >= this.max) return { problem: `the console has ${this.total} live streams open, its most; try again later` };
    this.open.set(key, mine + 1);
    this.total++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const n = (this.open.get(key) ?? 1) - 1;
        if (n <= 0) this.open.delete(key);
        else this.open.set(key, n);
      },
    };
  }

  get count(): number {
    return this.total;
  }
}
