/** `binnacle cluster up|down|status|kubeconfig`: the built-in local control plane. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { clusterDown, clusterKubeconfigPath, clusterStatus, clusterUp } from '../../cluster/index.js';
import { BinnacleError } from '../../util/errors.js';
import { toJson, toYaml } from '../../util/output.js';
import { printData, type CliContext } from '../context.js';

interface NameOpts {
  name: string;
  stateDir?: string;
}

export function registerClusterCommands(program: Command, ctx: CliContext): void {
  const cluster = program
    .command('cluster')
    .description('Run a local Kubernetes control plane: etcd, kube-apiserver, controller manager, scheduler, kwok fake kubelet, OCI registry');

  const withName = (c: Command): Command =>
    c.option('--name <name>', 'cluster name', 'binnacle').option('--state-dir <dir>', 'where the cluster keeps its files (default .cache/clusters/<name>)');

  withName(cluster.command('up'))
    .description('Start the cluster (idempotent; repairs a crashed one); builds missing binaries first')
    .option('-o, --output <format>', 'text | json | yaml', 'text')
    .option('--timeout <seconds>', 'how long each component may take to become healthy', '120')
    .action(async (opts: NameOpts & { output: string; timeout: string }) => {
      const result = await clusterUp({
        name: opts.name,
        stateDir: opts.stateDir,
        logger: ctx.logger,
        timeoutMs: Number(opts.timeout) * 1000,
        progress: (line) => ctx.err(`• ${line}\n`),
      });
      if (opts.output === 'json') ctx.out(toJson(result));
      else if (opts.output === 'yaml') ctx.out(toYaml(result));
      else ctx.out(`kubeconfig: ${result.kubeconfig}\napiserver:  ${result.apiserver}\nregistry:   ${result.registry}\n`);
    });

  withName(cluster.command('down'))
    .description('Stop every process of the cluster and remove its state dir')
    .action(async (opts: NameOpts) => {
      const { stopped } = await clusterDown({ name: opts.name, stateDir: opts.stateDir, logger: ctx.logger });
      ctx.err(stopped.length > 0 ? `• stopped ${stopped.join(', ')}\n` : '• nothing was running\n');
    });

  withName(cluster.command('status'))
    .description('Show each component: process, health, endpoint')
    .option('-o, --output <format>', 'table | json | yaml', 'table')
    .action(async (opts: NameOpts & { output: string }) => {
      const st = await clusterStatus(opts);
      if (!st.exists && opts.output === 'table') {
        ctx.out(`cluster "${st.name}" does not exist\n`);
      } else {
        printData(ctx, opts.output, {
          value: st,
          headers: ['component', 'pid', 'running', 'healthy', 'endpoint'],
          rows: st.components.map((c) => [c.name, String(c.pid ?? ''), c.running ? 'yes' : 'no', c.healthy ? 'yes' : 'no', c.endpoint]),
        });
      }
      if (!st.exists || st.components.some((c) => !c.healthy)) process.exitCode = 1;
    });

  withName(cluster.command('kubeconfig'))
    .description('Print the admin kubeconfig (or its path with --path)')
    .option('--path', 'print only the file path')
    .action((opts: NameOpts & { path?: boolean }) => {
      const path = clusterKubeconfigPath(opts);
      if (opts.path === true) ctx.out(`${path}\n`);
      else {
        try {
          ctx.out(readFileSync(path, 'utf8'));
        } catch (err) {
          throw new BinnacleError('CLUSTER_KUBECONFIG_UNREADABLE', `cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    });
}
