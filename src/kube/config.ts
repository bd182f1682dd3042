/**
 * Kubeconfig loading as kubectl does it: an explicit file, else $KUBECONFIG, else
 * ~/.kube/config, else the in-cluster service account. An optional context overrides the
 * current one.
 */
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { BinnacleError } from '../util/errors.js';

export interface LoadKubeConfigOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (opts.kubeconfig !== undefined && opts.kubeconfig !== '') {
      if (!existsSync(opts.kubeconfig)) {
        throw new BinnacleError('KUBECONFIG_NOT_FOUND', `kubeconfig ${opts.kubeconfig} does not exist`);
      }
      kc.loadFromFile(opts.kubeconfig);
    } else {
      kc.loadFromDefault();
    }
  } catch (err) {
    if (err instanceof BinnacleError) throw err;
    throw new BinnacleError('KUBECONFIG_INVALID', `cannot load kubeconfig: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (opts.context !== undefined && opts.context !== '') {
    if (kc.getContextObject(opts.context) === null) {
      throw new BinnacleError('KUBECONFIG_CONTEXT', `context "${opts.context}" is not in the kubeconfig (have: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (kc.getCurrentCluster() === null) {
    throw new BinnacleError('KUBECONFIG_NO_CLUSTER', 'no cluster in the kubeconfig: pass --kubeconfig, set KUBECONFIG, or run `binnacle cluster up`');
  }
  return kc;
}
