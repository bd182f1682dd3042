import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, truncate } from 'node:fs/promises';
import { connect } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { readFbcDir } from '../catalog/load.js';
import { startCatalogServer, type CatalogServer } from './server.js';
import { openStoredCatalog, storeCatalog, type StoredCatalog } from './store.js';
import { toFbcJsonLines } from '../catalog/write.js';
import { manyPackages, openHandles } from './many-packages.test-helper.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(url: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const lines = (b: Buffer): Record<string, unknown>[] =>
  b
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('catalog server', () => {
  let server: CatalogServer;
  let store: StoredCatalog;
  let expectedAll: string;

  before(async () => {
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    expectedAll = toFbcJsonLines(cfg);
    store = await storeCatalog(cfg, await mkdtemp(path.join(tmpdir(), 'catalog-store-')));
    server = await startCatalogServer({ root: store, catalogs: new Map([['community', store]]), port: 0 });
  });
  after(async () => {
    await server.close();
  });

  it('streams every record as JSON Lines from /api/v1/all, with length, ETag and Last-Modified', async () => {
    const r = await get(`${server.url}/api/v1/all`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/jsonl');
    assert.equal(r.body.toString('utf8'), expectedAll);
    assert.equal(Number(r.headers['content-length']), Buffer.byteLength(expectedAll));
    assert.equal(r.headers.etag, `"${store.sha256}"`);
    assert.equal(r.headers['last-modified'], store.lastModified.toUTCString());
  });

  it('answers 304 to If-None-Match and If-Modified-Since, 200 to a stale tag', async () => {
    const first = await get(`${server.url}/api/v1/all`);
    const etag = String(first.headers.etag);
    const r1 = await get(`${server.url}/api/v1/all`, { headers: { 'If-None-Match': etag } });
    assert.equal(r1.status, 304);
    assert.equal(r1.body.length, 0);
    const r2 = await get(`${server.url}/api/v1/all`, { headers: { 'If-Modified-Since': String(first.headers['last-modified']) } });
    assert.equal(r2.status, 304);
    const r3 = await get(`${server.url}/api/v1/all`, { headers: { 'If-None-Match': '"stale"' } });
    assert.equal(r3.status, 200);
    const r4 = await get(`${server.url}/api/v1/all`, { headers: { 'If-Modified-Since': new Date(Date.now() - 3600_000).toUTCString() } });
    assert.equal(r4.status, 200);
  });

  it('gzips when the client accepts it', async () => {
    const r = await get(`${server.url}/api/v1/all`, { headers: { 'Accept-Encoding': 'br, gzip;q=0.8' } });
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(r.body).toString('utf8'), expectedAll);
    const no = await get(`${server.url}/api/v1/all`, { headers: { 'Accept-Encoding': 'gzip;q=0' } });
    assert.equal(no.headers['content-encoding'], undefined);
  });

  it('answers HEAD with headers and no body', async () => {
    const r = await get(`${server.url}/api/v1/all`, { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 0);
    assert.equal(Number(r.headers['content-length']), Buffer.byteLength(expectedAll));
  });

  it('filters /api/v1/metas by schema, package and name', async () => {
    const bundles = lines((await get(`${server.url}/api/v1/metas?schema=olm.bundle&package=beta-op`)).body);
    assert.deepEqual(bundles.map((b) => b.name), ['beta-op.v0.1.0', 'beta-op.v0.1.1', 'beta-op.v0.2.0']);
    const one = lines((await get(`${server.url}/api/v1/metas?schema=olm.bundle&name=alpha-op.v1.0.0`)).body);
    assert.equal(one.length, 1);
    assert.equal(one[0]?.image, 'quay.io/example/alpha-op-bundle:v1.0.0');
    const pkgs = lines((await get(`${server.url}/api/v1/metas?schema=olm.package`)).body);
    assert.deepEqual(pkgs.map((p) => p.name), ['alpha-op', 'beta-op']);
    const custom = lines((await get(`${server.url}/api/v1/metas?schema=example.com.custom`)).body);
    assert.deepEqual(custom[0]?.data, { kept: true });
    const none = await get(`${server.url}/api/v1/metas?schema=olm.bundle&package=nope`);
    assert.equal(none.status, 200);
    assert.equal(none.body.length, 0);
    // A filtered answer has its own ETag, still honoured with 304.
    const tagged = await get(`${server.url}/api/v1/metas?package=beta-op`);
    assert.notEqual(tagged.headers.etag, `"${store.sha256}"`);
    assert.equal((await get(`${server.url}/api/v1/metas?package=beta-op`, { headers: { 'If-None-Match': String(tagged.headers.etag) } })).status, 304);
    assert.equal((await get(`${server.url}/api/v1/metas?bogus=1`)).status, 400);
  });

  it('serves several catalogs under /catalogs/<name>/ and 404s unknown paths and catalogs', async () => {
    const r = await get(`${server.url}/catalogs/community/api/v1/all`);
    assert.equal(r.body.toString('utf8'), expectedAll);
    assert.equal((await get(`${server.url}/catalogs/missing/api/v1/all`)).status, 404);
    assert.equal((await get(`${server.url}/api/v1/nothing`)).status, 404);
    assert.equal((await get(`${server.url}/`)).status, 404);
    assert.equal((await get(`${server.url}/api/v1/all`, { method: 'POST' })).status, 405);
  });

  it('re-indexes a stored catalog file to the same index and digest', async () => {
    const reopened = await openStoredCatalog(store.file);
    assert.equal(reopened.sha256, store.sha256);
    assert.deepEqual(reopened.metas, store.metas);
  });
});

describe('catalog API over HTTPS (catalogd serves its catalogs so)', () => {
  it('serves the same bytes over TLS with a certificate for its Service name, verified against the CA; plain HTTP to it is refused', async () => {
    const { createCertificateAuthority, issueCertificate } = await import('../util/pki.js');
    const { request: httpsRequest } = await import('node:https');
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    const store = await storeCatalog(cfg, await mkdtemp(path.join(tmpdir(), 'catalog-store-tls-')));
    const ca = await createCertificateAuthority('catalogs test CA', 1);
    const cert = await issueCertificate(ca, { commonName: 'binnacle-catalogs', hosts: ['binnacle-catalogs.binnacle-system.svc', '127.0.0.1'], usage: 'server', validDays: 1 });
    const server = await startCatalogServer({ root: store, catalogs: new Map([['community', store]]), port: 0, tls: cert });
    try {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const body = await new Promise<string>((resolve, reject) => {
        const req = httpsRequest(`${server.url}/catalogs/community/api/v1/all`, { ca: ca.certPem, servername: 'binnacle-catalogs.binnacle-system.svc' }, (res) => {
          let s = '';
          res.setEncoding('utf8').on('data', (c: string) => (s += c)).on('end', () => resolve(s));
        });
        req.on('error', reject).end();
      });
      assert.equal(body, toFbcJsonLines(cfg));
      // A client that does not trust the CA is refused by TLS itself.
      await assert.rejects(new Promise((resolve, reject) => httpsRequest(`${server.url}/api/v1/all`, resolve).on('error', reject).end()), /self[- ]signed|unable to verify|certificate/i);
      // Plain HTTP gets no catalog.
      await assert.rejects(get(`${server.url.replace('https:', 'http:')}/api/v1/all`));
    } finally {
      await server.close();
    }
  });
});

describe('a stored catalog cut short under its index', () => {
  it('fails that answer (the client sees the connection end early, not a short body it could take as whole) and the server goes on serving', async () => {
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    const good = await storeCatalog(cfg, await mkdtemp(path.join(tmpdir(), 'catalog-store-')));
    const cut = await storeCatalog(cfg, await mkdtemp(path.join(tmpdir(), 'catalog-store-')));
    await truncate(cut.file, Math.floor(cut.size / 2));
    const server = await startCatalogServer({ catalogs: new Map([['good', good], ['cut', cut]]), port: 0 });
    try {
      await assert.rejects(get(`${server.url}/catalogs/cut/api/v1/all`), /aborted|socket hang up|ECONNRESET/);
      const r = await get(`${server.url}/catalogs/good/api/v1/all`);
      assert.equal(r.status, 200);
      assert.equal(r.body.toString('utf8'), toFbcJsonLines(cfg));
    } finally {
      await server.close();
    }
  });
});

describe('many answers at once (memory stays bounded, no answer waits for another)', () => {
  let server: CatalogServer;
  let store: StoredCatalog;
  let whole: Buffer;

  before(async () => {
    store = await storeCatalog(manyPackages(100), await mkdtemp(path.join(tmpdir(), 'many-')));
    whole = await readFile(store.file);
    server = await startCatalogServer({ root: store, port: 0 });
  });
  after(async () => {
    await server.close();
  });

  it('requests pipelined on one connection that is not read: only the answer being sent opens the store; the others open nothing until their turn; all closed when the client goes', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.pause();
    socket.write('GET /api/v1/all HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(20));
    for (let i = 0; (await openHandles(store.file)).length === 0; i++) {
      assert.ok(i < 500, 'the first answer opened the store');
      await new Promise((r) => setTimeout(r, 10));
    }
    // The first answer fills the socket's buffers and waits; 19 more are parsed and queued behind it.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await openHandles(store.file)).length, 1, 'one answer at a time per connection');
    socket.destroy();
    for (let i = 0; (await openHandles(store.file)).length > 0; i++) {
      assert.ok(i < 500, 'every handle closed after the client went away');
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it('more clients at once than large sends (8): every answer whole and exact', async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, () => get(`${server.url}/api/v1/all`)));
    for (const r of replies) {
      assert.equal(r.status, 200);
      assert.ok(r.body.equals(whole), `${r.body.length} bytes, want ${whole.length}`);
    }
  });
});

describe('a client that stops reading is cut off, identity or gzip (its connection, file and buffers freed)', () => {
  let server: CatalogServer;
  let store: StoredCatalog;

  before(async () => {
    store = await storeCatalog(manyPackages(100, { incompressible: true }), await mkdtemp(path.join(tmpdir(), 'stall-')));
    server = await startCatalogServer({ root: store, port: 0, stallMs: 200 });
  });
  after(async () => {
    await server.close();
  });

  for (const encoding of ['identity', 'gzip']) {
    it(`${encoding}: a request then no reading: the server closes the connection`, async () => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      await once(socket, 'connect');
      socket.pause();
      socket.on('error', () => undefined);
      socket.write(`GET /api/v1/all HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${encoding}\r\n\r\n`);
      for (let i = 0; (await openHandles(store.file)).length === 0; i++) {
        assert.ok(i < 500, 'the answer opened the store');
        await new Promise((r) => setTimeout(r, 10));
      }
      // Cut off within two stall periods of no progress (0.4 s): the answer ends and closes the store file.
      for (let i = 0; (await openHandles(store.file)).length > 0; i++) {
        assert.ok(i < 500, 'the store file closed');
        await new Promise((r) => setTimeout(r, 10));
      }
      const connections = (): Promise<number> => new Promise((resolve, reject) => server.server.getConnections((err, n) => (err === null ? resolve(n) : reject(err))));
      for (let i = 0; (await connections()) > 0; i++) {
        assert.ok(i < 500, 'the server closed the connection (the client still holds its end)');
        await new Promise((r) => setTimeout(r, 10));
      }
      socket.destroy();
    });
  }

  it('a client that reads the whole answer at once is not cut off', async () => {
    const r = await get(`${server.url}/api/v1/all`);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, store.size);
  });
});
