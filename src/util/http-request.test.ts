import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { isTimeout } from './deadline.js';
import { declaredLength, httpRequest, MAX_REDIRECTS, readBodyLimited, type BodyReadOptions, type HttpAnswer } from './http-request.js';

interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** A loopback server that records each request (its body read whole) and answers as `answer` says. */
async function serve(answer: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void): Promise<{ origin: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, contentType: req.headers['content-type'], body };
      seen.push(s);
      answer(req, res, s);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A deadline far enough away for a loopback exchange (every request carries one). */
const soon = (): AbortSignal => AbortSignal.timeout(20_000);

async function text(res: { body: AsyncIterable<unknown> }): Promise<string> {
  let out = '';
  for await (const c of res.body) out += (c as Buffer).toString();
  return out;
}

test('a redirect to another origin drops the Authorization header; one on the same origin keeps it', async (t) => {
  const store = await serve((_req, res) => res.end('blob'));
  t.after(store.close);
  const registry = await serve((req, res) => {
    if (req.url === '/v2/a/blobs/1') res.writeHead(307, { location: '/v2/a/blobs/moved' }).end();
    else if (req.url === '/v2/a/blobs/moved') res.writeHead(302, { location: `${store.origin}/signed?x=1` }).end();
    else res.writeHead(404).end();
  });
  t.after(registry.close);
  const res = await httpRequest(`${registry.origin}/v2/a/blobs/1`, { signal: soon(), headers: { Authorization: 'Bearer secret' } });
  assert.equal(res.status, 200);
  assert.equal(await text(res), 'blob');
  assert.equal(res.url.href, `${store.origin}/signed?x=1`);
  assert.deepEqual(
    registry.seen.map((s) => [s.path, s.authorization]),
    [
      ['/v2/a/blobs/1', 'Bearer secret'],
      ['/v2/a/blobs/moved', 'Bearer secret'],
    ],
  );
  assert.deepEqual(store.seen.map((s) => [s.path, s.authorization]), [['/signed?x=1', undefined]], 'the blob store got no credentials');
});

test('a 307 sends the request again with a fresh body; a 303 turns a POST into a GET without its body', async (t) => {
  const server = await serve((req, res) => {
    if (req.url === '/upload') res.writeHead(307, { location: '/upload/2' }).end();
    else if (req.url === '/form') res.writeHead(303, { location: '/done' }).end();
    else res.end('ok');
  });
  t.after(server.close);
  let opened = 0;
  const put = await httpRequest(`${server.origin}/upload`, {
    signal: soon(),
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: () => {
      opened++;
      return Readable.from([Buffer.from('part one, '), Buffer.from('part two')]);
    },
  });
  put.discard();
  assert.equal(put.status, 200);
  assert.equal(opened, 2);
  assert.deepEqual(
    server.seen.map((s) => [s.method, s.path, s.body, s.contentType]),
    [
      ['PUT', '/upload', 'part one, part two', 'application/octet-stream'],
      ['PUT', '/upload/2', 'part one, part two', 'application/octet-stream'],
    ],
  );
  const form = Buffer.from('a=1');
  const post = await httpRequest(`${server.origin}/form`, { signal: soon(), method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: () => form });
  post.discard();
  assert.deepEqual(
    server.seen.slice(2).map((s) => [s.method, s.path, s.body, s.contentType]),
    [
      ['POST', '/form', 'a=1', 'application/x-www-form-urlencoded'],
      ['GET', '/done', '', undefined],
    ],
  );
});

test('redirects stop after 20, and at a URL that is not http(s); a URL with credentials is refused', async (t) => {
  const server = await serve((req, res) => {
    if (req.url === '/elsewhere') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    else if (req.url === '/userinfo') res.writeHead(302, { location: 'http://user:pass@127.0.0.1:1/' }).end();
    else res.writeHead(302, { location: `/loop/${server.seen.length}` }).end();
  });
  t.after(server.close);
  await assert.rejects(httpRequest(`${server.origin}/loop`, { signal: soon() }), { code: 'ERR_TOO_MANY_REDIRECTS' });
  assert.equal(server.seen.length, MAX_REDIRECTS + 1);
  await assert.rejects(httpRequest(`${server.origin}/elsewhere`, { signal: soon() }), { code: 'ERR_REDIRECT_SCHEME' });
  await assert.rejects(httpRequest(`${server.origin}/userinfo`, { signal: soon() }), /a URL with credentials in it is not requested/);
  await assert.rejects(httpRequest(`http://user:pass@${server.origin.slice('http://'.length)}/`, { signal: soon() }), /a URL with credentials in it is not requested/);
});

test('a deadline covers the answer and its body: either fails with the deadline\'s TimeoutError', { timeout: 20_000 }, async (t) => {
  const server = await serve((req, res) => {
    if (req.url === '/silent') return; // never answers
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first part, then nothing'); // the body never ends
  });
  t.after(server.close);
  await assert.rejects(httpRequest(`${server.origin}/silent`, { signal: AbortSignal.timeout(200) }), (err) => isTimeout(err));
  const res = await httpRequest(`${server.origin}/stalls`, { signal: AbortSignal.timeout(300) });
  assert.equal(res.status, 200);
  await assert.rejects(text(res), (err) => isTimeout(err));
});

test('a header sent several times reads as one, joined with ", " as fetch reads it; an absent one is null', async (t) => {
  const server = await serve((_req, res) => {
    res.setHeader('link', ['<a>; rel="next"', '<b>; rel="prev"']);
    res.end();
  });
  t.after(server.close);
  const res = await httpRequest(`${server.origin}/`, { signal: soon(), method: 'head' });
  res.discard();
  assert.equal(res.headers.get('Link'), '<a>; rel="next", <b>; rel="prev"');
  assert.equal(res.headers.get('docker-content-digest'), null);
  assert.equal(server.seen[0]?.method, 'HEAD');
});

test('a HEAD answer is ended without being read (its connection free, the process free to exit); fetch\'s default headers go unless given', async (t) => {
  const agents: (string | undefined)[] = [];
  const server = await serve((req, res) => {
    agents.push(`${req.headers['user-agent'] ?? ''} ${req.headers.accept ?? ''}`);
    res.writeHead(200, { 'content-length': '5' }).end(req.method === 'HEAD' ? undefined : 'hello');
  });
  t.after(server.close);
  const head = await httpRequest(`${server.origin}/v2/x/blobs/1`, { signal: soon(), method: 'HEAD' });
  assert.equal(head.headers.get('content-length'), '5');
  // Flowing, so 'end' comes without a reader; without it the socket stayed out of the pool until a deadline destroyed it.
  assert.notEqual(head.body.readableFlowing, null);
  await new Promise((resolve) => head.body.once('end', resolve));
  const get = await httpRequest(`${server.origin}/`, { signal: soon(), headers: { 'User-Agent': 'custom/1', Accept: 'application/json' } });
  assert.equal(get.body.readableFlowing, null, 'a GET\'s body is left to the caller');
  assert.equal(await text(get), 'hello');
  assert.deepEqual(agents, ['binnacle */*', 'custom/1 application/json']);
});

test('a request that meets a kept-alive connection the server closed is sent once more on a new one (GET), not a POST', async (t) => {
  // Each connection answers its first request and hangs up on the next, as a server whose idle timeout ran out as the client reused it.
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    connections++;
    sockets.add(socket);
    let requests = 0;
    socket.on('data', (chunk: Buffer) => {
      if (!chunk.includes('\r\n\r\n')) return;
      if (++requests === 1) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nok');
      else socket.destroy();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  assert.equal(await text(await httpRequest(`${origin}/a`, { signal: soon() })), 'ok');
  // The pool hands the same connection back; the server hangs up on it; a new one answers.
  assert.equal(await text(await httpRequest(`${origin}/b`, { signal: soon() })), 'ok');
  assert.equal(connections, 2);
  const body = Buffer.from('x=1');
  await assert.rejects(httpRequest(`${origin}/c`, { signal: soon(), method: 'POST', body: () => body }), { code: 'ECONNRESET' });
  assert.equal(connections, 2, 'a POST is not sent twice');
});

test('asked for gzip, a gzipped 2xx body is read decoded, without its encoded length; unasked, a body the server gzips anyway is left as sent; an error answer is not decoded', async (t) => {
  const doc = 'schema: olm.package\n'.repeat(2000);
  const encodings: (string | undefined)[] = [];
  const server = await serve((req, res) => {
    encodings.push(req.headers['accept-encoding']);
    const zipped = gzipSync(doc);
    const status = req.url === '/missing' ? 404 : 200;
    // Gzips whatever is asked: as a misconfigured server may, Accept-Encoding or not.
    res.writeHead(status, { 'content-encoding': 'gzip', 'content-length': String(zipped.length) }).end(zipped);
  });
  t.after(server.close);
  const asked = await httpRequest(`${server.origin}/index.yaml`, { signal: soon(), gzip: true });
  assert.equal(asked.headers.get('content-length'), null, 'the encoded length is not the body\'s');
  assert.equal(asked.headers.get('content-encoding'), null);
  assert.equal(await text(asked), doc);
  const unasked = await httpRequest(`${server.origin}/chart.tgz`, { signal: soon() });
  const raw: Buffer[] = [];
  for await (const c of unasked.body) raw.push(c as Buffer);
  assert.deepEqual(gunzipSync(Buffer.concat(raw)).toString(), doc, 'left gzipped, as sent');
  assert.equal(unasked.headers.get('content-encoding'), 'gzip');
  const missing = await httpRequest(`${server.origin}/missing`, { signal: soon(), gzip: true });
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('content-encoding'), 'gzip', 'an error answer is handed over as sent');
  missing.discard();
  assert.deepEqual(encodings, ['gzip', undefined, 'gzip']);
});

test('a gzipped body that is not gzip fails its reader with zlib\'s error, and a deadline during it with the deadline\'s', { timeout: 20_000 }, async (t) => {
  const server = await serve((req, res) => {
    if (req.url === '/slow') {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.write(gzipSync('x'.repeat(100)).subarray(0, 10)); // then nothing
      return;
    }
    res.writeHead(200, { 'content-encoding': 'gzip' }).end('not gzip at all');
  });
  t.after(server.close);
  const bad = await httpRequest(`${server.origin}/bad`, { signal: soon(), gzip: true });
  await assert.rejects(text(bad), (err: Error & { code?: string }) => err.code === 'Z_DATA_ERROR');
  const slow = await httpRequest(`${server.origin}/slow`, { signal: AbortSignal.timeout(300), gzip: true });
  await assert.rejects(text(slow), (err: unknown) => isTimeout(err));
});

test('readBodyLimited: a body within the limit whole; over it by its Content-Length (unread) or while chunked (dropped, not read to its end); one that stalls fails with the deadline said by host (or by the URL its caller names)', { timeout: 20_000 }, async (t) => {
  const server = await serve((req, res) => {
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': '4096' });
      res.end(Buffer.alloc(4096, 1));
    } else if (req.url === '/chunked') {
      res.writeHead(200); // no length: chunked, counted as it comes; never ended, so only the limit ends the read
      res.write(Buffer.alloc(3000, 2));
      res.write(Buffer.alloc(3000, 3));
    } else if (req.url === '/stalls') {
      res.writeHead(200);
      res.write('{"partial":');
    } else res.end('0123456789');
  });
  t.after(() => server.close());
  const said: string[] = [];
  const errors: BodyReadOptions = {
    tooLarge: (declared) => new Error(`too large: ${declared ?? 'counted'}`),
    failed: (reason, cause) => {
      said.push(reason);
      return new Error(`failed: ${reason}`, { cause });
    },
  };
  const whole = await readBodyLimited(await httpRequest(`${server.origin}/ok`, { signal: soon() }), 10, 20_000, errors);
  assert.equal(whole.toString(), '0123456789');
  const declared = await httpRequest(`${server.origin}/declared`, { signal: soon() });
  await assert.rejects(readBodyLimited(declared, 4095, 20_000, errors), { message: 'too large: 4096' });
  assert.equal(declared.body.destroyed, true);
  const chunked = await httpRequest(`${server.origin}/chunked`, { signal: soon() });
  await assert.rejects(readBodyLimited(chunked, 5000, 20_000, errors), { message: 'too large: counted' });
  assert.equal(chunked.body.destroyed, true);
  const stalls = await httpRequest(`${server.origin}/stalls`, { signal: AbortSignal.timeout(1000) });
  await assert.rejects(readBodyLimited(stalls, 1 << 20, 1000, errors), (err: Error) => err.message === `failed: no answer from ${new URL(server.origin).host} within 1 s` && isTimeout(err.cause));
  assert.equal(said.length, 1);
  // Redirected: the deadline names where the answer came from, unless the caller names its own URL.
  const front = await serve((req, res) => {
    res.writeHead(302, { location: `${server.origin}/stalls` });
    res.end();
  });
  t.after(() => front.close());
  const host = (origin: string): string => new URL(origin).host;
  const moved = await httpRequest(`${front.origin}/moved`, { signal: AbortSignal.timeout(1000) });
  await assert.rejects(readBodyLimited(moved, 1 << 20, 1000, errors), { message: `failed: no answer from ${host(server.origin)} within 1 s` });
  const named = await httpRequest(`${front.origin}/moved`, { signal: AbortSignal.timeout(1000) });
  await assert.rejects(readBodyLimited(named, 1 << 20, 1000, { ...errors, url: `${front.origin}/moved` }), { message: `failed: no answer from ${host(front.origin)} within 1 s` });
});

test('declaredLength: the Content-Length as a number; none when absent or not a number', () => {
  const answer = (length: string | null): HttpAnswer => ({
    status: 200,
    statusText: 'OK',
    url: new URL('http://127.0.0.1/'),
    headers: { get: (name) => (name === 'content-length' ? length : null) },
    body: Readable.from([]),
    discard: () => undefined,
  });
  assert.equal(declaredLength(answer('4096')), 4096);
  assert.equal(declaredLength(answer('0')), 0);
  assert.equal(declaredLength(answer(null)), undefined);
  assert.equal(declaredLength(answer('lots')), undefined);
  assert.equal(declaredLength(answer('Infinity')), undefined);
});
