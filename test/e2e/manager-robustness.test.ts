/**
 * The manager survives anything a client sends (issue 13 §1). The real `binnacle manager`
 * process is attacked on both of its HTTP servers (catalog API; metrics and probes) with
 * malformed percent-encodings, garbage request lines, huge headers, unsupported methods and a
 * slowloris crowd of half-sent requests. Every request gets a 4xx, the process keeps running,
 * the half requests are closed by the server, and afterwards the manager still reconciles: a
 * new ClusterCatalog becomes Serving and its content is served.
 *
 * An object nested deeper than the client reads (util/nesting.ts) is left out of the manager's
 * caches and logged, and every other object is still reconciled (issue 15: no document from the
 * API server may crash or stall the manager).
 *
 * The same manager, logging at debug level, then installs from http and git sources whose URLs
 * carry credentials (issue 13 §2, secrets stay secret): the credentials are used, and appear in
 * no condition, status, event or log line.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { publishPackages } from '../../src/publish/packages.js';
import { freePorts } from '../../src/util/ports.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition } from '../../src/kube/types.js';
import { API_VERSION, type BundleDeployment, type ClusterCatalog, type ClusterExtension } from '../../src/api/types.js';
import { adminInstaller, e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';
import { CORPUS } from './extensions.js';

const ROOT = join(import.meta.dirname, '..', '..');

let client: KubeClient;
let dataDir: string;
let proc: ChildProcess;
let stderr = '';
let stdout = '';
let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
let ports: { metrics: number; catalog: number };
const catalogName = uniqueName('robust');
const repo = uniqueName('robust');

interface RawAnswer {
  status: number | undefined;
  head: string;
  /** The server closed the connection. */
  closed: boolean;
}

/** Sends `bytes` on a fresh connection and reads until the server closes it (or `waitMs`). */
function raw(port: number, bytes: string | Buffer, waitMs = 30_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const sock = connect(port, '127.0.0.1');
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m === null ? undefined : Number(m[1]), head: text.split('\r\n\r\n')[0] ?? '', closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('close', () => finish(true));
    sock.on('error', () => finish(true));
    sock.write(bytes);
  });
}

function request(method: string, path: string, extra = ''): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`;
}

function alive(): void {
  assert.equal(exited, undefined, `the manager exited (${JSON.stringify(exited)}); its stderr:\n${stderr.slice(-4000)}`);
}

async function status(port: number, path: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(30_000) });
  await res.arrayBuffer();
  return res.status;
}

before(async () => {
  client = await e2eClient();
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-robust-'));
  ports = await freePorts(['metrics', 'catalog']);
  proc = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'src', 'cli', 'main.ts'),
      'manager',
      '--kubeconfig',
      e2eKubeconfig(),
      '--data-dir',
      dataDir,
      '--metrics-bind-address',
      `127.0.0.1:${ports.metrics}`,
      '--catalog-bind-address',
      `127.0.0.1:${ports.catalog}`,
    ],
    // Debug level: every log line the manager can write is captured and searched for secrets.
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BINNACLE_LOG_LEVEL: 'debug' } },
  );
  proc.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  proc.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  proc.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  await eventually('the manager ready', async () => {
    alive();
    return (await status(ports.metrics, '/readyz')) === 200 ? true : undefined;
  }, 180_000, 500);
});

after(async () => {
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName }).catch(() => undefined);
  if (exited === undefined) {
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await gone;
  }
  client.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('malformed paths, garbage, huge headers and unknown methods get a 4xx and the manager keeps running', async () => {
  const cases: { port: keyof typeof ports; bytes: string; expect: number; allow?: boolean }[] = [
    // The one from the issue: it used to throw in the handler and end the process.
    { port: 'catalog', bytes: request('GET', '/catalogs/%E0%A4%A/api/v1/all'), expect: 400 },
    { port: 'catalog', bytes: request('GET', '/catalogs/%ZZ/api/v1/metas?schema=olm.package'), expect: 400 },
    { port: 'catalog', bytes: request('GET', '/%'), expect: 400 },
    { port: 'metrics', bytes: request('GET', '/%E0%A4%A'), expect: 400 },
    { port: 'metrics', bytes: request('GET', '/metrics?x=%'), expect: 400 },
    // Methods the servers do not serve.
    { port: 'catalog', bytes: request('DELETE', '/api/v1/all'), expect: 405, allow: true },
    { port: 'catalog', bytes: request('PROPFIND', '/catalogs/x/api/v1/all'), expect: 405, allow: true },
    { port: 'metrics', bytes: request('POST', '/metrics', 'Content-Length: 0\r\n'), expect: 405, allow: true },
    { port: 'metrics', bytes: request('PUT', '/healthz', 'Content-Length: 0\r\n'), expect: 405, allow: true },
    // Not HTTP at all, and an absolute-form target that is no URL.
    { port: 'catalog', bytes: 'NOT HTTP AT ALL\r\n\r\n', expect: 400 },
    { port: 'metrics', bytes: '\x00\x01\x02\x03\r\n\r\n', expect: 400 },
    { port: 'catalog', bytes: request('GET', 'http://[::1/api/v1/all'), expect: 400 },
    // Headers far over Node's limit.
    { port: 'catalog', bytes: request('GET', '/api/v1/all', `X-Big: ${'a'.repeat(64 * 1024)}\r\n`), expect: 431 },
    { port: 'metrics', bytes: request('GET', '/healthz', `X-Big: ${'a'.repeat(64 * 1024)}\r\n`), expect: 431 },
  ];
  for (const c of cases) {
    const answer = await raw(ports[c.port], c.bytes);
    alive();
    const what = `${c.port} server, ${JSON.stringify(c.bytes.slice(0, 60))}`;
    assert.equal(answer.status, c.expect, `${what}: answered ${answer.head.split('\r\n')[0] ?? '(nothing)'}`);
    if (c.allow === true) assert.match(answer.head, /\r\nAllow: GET, HEAD/i, `${what}: 405 names the allowed methods`);
  }
  assert.equal(await status(ports.metrics, '/healthz'), 200);
  assert.equal(await status(ports.catalog, '/catalogs/none/api/v1/all'), 404);
  alive();
});

test('a slowloris crowd of half-sent requests is cut off by the server and does not block others', async () => {
  const socks: Socket[] = [];
  const closedAll: Promise<boolean>[] = [];
  for (let i = 0; i < 40; i++) {
    const port = i % 2 === 0 ? ports.catalog : ports.metrics;
    const sock = connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    closedAll.push(new Promise((resolve) => sock.once('close', () => resolve(true))));
    // A request line and one header, never the blank line that ends the headers.
    sock.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `);
    socks.push(sock);
  }
  // Trickle a byte now and then, as slowloris does, so only a headers deadline can end them.
  const trickle = setInterval(() => {
    for (const s of socks) if (!s.destroyed) s.write('a');
  }, 1000);
  try {
    // Meanwhile the servers answer everyone else.
    assert.equal(await status(ports.metrics, '/healthz'), 200);
    assert.equal(await status(ports.catalog, '/api/v1/all'), 404);
    // The server, not the client, ends every half request (the deadline is well under this wait).
    const closed = await Promise.race([
      Promise.all(closedAll).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 120_000).unref()),
    ]);
    const open = socks.filter((s) => !s.destroyed).length;
    assert.ok(closed, `${open} of ${socks.length} half-sent requests are still held open by the server`);
  } finally {
    clearInterval(trickle);
    for (const s of socks) s.destroy();
  }
  alive();
});

/** A value nested `levels` deep: { a: { a: … 'x' } }. */
function nested(levels: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

test('an object nested past what the client reads is left out and logged, and every other object is still reconciled', async () => {
  alive();
  const bd = uniqueName('deep-bd');
  const ce = uniqueName('deep-ce');
  try {
    // 3,000 levels: the API server keeps it (it allows 10,000). Before the client refused such
    // objects, copying the BundleDeployments failed every ClusterExtension's reconcile.
    const deep = {
      apiVersion: API_VERSION,
      kind: 'BundleDeployment',
      metadata: { name: bd },
      spec: { source: { type: 'image', image: { ref: 'example.invalid/none:v1' } }, format: 'registry+v1', installNamespace: 'default', config: nested(3000) },
    };
    // The create succeeds; the client does not read the object it gets back.
    await assert.rejects(client.create(deep), { code: 'KUBE_OBJECT_TOO_DEEP' });
    assert.equal((await client.rawRequest('GET', `/apis/${API_VERSION}/bundledeployments/${bd}`)).status, 200, 'the API server kept it');
    // A config nested past its own limit (256) but within the object's (512) reaches the controller, which names the field.
    await client.create({
      apiVersion: API_VERSION,
      kind: 'ClusterExtension',
      metadata: { name: ce },
      spec: { namespace: 'default', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'none' } }, install: { config: nested(300) } },
    });
    const progressing = await eventually(
      `${ce} Progressing=False InvalidSpec`,
      async () => {
        alive();
        const c = findCondition((await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce })).status?.conditions, 'Progressing');
        return c?.reason === 'InvalidSpec' ? c : undefined;
      },
      120_000,
      500,
    );
    assert.match(progressing.message, /spec\.install\.config: nests deeper than 256 levels/);
    // Mended, it is reconciled again, now from the caches, which hold every BundleDeployment but the deep one.
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce }, { spec: { install: { config: nested(3) } } });
    const moved = await eventually(
      `${ce} reconciled at its new generation`,
      async () => {
        alive();
        const x = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce });
        const c = findCondition(x.status?.conditions, 'Progressing');
        return c !== undefined && c.observedGeneration === x.metadata.generation && c.reason !== 'InvalidSpec' ? c : undefined;
      },
      120_000,
      500,
    );
    assert.doesNotMatch(moved.message, /nests deeper|call stack/);
    const logged = (): boolean => (stdout + stderr).split('\n').some((l) => l.includes(`"name":"${bd}"`) && l.includes('nests deeper than 512 levels: not read'));
    await eventually('the manager logged the object it left out', () => Promise.resolve(logged() ? true : undefined), 60_000);
    alive();
  } finally {
    await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: bd });
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce });
    await eventually(`${ce} deleted`, async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce })) === undefined ? true : undefined), 120_000, 500);
  }
});

test('after the attacks the manager still reconciles: a new ClusterCatalog becomes Serving and is served', async () => {
  alive();
  const tag = `${e2eRegistry()}/${repo}/catalog:latest`;
  await publishPackages({ packages: [join(CORPUS, 'poison-pill-operator')], registry: e2eRegistry(), repository: repo, catalogTag: tag });
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: tag } } } });
  const served = await eventually(
    `ClusterCatalog ${catalogName} Serving`,
    async () => {
      alive();
      const c = await client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName });
      return findCondition(c.status?.conditions, 'Serving')?.status === 'True' ? c : undefined;
    },
    180_000,
    500,
  );
  const res = await fetch(`http://127.0.0.1:${ports.catalog}/catalogs/${catalogName}/api/v1/metas?schema=olm.package`, { signal: AbortSignal.timeout(30_000) });
  assert.equal(res.status, 200, `served from ${served.status?.urls?.base ?? '?'}`);
  assert.match(await res.text(), /"name":"poison-pill-operator"/);
  alive();
});

test("an http source's credentials come from its Secret; URLs with credentials are refused; the credential appears in no condition, status, event or log line", async () => {
  const SECRET = 's3cr3t-e2e-token';
  const ns = uniqueName('secret');
  await adminInstaller(client, ns);
  // A plain bundle as a tarball, served only to the right Basic credentials.
  const work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-secret-'));
  await mkdir(join(work, 'b', 'manifests'), { recursive: true });
  await writeFile(join(work, 'b', 'manifests', 'cm.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-http\n  namespace: ${ns}\ndata:\n  a: b\n`);
  await promisify(execFile)('tar', ['-czf', join(work, 'b.tgz'), '-C', join(work, 'b'), 'manifests']);
  const tarball = await readFile(join(work, 'b.tgz'));
  const expected = `Basic ${Buffer.from(`reader:${SECRET}`).toString('base64')}`;
  let authorized = 0;
  const files: Server = createServer((req, res) => {
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="x"' }).end();
      return;
    }
    authorized++;
    res.writeHead(200, { 'Content-Type': 'application/gzip' }).end(tarball);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  const port = (files.address() as AddressInfo).port;
  const bds = { ok: uniqueName('secret-ok'), http: uniqueName('secret-http'), git: uniqueName('secret-git') };
  await client.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'http-creds', namespace: ns },
    type: 'kubernetes.io/basic-auth',
    stringData: { username: 'reader', password: SECRET },
  });
  const sources = {
    ok: { type: 'http', http: { url: `http://127.0.0.1:${port}/b.tgz?token=not-a-credential`, secret: { namespace: ns, name: 'http-creds' } } },
    http: { type: 'http', http: { url: `http://user:${SECRET}@127.0.0.1:1/x.tgz` } },
    git: { type: 'git', git: { repository: `https://user:${SECRET}@127.0.0.1:1/repo.git`, ref: { branch: 'main' } } },
  };
  try {
    for (const [k, name] of Object.entries(bds)) {
      await client.apply({
        apiVersion: API_VERSION,
        kind: 'BundleDeployment',
        metadata: { name },
        spec: { source: sources[k as keyof typeof sources], format: 'plain', installNamespace: ns, serviceAccount: { name: 'installer' } },
      });
    }
    const get = (name: string): Promise<BundleDeployment> => client.get<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
    const installed = await eventually(
      `${bds.ok} installed`,
      async () => {
        alive();
        const bd = await get(bds.ok);
        return findCondition(bd.status?.conditions, 'Installed')?.status === 'True' ? bd : undefined;
      },
      180_000,
      500,
    );
    assert.ok(authorized > 0, 'the credentials were sent');
    assert.equal((await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'from-http' })).metadata.name, 'from-http');
    const shownUrl = JSON.stringify(installed.status?.resolvedSource ?? {});
    assert.match(shownUrl, /http:\/\/127\.0\.0\.1:\d+\/b\.tgz\?token=not-a-credential/, 'the URL is shown with its query kept');
    // The ones with credentials in the URL are refused and say so, naming the URL without its credentials.
    const failed: BundleDeployment[] = [];
    for (const name of [bds.http, bds.git]) {
      failed.push(
        await eventually(
          `${name} reports its source failure`,
          async () => {
            const bd = await get(name);
            const c = (bd.status?.conditions ?? []).find((x) => x.status === 'False' && /127\.0\.0\.1:1\b/.test(x.message));
            return c === undefined ? undefined : bd;
          },
          180_000,
          500,
        ),
      );
    }
    const events = await client.list('v1', 'Event');
    const haystacks: [string, string][] = [
      // The spec holds what the user wrote; everything the manager writes must not repeat it.
      ...[installed, ...failed].map((bd): [string, string] => [`BundleDeployment ${bd.metadata.name ?? ''} status`, JSON.stringify(bd.status)]),
      ['events', JSON.stringify(events.items)],
      ['manager log', stdout + stderr],
    ];
    for (const [where, text] of haystacks) {
      assert.ok(text.length > 0, `${where}: nothing captured`);
      const at = text.indexOf(SECRET);
      assert.ok(at < 0, `${where} shows the credential: …${text.slice(Math.max(0, at - 200), at + 50)}…`);
    }
    assert.ok((stdout + stderr).includes('127.0.0.1:1'), 'the manager log mentions the failing sources at all');
  } finally {
    for (const name of Object.values(bds)) await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name }).catch(() => undefined);
    files.closeAllConnections();
    files.close();
    await rm(work, { recursive: true, force: true });
  }
  alive();
});
