/** `binnacle manager`: run every controller (with leader election, metrics and health endpoints). */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { cacheDir } from '../../cluster/layout.js';
import { UsageError, errorMessage } from '../../util/errors.js';
import { parseInstaller } from '../../api/olmv1/convert.js';
import { parseServiceAccountMode } from '../../api/olmv1/serviceaccount-policy.js';
import type { CliContext } from '../context.js';
import type { ManagerOptions } from '../../controllers/manager.js';
import { tlsSettings, type TlsProfileFlags } from '../../util/tls-profile.js';
import { addHelmEngineFlags, addKubeApiRateFlags, addTlsProfileFlags, durationMs, helmEngineOptionsOf, parseDuration, parsePositiveInt, readTlsPair, type HelmEngineFlags } from '../flags.js';
import { addKubeFlags, clientFor, type KubeFlags } from '../kube.js';
import { watchMetricsCertificate, watchTlsPair, type TlsPair } from '../tls-reload.js';
import { addConsoleAccessFlags, consoleAccessFlagsOf } from './console.js';

interface ManagerFlags extends KubeFlags, TlsProfileFlags {
  dataDir: string;
  metricsBindAddress: string;
  healthProbeBindAddress?: string;
  metricsSecure: boolean;
  metricsRequireRbac: boolean;
  metricsCertDir?: string;
  catalogBindAddress: string;
  catalogBaseUrl?: string;
  catalogTlsCert?: string;
  catalogTlsKey?: string;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectLeaseDuration: string;
  leaderElectRenewDeadline: string;
  leaderElectRetryPeriod: string;
  workers: number;
  catalogWorkers: number;
  healthTimeout: number;
  consoleListen?: string;
  olmv1: boolean;
  olmv1Installer?: string;
  olmv1ServiceAccount: string;
  olmv1ObjectSets: boolean;
}

export function registerManagerCommands(program: Command, ctx: CliContext): void {
  const cmd = addKubeFlags(program.command('manager'))
    .description('Run the controllers: ClusterCatalog, BundleDeployment, ClusterExtension, PlatformOperator')
    .option('--data-dir <dir>', 'unpacked images, sources and stored catalogs', join(cacheDir(), 'manager'))
    .option('--metrics-bind-address <addr>', '/metrics, and /healthz and /readyz unless --health-probe-bind-address is given', '127.0.0.1:8080')
    .option('--health-probe-bind-address <addr>', '/healthz and /readyz on their own address, plain HTTP for the kubelet (default: on --metrics-bind-address)')
    .option('--metrics-secure', 'serve /metrics over HTTPS: the certificate in --metrics-cert-dir, else a self-signed one made at start', false)
    .option('--metrics-require-rbac', "serve /metrics only to callers whose bearer token the API server authenticates and whose RBAC allows get on the path, as operator-controller's and catalogd's metrics (needs --metrics-secure)", false)
    .option('--metrics-cert-dir <dir>', "where --metrics-secure finds tls.crt and tls.key (controller-runtime's default: $TMPDIR/k8s-metrics-server/serving-certs)")
    .option('--catalog-bind-address <addr>', 'catalog HTTP API', '127.0.0.1:8083')
    .option('--catalog-base-url <url>', "where clients reach the catalog API (a ClusterCatalog's status.urls.base starts with it), e.g. the Service's https://binnacle-catalogs.binnacle-system.svc; default: the bind address")
    .option('--catalog-tls-cert <file>', "serve the catalog API over HTTPS with this certificate (PEM), as catalogd's --tls-cert; read again when the file changes (a renewed Secret)")
    .option('--catalog-tls-key <file>', 'the key of --catalog-tls-cert (PEM)')
    .option('--leader-elect', 'campaign for a Lease so only one manager reconciles', false)
    .option('--leader-election-namespace <ns>', 'namespace of the Lease', 'binnacle-system')
    .option('--leader-elect-lease-duration <d>', 'how long other candidates wait before taking over a Lease that was not renewed (e.g. 15s)', '15s')
    .option('--leader-elect-renew-deadline <d>', 'how long the leader keeps trying to renew before it gives up (and exits), shorter than the lease duration', '10s')
    .option('--leader-elect-retry-period <d>', 'how often candidates try to take or renew the Lease', '2s')
    .option('--workers <n>', 'workers per controller (BundleDeployments, ClusterExtensions, HelmOperator kinds)', parsePositiveInt, 4)
    .option('--catalog-workers <n>', 'ClusterCatalogs unpacked and loaded at once; each is parsed whole in memory while it loads (catalogd loads one at a time)', parsePositiveInt, 2)
    .option('--health-timeout <duration>', 'how long an install may take to become healthy before it counts as failed (e.g. 120s, 5m)', parseDuration, 120_000)
    .option('--no-olmv1', "do not serve OLM v1's API (olm.operatorframework.io/v1 ClusterExtension and ClusterCatalog); served by default unless operator-controller owns its CRDs")
    .option(
      '--olmv1-installer <namespace/name>',
      'the ServiceAccount an olm.operatorframework.io/v1 ClusterExtension that names none installs as (OLM v1.11 installs as cluster-admin; Binnacle never as itself). Creating such a ClusterExtension is then as powerful as this ServiceAccount: give it to cluster admins only. Without it, such extensions are refused with a condition saying so',
    )
    .option(
      '--olmv1-service-account <use|ignore>',
      "an olm.operatorframework.io/v1 ClusterExtension's deprecated spec.serviceAccount: use (installs as it) or ignore (as OLM v1.11 does: the --olmv1-installer acts for every such extension, even one that names a narrower ServiceAccount); an apply that sets it warns either way",
      'use',
    )
    .option(
      '--olmv1-object-sets',
      "also serve olm.operatorframework.io/v1 ClusterObjectSets (operator-controller's BoxcutterRuntime revisions, alpha and off by default there too): their objects are applied as the --olmv1-installer, so creating one is as powerful as that ServiceAccount",
      false,
    )
    .option('--console-listen <host:port>', "also serve the web console (see `binnacle console`) on this address; each person sends their own token (or comes through --console-trusted-proxy-header): the manager's identity is never lent");
  addConsoleAccessFlags(addTlsProfileFlags(addKubeApiRateFlags(addHelmEngineFlags(cmd))), 'console-').action(async (flags: ManagerFlags & HelmEngineFlags) => {
    const tlsProfile = tlsSettings(flags);
    const metricsSecurity = await metricsSecurityOf(flags, ctx);
    const leaderTimes = flags.leaderElect ? leaderElectionTimes(flags) : undefined;
    const installer = flags.olmv1Installer === undefined ? undefined : parseInstaller(flags.olmv1Installer);
    if (flags.olmv1Installer !== undefined && installer === undefined) throw new UsageError(`--olmv1-installer ${JSON.stringify(flags.olmv1Installer)}: expected <namespace>/<serviceaccount name>`);
    if (flags.olmv1ObjectSets && !flags.olmv1) throw new UsageError('--olmv1-object-sets serves a kind of OLM v1\'s API, which --no-olmv1 turns off: give one or the other');
    const serviceAccount = parseServiceAccountMode(flags.olmv1ServiceAccount);
    if (serviceAccount === undefined) throw new UsageError(`--olmv1-service-account ${JSON.stringify(flags.olmv1ServiceAccount)}: expected use or ignore`);
    (await import('../../helm-engine/engine.js')).configureHelmEngine(helmEngineOptionsOf(flags));
    const { startManager } = await import('../../controllers/manager.js');
    // First: a console flag that is wrong (or unsafe) stops the manager before it reconciles anything.
    const web = flags.consoleListen === undefined ? undefined : await (await import('./console.js')).serveConsole(flags, consoleAccessFlagsOf(flags, 'console-'), flags.consoleListen, ctx, { manager: true });
    const client = await clientFor(flags);
    const serving = await catalogServing(flags);
    const tlsFiles = flags.catalogTlsCert === undefined || flags.catalogTlsKey === undefined ? undefined : { cert: flags.catalogTlsCert, key: flags.catalogTlsKey };
    const servedPair = serving.catalogTls;
    const mgr = await startManager({
      client,
      logger: ctx.logger,
      dataDir: flags.dataDir,
      metricsAddress: flags.metricsBindAddress,
      ...(flags.healthProbeBindAddress === undefined ? {} : { probeAddress: flags.healthProbeBindAddress }),
      ...(metricsSecurity === undefined ? {} : { metricsSecurity }),
      tlsProfile,
      catalogAddress: flags.catalogBindAddress,
      ...serving,
      // A renewed certificate (install-self's Secret, or cert-manager's) is served without a restart.
      ...(servedPair === undefined || tlsFiles === undefined
        ? {}
        : { catalogTlsUpdates: (use: (pair: TlsPair) => void) => watchTlsPair({ files: tlsFiles, flags: { cert: '--catalog-tls-cert', key: '--catalog-tls-key' }, current: servedPair, logger: ctx.logger }, use) }),
      workers: flags.workers,
      catalogWorkers: flags.catalogWorkers,
      healthTimeoutMs: flags.healthTimeout,
      handleRejections: true,
      olmv1: { serve: flags.olmv1, installer, serviceAccount, objectSets: flags.olmv1ObjectSets },
      ...(leaderTimes === undefined ? {} : { leaderElection: { namespace: flags.leaderElectionNamespace, ...leaderTimes } }),
    });
    const shutdown = (): void => void Promise.all([mgr.stop(), web?.stop()]);
    process.once('SIGTERM', shutdown);
    process.once('SIGINT', shutdown);
    try {
      await mgr.done;
    } catch (err) {
      // As controller-runtime: a manager that lost its lease, or failed for good, exits at once,
      // non-zero, so that nothing of its in-flight work runs on and its Deployment restarts it.
      ctx.err(`error: ${errorMessage(err)}\n`);
      process.exit(1);
    }
    client.close();
  });
}

/** --metrics-secure, --metrics-require-rbac and --metrics-cert-dir, checked; undefined: plain HTTP. */
async function metricsSecurityOf(flags: ManagerFlags, ctx: CliContext): Promise<ManagerOptions['metricsSecurity']> {
  if (flags.metricsRequireRbac && !flags.metricsSecure) throw new UsageError('--metrics-require-rbac needs --metrics-secure: a bearer token is not sent over plain HTTP');
  if (flags.metricsCertDir !== undefined && !flags.metricsSecure) throw new UsageError('--metrics-cert-dir is only read with --metrics-secure');
  if (!flags.metricsSecure) return undefined;
  if (flags.metricsCertDir !== undefined) {
    // Named on purpose: a missing file is a mistake, not a reason to serve a self-signed certificate instead.
    const missing = ['tls.crt', 'tls.key'].filter((f) => !existsSync(join(flags.metricsCertDir as string, f)));
    if (missing.length > 0) throw new UsageError(`--metrics-cert-dir ${flags.metricsCertDir}: ${missing.join(' and ')} not found there`);
  }
  const { metricsServingCertificate } = await import('../../kube/probe-server.js');
  const cert = await metricsServingCertificate(flags.metricsCertDir, ctx.logger);
  return { tls: cert, auth: flags.metricsRequireRbac, updates: (use) => watchMetricsCertificate(cert, use, ctx.logger) };
}

/** The three leader-election durations, checked: each a positive duration, renew deadline shorter than the lease. */
function leaderElectionTimes(flags: ManagerFlags): { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number } {
  const ms = (flag: string, value: string): number => {
    const d = durationMs(value);
    if (d === undefined || d <= 0) throw new UsageError(`${flag} ${JSON.stringify(value)}: expected a positive duration such as 15s, 500ms or 1m`);
    return d;
  };
  const t = {
    leaseDurationMs: ms('--leader-elect-lease-duration', flags.leaderElectLeaseDuration),
    renewDeadlineMs: ms('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline),
    retryPeriodMs: ms('--leader-elect-retry-period', flags.leaderElectRetryPeriod),
  };
  if (t.renewDeadlineMs >= t.leaseDurationMs) throw new UsageError('--leader-elect-renew-deadline must be shorter than --leader-elect-lease-duration');
  if (t.retryPeriodMs >= t.renewDeadlineMs) throw new UsageError('--leader-elect-retry-period must be shorter than --leader-elect-renew-deadline');
  return t;
}

/** --catalog-base-url and --catalog-tls-cert/--catalog-tls-key, checked: a URL without query or fragment, both files or neither, readable PEM. */
export async function catalogServing(flags: Pick<ManagerFlags, 'catalogBaseUrl' | 'catalogTlsCert' | 'catalogTlsKey'>): Promise<{ catalogBaseUrl?: string; catalogTls?: { certPem: string; keyPem: string } }> {
  const out: { catalogBaseUrl?: string; catalogTls?: { certPem: string; keyPem: string } } = {};
  const tls = await readTlsPair({ cert: flags.catalogTlsCert, key: flags.catalogTlsKey }, { cert: '--catalog-tls-cert', key: '--catalog-tls-key' });
  if (tls !== undefined) out.catalogTls = tls;
  if (flags.catalogBaseUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(flags.catalogBaseUrl);
    } catch {
      throw new UsageError(`--catalog-base-url ${JSON.stringify(flags.catalogBaseUrl)}: not a URL`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw new UsageError(`--catalog-base-url ${JSON.stringify(flags.catalogBaseUrl)}: must be http:// or https:// with no query, fragment or credentials`);
    }
    out.catalogBaseUrl = url.href.replace(/\/+$/, '');
  }
  return out;
}
