/**
 * The local control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
 * kwok (a fake kubelet, so Pods become Ready), one fake Node, and an OCI registry, all on
 * loopback (with a real node, the API server and the registry on its bridge address instead). `up` is idempotent and recovers from a crash: components found dead are started
 * again with their recorded configuration, and if that fails everything is cleaned and
 * started afresh. `down` stops every process it started and removes the state dir.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { networkInterfaces } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { stringify } from 'yaml';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeConfig } from '../kube/config.js';
import type { KubeObject } from '../kube/types.js';
import { auditArgs, auditLogPath } from './audit.js';
import { generatePki, type ClusterPki } from './certs.js';
import { probeOnce, waitHealthy, type HealthProbe } from './health.js';
import { clusterLayout, type ClusterLayout } from './layout.js';
import { freePorts } from '../util/ports.js';
import { isRunning, startDetached, stopProcess, tailLog, type ProcessRecord } from './processes.js';
import { ensureOpenShiftApi, installOpenShiftApis, openShiftCrds } from './openshift.js';
import { ensureRealNodeTools, ensureRegistryBinary, ensureTools, kwokStagesFile } from './tools.js';
import { claimHost, describeLeftovers, ensureNodeBridge, joinRealNode, planRealNode, REAL_NODE_COMPONENTS, realNodeHealthy, registryMirrors, stopRealNode, writeRegistryHosts, type RealNodeComponent, type RealNodeLeftovers, type RealNodePlan } from './real-node.js';

export const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'registry'] as const;
export type Component = (typeof COMPONENTS)[number];

const PORT_NAMES = ['etcdClient', 'etcdPeer', 'apiserver', 'controllerManager', 'scheduler', 'kwok', 'registry'] as const;
type Ports = Record<(typeof PORT_NAMES)[number], number>;

export const FAKE_NODE_NAME = 'kwok-node-0';

export interface ClusterState {
  name: string;
  ports: Ports;
  pki: ClusterPki;
  tools: Record<string, string>;
  processes: Partial<Record<Component, ProcessRecord>>;
  createdAt: string;
  /** The real node (`up --real-node`), decided when the cluster is created. */
  realNode?: RealNodePlan;
  /** kube-apiserver writes an audit log (src/cluster/audit.ts). */
  audit?: boolean;
}

export interface ComponentStatus {
  name: Component;
  pid: number | undefined;
  running: boolean;
  healthy: boolean;
  endpoint: string;
}

export interface ClusterStatus {
  name: string;
  exists: boolean;
  kubeconfig: string;
  registry: string | undefined;
  apiserver: string | undefined;
  components: ComponentStatus[];
}

export interface UpOptions {
  name?: string;
  stateDir?: string;
  logger: Logger;
  /** Progress lines for people; defaults to the logger. */
  progress?: (line: string) => void;
  timeoutMs?: number;
  /** Add OpenShift's APIs (`--openshift`), with a ClusterVersion reporting `version`. */
  openshift?: { version?: string };
  /** Add one real node (kubelet, containerd, CNI, kube-proxy) beside kwok's (`--real-node`). */
  realNode?: boolean;
  /** Registries whose pulls on the real node try the cluster's registry first (`--registry-mirror`); replaces the list a running cluster has. */
  registryMirrors?: string[];
  /** kube-apiserver writes an audit log of ServiceAccounts' requests (src/cluster/audit.ts); a running cluster without it restarts its API server. */
  audit?: boolean;
}

export interface UpResult {
  name: string;
  kubeconfig: string;
  apiserver: string;
  registry: string;
  /** 'created', 'running' (already healthy) or 'recovered' (restarted dead components). */
  outcome: 'created' | 'running' | 'recovered';
  /** The OpenShift version the ClusterVersion reports, when `openshift` was asked for. */
  openshiftVersion?: string;
  /** The real node's name, when the cluster has one. */
  realNode?: string;
  /** The API server's audit log, when `audit` was asked for. */
  auditLog?: string;
}

function readState(layout: ClusterLayout): ClusterState | undefined {
  if (!existsSync(layout.stateFile)) return undefined;
  try {
    return JSON.parse(readFileSync(layout.stateFile, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

function writeState(layout: ClusterLayout, state: ClusterState): void {
  writeFileSync(layout.stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
}

function hostAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
    .map((a) => a?.address ?? '')
    .filter((a) => a !== '');
}

/**
 * The address the API server listens on. Alone, loopback. With a real node its Pods must reach it
 * too (the `kubernetes` Service's endpoint, through kube-proxy), and the API server listens on one
 * address only: the node's bridge address, which the host and the node's Pods reach, rather than
 * every interface (0.0.0.0 would offer it to the machine's network).
 */
export function apiserverHost(state: Pick<ClusterState, 'realNode'>): string {
  return state.realNode?.gateway ?? '127.0.0.1';
}

/**
 * `host:port` of the cluster's OCI registry, as image references name it. With a real node one
 * address must serve both containerd (on the host) and the node's Pods (the in-cluster manager
 * pulls catalogs and bundles): the node's bridge address, as for the API server. The registry
 * listens there only; clients on this machine speak plain HTTP to it as to loopback (one of the
 * machine's own addresses: the traffic never leaves it).
 */
export function registryAddress(state: Pick<ClusterState, 'realNode' | 'ports'>): string {
  return `${apiserverHost(state)}:${state.ports.registry}`;
}

function commandFor(c: Component, state: ClusterState, layout: ClusterLayout): { command: string; args: string[] } {
  const { ports, pki, tools } = state;
  const tool = (t: string): string => tools[t] ?? t;
  switch (c) {
    case 'etcd':
      return {
        command: tool('etcd'),
        args: [
          '--name=binnacle',
          `--data-dir=${layout.etcdData}`,
          `--listen-client-urls=http://127.0.0.1:${ports.etcdClient}`,
          `--advertise-client-urls=http://127.0.0.1:${ports.etcdClient}`,
          `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
          `--initial-cluster=binnacle=http://127.0.0.1:${ports.etcdPeer}`,
          '--unsafe-no-fsync',
          '--log-level=warn',
        ],
      };
    case 'kube-apiserver': {
      // With a real node, its Pods reach the API server (the `kubernetes` Service's endpoint) at
      // the node's bridge address: it listens there (apiserverHost).
      const advertise = state.realNode?.gateway ?? hostAddresses()[0];
      return {
        command: tool('kube-apiserver'),
        args: [
          `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
          `--bind-address=${apiserverHost(state)}`,
          // Logs, exec and port-forward reach a kubelet at its node's address: a real node's
          // name is not in any DNS.
          '--kubelet-preferred-address-types=InternalIP,Hostname',
          // …as a client the kubelet knows (its x509 CA is the cluster's; the webhook authorizes
          // system:masters): the health client's certificate serves.
          `--kubelet-client-certificate=${pki.healthClientCert}`,
          `--kubelet-client-key=${pki.healthClientKey}`,
          `--secure-port=${ports.apiserver}`,
          ...(advertise === undefined ? ['--advertise-address=127.0.0.1'] : [`--advertise-address=${advertise}`]),
          `--cert-dir=${join(layout.pki, 'apiserver-generated')}`,
          `--tls-cert-file=${pki.apiserverCert}`,
          `--tls-private-key-file=${pki.apiserverKey}`,
          `--client-ca-file=${pki.caCert}`,
          '--service-cluster-ip-range=10.96.0.0/16',
          '--allow-privileged=true',
          '--authorization-mode=RBAC',
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          `--service-account-key-file=${pki.saPub}`,
          `--service-account-signing-key-file=${pki.saKey}`,
          `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
          '--requestheader-allowed-names=front-proxy-client',
          '--requestheader-username-headers=X-Remote-User',
          '--requestheader-group-headers=X-Remote-Group',
          '--requestheader-extra-headers-prefix=X-Remote-Extra-',
          `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
          `--proxy-client-key-file=${pki.frontProxyClientKey}`,
          // API Priority and Fairness as every cluster since 1.20 has it (GA in 1.29): the client's 429
          // handling is tested against it (test/e2e/api-priority.test.ts). The admin kubeconfig
          // (system:masters) is in its exempt level, as on any cluster.
          '--enable-priority-and-fairness=true',
          ...(state.audit === true ? auditArgs(layout) : []),
          '--v=0',
        ],
      };
    }
    case 'kube-controller-manager':
      return {
        command: tool('kube-controller-manager'),
        args: [
          `--kubeconfig=${pki.kubeconfigs['controller-manager']}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${ports.controllerManager}`,
          `--cert-dir=${join(layout.pki, 'controller-manager-generated')}`,
          '--leader-elect=false',
          `--service-account-private-key-file=${pki.saKey}`,
          `--root-ca-file=${pki.caCert}`,
          `--cluster-signing-cert-file=${pki.caCert}`,
          `--cluster-signing-key-file=${pki.caKey}`,
          '--use-service-account-credentials=true',
          '--controllers=*',
          '--v=0',
        ],
      };
    case 'kube-scheduler':
      return {
        command: tool('kube-scheduler'),
        args: [
          `--kubeconfig=${pki.kubeconfigs.scheduler}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${ports.scheduler}`,
          `--cert-dir=${join(layout.pki, 'scheduler-generated')}`,
          '--leader-elect=false',
          '--v=0',
        ],
      };
    case 'kwok':
      return {
        command: tool('kwok'),
        args: [
          `--kubeconfig=${pki.kubeconfigs.kwok}`,
          `--config=${kwokStagesFile()}`,
          '--manage-all-nodes=false',
          '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
          '--node-lease-duration-seconds=40',
          '--cidr=10.0.1.0/24',
          '--node-ip=127.0.0.1',
          `--server-address=127.0.0.1:${ports.kwok}`,
        ],
      };
    case 'registry':
      return { command: tool('docker-registry'), args: ['serve', join(layout.root, 'registry.yaml')] };
  }
}

function probeFor(c: Component, state: ClusterState): HealthProbe {
  const { ports, pki } = state;
  switch (c) {
    case 'etcd':
      return { url: `http://127.0.0.1:${ports.etcdClient}/health`, expect: '"health":"true"' };
    case 'kube-apiserver':
      return {
        url: `https://${apiserverHost(state)}:${ports.apiserver}/readyz`,
        tls: { ca: pki.caCert, cert: pki.healthClientCert, key: pki.healthClientKey },
        expect: 'ok',
      };
    case 'kube-controller-manager':
      return { url: `https://127.0.0.1:${ports.controllerManager}/healthz`, expect: 'ok' };
    case 'kube-scheduler':
      return { url: `https://127.0.0.1:${ports.scheduler}/healthz`, expect: 'ok' };
    case 'kwok':
      return { url: `http://127.0.0.1:${ports.kwok}/healthz` };
    case 'registry':
      return { url: `http://${registryAddress(state)}/v2/` };
  }
}

function endpointOf(c: Component, state: ClusterState): string {
  return probeFor(c, state).url.replace(/\/(health|readyz|healthz|v2\/)$/, '');
}

function writeRegistryConfig(layout: ClusterLayout, address: string): void {
  mkdirSync(layout.registryData, { recursive: true });
  writeFileSync(
    join(layout.root, 'registry.yaml'),
    stringify({
      version: 0.1,
      log: { level: 'warn', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: layout.registryData }, delete: { enabled: true } },
      http: { addr: address, secret: 'binnacle-local' },
    }),
  );
}

async function startComponent(c: Component, state: ClusterState, layout: ClusterLayout, timeoutMs: number): Promise<void> {
  // The API server and the registry listen on the real node's bridge address, which must exist first.
  if ((c === 'kube-apiserver' || c === 'registry') && state.realNode !== undefined) ensureNodeBridge(state.realNode);
  const { command, args } = commandFor(c, state, layout);
  const rec = startDetached(c, command, args, join(layout.logs, `${c}.log`));
  state.processes[c] = rec;
  writeState(layout, state);
  const healthy = await waitHealthy(probeFor(c, state), timeoutMs, () => isRunning(rec));
  if (!healthy) {
    const why = isRunning(rec) ? `did not become healthy within ${Math.round(timeoutMs / 1000)}s` : 'exited';
    throw new BinnacleError('terminal', 'CLUSTER_COMPONENT_FAILED', `${c} ${why}; last lines of ${rec.logFile}:\n${tailLog(rec.logFile)}`);
  }
}

async function adminClient(layout: ClusterLayout): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: layout.kubeconfig }));
}

const FAKE_NODE: KubeObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: FAKE_NODE_NAME,
    annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    labels: {
      'kubernetes.io/hostname': FAKE_NODE_NAME,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      // One node plays every role, as in a single-node kind cluster: operators that pin their
      // pods to control-plane nodes (a common nodeSelector) schedule too.
      'node-role.kubernetes.io/worker': '',
      'node-role.kubernetes.io/control-plane': '',
      'node-role.kubernetes.io/master': '',
      type: 'kwok',
    },
  },
  spec: {},
};

/** Creates the fake Node and waits until it is Ready and the default ServiceAccount exists. */
async function prepareCluster(layout: ClusterLayout, timeoutMs: number): Promise<void> {
  const client = await adminClient(layout);
  try {
    await client.apply(FAKE_NODE, { force: true });
    const deadline = Date.now() + timeoutMs;
    let nodeReady = false;
    let saReady = false;
    while (Date.now() < deadline && !(nodeReady && saReady)) {
      const node = await client.find({ apiVersion: 'v1', kind: 'Node', name: FAKE_NODE_NAME });
      const conds = ((node?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
      nodeReady = conds.some((c) => c.type === 'Ready' && c.status === 'True');
      saReady = (await client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'default', name: 'default' })) !== undefined;
      if (!(nodeReady && saReady)) await sleep(250);
    }
    if (!nodeReady) throw new BinnacleError('transient', 'CLUSTER_NODE_NOT_READY', `node ${FAKE_NODE_NAME} did not become Ready (see ${join(layout.logs, 'kwok.log')})`);
    if (!saReady) throw new BinnacleError('transient', 'CLUSTER_SA_MISSING', `the default ServiceAccount did not appear (see ${join(layout.logs, 'kube-controller-manager.log')})`);
  } finally {
    client.close();
  }
}

async function stopAll(state: ClusterState): Promise<void> {
  if (state.realNode !== undefined) await stopRealNode(state.realNode, state.tools);
  for (const c of [...COMPONENTS].reverse()) {
    const rec = state.processes[c];
    if (rec !== undefined) await stopProcess(rec);
  }
}

async function create(layout: ClusterLayout, opts: UpOptions, say: (l: string) => void, timeoutMs: number): Promise<ClusterState> {
  const tools = ensureTools(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'], opts.logger);
  tools['docker-registry'] = ensureRegistryBinary(opts.logger);
  const ports = await freePorts(PORT_NAMES);
  const realNode = opts.realNode === true ? await planRealNode(layout) : undefined;
  // Before anything starts or is made: a refusal must leave nothing whose clean-up would touch the other node's rules.
  if (realNode !== undefined) claimHost(realNode);
  if (opts.registryMirrors !== undefined) {
    if (realNode === undefined) throw new BinnacleError('input', 'CLUSTER_NO_REAL_NODE', '--registry-mirror configures the real node\'s image pulls: add --real-node');
    realNode.registryMirrors = registryMirrors(opts.registryMirrors, registryAddress({ realNode, ports }));
  }
  mkdirSync(layout.logs, { recursive: true });
  mkdirSync(layout.etcdData, { recursive: true, mode: 0o700 });
  if (realNode !== undefined) Object.assign(tools, ensureRealNodeTools(opts.logger));
  say('generating certificates and kubeconfigs');
  const pki = await generatePki(layout, `https://${apiserverHost({ realNode })}:${ports.apiserver}`, [...hostAddresses(), ...(realNode === undefined ? [] : [realNode.gateway])]);
  writeRegistryConfig(layout, registryAddress({ realNode, ports }));
  const state: ClusterState = {
    name: layout.name, ports, pki, tools, processes: {}, createdAt: new Date().toISOString(),
    ...(realNode === undefined ? {} : { realNode }),
    ...(opts.audit === true ? { audit: true } : {}),
  };
  writeState(layout, state);
  for (const c of COMPONENTS) {
    say(`starting ${c}`);
    await startComponent(c, state, layout, timeoutMs);
  }
  return state;
}

/** Turns the audit log on for a cluster that has none: its API server stops, and `up` starts it again with the log as it would a dead one. */
async function turnAuditOn(layout: ClusterLayout, state: ClusterState): Promise<void> {
  if (state.audit === true) return;
  state.audit = true;
  writeState(layout, state);
  const rec = state.processes['kube-apiserver'];
  if (rec !== undefined) await stopProcess(rec);
}

/** Brings the cluster up, or confirms it is up, or repairs it. */
export async function clusterUp(opts: UpOptions): Promise<UpResult> {
  const layout = clusterLayout(opts.name ?? 'binnacle', opts.stateDir);
  const say = opts.progress ?? ((l: string) => opts.logger.info(l));
  const timeoutMs = opts.timeoutMs ?? 120_000;
  let state = readState(layout);
  let outcome: UpResult['outcome'] = 'created';

  if (state !== undefined && opts.audit === true) await turnAuditOn(layout, state);
  if (state !== undefined) {
    const dead = await deadComponents(state);
    if (dead.length === 0) {
      outcome = 'running';
      say(`cluster "${layout.name}" is already running`);
    } else if (await restartDead(layout, state, dead, say, timeoutMs)) outcome = 'recovered';
    else state = undefined;
  } else if (existsSync(layout.root)) {
    // A state dir without a readable state file: leftovers of an interrupted `up`.
    rmSync(layout.root, { recursive: true, force: true });
  }

  if (state === undefined) {
    state = await createFresh(layout, opts, say, timeoutMs);
    outcome = 'created';
  }

  say('waiting for the node and the default service account');
  await prepareCluster(layout, timeoutMs);
  const apiserver = `https://${apiserverHost(state)}:${state.ports.apiserver}`;
  await upRealNode(state, layout, opts, say, timeoutMs);
  const openshiftVersion = await upOpenShift(layout, opts, apiserver, say, timeoutMs);
  say(`cluster "${layout.name}" is ready: export KUBECONFIG=${layout.kubeconfig}`);
  return {
    name: layout.name,
    kubeconfig: layout.kubeconfig,
    apiserver,
    registry: registryAddress(state),
    outcome,
    ...(openshiftVersion === undefined ? {} : { openshiftVersion }),
    ...(state.realNode === undefined ? {} : { realNode: state.realNode.nodeName }),
    ...(state.audit === true ? { auditLog: auditLogPath(layout) } : {}),
  };
}

/** The components not running, or running but not answering (those are stopped, to start again). */
async function deadComponents(state: ClusterState): Promise<Component[]> {
  const dead: Component[] = [];
  for (const c of COMPONENTS) {
    const rec = state.processes[c];
    if (rec === undefined || !isRunning(rec)) dead.push(c);
    else if (!(await waitHealthy(probeFor(c, state), 3_000, () => isRunning(rec)))) {
      // Running but not answering (or dying right now): stop it and start it again.
      await stopProcess(rec, 3_000);
      dead.push(c);
    }
  }
  return dead;
}

/** Starts the dead components again; when that fails, removes the cluster altogether and answers false. */
async function restartDead(layout: ClusterLayout, state: ClusterState, dead: readonly Component[], say: (l: string) => void, timeoutMs: number): Promise<boolean> {
  say(`cluster "${layout.name}": ${dead.join(', ')} not running; restarting ${dead.length === COMPONENTS.length ? 'everything' : 'them'}`);
  try {
    for (const c of COMPONENTS) {
      if (dead.includes(c)) {
        say(`starting ${c}`);
        await startComponent(c, state, layout, timeoutMs);
      }
    }
    return true;
  } catch (err) {
    say(`recovery failed (${errorMessage(err).split('\n')[0] ?? ''}); cleaning up and starting afresh`);
    await stopAll(state);
    rmSync(layout.root, { recursive: true, force: true });
    return false;
  }
}

/** A new cluster in an empty state dir; the processes of one that failed halfway are stopped. */
async function createFresh(layout: ClusterLayout, opts: UpOptions, say: (l: string) => void, timeoutMs: number): Promise<ClusterState> {
  say(`creating cluster "${layout.name}" in ${layout.root}`);
  mkdirSync(layout.root, { recursive: true });
  try {
    return await create(layout, opts, say, timeoutMs);
  } catch (err) {
    const partial = readState(layout);
    if (partial !== undefined) await stopAll(partial);
    throw err;
  }
}

/** OpenShift's APIs, when `opts.openshift` asks for them; the version the ClusterVersion reports. */
async function upOpenShift(layout: ClusterLayout, opts: UpOptions, apiserver: string, say: (l: string) => void, timeoutMs: number): Promise<string | undefined> {
  if (opts.openshift === undefined) return undefined;
  const dir = ensureOpenShiftApi(opts.logger);
  const client = await adminClient(layout);
  try {
    return (await installOpenShiftApis(client, openShiftCrds(dir), { ...opts.openshift, apiserver, say, timeoutMs })).version;
  } finally {
    client.close();
  }
}

/** Starts the real node's components that are not running (all of them the first time), and waits for the node. */
async function upRealNode(state: ClusterState, layout: ClusterLayout, opts: UpOptions, say: (l: string) => void, timeoutMs: number): Promise<void> {
  const plan = state.realNode;
  if (opts.realNode === true && plan === undefined) {
    throw new BinnacleError('input', 'CLUSTER_NO_REAL_NODE', `cluster "${layout.name}" was created without a real node: \`binnacle cluster down --name ${layout.name}\`, then \`cluster up --real-node\``);
  }
  if (plan === undefined) {
    if (opts.registryMirrors !== undefined) throw new BinnacleError('input', 'CLUSTER_NO_REAL_NODE', `--registry-mirror configures the real node's image pulls, and cluster "${layout.name}" has none`);
    return;
  }
  if (opts.registryMirrors !== undefined) {
    const mirrors = registryMirrors(opts.registryMirrors, registryAddress(state));
    // containerd reads these at every pull: a running node takes them without a restart. Written
    // every time they are given (a folder left by an older Binnacle or a failed write is put
    // right), and before the state records them.
    writeRegistryHosts({ dir: plan.dir, registryMirrors: mirrors }, registryAddress(state));
    if (mirrors.join() !== (plan.registryMirrors ?? []).join()) {
      say(`registry mirrors: ${mirrors.join(', ') || 'none'}`);
      plan.registryMirrors = mirrors;
      writeState(layout, state);
    }
  }
  const dead: RealNodeComponent[] = [];
  for (const c of REAL_NODE_COMPONENTS) {
    const rec = plan.processes[c];
    if (rec === undefined || !isRunning(rec) || !(await realNodeHealthy(c, plan))) {
      if (rec !== undefined) await stopProcess(rec, 3_000);
      dead.push(c);
    }
  }
  if (dead.length === 0) return;
  const client = await adminClient(layout);
  try {
    await joinRealNode({ plan, layout, pki: state.pki, tools: state.tools, apiserver: `https://${apiserverHost(state)}:${state.ports.apiserver}`, registry: registryAddress(state), logger: opts.logger, save: () => writeState(layout, state) }, dead, client, timeoutMs, say);
  } finally {
    client.close();
  }
}

/** Stops every process of the cluster and removes its state dir. */
export async function clusterDown(opts: { name?: string; stateDir?: string; logger: Logger }): Promise<{ stopped: Component[] }> {
  // The real node goes first: its Pods, mounts and network are removed while containerd still answers.
  const layout = clusterLayout(opts.name ?? 'binnacle', opts.stateDir);
  const state = readState(layout);
  const stopped: Component[] = [];
  let leftovers: RealNodeLeftovers | undefined;
  if (state?.realNode !== undefined) leftovers = await stopRealNode(state.realNode, state.tools);
  if (state !== undefined) {
    for (const c of [...COMPONENTS].reverse()) {
      const rec = state.processes[c];
      if (rec !== undefined && isRunning(rec)) {
        await stopProcess(rec);
        stopped.push(c);
      }
    }
  }
  const left = leftovers === undefined ? [] : describeLeftovers(leftovers);
  if (left.length > 0) {
    // The state dir stays (removing it under live mounts would delete what they show, a Pod's
    // volumes), so that `down` again finds the node and retries.
    throw new BinnacleError('terminal', 'CLUSTER_REAL_NODE_LEFTOVERS', `the real node left ${left.join(', ')}; run \`cluster down\` again`);
  }
  rmSync(layout.root, { recursive: true, force: true });
  return { stopped };
}

export async function clusterStatus(opts: { name?: string; stateDir?: string }): Promise<ClusterStatus> {
  const layout = clusterLayout(opts.name ?? 'binnacle', opts.stateDir);
  const state = readState(layout);
  if (state === undefined) {
    return { name: layout.name, exists: false, kubeconfig: layout.kubeconfig, registry: undefined, apiserver: undefined, components: [] };
  }
  const components: ComponentStatus[] = [];
  for (const c of COMPONENTS) {
    const rec = state.processes[c];
    const running = rec !== undefined && isRunning(rec);
    components.push({ name: c, pid: rec?.pid, running, healthy: running && (await probeOnce(probeFor(c, state))), endpoint: endpointOf(c, state) });
  }
  return {
    name: layout.name,
    exists: true,
    kubeconfig: layout.kubeconfig,
    registry: registryAddress(state),
    apiserver: `https://${apiserverHost(state)}:${state.ports.apiserver}`,
    components,
  };
}

export function clusterKubeconfigPath(opts: { name?: string; stateDir?: string }): string {
  const layout = clusterLayout(opts.name ?? 'binnacle', opts.stateDir);
  if (!existsSync(layout.kubeconfig)) {
    throw new BinnacleError('input', 'CLUSTER_NOT_FOUND', `cluster "${layout.name}" does not exist: run \`binnacle cluster up${layout.name === 'binnacle' ? '' : ` --name ${layout.name}`}\``);
  }
  return layout.kubeconfig;
}
