/**
 * Which kubeconfig a command uses: kubectl's rule, in one place. `--kubeconfig FILE` (which
 * must exist), else every existing file named in `$KUBECONFIG` (colon-separated, merged with
 * the first file to set a value winning), else `~/.kube/config` when it exists, else the
 * in-cluster service account. Pure: the caller passes the environment in, so it is testable.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export type KubeconfigSource =
  | { kind: 'flag'; files: [string] }
  | { kind: 'env'; files: string[] }
  | { kind: 'home'; files: [string] }
  | { kind: 'in-cluster' }
  | { kind: 'none'; reason: string };

export interface KubeconfigEnv {
  /** `--kubeconfig` as given (undefined or '' when not given). */
  flag?: string | undefined;
  /** `$KUBECONFIG`. */
  env?: string | undefined;
  home?: string;
  exists?: (path: string) => boolean;
  /** In a Pod: KUBERNETES_SERVICE_HOST is set and the token file exists. */
  inCluster?: boolean;
}

export function kubeconfigSource(e: KubeconfigEnv = {}): KubeconfigSource {
  const exists = e.exists ?? existsSync;
  if (e.flag !== undefined && e.flag !== '') return { kind: 'flag', files: [e.flag] };
  if (e.env !== undefined && e.env !== '') {
    // As kubectl: names that do not exist are skipped; only when none exists is it an error.
    const files = [...new Set(e.env.split(delimiter).filter((f) => f !== ''))];
    const present = files.filter((f) => exists(f));
    if (present.length > 0) return { kind: 'env', files: present };
    if (files.length > 0) return { kind: 'none', reason: `no file named in $KUBECONFIG exists (${files.join(delimiter)})` };
  }
  const home = join(e.home ?? process.env.HOME ?? homedir(), '.kube', 'config');
  if (exists(home)) return { kind: 'home', files: [home] };
  const inCluster = e.inCluster ?? ((process.env.KUBERNETES_SERVICE_HOST ?? '') !== '' && exists(IN_CLUSTER_TOKEN));
  if (inCluster) return { kind: 'in-cluster' };
  return { kind: 'none', reason: `no --kubeconfig, no $KUBECONFIG, no ${home}, and not running in a cluster` };
}

/** The context-free part of a kubeconfig that merging looks at. */
interface Named {
  name: string;
}

/**
 * kubectl's merge of several kubeconfigs: for clusters, users and contexts the first file to
 * define a name wins, and the first current-context set wins.
 */
export function mergeKubeconfigs<C extends Named, U extends Named, X extends Named>(
  configs: readonly { clusters: readonly C[]; users: readonly U[]; contexts: readonly X[]; currentContext?: string | undefined }[],
): { clusters: C[]; users: U[]; contexts: X[]; currentContext: string } {
  const firstWins = <T extends Named>(lists: readonly (readonly T[])[]): T[] => {
    const seen = new Map<string, T>();
    for (const list of lists) for (const x of list) if (!seen.has(x.name)) seen.set(x.name, x);
    return [...seen.values()];
  };
  return {
    clusters: firstWins(configs.map((c) => c.clusters)),
    users: firstWins(configs.map((c) => c.users)),
    contexts: firstWins(configs.map((c) => c.contexts)),
    currentContext: configs.map((c) => c.currentContext ?? '').find((c) => c !== '') ?? '',
  };
}
