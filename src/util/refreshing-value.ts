/**
 * A value read from elsewhere and shared by many callers (the API server's version, its API
 * version set, its OpenAPI index): read again once older than `ttlMs`. Past that, a value that
 * was read is served at once while it is read again in the background (one read, however many
 * callers), up to `staleMs` after it was read; past `staleMs`, or when nothing was read yet or it
 * was forgotten, callers wait for the read. A failed read is not kept: the callers waiting get
 * its error, a background one leaves the last value and is tried again a TTL later. `refresh`
 * reads at once for a caller that needs something newer; only that caller waits.
 *
 * Why: every render shares these values, so one read the API server is slow to answer (queued by
 * Priority and Fairness under load, or a request lost until the client's deadline) would hold
 * every reconcile of the manager until it came. (A 1,000-CR bench once stood still for 60 s,
 * both workers at once; its audit log showed an OpenAPI read as the first request after the
 * pause, but not what held the reconciles: this removes one way it could happen, not a proven cause.)
 */
export interface RefreshingValueOptions {
  ttlMs: number;
  /** How long after its read a value may still be served while it is read again; at least `ttlMs`. */
  staleMs: number;
  /** Milliseconds, monotonic. */
  now: () => number;
}

interface Entry<T> {
  /** When its read began. */
  at: number;
  value: Promise<T>;
  read: boolean;
  refreshing: boolean;
  /** When a failed background read may be tried again. */
  retryAt: number;
}

export class RefreshingValue<T> {
  private entry: Entry<T> | undefined;

  constructor(private readonly o: RefreshingValueOptions) {}

  /** The value, read with `read` when there is none fresh enough (see above). */
  get(read: () => Promise<T>): Promise<T> {
    const known = this.entry;
    const now = this.o.now();
    const age = known === undefined ? Infinity : now - known.at;
    if (known !== undefined && age < this.o.ttlMs) return known.value;
    if (known?.read === true && age < this.o.staleMs) {
      if (!known.refreshing && now >= known.retryAt) this.readBehind(known, read);
      return known.value;
    }
    return this.readAndWait(read);
  }

  /**
   * Reads again now, and this caller waits for it (something it needs may be newer than the
   * value: a CRD created since). Other callers meanwhile are served as `get` serves them; the read
   * replaces the value when it comes, and a failed one leaves it. With no value read yet, every
   * caller waits for this read.
   */
  refresh(read: () => Promise<T>): Promise<T> {
    const known = this.entry;
    if (known?.read !== true) return this.readAndWait(read);
    const at = this.o.now();
    const next = started(read);
    next.then(
      () => {
        if (this.entry === known) this.entry = { at, value: next, read: true, refreshing: false, retryAt: 0 };
      },
      () => undefined,
    );
    return next;
  }

  /** A read every caller waits for, until it ends; a failed one is not kept. */
  private readAndWait(read: () => Promise<T>): Promise<T> {
    const entry: Entry<T> = { at: this.o.now(), value: started(read), read: false, refreshing: false, retryAt: 0 };
    this.entry = entry;
    entry.value.then(
      () => {
        entry.read = true;
      },
      () => {
        if (this.entry === entry) this.entry = undefined;
      },
    );
    return entry.value;
  }

  /** When the read of the value served now began (a read still running counts from its start); undefined with none. */
  get readAt(): number | undefined {
    return this.entry?.at;
  }

  /** Forgets the value: the next caller waits for a new read. */
  forget(): void {
    this.entry = undefined;
  }

  private readBehind(known: Entry<T>, read: () => Promise<T>): void {
    known.refreshing = true;
    const at = this.o.now();
    const next = started(read);
    next.then(
      () => {
        if (this.entry === known) this.entry = { at, value: next, read: true, refreshing: false, retryAt: 0 };
      },
      () => {
        // The last value stays (still only up to staleMs after its own read).
        known.refreshing = false;
        known.retryAt = this.o.now() + this.o.ttlMs;
      },
    );
  }
}

/** `read()`, a synchronous throw turned into a rejection (so no read is left marked as running). */
function started<T>(read: () => Promise<T>): Promise<T> {
  try {
    return read();
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
