/**
 * The in-cluster configuration a Pod gets: its ServiceAccount's token, the cluster CA and its
 * namespace as files under /var/run/secrets/kubernetes.io/serviceaccount, and the API server at
 * $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT. `$BINNACLE_SERVICEACCOUNT_DIR` names another
 * folder with those files, so a process outside a Pod can run with exactly a Pod's identity
 * (the e2e proof that install-self's ClusterRole is enough). The token file is read again
 * at most a minute after it was last read, and at once after a 401 (src/kube/credentials.ts):
 * the kubelet rotates it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { KubeConfig } from './kube-config.js';
import { BinnacleError } from '../util/errors.js';

export const SERVICEACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Where this process's service-account files are (a Pod's, or $BINNACLE_SERVICEACCOUNT_DIR). */
export function serviceAccountDir(): string {
  const dir = process.env.BINNACLE_SERVICEACCOUNT_DIR;
  return dir !== undefined && dir !== '' ? dir : SERVICEACCOUNT_DIR;
}

/** True in a Pod (or with a Pod's files and environment). */
export function inCluster(): boolean {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  return host !== undefined && host !== '' && port !== undefined && port !== '' && existsSync(join(serviceAccountDir(), 'token'));
}

export function loadInClusterConfig(): KubeConfig {
  const dir = serviceAccountDir();
  const host = process.env.KUBERNETES_SERVICE_HOST ?? '';
  const port = process.env.KUBERNETES_SERVICE_PORT ?? '';
  if (host === '' || port === '') throw new BinnacleError('terminal', 'INCLUSTER_ENV_MISSING', 'in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set');
  const caFile = join(dir, 'ca.crt');
  const tokenFile = join(dir, 'token');
  for (const f of [caFile, tokenFile]) if (!existsSync(f)) throw new BinnacleError('terminal', 'INCLUSTER_FILE_MISSING', `in-cluster configuration: ${f} does not exist`);
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name: 'in-cluster', server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile, skipTLSVerify: false },
    { name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile } } },
  );
  const nsFile = join(dir, 'namespace');
  if (existsSync(nsFile)) {
    const ctx = kc.getContextObject(kc.getCurrentContext());
    if (ctx !== null) kc.contexts = [{ ...ctx, namespace: readFileSync(nsFile, 'utf8').trim() }];
  }
  return kc;
}

/**
 * The namespace of this process's Pod, as controller-runtime finds its leader-election
 * namespace: the service-account `namespace` file. Outside a Pod, an error asking for the flag.
 */
export function podNamespace(flag = '--leader-election-namespace'): string {
  const file = join(serviceAccountDir(), 'namespace');
  const ns = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (ns === '') throw new BinnacleError('input', 'NOT_IN_CLUSTER', `not running in-cluster (${file} is missing or empty): give ${flag}`, { exitCode: 2 });
  return ns;
}
