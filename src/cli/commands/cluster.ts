/** `binnacle cluster up|down|status|kubeconfig`: the built-in local control plane. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { BinnacleError, UsageError } from '../../util/errors.js';
import { toJson, toYaml } from '../../util/output.js';
import { printData, type CliContext } from '../context.js';
import { collect, outputOption, parseDuration } from '../flags.js';

/** The control plane's code, loaded when a cluster command runs. */
const clusters = (): Promise<typeof import('../../cluster/index.js')> => import('../../cluster/index.js');

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

  // Both mirror flags on one command line exclude each other (commander keeps whichever came last).
  const mirrorFlags = new Set<string>();
  withName(cluster.command('up'))
    .on('option:registry-mirror', () => mirrorFlags.add('--registry-mirror'))
    .on('option:no-registry-mirror', () => mirrorFlags.add('--no-registry-mirror'))
    .description('Start the cluster (idempotent; repairs a crashed one); builds missing binaries first')
    .addOption(outputOption(['text', 'json', 'yaml'], 'text'))
    .option('--timeout <duration>', 'how long each component may take to become healthy (e.g. 120s, 5m)', parseDuration, 120_000)
    .option('--openshift', "add OpenShift's APIs (ClusterVersion, Infrastructure, Proxy, Route, SCC, ImageStream, BuildConfig, console kinds) from the pinned github.com/openshift/api module")
    .option('--openshift-version <version>', 'the OpenShift version the ClusterVersion reports (with --openshift)', '4.16.0')
    .option('--real-node', 'add one real node (kubelet, containerd, runc, CNI bridge, kube-proxy; root only), tainted binnacle.dev/real-node so only Pods that tolerate it run there; also $BINNACLE_REAL_NODE=1')
    .option('--registry-mirror <host>', "with --real-node: pulls of this registry's images (docker.io, quay.io) try the cluster's registry first, under the same repository path, for a machine offline (repeatable; replaces a running cluster's list). The cluster's registry takes pushes from anything that reaches it, the node's Pods too: a mirrored tag is as trustworthy as they are (pull by digest where it matters)", collect)
    .option('--no-registry-mirror', "with --real-node: mirror no registry (clears a running cluster's list)")
    .option('--audit', "log ServiceAccounts' API requests (Metadata level) to the state dir's logs/audit.log")
    .action(async (opts: NameOpts & { output: string; timeout: number; openshift?: boolean; openshiftVersion: string; realNode?: boolean; registryMirror?: string[] | false; audit?: boolean }) => {
      if (mirrorFlags.size === 2) throw new UsageError('--registry-mirror and --no-registry-mirror exclude each other: name the mirrors, or clear them');
      const realNode = opts.realNode === true || process.env.BINNACLE_REAL_NODE === '1';
      if (opts.registryMirror !== undefined && !realNode) throw new UsageError(`--${opts.registryMirror === false ? 'no-' : ''}registry-mirror configures the real node's image pulls: add --real-node`);
      const { clusterUp } = await clusters();
      const result = await clusterUp({
        ...(realNode ? { realNode: true } : {}),
        ...(opts.openshift === true ? { openshift: { version: opts.openshiftVersion } } : {}),
        ...(opts.audit === true ? { audit: true } : {}),
        ...(opts.registryMirror === undefined ? {} : { registryMirrors: opts.registryMirror === false ? [] : opts.registryMirror }),
        name: opts.name,
        stateDir: opts.stateDir,
        logger: ctx.logger,
        timeoutMs: opts.timeout,
        progress: (line) => ctx.err(`• ${line}\n`),
      });
      if (opts.output === 'json') ctx.out(toJson(result));
      else if (opts.output === 'yaml') ctx.out(toYaml(result));
      // Commands find clusters as kubectl does ($KUBECONFIG, ~/.kube/config): say how to point them here.
      ctx.err(`• to use it: export KUBECONFIG=${result.kubeconfig}\n`);
      if (opts.output === 'text') ctx.out(`kubeconfig: ${result.kubeconfig}\napiserver:  ${result.apiserver}\nregistry:   ${result.registry}\n${result.openshiftVersion === undefined ? '' : `openshift:  ${result.openshiftVersion}\n`}${result.realNode === undefined ? '' : `real node:  ${result.realNode}\n`}`);
    });

  withName(cluster.command('down'))
    .description('Stop every process of the cluster and remove its state dir')
    .action(async (opts: NameOpts) => {
      const { clusterDown } = await clusters();
      const { stopped } = await clusterDown({ name: opts.name, stateDir: opts.stateDir, logger: ctx.logger });
      ctx.err(stopped.length > 0 ? `• stopped ${stopped.join(', ')}\n` : '• nothing was running\n');
    });

  withName(cluster.command('status'))
    .description('Show each component: process, health, endpoint')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (opts: NameOpts & { output: string }) => {
      const { clusterStatus } = await clusters();
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
    .action(async (opts: NameOpts & { path?: boolean }) => {
      const { clusterKubeconfigPath } = await clusters();
      const path = clusterKubeconfigPath(opts);
      if (opts.path === true) ctx.out(`${path}\n`);
      else {
        try {
          ctx.out(readFileSync(path, 'utf8'));
        } catch (err) {
          throw new BinnacleError('input', 'CLUSTER_KUBECONFIG_UNREADABLE', `cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    });
}
