/** `binnacle cluster up|down|status|kubeconfig`: the built-in local control plane. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

export function registerClusterCommands(program: Command, _ctx: CliContext): void {
  program.command('cluster').description('Run a local Kubernetes control plane (etcd, kube-apiserver, controller manager, scheduler, kwok, registry)');
}
