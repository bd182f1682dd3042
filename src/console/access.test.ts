/**
 * The console's trust gates against the real HTTP server on a loopback port, with the fake
 * cluster: who may reach it (Host), from where (Origin), as whom (login token, bearer, trusted
 * proxy), how much (rate and stream caps), and which starts are refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { request as tlsRequest } from 'node:https';
import { createCertificateAuthority, issueCertificate } from '../util/pki.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ALL_CRDS } from '../api/crds.js';
import { API_VERSION } from '../api/types.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import { serveConsole, type ConsoleAccessFlags } from '../cli/commands/console.js';
import type { CliContext } from '../cli/context.js';
import { checkStart, HostAllowList, isLoopbackName, parseHostPort } from './access.js';
import { consoleCluster, type ConsoleCluster } from './fake-cluster.test-helper.js';
import { startConsole, type ConsoleOptions, type RunningConsole } from './server.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-access-'));
  await writeFile(join(dir, 'app.js'), 'export {};\n');
  await writeFile(join(dir, 'app.css'), 'body{}\n');
});
after(() => rm(dir, { recursive: true, force: true }));

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request (fetch cannot set Host), read whole; over https when given the CA to trust. */
function raw(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string, ca?: string): Promise<Answer> {
  const u = new URL(url);
  const opts = { host: u.hostname, port: u.port, method, path, headers: { ...headers, ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }) } };
  return new Promise((resolve, reject) => {
    const read = (res: IncomingMessage): void => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    };
    const r = ca === undefined ? request(opts, read) : tlsRequest({ ...opts, ca }, read);
    r.on('error', reject);
    r.end(body);
  });
}

async function started(c: ConsoleCluster, opts: Partial<ConsoleOptions> = {}): Promise<RunningConsole> {
  return startConsole({ host: '127.0.0.1', port: 0, base: c.client, forToken: () => Promise.reject(new Error('no tokens here')), logger: pino({ level: 'silent' }), cacheDir: dir, assetsDir: dir, ...opts });
}

/** Logs a browser in with the console's login URL; answers its cookie. */
async function logIn(web: RunningConsole): Promise<string> {
  const res = await fetch(web.loginUrl() ?? 'no login URL', { redirect: 'manual' });
  await res.arrayBuffer();
  assert.equal(res.status, 303);
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

const writes = (c: ConsoleCluster): string[] => c.calls().filter((x) => /^(create|update|patch|apply|status|delete)/.test(x));
const INSTALL = '{"package":"p2","serviceAccount":"sa"}';

describe('console Host allow-list', () => {
  it('names loopback hosts, with or without a port, and nothing that only looks like one', () => {
    for (const h of ['localhost', 'LOCALHOST', '127.0.0.1', '127.3.2.1', '[::1]', '::1']) assert.ok(isLoopbackName(h), h);
    for (const h of ['localhost.evil.example', '127.0.0.1.nip.io', '0.0.0.0', '128.0.0.1', 'evil.example', '[::ffff:7f00:1]x']) assert.equal(isLoopbackName(h), false, h);
    assert.deepEqual(parseHostPort('LocalHost:8443'), { hostname: 'localhost', port: 8443 });
    assert.deepEqual(parseHostPort('[::1]:1'), { hostname: '[::1]', port: 1 });
    for (const bad of ['a b', 'x:99999', 'x:', 'user@host', '[zz]:1', 'a/b']) assert.equal(parseHostPort(bad), undefined, bad);
    const list = new HostAllowList('0.0.0.0', [{ hostname: 'console.example.com' }, { hostname: 'c2.example.com', port: 9443 }], 'https');
    for (const ok of ['localhost:1', '127.0.0.1', '[::1]:8443', 'console.example.com', 'console.example.com:8443', 'c2.example.com:9443']) assert.equal(list.problem(ok), undefined, ok);
    for (const bad of [undefined, '', 'evil.example', 'c2.example.com', 'c2.example.com:443', 'console.example.com.evil.example']) assert.ok(list.problem(bad) !== undefined, String(bad));
  });

  it('a foreign Host (DNS rebinding) gets 421 before any page, CSRF token or login, and nothing reaches the cluster', async () => {
    const c = await consoleCluster();
    const web = await started(c, { access: { lend: 'unsafe' } });
    try {
      const port = new URL(web.url).port;
      for (const host of [`attacker.example:${port}`, 'attacker.example', `127.0.0.1.attacker.example:${port}`]) {
        for (const path of ['/', '/index.html', '/api/extensions', `/?token=${web.csrfToken}`]) {
          const res = await raw(web.url, 'GET', path, { Host: host });
          assert.equal(res.status, 421, `${host} ${path}`);
          assert.ok(!res.body.includes(web.csrfToken), 'no CSRF token');
          assert.match(res.body, /misdirected request: Host .* is not this console's address/);
        }
        const post = await raw(web.url, 'POST', '/api/extensions', { Host: host, Origin: `http://${host}`, 'X-Binnacle-CSRF': web.csrfToken, 'Content-Type': 'application/json' }, INSTALL);
        assert.equal(post.status, 421);
      }
      assert.deepEqual(c.calls(), [], 'the cluster was never asked');
      for (const host of [`localhost:${port}`, 'localhost', `127.0.0.1:${port}`]) assert.equal((await raw(web.url, 'GET', '/', { Host: host })).status, 200, host);
    } finally {
      await web.stop();
    }
  });

  it('a configured --public-address is served', async () => {
    const c = await consoleCluster();
    const web = await started(c, { access: { lend: 'unsafe', publicAddresses: [{ hostname: 'console.example.com' }] } });
    try {
      assert.equal((await raw(web.url, 'GET', '/', { Host: 'console.example.com' })).status, 200);
      assert.equal((await raw(web.url, 'GET', '/', { Host: 'other.example.com' })).status, 421);
    } finally {
      await web.stop();
    }
  });
});

describe('console Origin check', () => {
  it('refuses a write from a foreign Origin or Origin null even with the session, CSRF token and a loopback Host; its own origin passes', async () => {
    const c = await consoleCluster();
    const web = await started(c);
    try {
      const cookie = await logIn(web);
      const host = new URL(web.url).host;
      const base = { Host: host, Cookie: cookie, 'X-Binnacle-CSRF': web.csrfToken, 'Content-Type': 'application/json' };
      for (const origin of ['https://evil.example', `http://evil.example:${new URL(web.url).port}`, 'null', `https://${host}`, 'http://localhost:1', 'not a url']) {
        const res = await raw(web.url, 'POST', '/api/extensions', { ...base, Origin: origin }, INSTALL);
        assert.equal(res.status, 403, origin);
        assert.match(res.body, /CSRF check failed: Origin/);
        const del = await raw(web.url, 'DELETE', '/api/extensions/ext', { ...base, Origin: origin });
        assert.equal(del.status, 403, origin);
      }
      assert.deepEqual(writes(c), [], 'nothing written');
      const ok = await raw(web.url, 'POST', '/api/extensions', { ...base, Origin: `http://${host}` }, INSTALL);
      assert.equal(ok.status, 201, ok.body);
      assert.deepEqual(writes(c), ['create ClusterExtension p2']);
    } finally {
      await web.stop();
    }
  });
});

describe('console over TLS', () => {
  it('serves https; the session cookie is Secure; a write must come from the https origin', async () => {
    const ca = await createCertificateAuthority('test ca');
    const tls = await issueCertificate(ca, { commonName: 'console', hosts: ['127.0.0.1'], usage: 'server' });
    const c = await consoleCluster();
    const web = await started(c, { tls });
    const go = (path: string, method = 'GET', headers: Record<string, string> = {}, body?: string): Promise<Answer> => raw(web.url, method, path, headers, body, ca.certPem);
    try {
      assert.match(web.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const login = await go(new URL(web.loginUrl() ?? '').pathname + new URL(web.loginUrl() ?? '').search);
      assert.equal(login.status, 303);
      const setCookie = String(login.headers['set-cookie'] ?? '');
      assert.match(setCookie, /; Secure/);
      const h = { Cookie: setCookie.split(';')[0] ?? '', 'X-Binnacle-CSRF': web.csrfToken, 'Content-Type': 'application/json' };
      const host = new URL(web.url).host;
      assert.equal((await go('/api/extensions', 'POST', { ...h, Origin: `http://${host}` }, INSTALL)).status, 403, 'the http origin is another origin');
      assert.deepEqual(writes(c), []);
      assert.equal((await go('/api/extensions', 'POST', { ...h, Origin: `https://${host}` }, INSTALL)).status, 201);
    } finally {
      await web.stop();
    }
  });
});

describe('console login token', () => {
  it('no cookie: 401 saying to use the printed URL; the token sets an HttpOnly SameSite=Strict cookie and redirects without it; the cookie works; the token is spent', async () => {
    const c = await consoleCluster();
    const printed: string[] = [];
    const web = await started(c, { onLoginUrl: (u) => printed.push(u) });
    try {
      assert.equal(printed.length, 1, 'a login URL at start');
      assert.match(printed[0] ?? '', /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{40,}$/);
      const page = await fetch(`${web.url}/`);
      assert.equal(page.status, 401);
      const html = await page.text();
      assert.match(html, /login URL that <code>binnacle console<\/code> printed/);
      assert.ok(!html.includes(web.csrfToken), 'no CSRF token without a session');
      const api = await fetch(`${web.url}/api/extensions`);
      assert.equal(api.status, 401);
      assert.match(((await api.json()) as { error: string }).error, /not logged in/);
      const first = printed[0] ?? '';
      const token = new URL(first).searchParams.get('token') ?? '';
      const login = await fetch(`${web.url}/?token=${token}&x=1`, { redirect: 'manual' });
      assert.equal(login.status, 303);
      assert.equal(login.headers.get('location'), '/?x=1', 'the token is dropped from the URL');
      const setCookie = login.headers.get('set-cookie') ?? '';
      assert.match(setCookie, /; HttpOnly/);
      assert.match(setCookie, /; SameSite=Strict/);
      assert.match(setCookie, /; Path=\//);
      assert.ok(!setCookie.includes(token), 'the session is not the token');
      const cookie = setCookie.split(';')[0] ?? '';
      const withCookie = await fetch(`${web.url}/`, { headers: { Cookie: cookie } });
      assert.equal(withCookie.status, 200);
      assert.ok((await withCookie.text()).includes(web.csrfToken));
      const list = await fetch(`${web.url}/api/extensions`, { headers: { Cookie: cookie } });
      assert.equal(list.status, 200);
      await list.arrayBuffer();
      // Spent: another browser with the same URL is refused, and a forged cookie is nothing.
      const again = await fetch(first, { redirect: 'manual' });
      assert.equal(again.status, 401);
      assert.match(await again.text(), /used already or is wrong/);
      assert.equal((await fetch(`${web.url}/api/extensions`, { headers: { Cookie: `${cookie.split('=')[0] ?? ''}=forged` } })).status, 401);
      assert.equal((await fetch(`${web.url}/?token=wrong`, { redirect: 'manual' })).status, 401);
      // The next browser gets the next URL, printed when the first was used.
      assert.equal(printed.length, 2);
      assert.notEqual(printed[1], first);
      assert.equal(printed[1], web.loginUrl());
      assert.equal((await fetch(printed[1] ?? '', { redirect: 'manual' })).status, 303);
      assert.deepEqual(writes(c), []);
    } finally {
      await web.stop();
    }
  });

  it('a bearer token needs no session: it is the person, not the console', async () => {
    const c = await consoleCluster();
    const asked: string[] = [];
    const person = await consoleCluster();
    const web = await started(c, { forToken: (t) => (asked.push(t), Promise.resolve(person.client)) });
    try {
      const res = await fetch(`${web.url}/api/extensions`, { headers: { Authorization: 'Bearer mine' } });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.deepEqual(asked, ['mine']);
      assert.deepEqual(c.calls(), [], "the console's identity was not used");
    } finally {
      await web.stop();
    }
  });
});

describe('console per-person credentials', () => {
  it('--require-person-token: no token is 401, whatever the cookie; a token is its own identity', async () => {
    const c = await consoleCluster();
    const person = await consoleCluster();
    const web = await started(c, { access: { lend: 'never' }, forToken: () => Promise.resolve(person.client) });
    try {
      assert.equal(web.loginUrl(), undefined, 'no login URL: nothing is lent');
      const none = await fetch(`${web.url}/api/extensions`);
      assert.equal(none.status, 401);
      assert.match(((await none.json()) as { error: string }).error, /send your own Kubernetes token/);
      const page = await fetch(`${web.url}/`);
      assert.match(await page.text(), /binnacle-lends-identity" content="no"/);
      const post = await fetch(`${web.url}/api/extensions`, { method: 'POST', headers: { 'X-Binnacle-CSRF': web.csrfToken, 'Content-Type': 'application/json' }, body: INSTALL });
      assert.equal(post.status, 401);
      await post.arrayBuffer();
      assert.deepEqual(c.calls(), []);
      const mine = await fetch(`${web.url}/api/extensions`, { method: 'POST', headers: { Authorization: 'Bearer t', 'X-Binnacle-CSRF': web.csrfToken, 'Content-Type': 'application/json' }, body: INSTALL });
      assert.equal(mine.status, 201);
      await mine.arrayBuffer();
      assert.deepEqual(writes(person), ['create ClusterExtension p2']);
      assert.deepEqual(c.calls(), []);
    } finally {
      await web.stop();
    }
  });

  it('a trusted proxy names the user, who is impersonated; the same header from another peer is 401', async () => {
    const c = await consoleCluster();
    // Who each request reached the API server as, and with which groups.
    const asked = (since: number): string[] => [...new Set(c.cluster.log.slice(since).map((r) => `${r.identity} ${r.groups?.join(',') ?? '-'}`))];
    const from = c.cluster.log.length;
    const trusted = await started(c, { access: { lend: 'never', trustedProxy: { header: 'X-Forwarded-User', groupHeader: 'X-Forwarded-Groups', cidrs: ['127.0.0.0/8'] } } });
    const untrusted = await started(c, { access: { lend: 'never', trustedProxy: { header: 'X-Forwarded-User', cidrs: ['10.0.0.0/8'] } } });
    try {
      const ok = await fetch(`${trusted.url}/api/extensions`, { headers: { 'X-Forwarded-User': 'alice', 'X-Forwarded-Groups': 'dev, ops' } });
      assert.equal(ok.status, 200);
      await ok.arrayBuffer();
      assert.deepEqual(asked(from), ['alice dev,ops'], 'impersonated, with the groups the proxy names');
      const before = c.cluster.log.length;
      const spoofed = await fetch(`${untrusted.url}/api/extensions`, { headers: { 'X-Forwarded-User': 'admin' } });
      assert.equal(spoofed.status, 401);
      assert.match(((await spoofed.json()) as { error: string }).error, /not a trusted proxy/);
      assert.equal(c.cluster.log.length, before, 'nothing asked of the cluster');
    } finally {
      await trusted.stop();
      await untrusted.stop();
    }
  });
});

describe('console start checks', () => {
  const ctx: CliContext = { logger: pino({ level: 'silent' }), out: () => undefined, err: () => undefined };
  const serve = (a: ConsoleAccessFlags, listen: string, manager = false): Promise<unknown> => serveConsole({ kubeconfig: join(dir, 'no-kubeconfig') }, a, listen, ctx, { manager });

  it('off loopback: refused without TLS, then without a credential mode, naming the flag (before any kubeconfig is read)', async () => {
    await assert.rejects(serve({}, '0.0.0.0:0'), { message: '--listen 0.0.0.0 is not loopback: serving the console off loopback needs TLS (--tls-cert and --tls-key, or --tls-self-signed)' });
    await assert.rejects(serve({ requirePersonToken: true }, '10.1.2.3:0'), /needs TLS \(--tls-cert and --tls-key, or --tls-self-signed\)/);
    await assert.rejects(serve({ tlsSelfSigned: true }, '0.0.0.0:0'), { message: '--listen 0.0.0.0 is not loopback: say how each person proves who they are (--require-person-token, or --trusted-proxy-header with --trusted-proxy-cidr)' });
    await assert.rejects(serve({ tlsSelfSigned: true, trustedProxyHeader: 'X-Forwarded-User' }, '0.0.0.0:0'), /--trusted-proxy-header needs --trusted-proxy-cidr/);
    await assert.rejects(serve({ unsafeLendIdentity: true, tlsSelfSigned: true }, '0.0.0.0:0'), /--unsafe-lend-identity is for loopback only/);
    await assert.rejects(serve({ tlsCert: 'x' }, '0.0.0.0:0'), /--tls-cert and --tls-key go together/);
    await assert.rejects(serve({ trustedProxyHeader: 'X', trustedProxyCidr: ['10.0.0.0/33'] }, '127.0.0.1:0'), /--trusted-proxy-cidr "10.0.0.0\/33": expected a CIDR/);
  });

  it("the manager's console: the flags say --console-, and off loopback it still needs TLS", async () => {
    await assert.rejects(serve({}, '0.0.0.0:0', true), { message: '--console-listen 0.0.0.0 is not loopback: serving the console off loopback needs TLS (--console-tls-cert and --console-tls-key, or --console-tls-self-signed)' });
    await assert.rejects(serve({ unsafeLendIdentity: true }, '127.0.0.1:0', true), /never lends its identity/);
  });

  it('never lends off loopback or from the manager', () => {
    const flags = { tls: 'T', lend: 'L', bearer: 'B', proxy: 'P', proxyCidr: 'C' };
    const base = { host: '127.0.0.1', listenFlag: '--listen', flags, tls: false, lend: 'login-token' as const, requirePersonToken: false, manager: false };
    assert.doesNotThrow(() => checkStart(base));
    assert.throws(() => checkStart({ ...base, manager: true }), /never lends/);
    assert.doesNotThrow(() => checkStart({ ...base, manager: true, lend: 'never', requirePersonToken: true, host: '0.0.0.0', tls: true }));
    assert.throws(() => checkStart({ ...base, host: '0.0.0.0', tls: true }), /say how each person proves who they are \(B, or P with C\)/);
  });
});

/** The one fake cluster serving ClusterExtensions: `push` adds one, which every open watch sees; its open watches and the events they hold unread are counted. */
function pushClient(): { client: FakeClient; push: (name: string) => void; active: () => number; pending: () => number } {
  const cluster = new FakeCluster({ objects: ALL_CRDS });
  const push = (name: string): void => void cluster.put({ apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name } });
  return { client: cluster.client(), push, active: () => cluster.watching, pending: () => cluster.pendingWatchEvents };
}

/** Reads a response's body until `text` shows up. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, text: string): Promise<string> {
  let got = '';
  while (!got.includes(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    got += Buffer.from(chunk.value).toString('utf8');
  }
  return got;
}

describe('console limits', () => {
  it('a person over the stream cap gets 429 while their open streams keep streaming; the total cap holds for everyone', async () => {
    const f = pushClient();
    const c = await consoleCluster();
    const web = await started(c, { base: f.client, access: { lend: 'never' }, forToken: () => Promise.resolve(f.client), limits: { streamsPerPerson: 2, streamsTotal: 3 } });
    const stop = new AbortController();
    try {
      const open = async (who: string): Promise<Response> => fetch(`${web.url}/api/watch?kinds=ClusterExtension`, { headers: { Authorization: `Bearer ${who}` }, signal: stop.signal });
      const mine = [await open('a'), await open('a')];
      const readers = mine.map((r) => {
        assert.ok(r.body !== null);
        return r.body.getReader();
      });
      for (const r of readers) await readUntil(r, '"SYNCED"');
      const third = await open('a');
      assert.equal(third.status, 429);
      assert.match(((await third.json()) as { error: string }).error, /at most 2 per person/);
      const other = await open('b');
      assert.equal(other.status, 200, 'another person still gets one');
      const full = await open('c');
      assert.equal(full.status, 429);
      assert.match(((await full.json()) as { error: string }).error, /its most/);
      f.push('after-429');
      for (const r of readers) assert.match(await readUntil(r, 'after-429'), /"name":"after-429"/, 'the open streams still stream');
    } finally {
      stop.abort();
      await web.stop();
    }
  });

  it('a browser that stops reading: the relay stops reading its watch (backpressure), and the stream is cut when it does not drain', async () => {
    const f = pushClient();
    const c = await consoleCluster();
    const web = await started(c, { access: { lend: 'never' }, forToken: () => Promise.resolve(f.client), live: { drainMs: 300 } });
    try {
      const u = new URL(web.url);
      const r = request({ host: u.hostname, port: u.port, path: '/api/watch?kinds=ClusterExtension', headers: { Authorization: 'Bearer a' } }, (res) => {
        res.pause(); // the browser reads nothing
        res.on('error', () => undefined);
      });
      r.on('error', () => undefined);
      r.end();
      for (let i = 0; i < 200 && f.active() === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(f.active(), 1, 'the watch runs');
      const big = 'x'.repeat(200);
      let pushed = 0;
      // Without backpressure every event would be taken from the watch at once and buffered for the socket.
      while (f.pending() < 1000 && f.active() > 0 && pushed < 400_000) {
        for (let k = 0; k < 1000; k++) f.push(`${big}-${pushed++}`);
        await new Promise((r) => setImmediate(r));
      }
      assert.ok(f.pending() >= 1000 || f.active() === 0, `events left unread upstream (pushed ${pushed}, pending ${f.pending()})`);
      for (let i = 0; i < 500 && f.active() > 0; i++) await new Promise((res) => setTimeout(res, 10));
      assert.equal(f.active(), 0, 'the stream was cut and its watch stopped');
      r.destroy();
    } finally {
      await web.stop();
    }
  });

  it('past the request rate a person gets 429 with Retry-After; another person is not slowed', async () => {
    const c = await consoleCluster();
    const web = await started(c, { access: { lend: 'never' }, forToken: () => Promise.resolve(c.client), limits: { ratePerSecond: 0.01, burst: 3 } });
    try {
      const get = (who: string): Promise<Response> => fetch(`${web.url}/api/extensions`, { headers: { Authorization: `Bearer ${who}` } });
      for (let i = 0; i < 3; i++) {
        const r = await get('a');
        assert.equal(r.status, 200);
        await r.arrayBuffer();
      }
      const over = await get('a');
      assert.equal(over.status, 429);
      assert.ok(Number(over.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
      await over.arrayBuffer();
      const b = await get('b');
      assert.equal(b.status, 200);
      await b.arrayBuffer();
    } finally {
      await web.stop();
    }
  });
});
