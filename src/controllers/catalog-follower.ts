/**
 * A manager replica that does not lead still serves every catalog. It follows the leader's
 * ClusterCatalogs: for each, the content its status resolved (the leader's choice, verified
 * again here), pulled into this replica's own store and served from it, writing nothing to the
 * cluster. catalogd's replicas that do not lead answer 404 until they win the lease; behind one
 * Service, Binnacle's answer from any replica, and a new leader takes over a warm store.
 *
 * Ready once its cache has synced and every catalog there then has been reconciled once here
 * (served, refused, or not served by the leader either), and Ready from then on: a catalog added
 * later is served once pulled, as the leader serves it once pulled. Stopped (this replica leads),
 * it finishes the reconciles in flight, drops what is queued and publishes nothing more.
 */
import type { Logger } from 'pino';
import { API_VERSION, type ClusterCatalog } from '../api/types.js';
import { Controller, type ReconcileContext, type ReconcileRequest, type Reconciler } from '../kube/controller.js';
import { Informer, type ListWatcher } from '../kube/informer.js';
import type { ControllerMetrics } from '../kube/metrics.js';
import type { ObjectReader } from '../kube/ports.js';
import { errorMessage } from '../util/errors.js';
import type { CatalogRegistry } from './catalog-registry.js';
import { ClusterCatalogReconciler, type ImagePull } from './cluster-catalog.js';
import { collectCatalogStore, type StoreMetrics } from './store-gc.js';

export interface CatalogFollowerOptions {
  /** Reads only: the follower lists, watches and gets, and may write nothing. */
  client: ListWatcher & Pick<ObjectReader, 'get'>;
  logger: Logger;
  registry: CatalogRegistry;
  pull: ImagePull;
  /** Where stored catalogs live: the leader's store, once this replica leads. */
  storeDir: string;
  serverUrl: string;
  metrics?: ControllerMetrics;
  workers?: number;
  /** How often content no longer served is removed from the store (default 10 minutes). */
  gcIntervalMs?: number;
  /** The store's gauges, as the leader's collection records them. */
  storeMetrics?: StoreMetrics;
}

export interface CatalogFollower {
  /** Synced, and every cached catalog reconciled here at least once. */
  ready(): boolean;
  /** Resolves when the follower has stopped (after `signal`), its in-flight reconciles finished. */
  stopped: Promise<void>;
}

const refuseWrite = (): Promise<never> => Promise.reject(new Error('a catalog follower writes nothing to the cluster'));

/** Follows the leader's ClusterCatalogs until `signal` aborts. */
export function followCatalogs(o: CatalogFollowerOptions, signal: AbortSignal): CatalogFollower {
  const informer = new Informer<ClusterCatalog>(o.client, API_VERSION, 'ClusterCatalog', { logger: o.logger, resyncMs: 10 * 60_000 });
  const reconciler = new ClusterCatalogReconciler({
    // Belt and braces: the follower's steps write nothing, and its client could not.
    client: { get: (ref) => o.client.get(ref), patch: refuseWrite, applyStatus: refuseWrite },
    registry: o.registry,
    pull: o.pull,
    storeDir: o.storeDir,
    serverUrl: o.serverUrl,
    follow: true,
  });
  // Names reconciled here since the start, until the follower is caught up (then no longer needed).
  const seen = new Set<string>();
  let caughtUp = false;
  // The catalogs there when the cache synced: caught up once each has been looked at (or is gone).
  let initial: string[] | undefined;
  const checkCaughtUp = (): void => {
    if (caughtUp || initial === undefined || !initial.every((name) => seen.has(name) || informer.get(name) === undefined)) return;
    caughtUp = true;
    seen.clear();
  };
  const counted: Reconciler = {
    async reconcile(req: ReconcileRequest, ctx: ReconcileContext) {
      try {
        return await reconciler.reconcile(req, ctx);
      } finally {
        if (!caughtUp) {
          seen.add(req.name);
          checkCaughtUp();
        }
      }
    },
  };
  // Every change, the leader's status writes included: they say what to serve.
  const controller = new Controller({ name: 'clustercatalog-follower', logger: o.logger, workers: o.workers ?? 2, reconciler: counted, dropQueuedOnStop: true, ...(o.metrics === undefined ? {} : { metrics: o.metrics }) }).watch(informer);
  void informer.waitForSync().then(() => {
    initial = informer.list().map((c) => c.metadata.name ?? '');
    checkCaughtUp();
  });
  const gc = setInterval(() => {
    const served = new Map(o.registry.list().map((c) => [c.name, c.stored.file]));
    collectCatalogStore(o.storeDir, served).then(
      (stats) => o.storeMetrics?.record('catalogs', stats),
      (err: unknown) => o.logger.warn({ err: errorMessage(err) }, 'catalog store garbage collection failed'),
    );
  }, o.gcIntervalMs ?? 10 * 60_000);
  signal.addEventListener('abort', () => clearInterval(gc), { once: true });
  o.logger.info('following the leader: serving the catalogs it resolved');
  const stopped = Promise.all([informer.run(signal), controller.run(signal)]).then(() => undefined);
  // Awaited only once this replica leads: a failure before that is logged here, not left
  // unhandled, and the replica is not Ready (it would serve what it no longer follows).
  let failed = false;
  stopped.catch((err: unknown) => {
    failed = true;
    o.logger.error({ err: errorMessage(err) }, 'the catalog follower failed');
  });
  return { ready: () => !failed && caughtUp, stopped };
}

/** How a handover ended: the follower stopped, it still had a reconcile in flight after the wait, or the manager was stopped meanwhile. */
export type HandOver = 'stopped' | 'in-flight' | 'aborted';

/**
 * Stops following (`stopFollowing` aborts the follower's signal) and waits for its reconciles in
 * flight, at most `waitMs`: one still in flight after that publishes nothing, and an unpack of
 * its catalog by the leader waits for it (catalog-store/unpack.ts).
 */
export async function handOver(follower: CatalogFollower, stopFollowing: () => void, waitMs: number, signal: AbortSignal): Promise<HandOver> {
  stopFollowing();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      follower.stopped.then((): HandOver => 'stopped'),
      new Promise<HandOver>((resolve) => {
        timer = setTimeout(() => resolve('in-flight'), waitMs);
        timer.unref();
      }),
      new Promise<HandOver>((resolve) => {
        onAbort = () => resolve('aborted');
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}
