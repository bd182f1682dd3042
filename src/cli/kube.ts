/**
 * How commands find the cluster: --kubeconfig, else $KUBECONFIG, else the built-in local
 * cluster when it exists, else ~/.kube/config (or in-cluster config).
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { clusterLayout } from '../cluster/layout.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeConfig } from '../kube/config.js';

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
}

export function addKubeFlags(c: Command): Command {
  return c.option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, the local cluster, ~/.kube/config)').option('--context <name>', 'kubeconfig context');
}

export function kubeconfigPath(flags: KubeFlags): string | undefined {
  if (flags.kubeconfig !== undefined) return flags.kubeconfig;
  if (process.env.KUBECONFIG !== undefined && process.env.KUBECONFIG !== '') return undefined;
  const local = clusterLayout('binnacle').kubeconfig;
  return existsSync(local) ? local : undefined;
}

export async function clientFor(flags: KubeFlags): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: kubeconfigPath(flags), context: flags.context }));
}
