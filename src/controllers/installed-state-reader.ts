/**
 * The installed state as the ClusterExtension reconciler reads it, with the extension itself:
 * its default `InstalledStateView`. Read from the manager's informer caches, as
 * controller-runtime's cached client reads, once they have caught up with this manager's own
 * last writes (read-your-writes: the resourceVersions its writes answered); the API server is
 * listed instead when they have not within a moment, after a delete, and whenever the
 * installed-state lock was taken anew (another process may have written in between).
 */
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import { buildInstalledState, type InstalledState } from '../installed/index.js';
import type { ObjectReader } from '../kube/ports.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';

/** Runs a section that reads and changes the installed state, one at a time (a `LeaseLock`). */
export interface InstalledStateLock {
  withLock<T>(fn: () => Promise<T>, opts?: { signal?: AbortSignal }): Promise<T>;
  /** How many times the lock was taken anew (not carried over from the last section); see `LeaseLock`. */
  readonly acquisitions?: number;
}

/** A cache of one kind, kept current by a watch: an `Informer`. */
export interface KindCache<T extends KubeObject> {
  get(key: string): T | undefined;
  list(): T[];
  waitForResourceVersion(resourceVersion: string | undefined, timeoutMs: number): Promise<boolean>;
}

/** The manager's caches of the two kinds the installed state is built from. */
export interface InstalledCaches {
  deployments: KindCache<BundleDeployment>;
  extensions: KindCache<ClusterExtension>;
}

/** The kinds whose writes a view must see again. */
export type WrittenKind = 'deployments' | 'extensions';

/** What one reconcile reads: the extension and everything installed (copies: steps may change them). */
export interface InstalledRead {
  extension: ClusterExtension;
  installed: InstalledState;
}

/** The ClusterExtension reconciler's view of the installed state; told of its writes, so its reads include them. */
export interface InstalledStateView {
  /** Undefined when the extension is gone. */
  read(extension: string): Promise<InstalledRead | undefined>;
  /** A write (or live read) answered `obj`: later reads see at least its resourceVersion. */
  wrote(kind: WrittenKind, obj: KubeObject | undefined): void;
  /** Something is about to be deleted (a delete answers no resourceVersion): the next read lists the API server. */
  deleting(): void;
}

/** How long a read waits for the caches to catch up with this manager's writes before listing the API server. */
const CACHE_CATCH_UP_MS = 2_000;

export class CachedInstalledStateReader implements InstalledStateView {
  /** The newest resourceVersion of each kind this manager wrote or read live: the caches must reach it. */
  private readonly fresh = { deployments: '', extensions: '' };
  /** Set by a delete (which answers no resourceVersion): the next read lists the API server. */
  private mustList = true;
  /** The lock's acquisition count at the last read; a change means another process may have written. */
  private lockHeld: number | undefined;
  /** Reads from the caches and from the API server, for tests and logs. */
  readonly reads = { cached: 0, live: 0 };

  constructor(private readonly o: { client: Pick<ObjectReader, 'get' | 'list'>; lock?: InstalledStateLock | undefined; caches?: InstalledCaches | undefined }) {}

  async read(name: string): Promise<InstalledRead | undefined> {
    const cached = await this.cachesCaughtUp();
    const fromCache = cached?.extensions.get(name);
    let extension: ClusterExtension;
    if (fromCache !== undefined) {
      extension = structuredClone(fromCache);
    } else {
      try {
        extension = await this.o.client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
    const installed = cached === undefined ? await this.readLive() : this.readCached(cached);
    return { extension, installed };
  }

  wrote(kind: WrittenKind, obj: KubeObject | undefined): void {
    const rv = obj?.metadata.resourceVersion;
    if (rv === undefined || rv === '') return;
    const prev = this.fresh[kind];
    if (!/^[0-9]+$/.test(rv)) {
      this.mustList = true; // not comparable: the caches can never be shown to have caught up
      return;
    }
    if (prev === '' || BigInt(rv) > BigInt(prev)) this.fresh[kind] = rv;
  }

  deleting(): void {
    this.mustList = true; // set before: a delete that fails half-way may still have deleted
  }

  /**
   * The caches, once they have seen everything this manager wrote (and read live) of both kinds;
   * undefined when they cannot be trusted now (see the file's header) and the API server must be read.
   */
  private async cachesCaughtUp(): Promise<InstalledCaches | undefined> {
    const caches = this.o.caches;
    if (caches === undefined) return undefined;
    const held = this.o.lock?.acquisitions;
    if (this.mustList || held !== this.lockHeld) return undefined;
    const [bds, ces] = await Promise.all([
      caches.deployments.waitForResourceVersion(this.fresh.deployments, CACHE_CATCH_UP_MS),
      caches.extensions.waitForResourceVersion(this.fresh.extensions, CACHE_CATCH_UP_MS),
    ]);
    return bds && ces ? caches : undefined;
  }

  private readCached(caches: InstalledCaches): InstalledState {
    this.reads.cached++;
    return buildInstalledState(structuredClone(caches.deployments.list()), caches.extensions.list());
  }

  /** Every BundleDeployment and ClusterExtension, read now from the API server. */
  private async readLive(): Promise<InstalledState> {
    this.lockHeld = this.o.lock?.acquisitions;
    this.mustList = false;
    this.reads.live++;
    const [bds, ces] = await Promise.all([this.o.client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), this.o.client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
    // What the API server holds now, the caches must reach before they are read again.
    for (const bd of bds.items) this.wrote('deployments', bd);
    for (const ce of ces.items) this.wrote('extensions', ce);
    return buildInstalledState(bds.items, ces.items);
  }
}
