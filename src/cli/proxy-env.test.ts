/**
 * The command line honours HTTPS_PROXY / HTTP_PROXY / NO_PROXY (src/util/proxy-env.ts), as OLM
 * v1's Go components do: `binnacle image inspect`, run as a child process through
 * bin/binnacle.js with the variables set, reaches a registry through a recording proxy, or
 * directly when NO_PROXY names the registry or no proxy is set; a proxy it cannot reach is
 * named in the error with Go's `proxyconnect`. Everything is real: Node's own networking, a
 * proxy that tunnels (CONNECT) and forwards absolute-URI requests, and an in-memory registry.
 * Loopback always goes direct (as in Go), so the registry listens on another address of this
 * machine (its first non-internal IPv4 one), which Binnacle reaches over plain http as a local one.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sha256Digest } from '../oci/digest.js';
import { startFakeRegistry, type FakeRegistry } from '../oci/fake-registry.test-helper.js';
import { MediaType } from '../oci/manifest.js';
import { RegistryClient } from '../oci/registry-client.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'binnacle.js');
const PROXY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy', 'NODE_USE_ENV_PROXY', 'ALL_PROXY', 'all_proxy'];

/** A forwarding proxy that keeps what it was asked for: `CONNECT host:port` and `GET http://…`. */
interface RecordingProxy {
  port: number;
  seen: string[];
  close(): Promise<void>;
}

async function startRecordingProxy(): Promise<RecordingProxy> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''}`);
    const target = new URL(req.url ?? '');
    const upstream = request({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req, socket, head) => {
    seen.push(`CONNECT ${req.url ?? ''}`);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host ?? '', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

interface Ran {
  code: number;
  out: string;
  err: string;
}

/** `binnacle ARGS` from the sources, with no proxy variable of this process's but those of `env`. */
function binnacle(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !PROXY_VARIABLES.includes(k)));
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...base, BINNACLE_FROM_SOURCE: '1', ...env }, timeout: 60_000, killSignal: 'SIGKILL' }, (err, out, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, out, err: stderr });
    });
  });
}

let registry: FakeRegistry;
let proxy: RecordingProxy;
let ref = '';
let digest = '';

/** An address of this machine that is not loopback: the registry's, which the proxy must see. */
function machineAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
  if (address === undefined) throw new Error('this machine has no IPv4 address besides loopback: the proxy tests need one');
  return address;
}

before(async () => {
  registry = await startFakeRegistry({ address: machineAddress() });
  proxy = await startRecordingProxy();
  // An image `image inspect` can show: a config blob and a manifest naming it.
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Labels: { via: 'proxy-test' } }, rootfs: { type: 'layers', diff_ids: [] } }));
  ref = `${registry.host}/proxied/image:v1`;
  const client = new RegistryClient({ auth: () => undefined });
  await client.uploadBlob(ref, { digest: sha256Digest(config), size: config.length, open: () => config });
  const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: MediaType.ociConfig, digest: sha256Digest(config), size: config.length }, layers: [] }));
  digest = registry.putManifest('proxied/image', 'v1', manifest, MediaType.ociManifest);
});

after(async () => {
  await proxy.close();
  await registry.close();
});

/** `image inspect` of the test's image; answers what the proxy saw meanwhile. */
async function inspect(env: Record<string, string>): Promise<{ ran: Ran; proxied: string[] }> {
  const from = proxy.seen.length;
  const ran = await binnacle(['image', 'inspect', ref, '-o', 'json'], env);
  return { ran, proxied: proxy.seen.slice(from) };
}

function assertInspected(ran: Ran): void {
  assert.equal(ran.code, 0, ran.err);
  const shown = JSON.parse(ran.out) as { digest: string; labels: Record<string, string> };
  assert.equal(shown.digest, digest);
  assert.deepEqual(shown.labels, { via: 'proxy-test' });
}

test('with HTTP_PROXY set, the registry is reached through the proxy', async () => {
  const { ran, proxied } = await inspect({ HTTP_PROXY: `http://127.0.0.1:${proxy.port}` });
  assertInspected(ran);
  // Node tunnels even plain http:// through CONNECT; an absolute-URI GET would be recorded as well.
  assert.ok(proxied.length > 0, 'the proxy saw nothing');
  for (const r of proxied) assert.match(r, new RegExp(`^(CONNECT ${registry.host}|[A-Z]+ http://${registry.host}/)`));
});

test('lower-case http_proxy, and a proxy without a scheme (an http:// one, as in Go), work too', async () => {
  const { ran, proxied } = await inspect({ http_proxy: `127.0.0.1:${proxy.port}` });
  assertInspected(ran);
  assert.ok(proxied.length > 0, 'the proxy saw nothing');
});

test('with NO_PROXY naming the registry, it is reached directly', async () => {
  for (const noProxy of [registry.host.split(':')[0] ?? '', `example.com,${registry.host}`]) {
    const { ran, proxied } = await inspect({ HTTP_PROXY: `http://127.0.0.1:${proxy.port}`, NO_PROXY: noProxy });
    assertInspected(ran);
    assert.deepEqual(proxied, [], `NO_PROXY=${noProxy}`);
  }
});

test('loopback goes direct with a proxy set, as in Go: a local cluster\'s registry on 127.0.0.1 is not sent to the proxy', async () => {
  const local = await startFakeRegistry();
  try {
    const ran = await binnacle(['image', 'inspect', `${local.host}/absent/image:v1`, '-o', 'json'], { HTTP_PROXY: `http://127.0.0.1:${proxy.port}` });
    const from = proxy.seen.length;
    // Reached directly: the local registry answers that the image is not there (through the proxy nothing would be recorded either way, so the log is checked too).
    assert.match(ran.err, /MANIFEST_UNKNOWN|not found/i, ran.err);
    assert.deepEqual(proxy.seen.slice(from), []);
    assert.ok(!proxy.seen.some((x) => x.includes(local.host)), 'the proxy never saw the loopback registry');
  } finally {
    await local.close();
  }
});

test('with no proxy variable, nothing is proxied', async () => {
  const { ran, proxied } = await inspect({});
  assertInspected(ran);
  assert.deepEqual(proxied, []);
});

test('a proxy that refuses connections is named in the error, in Go\'s words (proxyconnect)', async () => {
  const port = await closedPort();
  const { ran, proxied } = await inspect({ HTTP_PROXY: `http://user:secret@127.0.0.1:${port}` });
  assert.equal(ran.code, 1, ran.err);
  assert.match(ran.err, new RegExp(`cannot reach registry ${registry.host} .*: proxyconnect 127\\.0\\.0\\.1:${port}: connection refused \\(ECONNREFUSED\\)`));
  assert.doesNotMatch(ran.err, /secret/);
  assert.deepEqual(proxied, []);
});

test('a chart repository behind a proxy that refuses connections is named the same way (one wording for every outbound request)', async () => {
  const port = await closedPort();
  const ran = await binnacle(['helm', 'template', 'demo', 'memcached', '--repo', 'http://charts.invalid/stable'], { HTTP_PROXY: `http://127.0.0.1:${port}` });
  assert.equal(ran.code, 1, ran.err);
  assert.match(ran.err, new RegExp(`cannot reach charts\\.invalid for the repository index http://charts\\.invalid/stable/index\\.yaml: proxyconnect 127\\.0\\.0\\.1:${port}: connection refused \\(ECONNREFUSED\\)`));
});

/** `image inspect` of an https registry through a proxy that answers every CONNECT with `onConnect`; answers the command's run and the CONNECTs the proxy saw. */
async function inspectThroughTunnelProxy(onConnect: (socket: import('node:stream').Duplex) => void): Promise<{ ran: Ran; port: number; connects: number }> {
  const tunnelProxy = createServer();
  let connects = 0;
  tunnelProxy.on('connect', (_req, socket) => {
    connects++;
    onConnect(socket);
  });
  await new Promise<void>((resolve) => tunnelProxy.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = tunnelProxy.address() as AddressInfo;
    const ran = await binnacle(['image', 'inspect', 'registry.invalid/some/image:v1'], { HTTPS_PROXY: `http://127.0.0.1:${port}` });
    return { ran, port, connects };
  } finally {
    tunnelProxy.closeAllConnections();
    await new Promise<void>((resolve) => tunnelProxy.close(() => resolve()));
  }
}

test('a proxy that refuses the tunnel to an https registry is named in the error with its answer', async () => {
  // As one whose policy forbids the host.
  const { ran, port } = await inspectThroughTunnelProxy((socket) => socket.end('HTTP/1.1 403 Forbidden\r\n\r\n'));
  assert.equal(ran.code, 1, ran.err);
  assert.match(ran.err, new RegExp(`cannot reach registry registry\\.invalid .*: the proxy 127\\.0\\.0\\.1:${port} refused to open a tunnel to registry\\.invalid: HTTP 403`));
});

test('a proxy that hangs up on CONNECT (a plain web server at the proxy address) fails the pull once, named; no reconnecting loop', async () => {
  const { ran, port, connects } = await inspectThroughTunnelProxy((socket) => socket.destroy());
  assert.equal(ran.code, 1, ran.err);
  assert.match(ran.err, new RegExp(`cannot reach registry registry\\.invalid .*: the proxy 127\\.0\\.0\\.1:${port} did not open a tunnel to registry\\.invalid: `));
  // undici (fetch) reconnected hundreds of times a second here (nodejs/undici#3897): the registry client no longer uses it.
  assert.ok(connects <= 2, `${connects} CONNECTs for one request`);
});

test('a proxy variable that is no URL stops the command with one line', async () => {
  const ran = await binnacle(['image', 'inspect', ref], { HTTPS_PROXY: 'http://[zz' });
  assert.equal(ran.code, 1);
  assert.match(ran.err, /^error: HTTPS_PROXY: not a usable proxy: http:\/\/\[zz is not a URL/);
  assert.doesNotMatch(ran.err, /bug in binnacle/);
});

/**
 * An API server that answers discovery for Binnacle's kinds and an empty list for any list, on
 * the machine's non-loopback address (plain http: the kubeconfig allows it with
 * insecure-skip-tls-verify); answers the requests it saw.
 */
async function startListingApiServer(): Promise<{ server: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const kinds = ['ClusterExtension', 'BundleDeployment', 'ClusterCatalog', 'HelmOperator', 'PlatformOperator'];
  const server = createServer((req, res) => {
    seen.push(`${req.method ?? ''} ${req.url ?? ''}`);
    res.setHeader('content-type', 'application/json');
    const groupVersion = /^\/apis\/([^/]+\/[^/?]+)$/.exec(req.url ?? '')?.[1];
    if (groupVersion !== undefined) {
      res.end(JSON.stringify({ kind: 'APIResourceList', groupVersion, resources: kinds.map((kind) => ({ name: `${kind.toLowerCase()}s`, singularName: kind.toLowerCase(), namespaced: false, kind, verbs: ['get', 'list', 'watch'] })) }));
      return;
    }
    res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: {}, items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, machineAddress(), resolve));
  return {
    server: `http://${machineAddress()}:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test('the API server is never proxied: with HTTPS_PROXY and HTTP_PROXY set, the kube client reaches it directly (client-go would proxy it unless NO_PROXY names it: src/util/proxy-env.ts says why not)', async () => {
  const api = await startListingApiServer();
  const dir = await mkdtemp(path.join(tmpdir(), 'proxy-kube-'));
  try {
    const kubeconfig = path.join(dir, 'config');
    await writeFile(kubeconfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: api.server, 'insecure-skip-tls-verify': true } }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
    const from = proxy.seen.length;
    const ran = await binnacle(['--kubeconfig', kubeconfig, 'status', '-o', 'json'], { HTTPS_PROXY: `http://127.0.0.1:${proxy.port}`, HTTP_PROXY: `http://127.0.0.1:${proxy.port}` });
    assert.equal(ran.code, 0, ran.err);
    assert.deepEqual(JSON.parse(ran.out), []);
    assert.ok(api.seen.some((r) => r.startsWith('GET /apis/binnacle.dev/v1alpha1/clusterextensions')), `the API server saw: ${api.seen.join(', ')}`);
    assert.deepEqual(proxy.seen.slice(from), [], 'the proxy saw nothing');
  } finally {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }
});
