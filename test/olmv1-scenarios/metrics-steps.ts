/**
 * The steps of metrics.feature and tls.feature: steps.go's metrics steps (SendMetricsRequest,
 * PrometheusMetricsAreReturned, ServiceAccountWithFetchMetricsPermissions) and tls_steps.go, with
 * the same kubectl calls (port-forward to the component's Pods or Service, patch the Deployment's
 * `manager` container args, rollout status), the same waits and the same TLS handshakes (Node's
 * client restricted as Go's: highest version, one cipher, one curve).
 *
 * They need the manager in the cluster on a real node (a port-forward reaches no kwok Pod):
 * `OLMV1_SCENARIOS_IN_CLUSTER` names the namespace install-self put it in (real-node.sh does
 * that). Binnacle's one manager plays both of OLM v1's components, so "operator-controller" and
 * "catalogd" both name its Deployment (`binnacle-manager`, container `manager`), its metrics
 * Service (`binnacle-manager-metrics`, port `metrics`) and its metrics reader ClusterRole
 * (`binnacle-manager-metrics-reader`, which the template binds as `${CONTROLLER_NAME}-metrics-reader`).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { After, Given, Then, When } from '@cucumber/cucumber';
import { MANAGER_NAME, METRICS_SERVICE } from '../../src/self/manifests.js';
import { opensslCipherName, opensslGroupName } from '../../src/util/tls-profile.js';
import { metricFamilies } from './prometheus-text.js';
import { applyPermissionsToServiceAccount } from './steps.js';
import { IN_CLUSTER, k8s, kubectlRun, waitFor, type ScenarioWorld } from './world.js';

const COMPONENTS = ['operator-controller', 'catalogd'];

/** The in-cluster manager's namespace, or why these steps cannot run here. */
function managerNamespace(): string {
  if (IN_CLUSTER === undefined) throw new Error('metrics and TLS steps need the manager in-cluster on a real node: set OLMV1_SCENARIOS_IN_CLUSTER (test/olmv1-scenarios/real-node.sh does)');
  return IN_CLUSTER;
}

/** componentDeploymentName (tls_steps.go:229): the component's Deployment, here Binnacle's manager for both. */
function componentDeployment(component: string): string {
  if (!COMPONENTS.includes(component)) throw new Error(`unknown component "${component}": expected operator-controller or catalogd`);
  return MANAGER_NAME;
}

interface Service {
  metadata: { name: string; namespace: string };
  spec: { selector?: Record<string, string>; ports?: { name?: string; port: number }[] };
}

/** getMetricsService and metricsPort (tls_steps.go:61, :85): the component's metrics Service and its port named "metrics". */
async function metricsService(component: string): Promise<{ svc: Service; port: number }> {
  componentDeployment(component);
  const svc = JSON.parse(await k8s('get', 'service', '-n', managerNamespace(), METRICS_SERVICE, '-o', 'json')) as Service;
  const port = svc.spec.ports?.find((p) => p.name === 'metrics')?.port;
  if (port === undefined) throw new Error(`no port named 'metrics' found on service ${svc.metadata.name}`);
  return { svc, port };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** portForward (tls_steps.go:106): `kubectl port-forward -n ns target local:remote`; the local address and its cleanup. */
export async function portForward(ns: string, target: string, remotePort: number): Promise<{ addr: { host: string; port: number }; cleanup: () => void }> {
  const local = await freePort();
  const child = spawn(process.env.OLMV1_SCENARIOS_KUBECTL ?? 'kubectl', ['port-forward', '-n', ns, target, `${local}:${remotePort}`], { env: { ...process.env, KUBECONFIG: process.env.BINNACLE_E2E_KUBECONFIG }, stdio: 'ignore' });
  child.on('error', () => undefined);
  return { addr: { host: '127.0.0.1', port: local }, cleanup: () => void child.kill() };
}

/** tls.Dial with InsecureSkipVerify and the options given: the open socket, or the handshake's error. */
function tlsDial(addr: { host: string; port: number }, options: ConnectionOptions, timeoutMs?: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ ...addr, rejectUnauthorized: false, ...options }, () => resolve(s));
    s.on('error', reject);
    if (timeoutMs !== undefined) s.setTimeout(timeoutMs, () => s.destroy(new Error(`no TLS handshake in ${timeoutMs} ms`)));
  });
}

/** withMetricsPortForward (tls_steps.go:136): a port-forward to the metrics Service, ready once a plain TLS handshake succeeds. */
async function withMetricsPortForward(component: string, fn: (addr: { host: string; port: number }) => Promise<void>): Promise<void> {
  const { svc, port } = await metricsService(component);
  const { addr, cleanup } = await portForward(svc.metadata.namespace, `service/${svc.metadata.name}`, port);
  try {
    await waitFor(`a TLS handshake through the port-forward to ${svc.metadata.name}`, async () => {
      const s = await tlsDial(addr, {}, 3000);
      s.destroy();
      return true;
    });
    await fn(addr);
  } finally {
    cleanup();
  }
}

/** Go's `tls.Dial` that must succeed: the socket, closed by `check` when it returns. */
async function mustConnect(addr: { host: string; port: number }, options: ConnectionOptions, failure: string, check?: (s: TLSSocket) => void): Promise<void> {
  let s: TLSSocket;
  try {
    s = await tlsDial(addr, options);
  } catch (err) {
    throw new Error(`${failure}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  try {
    check?.(s);
  } finally {
    s.destroy();
  }
}

/** Go's `tls.Dial` that must fail. */
async function mustRefuse(addr: { host: string; port: number }, options: ConnectionOptions, failure: string): Promise<void> {
  const s = await tlsDial(addr, options).catch(() => undefined);
  if (s !== undefined) {
    s.destroy();
    throw new Error(failure);
  }
}

function cipherOf(name: string): string {
  const c = opensslCipherName(name);
  if (c === undefined) throw new Error(`unknown cipher "${name}"`);
  return c;
}

function curveOf(name: string): string {
  const c = opensslGroupName(name);
  if (c === undefined) throw new Error(`unknown curve name "${name}"`);
  return c;
}

// --- steps.go: metrics ---

/** ServiceAccountWithFetchMetricsPermissions (steps.go:1575): metrics-reader-rbac-template.yaml with CONTROLLER_NAME. */
Given(/^ServiceAccount "([^"]+)" in test namespace has permissions to fetch "([^"]+)" metrics$/i, async function (this: ScenarioWorld, serviceAccount: string, controllerName: string) {
  componentDeployment(controllerName);
  // The template binds `${CONTROLLER_NAME}-metrics-reader`, which is Binnacle's METRICS_READER_ROLE for either component.
  await applyPermissionsToServiceAccount(this, serviceAccount, 'metrics-reader-rbac-template.yaml', [['CONTROLLER_NAME', MANAGER_NAME]]);
});

/** SendMetricsRequest (steps.go:1600): a port-forward to each Pod behind the component's Service, GET with the ServiceAccount's token until 200. */
When(/^ServiceAccount "([^"]+)" sends request to "([^"]+)" endpoint of "([^"]+)" service$/i, async function (this: ScenarioWorld, serviceAccount: string, endpoint: string, controllerName: string) {
  const { svc, port } = await metricsService(controllerName);
  const selector = Object.entries(svc.spec.selector ?? {}).map(([k, v]) => `--selector=${k}=${v}`);
  const pods = JSON.parse(await k8s('get', 'pod', '-n', svc.metadata.namespace, '-o', 'jsonpath={.items}', ...selector)) as { metadata: { name: string; namespace: string } }[];
  // Beyond Go, which then passes with nothing asked: a Service that selects no Pod is a failure.
  if (pods.length === 0) throw new Error(`service ${svc.metadata.namespace}/${svc.metadata.name} selects no Pod`);
  const token = (await k8s('create', 'token', serviceAccount, '-n', this.namespace)).trim();
  this.metricsResponse = new Map();
  for (const p of pods) {
    const { addr, cleanup } = await portForward(p.metadata.namespace, `pod/${p.metadata.name}`, port);
    let last = '';
    try {
      await waitFor(
        `GET https://${addr.host}:${addr.port}${endpoint} of pod ${p.metadata.name} answers 200`,
        async () => {
          const r = await insecureGet(new URL(`https://${addr.host}:${addr.port}${endpoint}`), { Authorization: `Bearer ${token}` });
          last = `${r.status}: ${r.body.slice(0, 200)}`;
          if (r.status !== 200) return false;
          this.metricsResponse.set(p.metadata.name, r.body);
          return true;
        },
        () => last,
      );
    } finally {
      cleanup();
    }
  }
});

/** A GET over http or https whose certificate is not checked (Go's InsecureSkipVerify, curl -k): its status and body. */
export function insecureGet(url: URL, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage): void => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body })).on('error', reject);
    };
    const req = url.protocol === 'https:' ? httpsRequest(url, { rejectUnauthorized: false, headers }, onResponse) : httpRequest(url, { headers }, onResponse);
    req.on('error', reject).end();
  });
}

/** PrometheusMetricsAreReturned (steps.go:1977): each Pod's response is non-empty, parses as Prometheus text and holds a family. */
Then(/^Prometheus metrics are returned in the response$/i, function (this: ScenarioWorld) {
  for (const [pod, body] of this.metricsResponse) {
    if (body === '') throw new Error(`metrics response is empty for pod ${pod}`);
    let families: Set<string>;
    try {
      families = metricFamilies(body);
    } catch (err) {
      throw new Error(`failed to parse metrics response for pod ${pod}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (families.size === 0) throw new Error(`metrics response does not contain any metrics for pod ${pod}`);
  }
});

// --- tls_steps.go ---

/**
 * ScenarioCleanup's deployment restores (hooks.go:256): the patched args put back, last patch
 * first, each followed by `rollout status --timeout=2m`, even when the scenario failed, so that a
 * misconfigured manager does not bleed into the next scenario.
 */
After(async function (this: ScenarioWorld) {
  for (const r of [...this.deploymentRestores].reverse()) {
    try {
      await patchDeploymentArgs(r.namespace, r.name, r.originalArgs);
      const rolled = await kubectlRun(['rollout', 'status', '-n', r.namespace, `deployment/${r.name}`, '--timeout=2m']);
      if (rolled.code !== 0) this.log(`timeout waiting for deployment ${r.namespace}/${r.name} rollout after restore: ${rolled.stderr.trim()}`);
    } catch (err) {
      this.log(`error restoring deployment args of ${r.namespace}/${r.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
});

interface Container {
  name: string;
  args?: string[];
}

/** getDeploymentContainerArgs and its index (tls_steps.go:243, :264): the `manager` container. */
async function managerContainer(ns: string, name: string): Promise<{ index: number; args: string[] }> {
  const d = JSON.parse(await k8s('get', 'deployment', name, '-n', ns, '-o', 'json')) as { spec: { template: { spec: { containers: Container[] } } } };
  const index = d.spec.template.spec.containers.findIndex((c) => c.name === 'manager');
  if (index < 0) throw new Error(`no container named 'manager' in deployment ${ns}/${name}`);
  return { index, args: d.spec.template.spec.containers[index]?.args ?? [] };
}

/** patchDeploymentArgs (tls_steps.go:285): a JSON patch replacing the `manager` container's args. */
export async function patchDeploymentArgs(ns: string, name: string, args: string[]): Promise<void> {
  const { index } = await managerContainer(ns, name);
  await k8s('patch', 'deployment', name, '-n', ns, '--type=json', '-p', JSON.stringify([{ op: 'replace', path: `/spec/template/spec/containers/${index}/args`, value: args }]));
}

/** buildCustomTLSArgs (tls_steps.go:301): the TLS flags dropped, a custom profile appended. */
function buildCustomTLSArgs(base: string[], version: string, ciphers: string, curves: string): string[] {
  const kept = base.filter((a) => !['--tls-profile=', '--tls-custom-version=', '--tls-custom-ciphers=', '--tls-custom-curves='].some((p) => a.startsWith(p)));
  return [...kept, '--tls-profile=custom', `--tls-custom-version=${version}`, ...(ciphers === '' ? [] : [`--tls-custom-ciphers=${ciphers}`]), ...(curves === '' ? [] : [`--tls-custom-curves=${curves}`])];
}

/** `kubectl rollout status` until it succeeds (each try bounded by 10 s), as configureDeploymentCustomTLS waits. */
export async function waitForRollout(ns: string, name: string): Promise<void> {
  let last = '';
  await waitFor(`deployment/${name} rolled out`, async () => {
    const r = await kubectlRun(['rollout', 'status', '-n', ns, `deployment/${name}`, '--timeout=10s']);
    last = (r.stderr || r.stdout).trim();
    return r.code === 0;
  }, () => last);
}

/** configureDeploymentCustomTLS (tls_steps.go:318): the original args kept for cleanup, the custom profile patched in, the rollout waited for. */
async function configureCustomTls(w: ScenarioWorld, component: string, version: string, ciphers: string, curves: string): Promise<void> {
  const ns = managerNamespace();
  const name = componentDeployment(component);
  const { args } = await managerContainer(ns, name);
  w.deploymentRestores.push({ name, namespace: ns, originalArgs: args });
  try {
    await patchDeploymentArgs(ns, name, buildCustomTLSArgs(args, version, ciphers, curves));
  } catch (err) {
    throw new Error(`patching ${name} with custom TLS args: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  await waitForRollout(ns, name);
}

Given(/^the "([^"]+)" deployment is configured with custom TLS minimum version "([^"]+)"$/i, async function (this: ScenarioWorld, component: string, version: string) {
  await configureCustomTls(this, component, version, '', '');
});

Given(/^the "([^"]+)" deployment is configured with custom TLS version "([^"]+)", ciphers "([^"]+)", and curves "([^"]+)"$/i, async function (this: ScenarioWorld, component: string, version: string, ciphers: string, curves: string) {
  await configureCustomTls(this, component, version, ciphers, curves);
});

/** MetricsEndpointAcceptsTLS13 (tls_steps.go:175). */
Then(/^the "([^"]+)" metrics endpoint accepts a TLS 1\.3 connection$/i, async function (component: string) {
  await withMetricsPortForward(component, (addr) => mustConnect(addr, { minVersion: 'TLSv1.3' }, `${component} metrics endpoint rejected a TLS 1.3 connection`));
});

/** MetricsEndpointRejectsTLS12 (tls_steps.go:191). */
Then(/^the "([^"]+)" metrics endpoint rejects a TLS 1\.2 connection$/i, async function (component: string) {
  await withMetricsPortForward(component, (addr) => mustRefuse(addr, { maxVersion: 'TLSv1.2' }, `${component} metrics endpoint accepted a TLS 1.2 connection but its profile requires TLS 1.3`));
});

/** MetricsEndpointNegotiatesTLS12Cipher (tls_steps.go:365): TLS 1.2, one cipher, and that cipher negotiated. */
Then(/^the "([^"]+)" metrics endpoint negotiates cipher "([^"]+)" over TLS 1\.2$/i, async function (component: string, cipher: string) {
  const c = cipherOf(cipher);
  await withMetricsPortForward(component, (addr) =>
    mustConnect(addr, { maxVersion: 'TLSv1.2', ciphers: c }, `${component} rejected TLS 1.2 connection using cipher ${cipher}`, (s) => {
      const got = s.getCipher().standardName;
      if (got !== cipher) throw new Error(`${component} negotiated cipher ${got} instead of the expected ${cipher}`);
    }),
  );
});

/** MetricsEndpointRejectsTLS12ConnectionWithCipher (tls_steps.go:391). */
Then(/^the "([^"]+)" metrics endpoint rejects a TLS 1\.2 connection offering only cipher "([^"]+)"$/i, async function (component: string, cipher: string) {
  const c = cipherOf(cipher);
  await withMetricsPortForward(component, (addr) => mustRefuse(addr, { maxVersion: 'TLSv1.2', ciphers: c }, `${component} accepted TLS 1.2 with cipher ${cipher} but should have rejected it (not in configured cipher list)`));
});

/** MetricsEndpointAcceptsTLS12ConnectionWithCurve (tls_steps.go:412). */
Then(/^the "([^"]+)" metrics endpoint accepts a TLS 1\.2 connection with cipher "([^"]+)" and curve "([^"]+)"$/i, async function (component: string, cipher: string, curve: string) {
  const c = cipherOf(cipher);
  const g = curveOf(curve);
  await withMetricsPortForward(component, (addr) => mustConnect(addr, { maxVersion: 'TLSv1.2', ciphers: c, ecdhCurve: g }, `${component} rejected TLS 1.2 with cipher ${cipher} and curve ${curve}`));
});

/** MetricsEndpointRejectsTLS12ConnectionWithCurve (tls_steps.go:438). */
Then(/^the "([^"]+)" metrics endpoint rejects a TLS 1\.2 connection with cipher "([^"]+)" and only curve "([^"]+)"$/i, async function (component: string, cipher: string, curve: string) {
  const c = cipherOf(cipher);
  const g = curveOf(curve);
  await withMetricsPortForward(component, (addr) => mustRefuse(addr, { maxVersion: 'TLSv1.2', ciphers: c, ecdhCurve: g }, `${component} accepted TLS 1.2 with cipher ${cipher} and curve ${curve} but should have rejected it (curve not in configured preferences)`));
});

/** MetricsEndpointAcceptsConnectionUsingCurve (tls_steps.go:207): any version, one curve. */
Then(/^the "([^"]+)" metrics endpoint accepts a connection using only curve "([^"]+)"$/i, async function (component: string, curve: string) {
  const g = curveOf(curve);
  await withMetricsPortForward(component, (addr) => mustConnect(addr, { ecdhCurve: g }, `${component} metrics endpoint rejected a connection offering only curve ${curve}`));
});

/** MetricsEndpointRejectsConnectionUsingOnlyCurve (tls_steps.go:503). */
Then(/^the "([^"]+)" metrics endpoint rejects a connection using only curve "([^"]+)"$/i, async function (component: string, curve: string) {
  const g = curveOf(curve);
  await withMetricsPortForward(component, (addr) => mustRefuse(addr, { ecdhCurve: g }, `${component} metrics endpoint accepted a connection offering only curve ${curve}, but that curve is not in its configured preferences`));
});
