/** `binnacle manager`: run every controller (with leader election, metrics and health endpoints). */
import { join } from 'node:path';
import type { Command } from 'commander';
import { cacheDir } from '../../cluster/layout.js';
import type { CliContext } from '../context.js';
import { parseDuration, parsePositiveInt } from '../flags.js';
import { addKubeFlags, clientFor, type KubeFlags } from '../kube.js';

interface ManagerFlags extends KubeFlags {
  dataDir: string;
  metricsBindAddress: string;
  catalogBindAddress: string;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  workers: number;
  healthTimeout: number;
}

export function registerManagerCommands(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('manager'))
    .description('Run the controllers: ClusterCatalog, BundleDeployment, ClusterExtension, PlatformOperator')
    .option('--data-dir <dir>', 'unpacked images, sources and stored catalogs', join(cacheDir(), 'manager'))
    .option('--metrics-bind-address <addr>', '/metrics, /healthz and /readyz', '127.0.0.1:8080')
    .option('--catalog-bind-address <addr>', 'catalog HTTP API', '127.0.0.1:8083')
    .option('--leader-elect', 'campaign for a Lease so only one manager reconciles', false)
    .option('--leader-election-namespace <ns>', 'namespace of the Lease', 'binnacle-system')
    .option('--workers <n>', 'workers per controller', parsePositiveInt, 4)
    .option('--health-timeout <duration>', 'how long an install may take to become healthy before it counts as failed (e.g. 120s, 5m)', parseDuration, 120_000)
    .action(async (flags: ManagerFlags) => {
      const { startManager } = await import('../../controllers/manager.js');
      const client = await clientFor(flags);
      const mgr = await startManager({
        client,
        logger: ctx.logger,
        dataDir: flags.dataDir,
        metricsAddress: flags.metricsBindAddress,
        catalogAddress: flags.catalogBindAddress,
        workers: flags.workers,
        healthTimeoutMs: flags.healthTimeout,
        ...(flags.leaderElect ? { leaderElection: { namespace: flags.leaderElectionNamespace } } : {}),
      });
      const shutdown = (): void => void mgr.stop();
      process.once('SIGTERM', shutdown);
      process.once('SIGINT', shutdown);
      await mgr.done;
      client.close();
    });
}
