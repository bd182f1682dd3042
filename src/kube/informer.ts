/**
 * An informer: a local cache of one kind kept current by list+watch, which tells handlers
 * what changed. It relists when the watch's resourceVersion is too old (410 Gone), retries
 * with backoff when the server is away, and resyncs (re-delivers every object as an update)
 * on an interval, so level-triggered controllers see every object again now and then.
 */
import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ObjectReader, Watcher } from './ports.js';
import { isGone } from './errors.js';
import { objectKey, type KubeObject } from './types.js';
import { MAX_OBJECT_NESTING } from '../util/nesting.js';

export interface InformerHandlers<T extends KubeObject> {
  add?: (obj: T) => void;
  update?: (oldObj: T, newObj: T) => void;
  delete?: (obj: T) => void;
  /** A version of the object the cache could not read (too deep); the cache keeps the one it had. */
  refused?: (stub: KubeObject) => void;
}

export interface InformerOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Re-deliver every cached object this often (0: never). */
  resyncMs?: number;
  logger?: Logger;
}

/** What an informer reads with: a list, then a watch from its resourceVersion. */
export type ListWatcher = Pick<ObjectReader, 'list'> & Watcher;

export class Informer<T extends KubeObject = KubeObject> {
  private readonly store = new Map<string, T>();
  /** Keys whose newest version was refused: what the cache holds for them is not current. */
  private readonly unreadable = new Set<string>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private synced = false;
  /** Listed and watching now: false from a list or watch failure until the next list succeeds. */
  private watching = false;
  private readonly syncWaiters: (() => void)[] = [];
  /** The newest resourceVersion this cache has caught up to (a list's, an event's, a bookmark's). */
  private lastResourceVersion = '';
  private readonly rvWaiters: { rv: bigint; resolve: (seen: boolean) => void }[] = [];

  constructor(
    private readonly client: ListWatcher,
    readonly apiVersion: string,
    readonly kind: string,
    private readonly opts: InformerOptions = {},
  ) {}

  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
    // Late handlers see what is already cached, as in client-go.
    if (h.add !== undefined) for (const obj of this.store.values()) h.add(obj);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /**
   * The cached object only when it is the newest version the server has sent: undefined when a
   * newer one was refused, so a caller reads it live and reports why it cannot be read instead of
   * acting on a version its writer has replaced.
   */
  current(key: string): T | undefined {
    return this.unreadable.has(key) ? undefined : this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Whether the cache is being kept current right now (listed, its watch not failing). */
  get isWatching(): boolean {
    return this.watching;
  }

  /**
   * Whether this cache has seen every change of its kind up to `resourceVersion` (an object's,
   * as a write answered it): the read-your-writes check of controller-runtime's cached client.
   * resourceVersions are compared as the integers the API server makes them (comparable since
   * Kubernetes 1.35, KEP-5504); one that is not an integer is never taken as seen, so callers
   * fall back to reading the API server.
   */
  hasSeen(resourceVersion: string | undefined): boolean {
    if (resourceVersion === undefined || resourceVersion === '') return this.synced;
    const want = toRv(resourceVersion);
    const have = toRv(this.lastResourceVersion);
    return this.synced && want !== undefined && have !== undefined && have >= want;
  }

  /** Resolves true once `hasSeen(resourceVersion)`, or false after `timeoutMs` (or at once when it never can be). */
  waitForResourceVersion(resourceVersion: string | undefined, timeoutMs: number): Promise<boolean> {
    if (this.hasSeen(resourceVersion)) return Promise.resolve(true);
    const rv = toRv(resourceVersion ?? '');
    if (rv === undefined) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = { rv, resolve: (seen: boolean): void => resolve(seen) };
      const timer = setTimeout(() => {
        const i = this.rvWaiters.indexOf(waiter);
        if (i >= 0) this.rvWaiters.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      waiter.resolve = (seen) => {
        clearTimeout(timer);
        resolve(seen);
      };
      this.rvWaiters.push(waiter);
    });
  }

  private caughtUpTo(rv: string): void {
    this.lastResourceVersion = rv;
    if (this.rvWaiters.length === 0 || !this.synced) return;
    const have = toRv(rv);
    if (have === undefined) return;
    for (let i = this.rvWaiters.length - 1; i >= 0; i--) {
      const w = this.rvWaiters[i];
      if (w !== undefined && have >= w.rv) {
        this.rvWaiters.splice(i, 1);
        w.resolve(true);
      }
    }
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const resync = this.opts.resyncMs ?? 0;
    let resyncTimer: NodeJS.Timeout | undefined;
    if (resync > 0) {
      resyncTimer = setInterval(() => {
        for (const obj of this.store.values()) this.emit('update', obj, obj);
      }, resync);
    }
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          // Back after the server was away: every object is delivered again (client-go's relist
          // does the same), so a key waiting out a long backoff from the failures meanwhile is
          // reconciled now, not minutes later.
          let rv = await this.relist(failures > 0);
          failures = 0;
          this.watching = true;
          // Watch from the list's resourceVersion until the server says it is too old.
          for (;;) {
            if (signal.aborted) return;
            rv = await this.watchFrom(rv, signal);
          }
        } catch (err) {
          this.watching = false;
          if (signal.aborted) return;
          if (!isGone(err)) {
            failures++;
            const delay = Math.min(100 * 2 ** failures, 30_000);
            this.opts.logger?.warn({ kind: this.kind, err: err instanceof Error ? err.message : String(err), retryInMs: delay }, 'informer list/watch failed');
            await sleep(delay, undefined, { signal }).catch(() => undefined);
          }
        }
      }
    } finally {
      this.watching = false;
      if (resyncTimer !== undefined) clearInterval(resyncTimer);
    }
  }

  /** Lists and brings the store in line; `everything`: unchanged objects are delivered as updates too. */
  private async relist(everything = false): Promise<string> {
    const list = await this.client.list<T>(this.apiVersion, this.kind, this.opts);
    const seen = new Set<string>();
    for (const r of list.refused ?? []) {
      // Not read: the cache keeps the version it had, if any (it is not deleted below).
      seen.add(objectKey(r.metadata));
      this.refused(r);
    }
    for (const obj of list.items) {
      const key = objectKey(obj.metadata);
      seen.add(key);
      const old = this.store.get(key);
      this.unreadable.delete(key);
      this.store.set(key, obj);
      if (old === undefined) this.emit('add', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', old, obj);
      else if (everything) this.emit('update', obj, obj);
    }
    for (const [key, old] of this.store) {
      if (!seen.has(key)) {
        this.store.delete(key);
        this.unreadable.delete(key);
        this.emit('delete', old);
      }
    }
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
    this.caughtUpTo(list.metadata.resourceVersion ?? '');
    return list.metadata.resourceVersion ?? '';
  }

  /** Applies watch events; answers the last resourceVersion seen when the watch ends. */
  private async watchFrom(resourceVersion: string, signal: AbortSignal): Promise<string> {
    let rv = resourceVersion;
    for await (const ev of this.client.watch<T>(this.apiVersion, this.kind, { ...this.opts, resourceVersion: rv, signal, timeoutSeconds: 240 + Math.floor(Math.random() * 60) })) {
      const newRv = ev.object.metadata.resourceVersion;
      if (newRv !== undefined) rv = newRv;
      if (ev.type === 'BOOKMARK') {
        this.caughtUpTo(rv);
        continue;
      }
      const key = objectKey(ev.object.metadata);
      const old = this.store.get(key);
      if (ev.type === 'DELETED') {
        this.store.delete(key);
        this.unreadable.delete(key);
        // A deleted object that was not read whole: handlers get the last version that was.
        this.emit('delete', ev.refused === true ? (old ?? ev.object) : ev.object);
      } else if (ev.refused === true) {
        this.refused(ev.object); // the cache keeps the version it had
      } else {
        this.unreadable.delete(key);
        this.store.set(key, ev.object);
        if (old === undefined) this.emit('add', ev.object);
        else this.emit('update', old, ev.object);
      }
      this.caughtUpTo(rv);
    }
    return rv;
  }

  private refused(obj: KubeObject): void {
    const m = obj.metadata;
    this.unreadable.add(objectKey(m));
    for (const h of this.handlers) h.refused?.(obj);
    this.opts.logger?.warn(
      { kind: this.kind, name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion },
      `object nests deeper than ${MAX_OBJECT_NESTING} levels: not read, and the cache keeps the version it had`,
    );
  }

  private emit(type: 'add' | 'delete', obj: T): void;
  private emit(type: 'update', oldObj: T, newObj: T): void;
  private emit(type: 'add' | 'update' | 'delete', a: T, b?: T): void {
    for (const h of this.handlers) {
      try {
        if (type === 'add') h.add?.(a);
        else if (type === 'delete') h.delete?.(a);
        else h.update?.(a, b ?? a);
      } catch (err) {
        this.opts.logger?.error({ kind: this.kind, err: err instanceof Error ? err.message : String(err) }, 'informer handler failed');
      }
    }
  }
}

function toRv(rv: string): bigint | undefined {
  return /^[0-9]{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}
