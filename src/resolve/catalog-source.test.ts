import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { loadCatalog } from './catalog-source.js';

const PKG = `${JSON.stringify({ schema: 'olm.package', name: 'p', defaultChannel: 'stable' })}\n`;
let server: Server;
let base: string;
let sentBytes = 0;
let lastAuth: string | undefined;
let gzipAsked: string | undefined;
const hung: ServerResponse[] = [];

before(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    lastAuth = req.headers.authorization;
    if (req.url?.startsWith('/chunked/') === true) {
      // No Content-Length: the body comes chunked, 64 KiB at a time, far past any small cap.
      res.writeHead(200, { 'Content-Type': 'application/jsonl' });
      sentBytes = 0;
      const line = Buffer.from(PKG.repeat(1024));
      const push = (): void => {
        while (sentBytes < 64 * 1024 * 1024 && !res.destroyed) {
          sentBytes += line.length;
          if (!res.write(line)) {
            res.once('drain', push);
            return;
          }
        }
        res.end();
      };
      res.on('error', () => undefined);
      push();
      return;
    }
    if (req.url?.startsWith('/gz/') === true || req.url?.startsWith('/gzbomb/') === true) {
      // Gzipped only when asked; the bomb's 64 MiB of records come to about 100 KB on the wire.
      gzipAsked = req.headers['accept-encoding'];
      const body = req.url.startsWith('/gz/') ? PKG : PKG.repeat(Math.ceil((64 * 1024 * 1024) / PKG.length));
      if (gzipAsked !== 'gzip') res.writeHead(200).end(body);
      else res.writeHead(200, { 'Content-Type': 'application/jsonl', 'Content-Encoding': 'gzip' }).end(gzipSync(body));
      return;
    }
    if (req.url?.startsWith('/hang/') === true) {
      hung.push(res); // never answers
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/jsonl' });
    res.end(PKG);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  for (const r of hung) r.destroy();
  server.closeAllConnections();
  server.close();
});

test('a chunked catalog response over the cap is refused while it streams, naming the URL and the cap', async () => {
  await assert.rejects(loadCatalog(`${base}/chunked`, { maxBytes: 1024 * 1024 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CATALOG_TOO_LARGE');
    assert.match(err.message, new RegExp(`^${base}/chunked/api/v1/all: the catalog response is over the 1048576-byte limit`));
    return true;
  });
  // Reading stopped near the cap: the server was not drained of its 64 MiB.
  assert.ok(sentBytes < 32 * 1024 * 1024, `the whole body was read (${sentBytes} bytes sent)`);
  const ok = await loadCatalog(`${base}/small`, { maxBytes: 1024 * 1024 });
  assert.deepEqual(ok.catalog.config.packages.map((p) => p.name), ['p']);
});

test('a catalog server that never answers fails at the deadline, naming the host and the deadline', async () => {
  await assert.rejects(loadCatalog(`${base}/hang`, { timeoutMs: 300 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CATALOG_FETCH_FAILED');
    assert.match(err.message, new RegExp(`no answer from 127\\.0\\.0\\.1:\\d+ within 300 ms`));
    return true;
  });
});

test('credentials in the catalog URL are sent as Basic auth and never shown', async () => {
  const withToken = base.replace('http://', 'http://reader:s3cr3t@');
  const ok = await loadCatalog(`${withToken}/small`);
  assert.equal(lastAuth, `Basic ${Buffer.from('reader:s3cr3t').toString('base64')}`);
  assert.deepEqual(ok.catalog.config.packages.map((p) => p.name), ['p']);
  await assert.rejects(loadCatalog(`${withToken}/hang`, { timeoutMs: 200 }), (err: Error) => {
    assert.doesNotMatch(err.message, /s3cr3t|reader/);
    assert.match(err.message, /http:\/\/\*\*\*@127\.0\.0\.1/);
    return true;
  });
});

test('a catalog is asked for gzipped and read decoded; the cap counts the decoded bytes (a small gzip that expands past it is refused)', async () => {
  const { catalog } = await loadCatalog(`${base}/gz/`, { name: 'zipped' });
  assert.equal(gzipAsked, 'gzip');
  assert.deepEqual(catalog.config.packages.map((p) => p.name), ['p']);
  await assert.rejects(loadCatalog(`${base}/gzbomb/`, { name: 'bomb', maxBytes: 1024 * 1024 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CATALOG_TOO_LARGE');
    assert.match(err.message, /over the 1048576-byte limit \(stopped reading at \d+ bytes\)/, 'refused while it was decoded, not by a length');
    return true;
  });
  assert.equal(gzipAsked, 'gzip', 'the bomb came gzipped');
});
