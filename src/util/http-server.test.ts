import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { Server } from 'node:http';
import { pino } from 'pino';
import { closeServer, createSafeServer, listenOn, parseRequestTarget, sendPlain } from './http-server.js';

let server: Server;
let base: string;
let port: number;
const logged: string[] = [];

before(async () => {
  const logger = pino({ level: 'error' }, { write: (s: string) => void logged.push(s) });
  server = createSafeServer(
    async (req, res, url) => {
      if (url.pathname === '/throw') throw new Error('sync boom');
      if (url.pathname === '/reject') {
        await Promise.resolve();
        throw new Error('async boom');
      }
      if (url.pathname === '/half') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('partial');
        throw new Error('after headers');
      }
      sendPlain(res, 200, `ok ${decodeURIComponent(url.pathname)}`, req.method === 'HEAD');
    },
    { name: 'test', logger, headersTimeoutMs: 1000, requestTimeoutMs: 2000 },
  );
  base = await listenOn(server, '127.0.0.1', 0);
  port = Number(new URL(base).port);
});

after(() => closeServer(server));

function raw(bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const sock = connect(port, '127.0.0.1');
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    sock.on('error', () => undefined);
    sock.write(bytes);
  });
}

test('a target that is no URL or has a malformed percent-encoding is a 400', async () => {
  assert.deepEqual(parseRequestTarget('/catalogs/%E0%A4%A/api/v1/all'), { problem: 'malformed percent-encoding in the path' });
  assert.deepEqual(parseRequestTarget('/x?a=%'), { problem: 'malformed percent-encoding in the query' });
  assert.ok('url' in parseRequestTarget('/a%20b?c=d+e'));
  assert.match(await raw('GET /catalogs/%E0%A4%A/api/v1/all HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400 .*\r\n[\s\S]*malformed percent-encoding in the path/);
  assert.match(await raw('GET http://[::1/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400 /);
  const res = await fetch(`${base}/a%20b`);
  assert.equal(await res.text(), 'ok /a b');
});

test('a method the server does not serve is a 405 naming the allowed ones', async () => {
  const res = await fetch(`${base}/x`, { method: 'DELETE' });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get('allow'), 'GET, HEAD');
  assert.equal((await fetch(`${base}/x`, { method: 'HEAD' })).status, 200);
});

test('a handler that throws or rejects answers 500 for that request, is logged, and the server goes on', async () => {
  for (const path of ['/throw', '/reject']) {
    const res = await fetch(`${base}${path}`);
    assert.equal(res.status, 500, path);
    assert.equal(await res.text(), 'internal error\n');
  }
  // Headers already sent: the connection is cut rather than a second status written.
  await assert.rejects(fetch(`${base}/half`).then((r) => r.text()));
  assert.ok(logged.some((l) => l.includes('sync boom')) && logged.some((l) => l.includes('async boom')), logged.join('\n'));
  assert.equal((await fetch(`${base}/fine`)).status, 200);
});

test('headers over the limit get 431 and a half-sent request is cut off by the headers deadline', async () => {
  assert.match(await raw(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`), /^HTTP\/1\.1 431 /);
  // Never finishes its headers: the server answers 408 and closes, the client does not have to.
  assert.match(await raw('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: '), /^HTTP\/1\.1 408 /);
});

test('a connection left silent (plain, or TLS before its handshake) is closed after the idle or handshake deadline, so silent clients cannot fill the server', async () => {
  const { createCertificateAuthority, issueCertificate } = await import('./pki.js');
  const leaf = await issueCertificate(await createCertificateAuthority('idle-test'), { commonName: 'localhost', hosts: ['127.0.0.1'], usage: 'server' });
  const plain = createSafeServer((_req, res) => void res.end('ok'), { name: 'idle', idleTimeoutMs: 300 });
  const tls = createSafeServer((_req, res) => void res.end('ok'), { name: 'idle-tls', idleTimeoutMs: 60_000, handshakeTimeoutMs: 300, tls: leaf });
  try {
    for (const s of [plain, tls]) {
      const p = Number(new URL(await listenOn(s, '127.0.0.1', 0)).port);
      const started = Date.now();
      // Opens, sends nothing, and waits for the server to hang up (the test's own bound: 20 s).
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const sock = connect(p, '127.0.0.1');
        const bound = setTimeout(() => {
          sock.destroy();
          reject(new Error('the server kept a silent connection open for 20 s'));
        }, 20_000);
        sock.on('close', () => {
          clearTimeout(bound);
          resolve(Date.now() - started);
        });
        sock.on('error', () => undefined);
      });
      assert.ok(closedAfter >= 250, `closed by the deadline, not at once (${closedAfter} ms)`);
    }
  } finally {
    await Promise.all([closeServer(plain), closeServer(tls)]);
  }
});

test('a request being answered is not cut by the idle deadline (a handler may think longer); connections past the per-address cap are closed at once', async () => {
  const slow = createSafeServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, 900));
    res.end('thought about it');
  }, { name: 'slow', idleTimeoutMs: 300, maxConnectionsPerAddress: 3 });
  try {
    const base = await listenOn(slow, '127.0.0.1', 0);
    // The cap first, on a server no one else holds a connection to.
    const p = Number(new URL(base).port);
    const sockets = await Promise.all(
      [0, 1, 2, 3].map(
        (i) =>
          new Promise<{ i: number; closedEarly: boolean }>((resolve) => {
            const sock = connect(p, '127.0.0.1');
            const t = setTimeout(() => {
              sock.destroy();
              resolve({ i, closedEarly: false });
            }, 200);
            sock.on('close', () => {
              clearTimeout(t);
              resolve({ i, closedEarly: true });
            });
            sock.on('error', () => undefined);
          }),
      ),
    );
    assert.equal(sockets.filter((s) => s.closedEarly).length, 1, `one of four from one address closed at once: ${JSON.stringify(sockets)}`);
    // The test's three are closed; once the server has seen them go, a new connection is served.
    for (let i = 0; i < 100 && (await new Promise<number>((r) => slow.getConnections((_e, n) => r(n)))) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    const res = await fetch(`${base}/`);
    assert.equal(await res.text(), 'thought about it', 'answered after 900 ms though the idle deadline is 300 ms');
  } finally {
    await closeServer(slow);
  }
});
