/**
 * Kubeconfig loading as kubectl does it (the rule is in kubeconfig-rule.ts): an explicit
 * file, else $KUBECONFIG (merged), else ~/.kube/config, else the in-cluster service account.
 * An optional context overrides the current one.
 */
import { existsSync } from 'node:fs';
import { KubeConfig } from './kube-config.js';
import { BinnacleError } from '../util/errors.js';
import { inCluster, loadInClusterConfig } from './in-cluster.js';
import { kubeconfigSource, mergeKubeconfigs } from './kubeconfig-rule.js';

export interface LoadKubeConfigOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  const source = kubeconfigSource({ flag: opts.kubeconfig, env: process.env.KUBECONFIG, inCluster: inCluster() });
  try {
    switch (source.kind) {
      case 'flag':
        if (!existsSync(source.files[0])) throw new BinnacleError('input', 'KUBECONFIG_NOT_FOUND', `--kubeconfig ${source.files[0]}: the file does not exist`);
        kc.loadFromFile(source.files[0]);
        break;
      case 'home':
        kc.loadFromFile(source.files[0]);
        break;
      case 'env': {
        // Each file on its own (relative paths in it resolve against its folder), then merged.
        const parts = source.files.map((f) => {
          const one = new KubeConfig();
          one.loadFromFile(f);
          return one;
        });
        kc.loadFromOptions(mergeKubeconfigs(parts));
        break;
      }
      case 'in-cluster': {
        const ic = loadInClusterConfig();
        kc.loadFromOptions({ clusters: ic.clusters, users: ic.users, contexts: ic.contexts, currentContext: ic.currentContext });
        break;
      }
      case 'none':
        throw new BinnacleError('input', 'KUBECONFIG_NOT_FOUND', `no cluster to talk to: ${source.reason}; pass --kubeconfig, set KUBECONFIG, or run \`binnacle cluster up\` and export the KUBECONFIG it prints`);
    }
  } catch (err) {
    if (err instanceof BinnacleError) throw err;
    throw new BinnacleError('input', 'KUBECONFIG_INVALID', `cannot load kubeconfig: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (opts.context !== undefined && opts.context !== '') {
    if (kc.getContextObject(opts.context) === null) {
      throw new BinnacleError('input', 'KUBECONFIG_CONTEXT', `context "${opts.context}" is not in the kubeconfig (have: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (kc.getCurrentCluster() === null) {
    throw new BinnacleError('input', 'KUBECONFIG_NO_CLUSTER', 'no cluster in the kubeconfig: pass --kubeconfig, set KUBECONFIG, or run `binnacle cluster up`');
  }
  return kc;
}
