import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { tarOf } from '../oci/tar.test-helper.js';
import { unpackSource } from './unpack.js';
import type { ProgressEvent } from './types.js';
import type { SecretReader } from './secrets.js';

const logger = pino({ level: 'silent' });

const goodTar = tarOf([
  { path: 'manifests/', type: '5' },
  { path: 'manifests/csv.yaml', body: 'kind: ClusterServiceVersion\n' },
  { path: 'metadata/annotations.yaml', body: 'annotations: {}\n' },
  { path: 'metadata/.wh.keep', body: 'a plain file in a plain tarball\n' },
]);
const goodTgz = gzipSync(goodTar);
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const routes = new Map<string, { body: Buffer; length?: boolean }>([
  ['/good.tgz', { body: goodTgz }],
  ['/good.tar', { body: goodTar }],
  ['/traversal.tar', { body: tarOf([{ path: 'manifests/ok.yaml', body: 'x' }, { path: '../../escape.yaml', body: 'pwned' }]) }],
  ['/abs-link.tar', { body: tarOf([{ path: 'link', type: '2', link: '../../../etc/passwd' }]) }],
  ['/device.tar', { body: tarOf([{ path: 'dev/null', type: '3' }]) }],
  // 64 MiB of zeros is about 64 KiB gzipped: small to download, huge to unpack.
  ['/bomb.tar.gz', { body: gzipSync(tarOf([{ path: 'zeros', body: Buffer.alloc(64 * 1024 * 1024) }])) }],
  ['/random.tar.gz', { body: gzipSync(tarOf([{ path: 'manifests/random.bin', body: randomBytes(1536 * 1024) }])) }],
  ['/big-declared', { body: Buffer.alloc(3 * 1024 * 1024) }],
  ['/big-chunked', { body: Buffer.alloc(3 * 1024 * 1024), length: false }],
  ['/not-a-tar.tgz', { body: Buffer.from('<html>hello</html>\n'.repeat(100)) }],
]);
const hits = new Map<string, number>();
let server: Server;
let baseUrl = '';
let base = '';

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'source-http-'));
  server = createServer((req, res) => {
    const path = req.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/hang.tgz') return; // never answers
    if (path === '/auth.tgz') {
      const ok = req.headers.authorization === `Basic ${Buffer.from('reader:s3cr3t').toString('base64')}`;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/octet-stream' }).end(ok ? goodTgz : 'no');
      return;
    }
    const r = routes.get(path);
    if (r === undefined) {
      res.writeHead(404).end('not found');
      return;
    }
    if (r.length === false) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      // Chunks with no Content-Length: the limit has to be enforced while reading.
      for (let i = 0; i < r.body.length; i += 65536) res.write(r.body.subarray(i, i + 65536));
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(r.body.length) }).end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(base, { recursive: true, force: true });
});

async function treesIn(cacheDir: string): Promise<string[]> {
  return readdir(join(cacheDir, 'trees')).catch(() => []);
}

test('a good .tgz and .tar unpack to the same tree; sha256 is always recorded', async () => {
  const cacheDir = join(base, 'good');
  const events: ProgressEvent[] = [];
  const tgz = await unpackSource({ type: 'http', url: `${baseUrl}/good.tgz` }, { cacheDir, logger, onProgress: (p) => events.push(p) });
  assert.deepEqual(tgz.resolved, { type: 'http', http: { url: `${baseUrl}/good.tgz`, sha256: sha(goodTgz) } });
  assert.equal(await readFile(join(tgz.dir, 'manifests', 'csv.yaml'), 'utf8'), 'kind: ClusterServiceVersion\n');
  // No OCI whiteout semantics for plain tarballs.
  assert.equal(await readFile(join(tgz.dir, 'metadata', '.wh.keep'), 'utf8'), 'a plain file in a plain tarball\n');
  assert.ok(events.some((e) => e.phase === 'download' && e.bytes === goodTgz.length && e.total === goodTgz.length), 'download progress reaches the total');
  const tar = await unpackSource({ type: 'http', url: `${baseUrl}/good.tar`, sha256: sha(goodTar) }, { cacheDir, logger });
  assert.equal(tar.digest, tgz.digest);
  assert.equal(tar.resolved.http?.sha256, sha(goodTar));
});

test('a pinned sha256 that was unpacked before needs no download', async () => {
  const cacheDir = join(base, 'pinned');
  const source = { type: 'http', url: `${baseUrl}/good.tgz`, sha256: sha(goodTgz) } as const;
  const before = hits.get('/good.tgz') ?? 0;
  const first = await unpackSource(source, { cacheDir, logger });
  const second = await unpackSource(source, { cacheDir, logger });
  assert.equal(second.digest, first.digest);
  assert.equal((hits.get('/good.tgz') ?? 0) - before, 1);
});

test('a wrong sha256 is refused before anything is unpacked', async () => {
  const cacheDir = join(base, 'wrong');
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/good.tgz`, sha256: '0'.repeat(64) }, { cacheDir, logger }), (err: unknown) => {
    assert.equal((err as { code?: string }).code, 'SOURCE_DIGEST_MISMATCH');
    assert.match((err as Error).message, new RegExp(`good\\.tgz: sha256 of the download is ${sha(goodTgz)}, expected 0{64}`));
    return true;
  });
  assert.deepEqual(await treesIn(cacheDir), []);
  assert.deepEqual(await readdir(join(cacheDir, 'tmp')), [], 'the work directory is cleaned up');
});

test('traversal entries, escaping links and devices are refused, naming the entry', async () => {
  const cacheDir = join(base, 'unsafe');
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/traversal.tar` }, { cacheDir, logger }), {
    code: 'OCI_UNSAFE_PATH',
    message: /traversal\.tar: entry "\.\.\/\.\.\/escape\.yaml"/,
  });
  await assert.rejects(readFile(join(base, 'escape.yaml')));
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/abs-link.tar` }, { cacheDir, logger }), { code: 'OCI_UNSAFE_LINK', message: /entry "link"/ });
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/device.tar` }, { cacheDir, logger }), { code: 'OCI_UNSAFE_TYPE', message: /entry "dev\/null"/ });
  assert.deepEqual(await treesIn(cacheDir), []);
});

test('size limits: a gzip bomb, a large download with and without Content-Length', async () => {
  const cacheDir = join(base, 'size');
  const maxBytes = 1024 * 1024;
  // node-tar may stop a gzip bomb on its compression ratio before our byte limit sees the entry.
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/bomb.tar.gz` }, { cacheDir, logger, maxBytes }), (err: unknown) => {
    const code = (err as { code?: string }).code;
    assert.ok(code === 'OCI_TOO_LARGE' || code === 'OCI_BAD_ARCHIVE', `unexpected ${String(err)}`);
    assert.match((err as Error).message, /bomb\.tar\.gz: (entry "zeros".*limit of 1048576 bytes|not a valid tar archive: max decompression ratio)/);
    return true;
  });
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/random.tar.gz` }, { cacheDir, logger, maxBytes }), {
    code: 'OCI_TOO_LARGE',
    message: /entry "manifests\/random\.bin".*limit of 1048576 bytes/,
  });
  assert.ok((await unpackSource({ type: 'http', url: `${baseUrl}/random.tar.gz` }, { cacheDir, logger, maxBytes: 2 * maxBytes })).digest.length > 0, 'fits a larger limit');
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/big-declared` }, { cacheDir, logger, maxBytes }), {
    code: 'SOURCE_TOO_LARGE',
    message: /big-declared: the download is 3145728 bytes/,
  });
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/big-chunked` }, { cacheDir, logger, maxBytes }), {
    code: 'SOURCE_TOO_LARGE',
    message: /big-chunked: the download exceeds the limit/,
  });
  assert.equal((await treesIn(cacheDir)).length, 1);
});

test('404, an unreachable server, and a body that is not a tarball', async () => {
  const cacheDir = join(base, 'errors');
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/missing.tgz` }, { cacheDir, logger }), {
    code: 'SOURCE_HTTP_STATUS',
    message: /missing\.tgz failed: HTTP 404/,
  });
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  await assert.rejects(unpackSource({ type: 'http', url: `http://127.0.0.1:${port}/x.tgz` }, { cacheDir, logger }), { code: 'SOURCE_HTTP_FETCH', message: /cannot download/ });
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/not-a-tar.tgz` }, { cacheDir, logger }), { code: 'OCI_BAD_ARCHIVE', message: /not-a-tar\.tgz/ });
});

test('a server that never answers fails at the deadline, naming the host and the deadline', async () => {
  const cacheDir = join(base, 'hang');
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/hang.tgz` }, { cacheDir, logger, timeoutMs: 300 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'SOURCE_HTTP_FETCH');
    assert.match(err.message, /^cannot download http:\/\/127\.0\.0\.1:\d+\/hang\.tgz: no answer from 127\.0\.0\.1:\d+ within 300 ms$/);
    return true;
  });
});

test("credentials come from the source's Secret, read by the given reader, and go out as Basic auth; in the URL they are refused, unechoed", async () => {
  const cacheDir = join(base, 'auth');
  const b64 = (v: string): string => Buffer.from(v).toString('base64');
  const asked: string[] = [];
  const reader: SecretReader = {
    identity: 'service account team-a/installer',
    get: (ref) => {
      asked.push(`${ref.namespace}/${ref.name}`);
      const password = ref.name === 'good' ? 's3cr3t' : 'wr0ng-s3cr3t';
      return Promise.resolve({ apiVersion: 'v1', kind: 'Secret', metadata: { ...ref }, type: 'kubernetes.io/basic-auth', data: { username: b64('reader'), password: b64(password) } });
    },
  };
  const got = await unpackSource({ type: 'http', url: `${baseUrl}/auth.tgz`, secret: { namespace: 'team-a', name: 'good' } }, { cacheDir, logger, secrets: reader });
  assert.deepEqual(got.resolved, { type: 'http', http: { url: `${baseUrl}/auth.tgz`, sha256: sha(goodTgz) } });
  await assert.rejects(unpackSource({ type: 'http', url: `${baseUrl}/auth.tgz`, secret: { namespace: 'team-a', name: 'wrong' } }, { cacheDir, logger, secrets: reader }), (err: Error) => {
    assert.match(err.message, /HTTP 401/);
    assert.doesNotMatch(err.message, /s3cr3t|reader/);
    return true;
  });
  assert.deepEqual(asked, ['team-a/good', 'team-a/wrong']);
  await assert.rejects(unpackSource({ type: 'http', url: 'http://user:s3cr3t@127.0.0.1:1/x.tgz' }, { cacheDir, logger }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'INVALID');
    assert.match(err.message, /must not carry credentials \(http:\/\/\*\*\*@127\.0\.0\.1:1\/x\.tgz\): put them in a kubernetes\.io\/basic-auth Secret/);
    assert.doesNotMatch(err.message, /s3cr3t/);
    return true;
  });
});
