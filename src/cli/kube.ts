/**
 * How every command finds the cluster: kubectl's rule (src/kube/kubeconfig-rule.ts) —
 * `--kubeconfig`, else `$KUBECONFIG`, else `~/.kube/config`, else in-cluster — with
 * `--context` choosing a context. No command prefers the built-in local cluster: `binnacle
 * cluster up` prints the `export KUBECONFIG=…` line that points the shell at it.
 *
 * The Kubernetes client is loaded only when a command asks for it.
 */
import type { Command } from 'commander';
import type { KubeClient } from '../kube/client.js';
import { addGlobalFlags } from './flags.js';
import { DEFAULT_BURST } from '../kube/rate-limit.js';

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
  /** --request-timeout in ms; 0: no deadline. */
  requestTimeout?: number;
  /** --kube-api-qps (negative: no limit) and --kube-api-burst, where the command has them; else the client's default. */
  kubeApiQps?: number;
  kubeApiBurst?: number;
}

/** The longest timer Node can set (about 24.8 days): "no deadline". */
const NO_DEADLINE_MS = 2 ** 31 - 1;

/** The cluster flags (with the other global flags); every command has them after registration anyway. */
export function addKubeFlags(c: Command): Command {
  return addGlobalFlags(c);
}

export async function clientFor(flags: KubeFlags): Promise<KubeClient> {
  const [{ KubeClient: Client }, { loadKubeConfig }] = await Promise.all([import('../kube/client.js'), import('../kube/config.js')]);
  const timeoutMs = flags.requestTimeout === 0 ? NO_DEADLINE_MS : flags.requestTimeout;
  return Client.fromKubeConfig(loadKubeConfig({ kubeconfig: flags.kubeconfig, context: flags.context }), { ...(timeoutMs === undefined ? {} : { timeoutMs }), ...rateLimitOf(flags) });
}

/** The client's rate limit as the flags say it: none given is the client's default; a negative QPS is none. */
export function rateLimitOf(flags: KubeFlags): { rateLimit?: { qps: number; burst: number } | false } {
  if (flags.kubeApiQps === undefined) return {};
  if (flags.kubeApiQps < 0) return { rateLimit: false };
  return { rateLimit: { qps: flags.kubeApiQps, burst: flags.kubeApiBurst ?? DEFAULT_BURST } };
}

/** Runs `fn` with a client for the cluster the flags name, and closes the client however `fn` ends. */
export async function withCluster<T>(flags: KubeFlags, fn: (client: KubeClient) => Promise<T>): Promise<T> {
  const client = await clientFor(flags);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}
