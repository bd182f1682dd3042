/**
 * Finds the programs the local control plane runs, as envtest users expect: first
 * $KUBEBUILDER_ASSETS, then $PATH, then Binnacle's own build cache, building what is still
 * missing from the Go module proxy (hack/build-tools.sh). The OCI registry is Debian's
 * `docker-registry`, installed with apt when missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Logger } from 'pino';
import { registryBinary } from '../oci/local-registry.js';
import { BinnacleError } from '../util/errors.js';
import { binDir, projectRoot } from './layout.js';

export const CONTROL_PLANE_TOOLS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'kubectl', 'helm'] as const;
export type ToolName = (typeof CONTROL_PLANE_TOOLS)[number];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** etcd older than 3.5 is below what current Kubernetes supports: skip such a binary. */
function acceptable(tool: string, path: string): boolean {
  if (tool !== 'etcd') return true;
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    const m = /etcd Version: (\d+)\.(\d+)/.exec(out);
    return m !== null && (Number(m[1]) > 3 || (Number(m[1]) === 3 && Number(m[2]) >= 5));
  } catch {
    return false;
  }
}

/** Where `tool` is, or undefined. Binnacle's cache wins over $PATH only for etcd too old on PATH. */
export function findTool(tool: string): string | undefined {
  const dirs: string[] = [];
  if (process.env.KUBEBUILDER_ASSETS !== undefined && process.env.KUBEBUILDER_ASSETS !== '') dirs.push(process.env.KUBEBUILDER_ASSETS);
  dirs.push(...(process.env.PATH ?? '').split(delimiter).filter((d) => d !== ''));
  dirs.push(binDir());
  for (const dir of dirs) {
    const p = join(dir, tool);
    if (executable(p) && acceptable(tool, p)) return p;
  }
  return undefined;
}

/** The kwok stages that ship in kwok's module, collected by the build script. */
export function kwokStagesFile(): string {
  return join(binDir(), 'kwok-stages.yaml');
}

/** Paths of every tool, building the missing ones. */
export function ensureTools(tools: readonly string[], logger: Logger): Record<string, string> {
  const missing = tools.filter((t) => findTool(t) === undefined);
  const needStages = tools.includes('kwok') && !existsSync(kwokStagesFile());
  if (missing.length > 0 || needStages) {
    const toBuild = needStages && !missing.includes('kwok') ? [...missing, 'kwok'] : missing;
    logger.info({ tools: toBuild }, 'building missing tools from the Go module proxy');
    const script = join(projectRoot(), 'hack', 'build-tools.sh');
    const r = spawnSync('bash', [script, ...toBuild], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new BinnacleError('terminal', 'TOOLS_BUILD_FAILED', `building ${toBuild.join(', ')} failed (see the output above); is Go installed?`);
  }
  const paths: Record<string, string> = {};
  for (const t of tools) {
    const p = findTool(t);
    if (p === undefined) throw new BinnacleError('terminal', 'TOOL_MISSING', `${t} is still missing after the build`);
    paths[t] = p;
  }
  return paths;
}

/**
 * Debian's docker-registry: found on PATH, else installed by hack/lib.sh `ensure_apt_packages`
 * (the one place that installs machine packages) and found again.
 */
export function ensureRegistryBinary(logger: Logger): string {
  try {
    return registryBinary();
  } catch {
    logger.info('installing the OCI registry (hack/lib.sh ensure_apt_packages)');
    const lib = join(projectRoot(), 'hack', 'lib.sh');
    const r = spawnSync('bash', ['-c', 'source "$1" && ensure_apt_packages', 'bash', lib], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new BinnacleError('terminal', 'REGISTRY_INSTALL_FAILED', `could not install docker-registry (${lib} ensure_apt_packages failed; see the output above)`);
    return registryBinary();
  }
}

/**
 * The programs of the real node (`cluster up --real-node`): kubelet, kube-proxy, containerd and
 * its shim, the CNI plugins and the sandbox program, built from the Go module proxy when missing
 * (hack/build-tools.sh), and Debian's runc and iptables (hack/lib.sh ensure_real_node_packages).
 * `cni-plugins` is the plugins' directory.
 */
export function ensureRealNodeTools(logger: Logger): Record<string, string> {
  const lib = join(projectRoot(), 'hack', 'lib.sh');
  const apt = spawnSync('bash', ['-c', 'source "$1" && ensure_real_node_packages', 'bash', lib], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (apt.status !== 0) throw new BinnacleError('terminal', 'REAL_NODE_PACKAGES_FAILED', `could not install runc, iptables and conntrack (${lib} ensure_real_node_packages failed; see the output above)`);
  const cniDir = join(binDir(), 'cni');
  const cniMissing = ['bridge', 'host-local', 'loopback', 'portmap'].some((p) => !executable(join(cniDir, p)));
  const shimMissing = !executable(join(binDir(), 'containerd-shim-runc-v2'));
  const toBuild = [...(cniMissing ? ['cni-plugins'] : []), ...(shimMissing ? ['containerd'] : [])];
  if (toBuild.length > 0) {
    logger.info({ tools: toBuild }, 'building the real node\'s tools from the Go module proxy');
    const r = spawnSync('bash', [join(projectRoot(), 'hack', 'build-tools.sh'), ...toBuild], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new BinnacleError('terminal', 'TOOLS_BUILD_FAILED', `building ${toBuild.join(', ')} failed (see the output above); is Go installed?`);
  }
  const tools = ensureTools(['kubelet', 'kube-proxy', 'containerd', 'pause'], logger);
  const runc = findTool('runc') ?? ['/usr/sbin/runc', '/usr/bin/runc'].find((p) => executable(p));
  if (runc === undefined) throw new BinnacleError('terminal', 'TOOL_MISSING', 'runc is missing after installing it (hack/lib.sh ensure_real_node_packages)');
  return { ...tools, 'containerd-shim-runc-v2': join(binDir(), 'containerd-shim-runc-v2'), runc, 'cni-plugins': cniDir };
}
