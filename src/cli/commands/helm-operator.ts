/**
 * `binnacle helm-operator run`: an operator-sdk Helm operator, unchanged, as one process (the
 * entry point of a Helm operator's container image). It takes operator-sdk's `helm-operator run`
 * flags (helm-operator-flags.ts), so the manager container operator-sdk scaffolds runs as it
 * is: health probes on --health-probe-bind-address, metrics with controller-runtime's names
 * on --metrics-bind-address (HTTPS and RBAC-checked when asked), leader election in the Pod's
 * namespace. Each watch serves its kind with the Helm release reconciler. As operator-sdk's, it
 * serves the namespaces in WATCH_NAMESPACE (comma-separated, as OLM's `olm.targetNamespaces`
 * annotation gives them), every namespace when that is empty or unset.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { CliContext } from '../context.js';
import { addHelmEngineFlags, addKubeApiRateFlags, helmEngineOptionsOf, type HelmEngineFlags } from '../flags.js';
import { addKubeFlags, clientFor, type KubeFlags } from '../kube.js';
import type { KubeClient, WriteFence } from '../../kube/client.js';
import type { EndpointServer } from '../../kube/probe-server.js';
import type { watchMetricsCertificate } from '../tls-reload.js';
import type { HelmEngine } from '../../helm-engine/engine.js';
import { addHelmOperatorRunFlags, resolveRunFlags, zapLogger, type RawRunFlags, type RunOptions } from './helm-operator-flags.js';

/** The digest of a chart directory (tree) or archive (bytes). */
async function chartDigest(path: string): Promise<string> {
  if (statSync(path).isFile()) return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
  const { digestTree } = await import('../../source/tree.js'); // the module alone: the source barrel loads git, OCI and sigstore
  return (await digestTree(path)).digest;
}

/**
 * Loads Helm's engine, and each watched chart into it, before a CR needs them, so the first
 * reconcile does not wait for the engine's start (~1.5 s of a single CR's converge time,
 * bench/helm-operator.ts at N = 1; operator-sdk's is compiled in). A chart that cannot be read
 * is left for the reconcile to report on its CR.
 */
export async function warmEngine(charts: readonly string[], engine: () => Promise<Pick<HelmEngine, 'inspect'>>, logger: Logger): Promise<void> {
  for (const chart of new Set(charts)) {
    try {
      await (await engine()).inspect(chart);
    } catch (err) {
      logger.debug({ chart, err: err instanceof Error ? err.message : String(err) }, 'cannot load the chart ahead of its first reconcile');
    }
  }
}

/**
 * Readiness: ready once the informers of every kind have synced. A replica waiting for the
 * lease is ready too (controller-runtime's is), so a rolling update can replace the leader.
 */
interface Readiness {
  waiting: boolean;
  synced: boolean;
}

/** Serves `server` each renewal of a mounted metrics certificate; loaded only for --metrics-secure. */
async function watchMountedMetricsCertificate(tls: Parameters<typeof watchMetricsCertificate>[0], server: EndpointServer['server'], logger: Logger): Promise<() => void> {
  const [{ watchMetricsCertificate: watch }, { useCertificate }] = await Promise.all([import('../tls-reload.js'), import('../../util/http-server.js')]);
  return watch(tls, (pair) => useCertificate(server, pair), logger);
}

/** The probe and metrics servers, as the flags ask; closed by the caller. */
async function startServers(o: RunOptions, client: KubeClient, logger: Logger, readiness: Readiness) {
  const [{ Registry, Gauge }, { startEndpointServer, metricsServingCertificate }, { ControllerMetrics, ResourceCreatedMetric, collectProcessMetrics }, { MetricsAuthorizer }] = await Promise.all([
    import('prom-client'),
    import('../../kube/probe-server.js'),
    import('../../kube/metrics.js'),
    import('../../kube/metrics-auth.js'),
  ]);
  const registry = new Registry();
  // Sampled only when served: no one reads them otherwise.
  if (o.metricsAddress !== undefined) collectProcessMetrics(registry);
  new Gauge({ name: 'helm_operator_build_info', help: 'Build information for the helm-operator binary', labelNames: ['version', 'commit'], registers: [registry] }).set({ version: 'binnacle', commit: '' }, 1);
  // One reconcile's lost error is logged and counted, never the end of every CR's operator.
  (await import('../../kube/unhandled.js')).handleUnhandledRejections(logger, registry);
  const servers: EndpointServer[] = [];
  try {
    if (o.probeAddress !== undefined) {
      servers.push(await startEndpointServer({ name: 'health probes', address: o.probeAddress, logger, probes: { ready: () => readiness.waiting || readiness.synced } }));
    }
    if (o.metricsAddress !== undefined) {
      const tls = o.metricsSecure ? await metricsServingCertificate(undefined, logger) : undefined;
      const metricsServer = await startEndpointServer({
        name: 'metrics',
        address: o.metricsAddress,
        logger,
        metrics: registry,
        ...(tls === undefined ? {} : { tls }),
        ...(o.metricsRequireRbac ? { auth: new MetricsAuthorizer({ client, logger }) } : {}),
      });
      // A mounted certificate is read again when it is renewed (cli/tls-reload.ts); the server is
      // in `servers` first, so a failure to start the watch still closes it.
      let stopTlsUpdates: (() => void) | undefined;
      servers.push({
        ...metricsServer,
        close: () => {
          stopTlsUpdates?.();
          return metricsServer.close();
        },
      });
      if (tls !== undefined) stopTlsUpdates = await watchMountedMetricsCertificate(tls, metricsServer.server, logger);
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.close()));
    throw err;
  }
  return { servers, metrics: new ControllerMetrics(registry, 'controller-runtime'), createdMetric: new ResourceCreatedMetric(registry) };
}

/**
 * Where `helm-operator run` keeps the release history it trusts: its own namespace, which
 * operator-sdk's scaffolded role lets it write Secrets in: the leader-election namespace, else
 * the Pod's, else `default` (a process run outside a cluster, as `make run` does).
 */
export function recordsNamespaceOf(leaseNamespace: string | undefined, serviceAccountDir: string): string {
  if (leaseNamespace !== undefined) return leaseNamespace;
  const file = join(serviceAccountDir, 'namespace');
  const pod = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  return pod === '' ? 'default' : pod;
}

/** How often helm-operator run collects the records of custom resources gone without an uninstall (the manager's default). */
const RECORDS_GC_INTERVAL_MS = 10 * 60_000;

async function runOperator(o: RunOptions, flags: KubeFlags & HelmEngineFlags, logger: Logger): Promise<void> {
  for (const w of o.warnings) logger.warn(w);
  const { podNamespace } = await import('../../kube/in-cluster.js');
  // Found before anything starts: outside a Pod without the flag is a usage error, as operator-sdk's.
  const leaseNamespace = o.leaderElection === undefined ? undefined : (o.leaderElection.namespace ?? podNamespace());
  // Liftoff only, and the native engine's Go collecting at a quarter of its default growth: this
  // process should fit a Helm operator's small memory limit (see HelmEngineOptions).
  (await import('../../helm-engine/engine.js')).configureHelmEngine({ ...helmEngineOptionsOf(flags), optimizingCompiler: false, goGC: 25 });
  const { loadWatches, runHelmKind } = await import('../../controllers/helm-operator/index.js');
  const { goDurationMs } = await import('../../util/duration.js');
  const { LeaderElector } = await import('../../kube/leader-election.js');
  const watches = loadWatches(o.watchesFile);
  const client = await clientFor(flags);
  const charts = new Map<string, { path: string; digest: string; version: string }>();
  for (const w of watches) charts.set(w.chart, { path: w.chart, digest: await chartDigest(w.chart), version: '' });
  const readiness: Readiness = { waiting: o.leaderElection !== undefined, synced: false };
  let started: Awaited<ReturnType<typeof startServers>>;
  try {
    started = await startServers(o, client, logger, readiness);
  } catch (err) {
    client.close();
    throw err;
  }
  const { servers, metrics, createdMetric } = started;
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  const listed = (o.watchNamespace ?? process.env.WATCH_NAMESPACE ?? '').split(',').map((n) => n.trim());
  // One namespace each, or [undefined]: every namespace.
  const namespaces = listed.includes('') ? [undefined] : [...new Set(listed)];
  // With leader election every write passes the leadership fence: none once the lease may be lost.
  // The trusted release history lives in this process's own namespace (operator-sdk's identity may write Secrets there).
  const recordsNamespace = recordsNamespaceOf(leaseNamespace, (await import('../../kube/in-cluster.js')).serviceAccountDir());
  const { ReleaseRecords } = await import('../../apply/release-records.js');
  const { OpenApiSchemas } = await import('../../kube/openapi.js');
  // One renderer for every kind's releases, so its cache is one.
  const renderer = (await import('../../render/index.js')).createRenderer();
  const serve = async (signal: AbortSignal, fence?: WriteFence): Promise<void> => {
    readiness.waiting = false;
    const writer = fence === undefined ? client : client.fenced(fence);
    const records = new ReleaseRecords({ client: writer, namespace: recordsNamespace, logger });
    const engine = { records, schemas: OpenApiSchemas.shared(writer), renderer };
    // Records whose custom resource is gone without an uninstall (its finalizer removed by hand, its CRD deleted), as the manager collects them.
    const { ReleaseRecordsCollector, collectRecordsEvery } = await import('../../controllers/helm-operator/index.js');
    collectRecordsEvery(new ReleaseRecordsCollector({ records, client: writer, logger }), RECORDS_GC_INTERVAL_MS, signal);
    const running = watches.flatMap((w) => namespaces.map((namespace) =>
      runHelmKind(
        {
          group: w.group,
          version: w.version,
          kind: w.kind,
          chart: () => charts.get(w.chart),
          // operator-sdk's model: releases act as this process, confined by the RBAC its bundle grants.
          identity: { type: 'own' },
          overrideValues: w.overrideValues,
          watchDependentResources: w.watchDependentResources,
          suppressOverrideValues: o.suppressOverrideValues,
          ...(w.dryRunOption === undefined ? {} : { dryRunOption: w.dryRunOption }),
          ...(w.reconcilePeriod === undefined ? (o.reconcilePeriodMs === undefined ? {} : { reconcilePeriodMs: o.reconcilePeriodMs }) : { reconcilePeriodMs: goDurationMs(w.reconcilePeriod) ?? 60_000 }),
        },
        { client: writer, logger, engine, metrics, createdMetric, maxConcurrentReconciles: w.maxConcurrentReconciles ?? o.maxConcurrentReconciles, ...(w.selector === undefined ? {} : { selector: w.selector }), ...(namespace === undefined ? {} : { namespace }) },
      ),
    ));
    void Promise.all(running.map((r) => r.synced)).then(() => {
      if (!signal.aborted) readiness.synced = true;
    });
    void warmEngine(watches.map((w) => w.chart), async () => (await import('../../helm-engine/engine.js')).helmEngine(), logger);
    logger.info({ kinds: watches.map((w) => `${w.kind}.${w.version}.${w.group}`), namespaces: namespaces[0] === undefined ? 'all' : namespaces }, 'serving Helm operator kinds');
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    readiness.synced = false;
    await Promise.all(running.map((r) => r.stop()));
  };
  try {
    if (o.leaderElection !== undefined && leaseNamespace !== undefined) {
      const elector = new LeaderElector({
        // A bucket of its own: a renewal never waits behind the reconciles' requests.
        client: client.withOwnRateLimit('leader-election'),
        namespace: leaseNamespace,
        name: o.leaderElection.id ?? `helm-operator-${watches.map((w) => w.kind.toLowerCase()).join('-')}`.slice(0, 63),
        identity: `${process.env.HOSTNAME ?? 'local'}_${process.pid}`,
        logger,
        onStartedLeading: serve,
        // Lost (not released at a SIGTERM): stop at once and fail, so the Pod restarts and campaigns again.
        onStoppedLeading: (lost) => {
          if (!lost) return;
          logger.error('leader election lost; stopping');
          stop.abort();
          process.exitCode = 1;
        },
      });
      await elector.run(stop.signal);
    } else {
      await serve(stop.signal);
    }
  } finally {
    await Promise.all(servers.map((s) => s.close()));
    client.close();
  }
}

export function registerHelmOperatorCommands(program: Command, ctx: CliContext): void {
  const ho = program.command('helm-operator').description("Run operator-sdk Helm operators (watches.yaml) on Binnacle's Helm engine");
  // One engine thread: a second one costs ~70 MiB (Go's linear memory from 43 MiB, its own
  // isolate) in a process whose scaffold limit is 128 MiB, and a chart operator's renders are
  // short beside the API calls of a reconcile (bench/helm-operator.ts: the same converge time).
  addKubeApiRateFlags(addHelmOperatorRunFlags(addHelmEngineFlags(addKubeFlags(ho.command('run')), { threads: 1 })))
    .description('Reconcile the custom resources of every kind in watches.yaml as Helm releases of its chart (operator-sdk helm-operator run)')
    .action(async (flags: KubeFlags & HelmEngineFlags & RawRunFlags, cmd: Command) => {
      const o = resolveRunFlags(flags, (name) => cmd.getOptionValueSource(name) === 'cli');
      // controller-runtime's --zap-* flags, when given, decide the logs; else the CLI's own (-v, --log-format).
      const logger = o.zap === undefined ? ctx.logger : zapLogger(o.zap);
      await runOperator(o, flags, logger);
    });
}
