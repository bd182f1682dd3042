/**
 * Where the local control plane keeps things. Everything a cluster writes lives under its
 * state dir (`.cache/clusters/<name>` by default); built programs live in the shared bin dir.
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BinnacleError } from '../util/errors.js';

/** The repository (or installed package) root: the nearest folder above with a package.json. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

export function cacheDir(): string {
  return resolve(process.env.BINNACLE_CACHE_DIR ?? join(projectRoot(), '.cache'));
}

export function binDir(): string {
  return resolve(process.env.BINNACLE_BIN_DIR ?? join(cacheDir(), 'bin'));
}

/**
 * `path` with the symlinks of its existing part resolved: a state dir reached through a link (a
 * linked .cache) is named by its real path, as the kernel names its mounts and kubelet looks for
 * its root's (a root named through a link was bound again at every start, the mounts stacking).
 */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const up = dirname(path);
    return up === path ? path : join(realPath(up), basename(path));
  }
}

export interface ClusterLayout {
  name: string;
  root: string;
  pki: string;
  logs: string;
  etcdData: string;
  registryData: string;
  stateFile: string;
  kubeconfig: string;
}

export function clusterLayout(name: string, stateDir?: string): ClusterLayout {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    throw new BinnacleError('input', 'CLUSTER_NAME', `cluster name "${name}" must be lower-case letters, digits and dashes`);
  }
  const root = realPath(resolve(stateDir ?? process.env.BINNACLE_CLUSTER_DIR ?? join(cacheDir(), 'clusters', name)));
  return {
    name,
    root,
    pki: join(root, 'pki'),
    logs: join(root, 'logs'),
    etcdData: join(root, 'etcd'),
    registryData: join(root, 'registry'),
    stateFile: join(root, 'state.json'),
    kubeconfig: join(root, 'kubeconfig'),
  };
}
