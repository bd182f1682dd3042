/**
 * proxy_steps.go: the component's Deployment given HTTPS_PROXY (and NO_PROXY naming the API
 * server's cluster IP, so it still reconciles), a recording CONNECT proxy the cluster's Pods reach,
 * and what that proxy saw; the original environment put back when the scenario ends.
 *
 * Binnacle's one manager plays both components (its Deployment `binnacle-manager`, container
 * `manager`). Where upstream's Pods reach the host through kind's network gateway, the real node
 * reaches this machine at the cluster's bridge address, the host part of the cluster's registry
 * (BINNACLE_E2E_REGISTRY). proxy.feature stays excluded (EXCLUDED.md): Binnacle resolves against
 * the catalogs it holds in memory, so no HTTPS request to a catalog service exists to be proxied.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { After, Given, Then } from '@cucumber/cucumber';
import { CATALOG_SERVICE, MANAGER_NAME } from '../../src/self/manifests.js';
import { IN_CLUSTER, k8s, waitFor, type ScenarioWorld } from './world.js';

const CONTAINER = 'manager';

/** recordingProxy (proxy_steps.go:25): tunnels CONNECTs and records each target host; anything else is refused with 405. */
class RecordingProxy {
  readonly hosts: string[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor() {
    this.server = createServer((conn) => this.handle(conn));
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      // All interfaces, so that the cluster's Pods reach it (as upstream's).
      this.server.listen(0, '0.0.0.0', () => resolve((this.server.address() as { port: number }).port));
    });
  }

  private handle(conn: Socket): void {
    this.sockets.add(conn);
    conn.once('close', () => this.sockets.delete(conn));
    conn.on('error', () => conn.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 64 * 1024) conn.destroy();
        return;
      }
      conn.off('data', onData);
      // Bytes after the head wait in the socket until the tunnel is up (pipe resumes it).
      conn.pause();
      const [method, target] = head.subarray(0, end).toString('latin1').split('\r\n')[0]?.split(' ') ?? [];
      if (method !== 'CONNECT' || target === undefined) {
        conn.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
        return;
      }
      this.hosts.push(target);
      const rest = head.subarray(end + 4);
      const colon = target.lastIndexOf(':');
      const port = Number(target.slice(colon + 1));
      // Go's Dial refuses a target without a valid port: 502 here too, never a throw.
      if (colon < 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
        conn.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        return;
      }
      const dst = connect({ host: target.slice(0, colon).replace(/^\[|\]$/g, ''), port, timeout: 30_000 });
      this.sockets.add(dst);
      dst.once('close', () => this.sockets.delete(dst));
      dst.once('error', () => {
        if (!conn.destroyed) conn.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      });
      dst.once('timeout', () => dst.destroy(new Error('timeout')));
      dst.once('connect', () => {
        dst.setTimeout(0);
        conn.write('HTTP/1.1 200 Connection established\r\n\r\n');
        // Bytes sent after the CONNECT head go on to the destination too.
        if (rest.length > 0) dst.write(rest);
        conn.pipe(dst);
        dst.pipe(conn);
      });
    };
    conn.on('data', onData);
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface EnvVar {
  name: string;
  value?: string;
}

interface ProxyState {
  proxy?: RecordingProxy;
  /** The manager container's environment before the scenario changed it (deploymentRestore's originalEnv). */
  restore?: { name: string; namespace: string; env: EnvVar[] };
}
const state = new WeakMap<ScenarioWorld, ProxyState>();
const stateOf = (w: ScenarioWorld): ProxyState => {
  let s = state.get(w);
  if (s === undefined) state.set(w, (s = {}));
  return s;
};

function managerNamespace(): string {
  if (IN_CLUSTER === undefined) throw new Error('the proxy steps patch the manager\'s Deployment: set OLMV1_SCENARIOS_IN_CLUSTER (test/olmv1-scenarios/real-node.sh does)');
  return IN_CLUSTER;
}

/** configureDeploymentProxy's component → Deployment: Binnacle's manager for both. */
function deploymentOf(component: string): string {
  if (component !== 'operator-controller' && component !== 'catalogd') throw new Error(`unknown component ${JSON.stringify(component)}`);
  return MANAGER_NAME;
}

/** getDeploymentContainerEnv (proxy_steps.go:169): the container's env and its index. */
async function containerEnv(name: string, namespace: string): Promise<{ index: number; env: EnvVar[] }> {
  const d = JSON.parse(await k8s('get', 'deployment', name, '-n', namespace, '-o', 'json')) as { spec: { template: { spec: { containers: { name: string; env?: EnvVar[] }[] } } } };
  const index = d.spec.template.spec.containers.findIndex((c) => c.name === CONTAINER);
  if (index < 0) throw new Error(`container ${JSON.stringify(CONTAINER)} not found in deployment ${namespace}/${name}`);
  return { index, env: d.spec.template.spec.containers[index]?.env ?? [] };
}

/** setDeploymentEnvVars (proxy_steps.go:195): a JSON patch `add` of the whole env, then the rollout. */
async function setDeploymentEnv(name: string, namespace: string, env: EnvVar[]): Promise<void> {
  const { index } = await containerEnv(name, namespace);
  await k8s('patch', 'deployment', name, '-n', namespace, '--type=json', `--patch=${JSON.stringify([{ op: 'add', path: `/spec/template/spec/containers/${index}/env`, value: env }])}`);
  await k8s('rollout', 'status', 'deployment', name, '-n', namespace, '--timeout=5m');
}

/** addOrReplaceEnvVar (proxy_steps.go:263). */
function addOrReplace(env: EnvVar[], name: string, value: string): EnvVar[] {
  const i = env.findIndex((e) => e.name === name);
  return i < 0 ? [...env, { name, value }] : env.map((e, j) => (j === i ? { name, value } : e));
}

/** configureDeploymentProxy (proxy_steps.go:285): HTTPS_PROXY, and NO_PROXY the API server's cluster IP; the first original env kept for cleanup. */
async function configureDeploymentProxy(w: ScenarioWorld, component: string, proxyUrl: string): Promise<void> {
  const name = deploymentOf(component);
  const namespace = managerNamespace();
  const { env } = await containerEnv(name, namespace);
  const s = stateOf(w);
  s.restore ??= { name, namespace, env };
  const k8sIp = (await k8s('get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}')).trim();
  await setDeploymentEnv(name, namespace, addOrReplace(addOrReplace(env, 'HTTPS_PROXY', proxyUrl), 'NO_PROXY', k8sIp));
}

/** kindGatewayIP's stand-in: the address the real node reaches this machine at (the cluster registry's host). */
function hostAddressForPods(): string {
  const registry = process.env.BINNACLE_E2E_REGISTRY ?? '';
  const host = registry.slice(0, registry.lastIndexOf(':'));
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(host)) throw new Error(`cannot reach host from cluster: BINNACLE_E2E_REGISTRY (${JSON.stringify(registry)}) names no IPv4 address the node reaches this machine at`);
  return host;
}

/** ConfigureDeploymentWithHTTPSProxy (proxy_steps.go:348). */
Given(/^the "([^"]+)" component is configured with HTTPS_PROXY "([^"]+)"$/i, async function (this: ScenarioWorld, component: string, proxyUrl: string) {
  await configureDeploymentProxy(this, component, proxyUrl);
});

/** StartRecordingProxyAndConfigureDeployment (proxy_steps.go:355). */
Given(/^the "([^"]+)" component is configured with HTTPS_PROXY pointing to a recording proxy$/i, async function (this: ScenarioWorld, component: string) {
  const proxy = new RecordingProxy();
  stateOf(this).proxy = proxy;
  const port = await proxy.listen();
  const proxyUrl = `http://${hostAddressForPods()}:${port}`;
  this.log(`Recording proxy started: ${proxyUrl}`);
  await configureDeploymentProxy(this, component, proxyUrl);
});

/** RecordingProxyReceivedCONNECTForCatalogd (proxy_steps.go:388): a CONNECT whose host names the catalog service ("catalogd" upstream; Binnacle's catalog Service otherwise). */
Then(/^the recording proxy received a CONNECT request for the catalogd service$/i, async function (this: ScenarioWorld) {
  const proxy = stateOf(this).proxy;
  if (proxy === undefined) throw new Error('no recording proxy was started in this scenario');
  await waitFor('a CONNECT for the catalog service', () => Promise.resolve(proxy.hosts.some((h) => h.includes('catalogd') || h.startsWith(`${CATALOG_SERVICE}.`))), () => JSON.stringify(proxy.hosts));
});

/** ScenarioCleanup's env restore (restoreDeployment, proxy_steps.go:275) and the proxy stopped. */
After(async function (this: ScenarioWorld) {
  const s = state.get(this);
  if (s === undefined) return;
  await s.proxy?.close();
  if (s.restore !== undefined) {
    try {
      await setDeploymentEnv(s.restore.name, s.restore.namespace, s.restore.env);
    } catch (err) {
      this.log(`error restoring deployment env of ${s.restore.namespace}/${s.restore.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
});
