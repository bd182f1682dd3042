/**
 * The manager: every controller in one process, as controller-runtime's manager runs them.
 * It installs Binnacle's CRDs, campaigns for leadership on a Lease (when asked to), and while
 * leading runs the informers, the ClusterCatalog / BundleDeployment / ClusterExtension /
 * PlatformOperator controllers and the catalog HTTP server. `/metrics` (Prometheus) and
 * `/healthz` `/readyz` are served from the start.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { startCatalogServer, type CatalogServer } from '../catalog-store/index.js';
import type { KubeClient, WriteFence } from '../kube/client.js';
import { Controller, specOrMetadataChanged } from '../kube/controller.js';
import { Informer } from '../kube/informer.js';
import { LeaderElector, LEADER_LEASE_NAME } from '../kube/leader-election.js';
import { LeaseLock } from '../kube/lease-lock.js';
import { collectProcessMetrics, ControllerMetrics, countApiRequests } from '../kube/metrics.js';
import { startEndpointServer, type EndpointServer } from '../kube/probe-server.js';
import { MetricsAuthorizer } from '../kube/metrics-auth.js';
import type { TlsSettings } from '../util/tls-profile.js';
import { handleUnhandledRejections } from '../kube/unhandled.js';
import { findCondition, objectKey, type KubeObject } from '../kube/types.js';
import { extensionsNamedOn } from '../installed/index.js';
import { pullAndUnpack, RegistryClient } from '../oci/index.js';
import { API_VERSION, LABEL_OWNER_KIND, LABEL_OWNER_NAME, type BundleDeployment, type ClusterExtension } from '../api/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { policyGround, type PolicyGround } from '../kube/admission-policy.js';
import { useCertificate } from '../util/http-server.js';
import { HelmOperatorReconciler } from './helm-operator/helm-operator.js';
import { BundleDeploymentReconciler } from './bundle-deployment.js';
import { CatalogRegistry } from './catalog-registry.js';
import { ClusterCatalogReconciler, type ImagePull } from './cluster-catalog.js';
import { followCatalogs, handOver } from './catalog-follower.js';
import { ClusterExtensionReconciler } from './cluster-extension.js';
import { extensionPlanner } from './upgrade-approval.js';
import { ClusterFactsSource } from '../installed/cluster-facts.js';
import { ensureCrds, ensureOlmv1Crds, type Olmv1CrdsVerdict } from './crds.js';
import { EventRecorder } from '../kube/events.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from '../api/olmv1/types.js';
import type { InstallerIdentity } from '../api/olmv1/convert.js';
import { serviceAccountPolicy, type ServiceAccountMode } from '../api/olmv1/serviceaccount-policy.js';
import { ensureTwinPolicy } from '../api/olmv1/twin-policy.js';
import { olmv1CatalogReconciler } from './cluster-catalog-olmv1.js';
import { olmv1ExtensionReconciler } from './cluster-extension-olmv1.js';
import { ClusterObjectSetReconciler } from './cluster-object-set.js';
import { OBJECT_SET_KIND } from '../api/olmv1/object-set.js';
import { collectCatalogStore, collectSourceCache, StoreMetrics } from './store-gc.js';
import { ReleaseRecordsCollector } from './records-gc.js';
import { platformOperatorsOfDeployment, PlatformOperatorReconciler } from './platform-operator.js';
import { ensurePlatformProtection } from '../actions/platform-protection.js';
import { mayI } from '../kube/access-review.js';
import { DependentWatches, ownerNameKeyOf } from './dependents.js';
import { ReleaseRecords } from '../apply/release-records.js';
import { OpenApiSchemas } from '../kube/openapi.js';
import { createRenderer } from '../render/index.js';

export interface ManagerOptions {
  client: KubeClient;
  logger: Logger;
  /** Where unpacked images, sources and stored catalogs live. */
  dataDir: string;
  /** `host:port` for /metrics, and for /healthz and /readyz too unless `probeAddress` is given (port 0: any). */
  metricsAddress?: string;
  /** `host:port` for /healthz and /readyz alone, plain HTTP for the kubelet (controller-runtime's health probe address); metrics then stay at `metricsAddress`. */
  probeAddress?: string;
  /**
   * Serve /metrics over HTTPS with this certificate (`--metrics-secure`), and only to callers
   * the API server authenticates and allows `get` on the path (`auth`, `--metrics-require-rbac`),
   * as operator-controller's and catalogd's metrics are.
   */
  metricsSecurity?: {
    tls: { certPem: string; keyPem: string };
    auth: boolean;
    /** Renewed pairs of a mounted certificate, as `catalogTlsUpdates`; answers what stops them. */
    updates?: (use: (pair: { certPem: string; keyPem: string }) => void) => () => void;
  };
  /** The TLS profile of every HTTPS server the manager runs: metrics and the catalog API (util/tls-profile.ts; default Node's). */
  tlsProfile?: TlsSettings;
  /** `host:port` for the catalog HTTP API. */
  catalogAddress?: string;
  /** Public base URL of the catalog API, if it differs from the bound address. */
  catalogBaseUrl?: string;
  /** Serve the catalog API over HTTPS with this certificate and key (PEM). */
  catalogTls?: { certPem: string; keyPem: string };
  /** Follows renewals of `catalogTls`: hands each new pair to `use`; answers what stops following (cli/tls-reload.ts). */
  catalogTlsUpdates?: (use: (pair: { certPem: string; keyPem: string }) => void) => () => void;
  leaderElection?: { namespace: string; name?: string; identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  workers?: number;
  /** ClusterCatalogs loaded at once (default 2): each is parsed whole while it loads. */
  catalogWorkers?: number;
  healthTimeoutMs?: number;
  /** How often the source and catalog stores are garbage-collected (default 10 minutes). */
  gcIntervalMs?: number;
  /**
   * Handle promises that reject with nobody handling them (kube/unhandled.ts): logged with the
   * reconcile that started them, counted, and the manager goes on. `binnacle manager` sets it;
   * tests leave Node's default, so such a bug fails them.
   */
  handleRejections?: boolean;
  /** Where the release history the engine trusts is kept (the manager's own namespace); default the leader-election namespace, else binnacle-system. */
  systemNamespace?: string;
  /**
   * OLM v1's API (`olm.operatorframework.io/v1`): served unless `serve` is false or someone else
   * owns its CRDs. `installer`: the ServiceAccount an OLM v1 ClusterExtension naming none
   * installs as (`--olmv1-installer`); without it such an extension is refused with a condition.
   * `serviceAccount`: the deprecated `spec.serviceAccount` is used (`Use`, the default) or ignored
   * as operator-controller ignores it (`Ignore`, `--olmv1-service-account=ignore`); the warning
   * policy says which (api/olmv1/serviceaccount-policy.ts).
   */
  olmv1?: { serve?: boolean; installer?: InstallerIdentity | undefined; serviceAccount?: ServiceAccountMode | undefined; objectSets?: boolean | undefined };
}

export interface RunningManager {
  metricsUrl: string;
  /** Where /healthz and /readyz answer: `metricsUrl` unless probes have their own address. */
  probesUrl: string;
  /** Resolves when the manager has stopped; rejects with `LEADER_ELECTION_LOST` as soon as it loses the lease. */
  done: Promise<void>;
  stop: () => Promise<void>;
}

/** The manager's own namespace: where its Lease and the trusted release history live. */
export function systemNamespaceOf(o: Pick<ManagerOptions, 'systemNamespace' | 'leaderElection'>): string {
  return o.systemNamespace ?? o.leaderElection?.namespace ?? 'binnacle-system';
}

function splitAddress(addr: string, defPort: number): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  if (i < 0) return { host: addr || '127.0.0.1', port: defPort };
  return { host: addr.slice(0, i) || '127.0.0.1', port: Number(addr.slice(i + 1)) };
}

/**
 * The manager's health: readiness flips once the leader's informers have synced, and back when
 * leading ends; a replica that does not lead is ready while it follows, serving catalogs.
 */
interface Health {
  ready: boolean;
  following?: () => boolean;
}

/**
 * `/metrics`, `/healthz`, `/livez` and `/readyz` (kube/probe-server.ts): on one address, or the
 * probes on their own plain address and the metrics on theirs (HTTPS and behind a review when
 * asked). No request can end the manager.
 */
async function startProbeServers(o: ManagerOptions, registry: Registry, health: Health): Promise<{ metrics: EndpointServer; probes: EndpointServer }> {
  const probes = { ready: () => health.ready || (health.following?.() ?? false) };
  const secure = o.metricsSecurity;
  const metricsServer = {
    address: o.metricsAddress ?? '127.0.0.1:0',
    defaultHost: '127.0.0.1',
    logger: o.logger,
    metrics: registry,
    ...(secure === undefined ? {} : { tls: { ...secure.tls, profile: o.tlsProfile } }),
    // A few reviews at a time: a caller sending made-up tokens must not crowd the controllers' own requests.
    ...(secure?.auth === true ? { auth: new MetricsAuthorizer({ client: o.client.withOwnRateLimit('metrics-auth'), logger: o.logger, maxInFlight: 8 }) } : {}),
  };
  if (o.probeAddress === undefined) {
    const both = await startEndpointServer({ name: 'metrics and probes', ...metricsServer, probes });
    return { metrics: both, probes: both };
  }
  const metrics = await startEndpointServer({ name: 'metrics', ...metricsServer });
  try {
    return { metrics, probes: await startEndpointServer({ name: 'health probes', address: o.probeAddress, defaultHost: '127.0.0.1', logger: o.logger, probes }) };
  } catch (err) {
    await metrics.close();
    throw err;
  }
}

/** The informers every controller shares. */
function startInformers(client: KubeClient, logger: Logger) {
  const resyncMs = 10 * 60_000;
  return {
    catalogs: new Informer(client, API_VERSION, 'ClusterCatalog', { logger, resyncMs }),
    deployments: new Informer<BundleDeployment>(client, API_VERSION, 'BundleDeployment', { logger, resyncMs }),
    extensions: new Informer<ClusterExtension>(client, API_VERSION, 'ClusterExtension', { logger, resyncMs }),
    platform: new Informer(client, API_VERSION, 'PlatformOperator', { logger, resyncMs }),
    helmOperators: new Informer(client, API_VERSION, 'HelmOperator', { logger, resyncMs }),
  };
}
type Informers = ReturnType<typeof startInformers>;

/**
 * Extensions held up by what others installed: waiting for another's BundleDeployment to go, a
 * resolution that failed, an upgrade blocked. Not those merely installing their own
 * BundleDeployments (their own watch calls them): called back on every one of 184 installs at
 * once, they re-resolved in rounds under the one lock, a storm that grew as n².
 */
function unsettledExtensions(inf: Informers): () => string[] {
  return () =>
    inf.extensions
      .list()
      .filter((ce) => {
        const st = ce.status as { observedGeneration?: number; conditions?: Parameters<typeof findCondition>[0] } | undefined;
        const progressing = findCondition(st?.conditions, 'Progressing');
        return st?.observedGeneration === ce.metadata.generation && progressing?.status === 'True' && progressing.reason !== 'Installing';
      })
      .map((ce) => objectKey(ce.metadata));
}

/** The ClusterExtension controller: resolution under one cluster-wide lock, woken by its BundleDeployments and new catalog content. */
function extensionController(o: ManagerOptions, client: KubeClient, inf: Informers, catalogs: CatalogRegistry, metrics: ControllerMetrics, signal: AbortSignal): Controller {
  // Resolution reads and changes what the whole cluster has installed: one reconcile at a time,
  // across managers too (a Lease next to the leader-election one).
  const lock = new LeaseLock({
    client,
    namespace: o.leaderElection?.namespace ?? 'kube-system',
    name: 'binnacle-installed-state',
    identity: `${o.leaderElection?.identity ?? `${hostname()}_${process.pid}`}_${randomUUID().slice(0, 8)}`,
    logger: o.logger,
    // Extensions requeue every few seconds while they wait: the Lease is kept between them.
    holdIdleMs: 3_000,
  });
  signal.addEventListener('abort', () => void lock.close(), { once: true });
  const ce = new Controller({
    name: 'clusterextension',
    logger: o.logger,
    metrics,
    workers: o.workers ?? 4,
    reconciler: new ClusterExtensionReconciler({
      client,
      registry: catalogs,
      lock,
      clusterFacts: new ClusterFactsSource(client, o.logger),
      clusterCatalogs: () => inf.catalogs.list(),
      caches: { deployments: inf.deployments, extensions: inf.extensions },
      // Plans of changes held for approval: `binnacle plan`'s own, over this client (planning changes nothing).
      ports: { planChange: extensionPlanner(client, { cacheDir: join(o.dataDir, 'plans') }) },
    }),
  })
    .watch(inf.extensions, undefined, specOrMetadataChanged)
    // A BundleDeployment's news goes to every extension that needs it…
    .watch(inf.deployments, (bd) => extensionsNamedOn(bd))
    // …and one coming or going may unblock an extension waiting on the installed state.
    .watch(inf.deployments, unsettledExtensions(inf), () => false);
  // New catalog content may offer upgrades or fix a failed resolution: look at every extension again.
  catalogs.onChange(() => {
    for (const x of inf.extensions.list()) ce.enqueue(objectKey(x.metadata));
  });
  return ce;
}

/** The source and catalog stores are collected on a schedule; what an object refers to stays. */
function collectStores(o: ManagerOptions, inf: Informers, catalogs: CatalogRegistry, storeMetrics: StoreMetrics): () => Promise<void> {
  return async () => {
    try {
      const inUse = new Set(
        inf.deployments.list().flatMap((bd) => {
          const d = (bd.status as { contentDigest?: unknown } | undefined)?.contentDigest;
          return typeof d === 'string' ? [d] : [];
        }),
      );
      storeMetrics.record('sources', await collectSourceCache(join(o.dataDir, 'sources'), inUse));
      storeMetrics.record('catalogs', await collectCatalogStore(join(o.dataDir, 'catalogs'), new Map(catalogs.list().map((c) => [c.name, c.stored.file]))));
    } catch (err) {
      o.logger.warn({ err: errorMessage(err) }, 'store garbage collection failed');
    }
  };
}

/** What the manager keeps whoever leads: its metrics, health, the catalogs it serves and how it pulls them. */
interface Shared {
  metrics: ControllerMetrics;
  storeMetrics: StoreMetrics;
  health: Health;
  olmv1: { serve: boolean };
  catalogs: CatalogRegistry;
  /** Base URL of the catalog server, as ClusterCatalogs' status.urls.base names it. */
  serverUrl: string;
  pull: ImagePull;
}

/** The catalog server, on every replica from the start (followers serve too), and its certificate kept current. */
async function serveCatalogs(o: ManagerOptions, catalogs: CatalogRegistry): Promise<{ url: string; close: () => Promise<void> }> {
  const c = splitAddress(o.catalogAddress ?? '127.0.0.1:0', 0);
  const server: CatalogServer = await startCatalogServer({ catalogs: catalogs.lookup, port: c.port, address: c.host, logger: o.logger, tls: o.catalogTls === undefined ? undefined : { ...o.catalogTls, profile: o.tlsProfile } });
  const stopTlsUpdates = o.catalogTlsUpdates?.((pair) => useCertificate(server.server, pair));
  const url = o.catalogBaseUrl ?? server.url;
  o.logger.info({ url }, 'serving catalogs');
  return {
    url,
    close: async () => {
      stopTlsUpdates?.();
      await server.close();
    },
  };
}

/** Catalog images pulled into the manager's image cache. */
function imagePull(o: ManagerOptions): ImagePull {
  const cacheDir = join(o.dataDir, 'images');
  return (ref, opts) => pullAndUnpack(ref, { cacheDir, client: new RegistryClient({ logger: o.logger, registries: 'system', ...(opts.insecure ? { insecure: true } : {}) }) });
}

/** Everything a leader runs: the informers and every controller, until `signal`. */
async function runControllers(o: ManagerOptions, signal: AbortSignal, fence: WriteFence | undefined, shared: Shared): Promise<void> {
  const { metrics, storeMetrics, health, olmv1, catalogs, serverUrl, pull } = shared;
  const logger = o.logger;
  const v1informers: Informer[] = [];
  // With leader election every write goes through the leadership fence: none once the lease may be lost.
  const client = fence === undefined ? o.client : o.client.fenced(fence);
  // Every informer, controller and Helm-operator kind listens for the stop: more than Node's default 10.
  setMaxListeners(0, signal);
  const inf = startInformers(client, logger);
  const ownerKey = (kind: string) => (obj: KubeObject): string[] => {
    const labels = obj.metadata.labels ?? {};
    return labels[LABEL_OWNER_KIND] === kind && labels[LABEL_OWNER_NAME] !== undefined ? [labels[LABEL_OWNER_NAME]] : [];
  };
  const healthTimeout = o.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: o.healthTimeoutMs };
  // The release history the engine trusts: Secrets in the manager's own namespace, written only as the manager.
  const records = new ReleaseRecords({ client, namespace: systemNamespaceOf(o), logger });
  // One renderer for the process: BundleDeployments and every HelmOperator kind render through it, so its cache is one.
  const engine = { records, schemas: OpenApiSchemas.shared(client), renderer: createRenderer() };
  // What BundleDeployments installed is watched: a changed or deleted object re-queues its BundleDeployment (repaired in seconds, not at the resync).
  const installedObjects = new DependentWatches({ client, logger, ownerKind: 'BundleDeployment', keyOf: ownerNameKeyOf,
    enqueue: (key) => bdController.enqueue(key),
    signal,
    // install-self's manager may not read most kinds cluster-wide (docs/trust-model.md): those are repaired at the resync.
    mayWatch: (ref, namespace) => mayI(client, ['list', 'watch'], ref.apiVersion, ref.kind, namespace),
  });
  const bdController = new Controller({
    name: 'bundledeployment',
    logger,
    metrics,
    workers: o.workers ?? 4,
    reconciler: new BundleDeploymentReconciler({
      client,
      engine,
      cacheDir: join(o.dataDir, 'sources'),
      onApplied: (refs) => installedObjects.observe(refs),
      watched: (ref) => installedObjects.cached(ref),
      // An install waiting for an earlier owner's object (a CRD) to be deleted is re-queued when it goes.
      waitingOn: (name, refs) => installedObjects.waitFor(name, refs),
      ...healthTimeout,
    }),
  }).watch(inf.deployments, undefined, specOrMetadataChanged);
  const controllers = [
    new Controller({ name: 'clustercatalog', logger, metrics, workers: o.catalogWorkers ?? 2, reconciler: new ClusterCatalogReconciler({ client, registry: catalogs, pull, storeDir: join(o.dataDir, 'catalogs'), serverUrl }) }).watch(inf.catalogs, undefined, specOrMetadataChanged),
    bdController,
    extensionController(o, client, inf, catalogs, metrics, signal),
    new Controller({ name: 'platformoperator', logger, metrics, workers: 1, reconciler: new PlatformOperatorReconciler(client, { managerNamespace: systemNamespaceOf(o) }) })
      .watch(inf.platform)
      .watch(inf.extensions, ownerKey('PlatformOperator'))
      .watch(inf.deployments, platformOperatorsOfDeployment((n) => inf.extensions.get(n))), // packages' health
  ];
  // Helm operators: each HelmOperator's kinds run as controllers of their own, started and stopped by this one.
  const helmOperators = new HelmOperatorReconciler({ client, logger, engine, cacheDir: join(o.dataDir, 'charts'), metrics, ...healthTimeout });
  controllers.push(new Controller({ name: 'helmoperator', logger, metrics, workers: 1, reconciler: helmOperators }).watch(inf.helmOperators, undefined, specOrMetadataChanged));
  signal.addEventListener('abort', () => void helmOperators.close(), { once: true });

  if (olmv1.serve) {
    // OLM v1's kinds, each through a binnacle.dev twin reconciled by the controllers above (cluster-olmv1-twin.ts).
    const v1 = { catalogs: new Informer(client, OLMV1_API_VERSION, 'ClusterCatalog', { logger, resyncMs: 10 * 60_000 }), extensions: new Informer(client, OLMV1_API_VERSION, 'ClusterExtension', { logger, resyncMs: 10 * 60_000 }) };
    const twinOf = (obj: KubeObject): string[] => (obj.metadata.labels?.[LABEL_OLMV1_TWIN_OF] === undefined ? [] : [obj.metadata.name ?? '']);
    controllers.push(
      new Controller({ name: 'olmv1-clustercatalog', logger, metrics, workers: 2, reconciler: olmv1CatalogReconciler(client) }).watch(v1.catalogs, undefined, specOrMetadataChanged).watch(inf.catalogs, twinOf),
      new Controller({ name: 'olmv1-clusterextension', logger, metrics, workers: 2, reconciler: olmv1ExtensionReconciler({ client, installer: o.olmv1?.installer, serviceAccount: o.olmv1?.serviceAccount }) })
        .watch(v1.extensions, undefined, specOrMetadataChanged)
        .watch(inf.extensions, twinOf),
    );
    v1informers.push(v1.catalogs, v1.extensions);
    if (o.olmv1?.objectSets === true) {
      const objectSets = new Informer(client, OLMV1_API_VERSION, OBJECT_SET_KIND, { logger, resyncMs: 10 * 60_000 });
      controllers.push(new Controller({ name: 'olmv1-clusterobjectset', logger, metrics, workers: 2, reconciler: new ClusterObjectSetReconciler({ client, installer: o.olmv1.installer }) }).watch(objectSets, undefined, specOrMetadataChanged));
      v1informers.push(objectSets);
    }
  }

  const collectGarbage = collectStores(o, inf, catalogs, storeMetrics);
  // Records whose owner is gone without an uninstall (a finalizer removed by hand, a CRD deleted, a re-created owner).
  const recordsCollector = new ReleaseRecordsCollector({ records, client, logger, graceMs: o.gcIntervalMs ?? 10 * 60_000 });
  const gcTimer = setInterval(() => void collectGarbage().then(() => recordsCollector.sweepLogged()), o.gcIntervalMs ?? 10 * 60_000);
  signal.addEventListener('abort', () => clearInterval(gcTimer), { once: true });

  const informers: Pick<Informer, 'run' | 'waitForSync'>[] = [...Object.values(inf), ...v1informers];
  const runs = [...informers.map((i) => i.run(signal)), ...controllers.map((ctl) => ctl.run(signal))];
  // Stopped before the caches synced: the runs end (and an informer stopped unsynced never syncs).
  await Promise.race([Promise.all(informers.map((i) => i.waitForSync())), untilAborted(signal)]);
  if (signal.aborted) {
    await Promise.all(runs);
    await installedObjects.stopped();
    return;
  }
  // Catalogs a follower served that are gone now (deleted while the Lease changed hands): served no more.
  for (const c of catalogs.list()) if (inf.catalogs.get(c.name) === undefined) catalogs.delete(c.name);
  health.ready = true;
  logger.info({ node: process.version }, 'controllers started');
  void collectGarbage(); // and the store gauges are there from the start
  await Promise.all(runs);
  await installedObjects.stopped();
  health.ready = false;
}

/**
 * Until this replica wins the lease it follows the leader, serving the catalogs it resolved
 * (catalog-follower.ts); then the follower stops, its in-flight work finished, and the leader's
 * controllers take over the same catalogs and store.
 */
function followThenLead(o: ManagerOptions, shared: Shared, stopAll: AbortSignal): (signal: AbortSignal, fence?: WriteFence) => Promise<void> {
  const following = new AbortController();
  stopAll.addEventListener('abort', () => following.abort(), { once: true });
  const follower = followCatalogs(
    {
      client: o.client,
      logger: o.logger,
      registry: shared.catalogs,
      pull: shared.pull,
      storeDir: join(o.dataDir, 'catalogs'),
      serverUrl: shared.serverUrl,
      metrics: shared.metrics,
      storeMetrics: shared.storeMetrics,
      // --catalog-workers bounds the catalogs unpacked at once, and so the memory: a follower keeps to it too.
      workers: o.catalogWorkers ?? 2,
      ...(o.gcIntervalMs === undefined ? {} : { gcIntervalMs: o.gcIntervalMs }),
    },
    following.signal,
  );
  shared.health.following = () => follower.ready();
  return async (signal, fence) => {
    // Ready again once the leader's caches have synced (runControllers).
    shared.health.following = undefined;
    // Its reconciles in flight finish (or stop publishing, if one outlasts this wait).
    const ended = await handOver(follower, () => following.abort(), FOLLOWER_STOP_WAIT_MS, signal);
    // Stopped meanwhile: nothing to lead.
    if (ended === 'aborted' || signal.aborted) return;
    if (ended === 'in-flight') o.logger.warn({ waitedMs: FOLLOWER_STOP_WAIT_MS }, 'leading while a catalog follower reconcile is still in flight: it will publish nothing, and an unpack of its catalog waits for it');
    else o.logger.info('leading: the catalog follower has stopped');
    await runControllers(o, signal, fence, shared);
  };
}

/** Resolves when `signal` aborts. */
function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** How long a new leader waits for the follower's reconciles in flight (a pull from a slow registry) before it starts its controllers. */
const FOLLOWER_STOP_WAIT_MS = 30_000;

/** Runs `lead` while this manager holds the Lease; resolves when it stops, rejects with LEADER_ELECTION_LOST at once on a lost lease. */
async function runElected(o: ManagerOptions, le: NonNullable<ManagerOptions['leaderElection']>, stopAll: AbortController, lead: (signal: AbortSignal, fence?: WriteFence) => Promise<void>): Promise<void> {
  const leadershipLost = new AbortController();
  const elector = new LeaderElector({
    // A bucket of its own: a renewal never waits behind the controllers' requests.
    client: o.client.withOwnRateLimit('leader-election'),
    namespace: le.namespace,
    name: le.name ?? LEADER_LEASE_NAME,
    identity: le.identity ?? `${hostname()}_${process.pid}`,
    logger: o.logger,
    ...(le.leaseDurationMs === undefined ? {} : { leaseDurationMs: le.leaseDurationMs }),
    ...(le.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: le.renewDeadlineMs }),
    ...(le.retryPeriodMs === undefined ? {} : { retryPeriodMs: le.retryPeriodMs }),
    onStartedLeading: lead,
    onStoppedLeading: (lost) => {
      // A manager that lost its lease must not keep reconciling: it stops at once (its writes
      // are already refused) and fails, as controller-runtime's does, so a restart campaigns again.
      if (lost) leadershipLost.abort();
      if (!stopAll.signal.aborted) {
        o.logger.error(lost ? 'leader election lost; stopping' : 'stopped leading; stopping');
        stopAll.abort();
      }
    },
  });
  await o.client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: le.namespace } });
  const running = elector.run(stopAll.signal);
  // Lost leadership ends the manager now, not when the in-flight work has wound down.
  const lostEarly = new Promise<never>((_resolve, reject) => {
    leadershipLost.signal.addEventListener('abort', () => reject(new BinnacleError('transient', 'LEADER_ELECTION_LOST', 'leader election lost')), { once: true });
  });
  lostEarly.catch(() => undefined);
  return Promise.race([running, lostEarly]);
}

/**
 * OLM v1's `clusterextension-serviceaccount-deprecated` policy (its chart's, `Warn`), worded for
 * the mode; skipped (logged) where the API server serves no ValidatingAdmissionPolicy.
 */
async function ensureServiceAccountPolicy(client: ManagerOptions['client'], logger: Logger, mode: ServiceAccountMode, ground: PolicyGround): Promise<void> {
  if (!ground.serves) {
    logger.warn('the API server serves no ValidatingAdmissionPolicy: no warning when an OLM v1 ClusterExtension sets the deprecated spec.serviceAccount');
    return;
  }
  for (const obj of serviceAccountPolicy(mode)) await client.apply(obj, { force: true });
  logger.info({ serviceAccount: mode }, 'OLM v1 spec.serviceAccount deprecation warning policy installed');
}

/** OLM v1's CRDs installed beside Binnacle's (crds.ts), unless turned off or owned by someone else, who is then named in the log and an Event on each CRD. */
async function serveOlmv1(o: ManagerOptions, ground: PolicyGround): Promise<{ serve: boolean }> {
  if (o.olmv1?.serve === false) return { serve: false };
  const verdict: Olmv1CrdsVerdict = await ensureOlmv1Crds(o.client, o.logger, { objectSets: o.olmv1?.objectSets === true });
  if (verdict.serve) {
    await ensureServiceAccountPolicy(o.client, o.logger, o.olmv1?.serviceAccount ?? 'Use', ground);
    return { serve: true };
  }
  const events = new EventRecorder(o.client, 'binnacle-manager', o.logger);
  for (const f of verdict.foreign) await events.record(f.crd, 'Warning', 'OwnedByAnother', `installed by ${f.owner}: Binnacle leaves it as it is and does not serve ${OLMV1_API_VERSION} (the owner's controllers do)`);
  return { serve: false };
}

/**
 * Starts the manager: probes and metrics first, then Binnacle's CRDs and the platform
 * protection policy, then (while leading, when elected) every controller.
 */
export async function startManager(o: ManagerOptions): Promise<RunningManager> {
  const logger = o.logger;
  const registry = new Registry();
  collectProcessMetrics(registry, 'binnacle_process_');
  const metrics = new ControllerMetrics(registry);
  countApiRequests(registry, o.client);
  const storeMetrics = new StoreMetrics(registry);
  const rejections = o.handleRejections === true ? handleUnhandledRejections(logger, registry) : undefined;
  const health: Health = { ready: false };
  let olmv1: { serve: boolean };
  const servers = await startProbeServers(o, registry, health);
  const stopMetricsTlsUpdates = o.metricsSecurity?.updates?.((pair) => useCertificate(servers.metrics.server, pair));
  const catalogs = new CatalogRegistry();
  let catalogServer: Awaited<ReturnType<typeof serveCatalogs>> | undefined;
  const closeAll = (): Promise<unknown> => {
    stopMetricsTlsUpdates?.();
    return Promise.all([...[...new Set([servers.metrics, servers.probes])].map((s) => s.close()), catalogServer?.close()]);
  };
  try {
    await ensureCrds(o.client);
    // Whether the API server serves admission policies, and who this manager is to it: asked once for the three policies.
    const ground = await policyGround(o.client);
    olmv1 = await serveOlmv1(o, ground);
    // The trusted release history lives here: it must exist before the first release is recorded.
    await o.client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: systemNamespaceOf(o) } });
    // issue 12 §6: only this manager (and the garbage collector) may remove PlatformOperators' extensions.
    await ensurePlatformProtection(o.client, logger, [], ground);
    // Whether or not this manager serves OLM v1's API: a twin's standing is read either way.
    await ensureTwinPolicy(o.client, logger, ground, olmv1.serve);
    catalogServer = await serveCatalogs(o, catalogs);
  } catch (err) {
    // A manager that cannot start must not linger answering /healthz: close, so the process ends (with the start's error).
    await closeAll().catch(() => undefined);
    rejections?.remove();
    throw err;
  }
  const stopAll = new AbortController();
  const shared: Shared = { metrics, storeMetrics, health, olmv1, catalogs, serverUrl: catalogServer.url, pull: imagePull(o) };
  const done = o.leaderElection === undefined ? runControllers(o, stopAll.signal, undefined, shared) : runElected(o, o.leaderElection, stopAll, followThenLead(o, shared, stopAll.signal));
  const finished = done
    .catch((err: unknown) => {
      // Lost leadership and every other fatal failure are the caller's to act on: exit non-zero.
      if (!(err instanceof BinnacleError && err.code === 'LEADER_ELECTION_LOST')) logger.error({ err: errorMessage(err) }, 'manager failed');
      throw err;
    })
    .finally(() => {
      rejections?.remove();
      return closeAll().then(() => undefined, () => undefined);
    });
  return {
    metricsUrl: servers.metrics.url,
    probesUrl: servers.probes.url,
    done: finished,
    stop: async () => {
      stopAll.abort();
      await finished.catch(() => undefined);
    },
  };
}
