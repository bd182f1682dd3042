/**
 * One real node beside kwok's fake ones (`cluster up --real-node`): containerd and runc, a
 * kubelet registered with the control plane, a CNI bridge for Pod networking, kube-proxy for
 * Services, and images pulled from the cluster's registry, which listens on the node's bridge
 * address so that containerd and the node's Pods (the in-cluster manager) reach it alike. The
 * node is tainted (REAL_NODE_TAINT) so only Pods that tolerate it land there; everything else
 * stays on kwok.
 *
 * Everything it makes is its cluster's own and is removed by `cluster down`: its state lives
 * under the cluster's state dir and a short run dir (socket paths are limited to 108 bytes), its
 * cgroups under one cgroup root, its network namespaces under containerd's state dir, its bridge
 * has a name derived from the cluster's, and the iptables chains kubelet and kube-proxy add are
 * removed after their Pods are stopped through the CRI (so the CNI plugins remove theirs).
 */
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { stringify } from 'yaml';
import type { ObjectReader } from '../kube/ports.js';
import { buildImage, DOCKER_HUB, DOCKER_HUB_API, pushImage, RegistryClient, isRegistryHost } from '../oci/index.js';
import { BinnacleError } from '../util/errors.js';
import { issueCertificate } from '../util/pki.js';
import { kubeconfigYaml, type ClusterPki } from './certs.js';
import type { ClusterLayout } from './layout.js';
import { freePorts } from '../util/ports.js';
import { isRunning, startDetached, stopProcess, type ProcessRecord } from './processes.js';
import { httpRequest } from '../util/http-request.js';

export const REAL_NODE_COMPONENTS = ['containerd', 'kubelet', 'kube-proxy'] as const;
export type RealNodeComponent = (typeof REAL_NODE_COMPONENTS)[number];

/** The taint that keeps Pods off the real node unless they tolerate it (they can run offline). */
export const REAL_NODE_TAINT = { key: 'binnacle.dev/real-node', value: 'true', effect: 'NoSchedule' } as const;
/** The label the real node carries, for Pods that select it. */
export const REAL_NODE_LABEL = 'binnacle.dev/real-node';
/** The sandbox image's repository in the cluster's registry. */
export const PAUSE_REPOSITORY = 'binnacle/pause';

const REAL_NODE_PORTS = ['kubelet', 'kubeletHealthz', 'kubeProxyHealthz', 'kubeProxyMetrics'] as const;

export interface RealNodePlan {
  nodeName: string;
  /** The Linux bridge the Pods hang on (≤ 15 characters). */
  bridge: string;
  /** The Pods' subnet, and the bridge's address in it (the node's IP, where Pods reach the API server). */
  podSubnet: string;
  gateway: string;
  /** Files: containerd's root, kubelet's root dir, configs, Pod logs. */
  dir: string;
  /** Sockets and containerd's state (network namespaces, task bundles): a short path under /run. */
  runDir: string;
  /** The cgroup (in every v1 hierarchy, or the v2 tree) all of the node's Pods live under. */
  cgroupRoot: string;
  ports: Record<(typeof REAL_NODE_PORTS)[number], number>;
  /** The sandbox (pause) image, by digest, in the cluster's registry. */
  pauseImage?: string;
  /** Registries (`docker.io`, `quay.io`) whose pulls try the cluster's registry first (`cluster up --registry-mirror`). */
  registryMirrors?: string[];
  processes: Partial<Record<RealNodeComponent, ProcessRecord>>;
}

/** A short, stable id of the cluster for names with a length limit. */
function clusterId(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 8);
}

/** Where the real node of cluster `layout` lives and which names and addresses it takes. */
export async function planRealNode(layout: ClusterLayout): Promise<RealNodePlan> {
  const id = clusterId(layout.name);
  // 10.244.N.0/24 with N from the cluster's name, so two clusters on one machine differ.
  const n = parseInt(id.slice(0, 4), 16) % 250;
  return {
    nodeName: `${layout.name}-real-node`.slice(0, 63),
    bridge: `bnr${id}`,
    podSubnet: `10.244.${n}.0/24`,
    gateway: `10.244.${n}.1`,
    dir: join(layout.root, 'node'),
    runDir: join('/run/binnacle', id),
    cgroupRoot: `/binnacle-${id}`,
    ports: await freePorts(REAL_NODE_PORTS),
    processes: {},
  };
}

function run(cmd: string, args: string[], opts: { ignoreFailure?: boolean } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0 && opts.ignoreFailure !== true) {
    throw new BinnacleError('terminal', 'REAL_NODE_COMMAND_FAILED', `${cmd} ${args.join(' ')} failed: ${(r.stderr || r.error?.message || '').trim()}`);
  }
  return r.stdout ?? '';
}

/** The mounted cgroup v1 hierarchies (their directories), or the v2 root alone. */
function cgroupHierarchies(): string[] {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return ['/sys/fs/cgroup'];
  return readdirSync('/sys/fs/cgroup')
    .map((d) => join('/sys/fs/cgroup', d))
    .filter((d) => existsSync(join(d, 'cgroup.procs')) && !statSync(d).isSymbolicLink());
}

function makeCgroupRoot(plan: RealNodePlan): void {
  for (const h of cgroupHierarchies()) {
    const dir = join(h, plan.cgroupRoot);
    mkdirSync(dir, { recursive: true });
    // A new cpuset cgroup has no CPUs or memory nodes: give it its parent's.
    if (existsSync(join(dir, 'cpuset.cpus')) && readFileSync(join(dir, 'cpuset.cpus'), 'utf8').trim() === '') {
      writeFileSync(join(dir, 'cpuset.cpus'), readFileSync(join(h, 'cpuset.cpus'), 'utf8'));
      writeFileSync(join(dir, 'cpuset.mems'), readFileSync(join(h, 'cpuset.mems'), 'utf8'));
    }
  }
}

/** Removes the node's cgroups, deepest first (they are empty once every container is gone). */
function removeCgroupRoot(plan: RealNodePlan): string[] {
  const left: string[] = [];
  const remove = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) remove(join(dir, e.name));
    try {
      rmdirSync(dir);
    } catch {
      left.push(dir);
    }
  };
  for (const h of cgroupHierarchies()) if (existsSync(join(h, plan.cgroupRoot))) remove(join(h, plan.cgroupRoot));
  return left;
}

function writeFile(path: string, text: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text, { mode });
}

function containerdSocket(plan: RealNodePlan): string {
  return join(plan.runDir, 'containerd.sock');
}

export function containerdConfig(plan: RealNodePlan, tools: Record<string, string>, registry: string): string {
  const cri = "plugins.'io.containerd.cri.v1.runtime'";
  const images = "plugins.'io.containerd.cri.v1.images'";
  return [
    'version = 3',
    `root = ${JSON.stringify(join(plan.dir, 'containerd'))}`,
    `state = ${JSON.stringify(join(plan.runDir, 'containerd'))}`,
    // NRI would listen on /var/run/nri: another cluster's node, or the host's containerd, may have it.
    "disabled_plugins = ['io.containerd.nri.v1.nri', 'io.containerd.tracing.processor.v1.otlp', 'io.containerd.internal.v1.tracing']",
    '[grpc]',
    `  address = ${JSON.stringify(containerdSocket(plan))}`,
    '[ttrpc]',
    `  address = ${JSON.stringify(join(plan.runDir, 'containerd.ttrpc.sock'))}`,
    "[plugins.'io.containerd.internal.v1.opt']",
    `  path = ${JSON.stringify(join(plan.dir, 'opt'))}`,
    "[plugins.'io.containerd.grpc.v1.cri']",
    "  stream_server_address = '127.0.0.1'",
    `[${cri}]`,
    // The Pods' network namespaces under the state dir, not /var/run/netns: `down` finds its own.
    '  netns_mounts_under_state_dir = true',
    '  enable_selinux = false',
    // Lowering a process's oom_score_adj needs CAP_SYS_RESOURCE, which a VM or container may not
    // grant root (this one does not): runc's init then fails writing the sandbox's -998 and every
    // Pod fails with "can't get final child's PID from pipe: EOF". Keep adjustments at or above
    // containerd's own, as rootless containerd does.
    '  restrict_oom_score_adj = true',
    `[${cri}.cni]`,
    `  bin_dirs = [${JSON.stringify(tools['cni-plugins'] ?? '')}]`,
    `  conf_dir = ${JSON.stringify(join(plan.dir, 'cni'))}`,
    `[${cri}.containerd.runtimes.runc]`,
    "  runtime_type = 'io.containerd.runc.v2'",
    `[${cri}.containerd.runtimes.runc.options]`,
    `  BinaryName = ${JSON.stringify(tools.runc ?? 'runc')}`,
    // runc's container state under the node's run dir, not the host's /run/containerd/runc.
    `  Root = ${JSON.stringify(join(plan.runDir, 'runc'))}`,
    '  SystemdCgroup = false',
    `[${images}]`,
    "  snapshotter = 'overlayfs'",
    `[${images}.pinned_images]`,
    `  sandbox = ${JSON.stringify(plan.pauseImage ?? `${registry}/${PAUSE_REPOSITORY}:latest`)}`,
    `[${images}.registry]`,
    `  config_path = ${JSON.stringify(join(plan.dir, 'certs.d'))}`,
    '',
  ].join('\n');
}

/**
 * `--registry-mirror` values: registry hosts as image references name them (src/oci's grammar,
 * lower case, a port 1-65535; index.docker.io is docker.io, the name containerd looks up), each
 * naming a folder of containerd's certs.d; sorted, without repeats.
 */
export function registryMirrors(hosts: readonly string[], registry?: string): string[] {
  const out = hosts.map((h) => {
    // Lower case, 253 characters, labels of 63 (a folder name). containerd looks up the host a reference names and folds only index.docker.io into docker.io; registry-1.docker.io keeps its name.
    const fits = h === h.toLowerCase() && h.length <= 253 && h.split(/[.:]/).every((label) => label.length <= 63);
    if (!fits || !isRegistryHost(h)) throw new BinnacleError('input', 'CLUSTER_BAD_MIRROR', `--registry-mirror ${JSON.stringify(h)}: not a registry host (lower-case host name or address, optional :port 1-65535, such as docker.io or quay.io)`);
    const host = h === 'index.docker.io' ? DOCKER_HUB : h;
    if (host === registry) throw new BinnacleError('input', 'CLUSTER_BAD_MIRROR', `--registry-mirror ${h}: that is the cluster's own registry`);
    return host;
  });
  return [...new Set(out)].sort();
}

/** Where containerd finds a registry host's settings: read at every pull, so a change needs no restart. */
export function registryHostsFiles(plan: Pick<RealNodePlan, 'dir' | 'registryMirrors'>, registry: string): Map<string, string> {
  const local = [`[host."http://${registry}"]`, '  capabilities = ["pull", "resolve"]', ''];
  // The cluster's registry speaks plain HTTP, on the node's bridge address (cluster.ts registryAddress): the address image references name.
  const files = new Map([[join(plan.dir, 'certs.d', registry, 'hosts.toml'), [`server = "http://${registry}"`, ...local].join('\n')]]);
  // A mirror: pulls of <host>/<repo> try <registry>/<repo> first, then the host itself (an offline machine serves its images from the cluster's registry).
  for (const host of plan.registryMirrors ?? []) {
    const upstream = `https://${host === DOCKER_HUB ? DOCKER_HUB_API : host}`;
    files.set(join(plan.dir, 'certs.d', host, 'hosts.toml'), [`server = ${JSON.stringify(upstream)}`, ...local].join('\n'));
  }
  return files;
}

/** containerd's certs.d made exactly `registryHostsFiles`: a mirror no longer listed is removed (the folder is the node's own). */
export function writeRegistryHosts(plan: Pick<RealNodePlan, 'dir' | 'registryMirrors'>, registry: string): void {
  const files = registryHostsFiles(plan, registry);
  const root = join(plan.dir, 'certs.d');
  const kept = new Set([...files.keys()].map((f) => basename(dirname(f))));
  if (existsSync(root)) for (const entry of readdirSync(root)) if (!kept.has(entry)) rmSync(join(root, entry), { recursive: true, force: true });
  for (const [file, text] of files) writeFile(file, text);
}

function cniConfig(plan: RealNodePlan): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'binnacle',
      plugins: [
        {
          type: 'bridge',
          bridge: plan.bridge,
          isGateway: true,
          // The Pods' default route via the bridge: Services' virtual IPs (10.96.0.0/16) are
          // routed nowhere else, so without it a Pod cannot reach the API server.
          isDefaultGateway: true,
          // No masquerade: Pods talk to the host and to each other only, and no rules are left to clean.
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: plan.podSubnet, gateway: plan.gateway }]], dataDir: join(plan.dir, 'cni-ipam') },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

export function kubeletConfig(plan: RealNodePlan, pki: ClusterPki): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // The machine may run cgroup v1, which kubelet refuses unless told.
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: plan.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ['pods'],
    failSwapOn: false,
    address: plan.gateway,
    port: plan.ports.kubelet,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: plan.ports.kubeletHealthz,
    containerRuntimeEndpoint: `unix://${containerdSocket(plan)}`,
    podLogsDir: join(plan.dir, 'pod-logs'),
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: pki.caCert } },
    authorization: { mode: 'Webhook' },
    registerWithTaints: [REAL_NODE_TAINT],
    // A shared development machine: never evict for its disk or memory.
    evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    maxPods: 40,
    resolvConf: '/etc/resolv.conf',
    nodeStatusReportFrequency: '10s',
    // Without CAP_SYS_RESOURCE (see containerdConfig) kubelet cannot lower its own score: leave it.
    oomScoreAdj: 0,
    syncFrequency: '10s',
  });
}

export function kubeProxyConfig(plan: RealNodePlan, kubeconfig: string): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clusterCIDR: plan.podSubnet,
    hostnameOverride: plan.nodeName,
    bindAddress: '127.0.0.1',
    healthzBindAddress: `127.0.0.1:${plan.ports.kubeProxyHealthz}`,
    metricsBindAddress: `127.0.0.1:${plan.ports.kubeProxyMetrics}`,
    clientConnection: { kubeconfig },
    oomScoreAdj: 0,
    // Leave the machine's conntrack table size alone.
    conntrack: { maxPerCore: 0 },
  });
}

async function nodeKubeconfigs(plan: RealNodePlan, pki: ClusterPki, server: string, clusterName: string): Promise<{ kubelet: string; proxy: string }> {
  const ca = { certPem: readFileSync(pki.caCert, 'utf8'), keyPem: readFileSync(pki.caKey, 'utf8') };
  // The kubelet acts for its node and answers the API server's webhook checks; with RBAC alone
  // (no Node authorizer here) the node's user is an admin, as kwok's is.
  const kubeletCert = await issueCertificate(ca, { commonName: `system:node:${plan.nodeName}`, organizations: ['system:nodes', 'system:masters'], usage: 'client' });
  const proxyCert = await issueCertificate(ca, { commonName: 'system:kube-proxy', organizations: [], usage: 'client' });
  const kubelet = join(plan.dir, 'kubelet.kubeconfig');
  const proxy = join(plan.dir, 'kube-proxy.kubeconfig');
  writeFile(kubelet, kubeconfigYaml({ clusterName: `binnacle-${clusterName}`, server, caPem: ca.certPem, user: `system:node:${plan.nodeName}`, client: kubeletCert }), 0o600);
  writeFile(proxy, kubeconfigYaml({ clusterName: `binnacle-${clusterName}`, server, caPem: ca.certPem, user: 'system:kube-proxy', client: proxyCert }), 0o600);
  return { kubelet, proxy };
}

function sysctl(key: string, value: string): void {
  const path = join('/proc/sys', ...key.split('.'));
  if (existsSync(path) && readFileSync(path, 'utf8').trim() !== value) writeFileSync(path, value);
}

/** The bridge with the node's address, before anything starts: the kubelet and API server use it. */
export function ensureNodeBridge(plan: RealNodePlan): void {
  if (run('ip', ['-o', 'link', 'show', plan.bridge], { ignoreFailure: true }) === '') {
    run('ip', ['link', 'add', 'name', plan.bridge, 'type', 'bridge']);
  }
  const prefix = plan.podSubnet.split('/')[1] ?? '24';
  if (!run('ip', ['-o', 'addr', 'show', 'dev', plan.bridge]).includes(`${plan.gateway}/`)) run('ip', ['addr', 'add', `${plan.gateway}/${prefix}`, 'dev', plan.bridge]);
  run('ip', ['link', 'set', plan.bridge, 'up']);
}

/** Host settings Pods and Services need; global, and kept (every node of a machine needs the same). */
function hostSettings(): void {
  sysctl('net.ipv4.ip_forward', '1');
  sysctl('net.bridge.bridge-nf-call-iptables', '1');
}

export interface RealNodeContext {
  plan: RealNodePlan;
  layout: ClusterLayout;
  pki: ClusterPki;
  tools: Record<string, string>;
  /** The API server's URL (on the node's bridge address). */
  apiserver: string;
  registry: string;
  logger: Logger;
  save: () => void;
}

/**
 * The kube-proxy configs of the real nodes running on this machine other than `plan`'s (from any
 * checkout: read off the processes' command lines). `procDir` for tests.
 */
export function otherRealNodes(plan: Pick<RealNodePlan, 'dir'>, procDir = '/proc'): string[] {
  const ours = join(plan.dir, 'kube-proxy.yaml');
  const found = new Set<string>();
  for (const pid of readdirSync(procDir).filter((d) => /^\d+$/.test(d))) {
    let argv: string[];
    try {
      argv = readFileSync(join(procDir, pid, 'cmdline'), 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (!(argv[0] ?? '').endsWith('/kube-proxy')) continue;
    const config = argv.find((a) => a.startsWith('--config='))?.slice('--config='.length);
    if (config !== undefined && config.endsWith('/node/kube-proxy.yaml') && config !== ours) found.add(config);
  }
  return [...found];
}

/**
 * One real node per machine: kube-proxy writes the host's iptables chains (KUBE-SERVICES, …)
 * whole, so two nodes' kube-proxies would overwrite each other's Service rules, and a Pod's
 * traffic to 10.96.0.1 (its API server) would reach the other cluster's. Refused with the other
 * node named rather than failing later as a certificate error inside a Pod.
 */
export function claimHost(plan: Pick<RealNodePlan, 'dir'>): void {
  const others = otherRealNodes(plan);
  if (others.length === 0) return;
  const clusters = others.map((f) => `${basename(dirname(dirname(f)))} (${dirname(dirname(f))})`);
  throw new BinnacleError(
    'input',
    'REAL_NODE_IN_USE',
    `another real node runs on this machine (one at a time): cluster ${clusters.join(', ')}. Its kube-proxy and this one would share the host's iptables chains and send each other's Service traffic (the API server's 10.96.0.1 too) to the wrong cluster: take it down first (\`binnacle cluster down --name NAME\` in its checkout)`,
  );
}

/** Writes every config of the node; run before its components start (again on recovery). */
export async function prepareRealNode(c: RealNodeContext): Promise<void> {
  const { plan } = c;
  claimHost(plan);
  mkdirSync(plan.dir, { recursive: true });
  mkdirSync(plan.runDir, { recursive: true, mode: 0o700 });
  hostSettings();
  ensureNodeBridge(plan);
  makeCgroupRoot(plan);
  writeRegistryHosts(plan, c.registry);
  writeFile(join(plan.dir, 'cni', '10-binnacle.conflist'), cniConfig(plan));
  writeFile(join(plan.dir, 'containerd.toml'), containerdConfig(plan, c.tools, c.registry));
  const kc = await nodeKubeconfigs(plan, c.pki, c.apiserver, c.layout.name);
  writeFile(join(plan.dir, 'kubelet.yaml'), kubeletConfig(plan, c.pki));
  writeFile(join(plan.dir, 'kube-proxy.yaml'), kubeProxyConfig(plan, kc.proxy));
  mkdirSync(join(plan.dir, 'kubelet-root'), { recursive: true });
}

export function realNodeCommand(comp: RealNodeComponent, plan: RealNodePlan, tools: Record<string, string>): { command: string; args: string[] } {
  switch (comp) {
    case 'containerd':
      return { command: tools.containerd ?? 'containerd', args: ['--config', join(plan.dir, 'containerd.toml'), '--log-level', 'warn'] };
    case 'kubelet':
      return {
        command: tools.kubelet ?? 'kubelet',
        args: [
          `--config=${join(plan.dir, 'kubelet.yaml')}`,
          `--kubeconfig=${join(plan.dir, 'kubelet.kubeconfig')}`,
          `--root-dir=${join(plan.dir, 'kubelet-root')}`,
          `--hostname-override=${plan.nodeName}`,
          `--node-ip=${plan.gateway}`,
          `--node-labels=${REAL_NODE_LABEL}=true`,
          '--v=1',
        ],
      };
    case 'kube-proxy':
      return { command: tools['kube-proxy'] ?? 'kube-proxy', args: [`--config=${join(plan.dir, 'kube-proxy.yaml')}`, '--v=1'] };
  }
}

export function realNodeProbe(comp: RealNodeComponent, plan: RealNodePlan): { url?: string; socket?: string } {
  switch (comp) {
    case 'containerd':
      return { socket: containerdSocket(plan) };
    case 'kubelet':
      return { url: `http://127.0.0.1:${plan.ports.kubeletHealthz}/healthz` };
    case 'kube-proxy':
      return { url: `http://127.0.0.1:${plan.ports.kubeProxyHealthz}/livez` };
  }
}

/** Starts the node's components in order, each once it is healthy. */
export async function startRealNode(c: RealNodeContext, only: readonly RealNodeComponent[], timeoutMs: number, say: (l: string) => void): Promise<void> {
  for (const comp of REAL_NODE_COMPONENTS) {
    if (!only.includes(comp)) continue;
    say(`starting ${comp} (real node ${c.plan.nodeName})`);
    const { command, args } = realNodeCommand(comp, c.plan, c.tools);
    // containerd finds its shim on PATH.
    const shimDir = dirname(c.tools['containerd-shim-runc-v2'] ?? command);
    const env = comp === 'containerd' ? { ...process.env, PATH: `${shimDir}:${process.env.PATH ?? ''}` } : process.env;
    const rec = startDetached(comp, command, args, join(c.layout.logs, `${comp}.log`), env);
    c.plan.processes[comp] = rec;
    c.save();
    if (!(await waitComponent(comp, c.plan, rec, timeoutMs))) {
      const why = isRunning(rec) ? `did not become healthy within ${Math.round(timeoutMs / 1000)}s` : 'exited';
      throw new BinnacleError('terminal', 'CLUSTER_COMPONENT_FAILED', `${comp} ${why}; last lines of ${rec.logFile}:\n${tail(rec.logFile)}`);
    }
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-16).join('\n');
  } catch {
    return '';
  }
}

export async function realNodeHealthy(comp: RealNodeComponent, plan: RealNodePlan): Promise<boolean> {
  const probe = realNodeProbe(comp, plan);
  if (probe.socket !== undefined) return existsSync(probe.socket);
  try {
    const r = await httpRequest(probe.url ?? '', { signal: AbortSignal.timeout(2_000) });
    r.discard();
    return r.status >= 200 && r.status < 300;
  } catch {
    return false;
  }
}

async function waitComponent(comp: RealNodeComponent, plan: RealNodePlan, rec: ProcessRecord, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(rec)) return false;
    if (await realNodeHealthy(comp, plan)) return true;
    await sleep(250);
  }
  return false;
}

/** Mount points (from /proc/self/mountinfo) at or under one of `roots`, deepest first. */
export function mountsUnder(roots: readonly string[], mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): string[] {
  const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  // The kernel lists a mount by its real path: a state dir reached through a symlink is looked for there too.
  const all = roots.flatMap((r) => {
    try {
      const real = realpathSync(r);
      return real === r ? [r] : [r, real];
    } catch {
      return [r];
    }
  });
  const points = mountinfo
    .split('\n')
    .map((l) => unescape(l.split(' ')[4] ?? ''))
    .filter((p) => p !== '' && all.some((r) => p === r || p.startsWith(`${r}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** The iptables chains kubelet and kube-proxy add (KUBE-*), per table, from `iptables-save` output. */
export function kubeChains(save: string): { table: string; chain: string }[] {
  const out: { table: string; chain: string }[] = [];
  let table = '';
  for (const line of save.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    const m = /^:(KUBE-\S+)\s/.exec(line);
    if (m?.[1] !== undefined) out.push({ table, chain: m[1] });
  }
  return out;
}

/**
 * An iptables-restore input (`--noflush`) that removes every KUBE- chain of `save`: the rules
 * jumping to them from other chains, then their rules, then the chains. iptables-restore parses
 * the rules' quoting (comments) as iptables-save wrote it.
 */
export function kubeChainsRemoval(save: string): string {
  const chains = kubeChains(save);
  const out: string[] = [];
  for (const table of [...new Set(chains.map((c) => c.table))]) {
    out.push(`*${table}`);
    let current = '';
    for (const line of save.split('\n')) {
      if (line.startsWith('*')) current = line.slice(1).trim();
      if (current === table && line.startsWith('-A ') && !line.startsWith('-A KUBE-') && / -j KUBE-/.test(line)) out.push(line.replace(/^-A /, '-D '));
    }
    for (const c of chains.filter((x) => x.table === table)) out.push(`-F ${c.chain}`);
    for (const c of chains.filter((x) => x.table === table)) out.push(`-X ${c.chain}`);
    out.push('COMMIT');
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

/** Removes the KUBE- chains kubelet and kube-proxy leave (kube-proxy --cleanup leaves some). */
function removeKubeChains(): void {
  for (const bin of ['iptables', 'ip6tables']) {
    const input = kubeChainsRemoval(run(`${bin}-save`, [], { ignoreFailure: true }));
    if (input === '') continue;
    const r = spawnSync(`${bin}-restore`, ['--noflush'], { input, encoding: 'utf8' });
    if (r.status !== 0) throw new BinnacleError('terminal', 'REAL_NODE_IPTABLES', `${bin}-restore could not remove the KUBE- chains: ${r.stderr.trim()}`);
  }
}

/** Shims of this node's containerd (their `-address` is its socket), found in /proc, with their task ids. */
function shims(plan: RealNodePlan): { pid: number; id: string; namespace: string }[] {
  const sock = containerdSocket(plan);
  const out: { pid: number; id: string; namespace: string }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (!(cmd[0] ?? '').endsWith('containerd-shim-runc-v2') || !cmd.includes(sock)) continue;
      const flag = (name: string): string => cmd[cmd.indexOf(name) + 1] ?? '';
      out.push({ pid: Number(d), id: flag('-id'), namespace: flag('-namespace') });
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * Where containerd v2's shim for task `id` listens: a path fixed by containerd
 * (pkg/shim SocketAddress: /run/containerd/s/ + sha256 of "<containerd socket>/<namespace>/<id>"),
 * whatever its state dir. A killed shim leaves it behind.
 */
export function shimSocketPath(containerdSock: string, namespace: string, id: string): string {
  return join(SHIM_SOCKET_DIR, createHash('sha256').update(join(containerdSock, namespace, id)).digest('hex'));
}
const SHIM_SOCKET_DIR = '/run/containerd/s';

/** Every process in the node's cgroups (the containers), from each hierarchy's cgroup.procs. */
function cgroupPids(plan: RealNodePlan): number[] {
  const pids = new Set<number>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    try {
      for (const p of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (p.trim() !== '') pids.add(Number(p));
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
    } catch {
      // removed meanwhile
    }
  };
  for (const h of cgroupHierarchies()) walk(join(h, plan.cgroupRoot));
  return [...pids];
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** What the node left on the machine (all empty once `down` removed everything). */
export interface RealNodeLeftovers {
  /** Mount points under the node's dirs: volumes, root filesystems, network namespaces, kubelet's root. */
  mounts: string[];
  cgroups: string[];
  /** iptables chains kubelet, kube-proxy and the CNI plugins add (`table/chain`). */
  chains: string[];
  /** The node's bridge, when it still exists. */
  links: string[];
  /** Files: the node's dirs, containerd's state, shim sockets. */
  files: string[];
  /** The node's processes still running: components, shims, containers. */
  processes: number[];
}

/** The (KUBE-* and CNI-*) chains of an `iptables-save` output, as `table/chain`. */
export function nodeChains(save: string): string[] {
  const out: string[] = [];
  let table = '';
  for (const line of save.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    const m = /^:((?:KUBE|CNI)-\S+)\s/.exec(line);
    if (m?.[1] !== undefined) out.push(`${table}/${m[1]}`);
  }
  return out;
}

/**
 * Everything of the node's still on the machine. `cluster down` calls it to know that it removed
 * everything, and the real-node e2e test after `down` to check so. The iptables chains are
 * machine-wide: another cluster's real node, running at the same time, has the same ones.
 */
export function realNodeLeftovers(plan: RealNodePlan, knownShimSockets: readonly string[] = []): RealNodeLeftovers {
  const chains = ['iptables', 'ip6tables'].flatMap((bin) => nodeChains(run(`${bin}-save`, [], { ignoreFailure: true })).map((c) => `${bin}:${c}`));
  const links = run('ip', ['-o', 'link', 'show', plan.bridge], { ignoreFailure: true }).trim() === '' ? [] : [plan.bridge];
  const files = [plan.dir, plan.runDir, ...knownShimSockets].filter((p) => existsSync(p));
  const processes = [
    ...Object.values(plan.processes).filter((r) => r !== undefined && isRunning(r)).map((r) => r.pid),
    ...shims(plan).map((x) => x.pid),
    ...cgroupPids(plan),
  ];
  const cgroups = cgroupHierarchies().map((h) => join(h, plan.cgroupRoot)).filter((d) => existsSync(d));
  return { mounts: mountsUnder([plan.dir, plan.runDir]), cgroups, chains, links, files, processes: [...new Set(processes)] };
}

/** One line per leftover, for `down`'s message (empty when the node left nothing). */
export function describeLeftovers(l: RealNodeLeftovers): string[] {
  return [
    ...l.mounts.map((m) => `mount ${m}`),
    ...l.cgroups.map((c) => `cgroup ${c}`),
    ...l.chains.map((c) => `iptables chain ${c}`),
    ...l.links.map((x) => `network link ${x}`),
    ...l.files.map((f) => `file ${f}`),
    ...l.processes.map((p) => `process ${p}`),
  ];
}

/** Removes `dir` if it is empty (shared by every node and containerd of the machine). */
function removeIfEmpty(dir: string): void {
  try {
    if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    // another node or containerd uses it
  }
}

/** Removes the shims' sockets (a killed shim leaves its own) and the shared socket dir once empty. */
function removeShimSockets(sockets: readonly string[]): void {
  for (const s of sockets) rmSync(s, { force: true });
  removeIfEmpty(SHIM_SOCKET_DIR);
  removeIfEmpty(dirname(SHIM_SOCKET_DIR));
}

/**
 * Stops the node and removes everything it made: kubelet first (so nothing restarts Pods), then
 * every container (their shims and processes), containerd, kube-proxy and the KUBE- chains, the
 * mounts under the node's dirs (volumes, root filesystems, network namespaces, kubelet's root),
 * the bridge, the cgroups and the shims' sockets. Returns what is still there (realNodeLeftovers).
 */
export async function stopRealNode(plan: RealNodePlan, tools: Record<string, string>): Promise<RealNodeLeftovers> {
  const stop = async (comp: RealNodeComponent): Promise<void> => {
    const rec = plan.processes[comp];
    if (rec !== undefined) await stopProcess(rec, 5_000);
  };
  await stop('kubelet');
  // The Pods' processes and their shims: killed, not stopped one by one (the node is going away).
  const running = shims(plan);
  const sockets = running.map((x) => shimSocketPath(containerdSocket(plan), x.namespace, x.id));
  killAll(cgroupPids(plan));
  killAll(running.map((x) => x.pid));
  await stop('containerd');
  await stop('kube-proxy');
  // The host's KUBE- chains are every kube-proxy's: left alone while another real node runs (its rules are in them).
  if (otherRealNodes(plan).length === 0) {
    if (tools['kube-proxy'] !== undefined) run(tools['kube-proxy'], ['--cleanup', '--v=0'], { ignoreFailure: true });
    removeKubeChains();
  }
  for (let i = 0; i < 20 && cgroupPids(plan).length > 0; i++) await sleep(100);
  const roots = [plan.dir, plan.runDir];
  // Mounts stack (kubelet's root bound again by each start of the node): unmounted until none is left.
  for (let pass = 0, left = mountsUnder(roots); pass < 16 && left.length > 0; pass++, left = mountsUnder(roots)) {
    for (const m of left) run('umount', ['-l', m], { ignoreFailure: true });
  }
  run('ip', ['link', 'del', plan.bridge], { ignoreFailure: true });
  removeCgroupRoot(plan);
  removeShimSockets(sockets);
  if (mountsUnder(roots).length === 0) {
    rmSync(plan.runDir, { recursive: true, force: true });
    rmSync(plan.dir, { recursive: true, force: true });
    removeIfEmpty(dirname(plan.runDir));
  }
  return realNodeLeftovers(plan, sockets);
}

/** Debian's runc (hack/lib.sh ensure_real_node_packages), installing it when missing. */
export function runcPath(): string | undefined {
  for (const p of ['/usr/sbin/runc', '/usr/bin/runc', '/usr/local/sbin/runc', '/usr/local/bin/runc']) if (existsSync(p)) return p;
  try {
    return execFileSync('sh', ['-c', 'command -v runc'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The sandbox image: hack/pause's program alone, pushed to the cluster's registry; its ref by digest. */
async function pushPauseImage(pauseProgram: string, registry: string): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'binnacle-pause-'));
  try {
    mkdirSync(join(work, 'tree'));
    copyFileSync(pauseProgram, join(work, 'tree', 'pause'));
    chmodSync(join(work, 'tree', 'pause'), 0o755);
    const built = await buildImage({
      layers: [{ dir: join(work, 'tree'), prefix: '/' }],
      labels: { 'org.opencontainers.image.title': 'binnacle-pause' },
      outputDir: join(work, 'layout'),
      config: { Entrypoint: ['/pause'], User: '65535:65535' },
    });
    return (await pushImage(built, `${registry}/${PAUSE_REPOSITORY}:latest`, new RegistryClient({ insecure: true }))).ref;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Prepares and starts the node's `components`, then waits until its Node is Ready. */
export async function joinRealNode(
  c: RealNodeContext,
  components: readonly RealNodeComponent[],
  client: Pick<ObjectReader, 'find'>,
  timeoutMs: number,
  say: (l: string) => void,
): Promise<void> {
  if (c.plan.pauseImage === undefined) {
    say('pushing the sandbox image to the cluster registry');
    c.plan.pauseImage = await pushPauseImage(c.tools.pause ?? 'pause', c.registry);
    c.save();
  }
  await prepareRealNode(c);
  await startRealNode(c, components, timeoutMs, say);
  say(`waiting for node ${c.plan.nodeName}`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const node = await client.find({ apiVersion: 'v1', kind: 'Node', name: c.plan.nodeName });
    const conds = (node?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    if (conds.some((x) => x.type === 'Ready' && x.status === 'True')) return;
    await sleep(500);
  }
  throw new BinnacleError('transient', 'CLUSTER_NODE_NOT_READY', `node ${c.plan.nodeName} did not become Ready (see ${join(c.layout.logs, 'kubelet.log')})`);
}
