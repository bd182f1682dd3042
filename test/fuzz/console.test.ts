/**
 * Fuzzing the console's HTTP surface: random methods, paths, Host, Origin, Cookie, Authorization
 * and CSRF headers and bodies against the real server (login-token mode, on loopback) with the
 * fake cluster. Each answer must be an answer (never a 500 from an uncaught error; the server
 * still answers afterwards), and the console's own identity must never write to the cluster
 * unless the request carried a live session cookie, the CSRF token, a loopback Host and no
 * foreign Origin. A bearer token's requests go to a cluster of their own (the person's). The
 * console's refusals are answers, a 4xx with a JSON `{error}` that names the field or the reason:
 * those count as the specific errors.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { consoleCluster, type ConsoleCluster } from '../../src/console/fake-cluster.test-helper.js';
import { startConsole, type RunningConsole } from '../../src/console/server.js';
import { fc, fuzz, nastyString, nastyValue } from './harness.js';

/** What the console's own identity wrote (SelfSubjectAccessReviews ask; they change nothing, and are not in its calls). */
const baseWrites = (): string[] => cluster.calls().filter((c) => /^(create|update|patch|apply|status|delete) /.test(c));

let dir: string;
let web: RunningConsole;
let cluster: ConsoleCluster;
let person: ConsoleCluster;
let cookie = '';
let port = '';

async function logIn(): Promise<void> {
  const res = await fetch(web.loginUrl() ?? '', { redirect: 'manual' });
  await res.arrayBuffer();
  cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  assert.match(cookie, /^binnacle-console-[0-9a-f]+=.+/);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-fuzz-'));
  await writeFile(join(dir, 'app.js'), 'export {};\n');
  await writeFile(join(dir, 'app.css'), 'body{}\n');
  cluster = await consoleCluster();
  person = await consoleCluster();
  web = await startConsole({
    host: '127.0.0.1',
    port: 0,
    base: cluster.client,
    forToken: () => Promise.resolve(person.client),
    logger: pino({ level: 'silent' }),
    cacheDir: dir,
    assetsDir: dir,
    // The gates, not the rate limit, are fuzzed here (access.test.ts checks the limits).
    limits: { ratePerSecond: 1e6, burst: 1e6 },
    catalogLoader: () => Promise.reject(new Error('no catalogs in the fuzz')),
  });
  port = new URL(web.url).port;
  await logIn();
});

after(async () => {
  await web.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Percent-encoded, or left raw (a malformed encoding is an input too) when it cannot be (a lone surrogate). */
function encoded(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return `%ZZ${s.length}`;
  }
}
const pick = <T>(xs: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);
const segment = fc.oneof(pick(['extensions', 'ext', 'plan', 'packages', 'catalogs', 'crds', 'widgets.example.com', 'nginxes.charts.example.com', 'inventory', 'helm-operators', 'watch', 'rollback', 'uninstall-preview', 'drift', 'timeline', 'apps', 'web', 'ns', '_', '..', '%2e%2e', '%00', '']), nastyString.map(encoded));
const path = fc.oneof(
  pick(['/', '/index.html', '/app.js', '/app.css', '/api/extensions', '/api/extensions/ext', '/api/plan', '/api/crds/widgets.example.com/ns/w1', '/api/watch?kinds=ClusterExtension', '/?token=LOGIN', '/?token=', '/?token=x', '//api/extensions', '/api/', '/api']),
  fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => `/api/${s.join('/')}`),
  fc.tuple(fc.array(segment, { maxLength: 3 }), fc.string({ maxLength: 20 })).map(([s, q]) => `/${s.join('/')}?${encoded(q)}`),
);
const host = pick(['own', 'localhost', 'attacker', 'attacker-port', 'rebound', 'none', 'garbage', 'ipv6']);
const origin = pick(['none', 'own', 'null', 'attacker', 'other-port', 'https-own', 'garbage']);
const cookieChoice = pick(['valid', 'none', 'forged', 'garbage', 'valid-and-forged']);
const auth = pick(['none', 'none', 'bearer', 'basic', 'garbage']);
const csrf = pick(['right', 'right', 'none', 'wrong']);
const method = pick(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS']);
const body = fc.oneof(fc.constant(undefined), nastyValue.map((v) => JSON.stringify(v) ?? 'null'), fc.string({ maxLength: 40 }), pick(['{"package":"p2","serviceAccount":"sa"}', '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w9","namespace":"ns"}}', '{"version":"1.0.0"}']));
const contentType = pick(['application/json', 'text/plain', 'none']);
const anyInput = fc.record({ method, path, host, origin, cookie: cookieChoice, auth, csrf, body, contentType });
/** Mostly `good`, sometimes anything. */
const mostly = <T>(good: T, any: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.oneof({ weight: 4, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: any });
/** A write the console's identity would make, with one or two of its gates off: where a hole would show. */
const nearWrite = fc
  .constantFrom(
    { method: 'POST', path: '/api/extensions', body: '{"package":"p2","serviceAccount":"sa"}' },
    { method: 'DELETE', path: '/api/extensions/ext', body: undefined },
    { method: 'PATCH', path: '/api/extensions/ext', body: '{"version":"1.0.0"}' },
  )
  .chain((w) => fc.record({ method: mostly(w.method, method), path: mostly(w.path, path), host: mostly('own', host), origin: mostly('own', origin), cookie: mostly('valid', cookieChoice), auth: mostly('none', auth), csrf: mostly('right', csrf), body: mostly(w.body, body), contentType: mostly('application/json', contentType) }));
const input = fc.oneof(anyInput, nearWrite);
type Input = typeof anyInput extends fc.Arbitrary<infer T> ? T : never;

function headersOf(i: Input): Record<string, string> {
  const own = `127.0.0.1:${port}`;
  const h: Record<string, string> = {};
  const hosts: Record<string, string | undefined> = { own, localhost: `localhost:${port}`, attacker: 'attacker.example', 'attacker-port': `attacker.example:${port}`, rebound: `127.0.0.1.attacker.example:${port}`, none: undefined, garbage: 'a b@c', ipv6: `[::1]:${port}` };
  const hostValue = hosts[i.host];
  if (hostValue !== undefined) h.Host = hostValue;
  const origins: Record<string, string | undefined> = { none: undefined, own: `http://${hostValue ?? own}`, null: 'null', attacker: 'https://attacker.example', 'other-port': 'http://127.0.0.1:1', 'https-own': `https://${hostValue ?? own}`, garbage: '::' };
  const o = origins[i.origin];
  if (o !== undefined) h.Origin = o;
  const name = cookie.split('=')[0] ?? 'x';
  const cookies: Record<string, string | undefined> = { valid: cookie, none: undefined, forged: `${name}=forged`, garbage: ';;=;a', 'valid-and-forged': `${name}=forged; ${cookie}` };
  const c = cookies[i.cookie];
  if (c !== undefined) h.Cookie = c;
  const auths: Record<string, string | undefined> = { none: undefined, bearer: 'Bearer person-token', basic: 'Basic dXNlcjpwdw==', garbage: 'Bearer \u00e9' };
  const a = auths[i.auth];
  if (a !== undefined) h.Authorization = a;
  if (i.csrf === 'right') h['X-Binnacle-CSRF'] = web.csrfToken;
  else if (i.csrf === 'wrong') h['X-Binnacle-CSRF'] = 'wrong';
  if (i.contentType !== 'none') h['Content-Type'] = i.contentType;
  return h;
}

/** Whether the console's own identity may act for this request: a session, the CSRF token, a loopback Host, no foreign Origin, no token of its own. */
function mayActAsConsole(i: Input): boolean {
  return ['valid', 'valid-and-forged'].includes(i.cookie) && i.auth === 'none' && i.csrf === 'right' && ['own', 'localhost', 'ipv6'].includes(i.host) && ['none', 'own'].includes(i.origin);
}

interface Answer {
  status: number;
  wrote: string[];
  body: string;
}

function send(i: Input): Promise<Answer> {
  const before = baseWrites().length;
  const target = i.path.replace('LOGIN', new URL(web.loginUrl() ?? 'http://x/').searchParams.get('token') ?? '');
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, method: i.method, path: target, headers: headersOf(i), setHost: false }, (res) => {
      // A live stream stays open: its status is the answer.
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        r.destroy();
        return resolve({ status: res.statusCode ?? 0, wrote: baseWrites().slice(before), body: '' });
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, wrote: baseWrites().slice(before), body: text }));
    });
    r.on('error', reject);
    r.end(i.body === undefined || i.method === 'GET' || i.method === 'HEAD' ? undefined : i.body);
  });
}

/** A 4xx whose body is the console's JSON error (errors.ts HttpError): its status (and code or field) and message. */
function refusalOf(a: Answer): { code: string; message: string } | undefined {
  if (a.status < 400 || a.status >= 500) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(a.body);
  } catch {
    return undefined; // a HEAD's empty body, an HTML login page, Node's own 400 for a malformed request
  }
  if (typeof body !== 'object' || body === null || !('error' in body) || typeof body.error !== 'string') return undefined;
  const detail = 'code' in body && typeof body.code === 'string' ? ` ${body.code}` : 'field' in body && typeof body.field === 'string' ? ' field' : '';
  return { code: `HTTP_${a.status}${detail}`, message: body.error };
}

test('fuzz: the console API (Host, Origin, session, token, CSRF, bodies)', { timeout: 30 * 60_000 }, async () => {
  let wrote = 0;
  await fuzz('console-api', input, async (i: Input) => {
    const a = await send(i);
    wrote += a.wrote.length;
    return a;
  }, {
    ciRuns: 300,
    timeoutMs: 10_000,
    cases: (i) => [`host:${i.host}`, `origin:${i.origin}`, `cookie:${i.cookie}`, `auth:${i.auth}`, i.method, ...(mayActAsConsole(i) ? ['may-act'] : [])],
    requireCases: ['host:attacker-port', 'origin:null', 'cookie:forged', 'auth:bearer', 'POST', 'DELETE', 'may-act'],
    refusal: (a) => refusalOf(a as Answer),
    checkAnswer: (a, i) => {
      const { status, wrote, body: text } = a as Answer;
      if (status === 500) return `500: ${text.slice(0, 300)}`;
      if (wrote.length > 0 && !mayActAsConsole(i)) return `the console's identity wrote ${wrote.join(', ')} for a request that may not act as it (HTTP ${status})`;
      // Refused before the Host check (a malformed target, a method never served; Node's parser for no Host) is no page either.
      if (![400, 405, 421].includes(status) && !['own', 'localhost', 'ipv6'].includes(i.host)) return `Host ${i.host} was served (HTTP ${status})`;
      if (text.includes(web.csrfToken) && !(['valid', 'valid-and-forged'].includes(i.cookie) && i.auth === 'none' && ['own', 'localhost', 'ipv6'].includes(i.host))) return 'the CSRF token was served without a session';
      return undefined;
    },
    afterEach: async () => {
      // Still answering; and logged in again when this input's login spent the session list.
      let res = await fetch(`${web.url}/api/extensions`, { headers: { Cookie: cookie } });
      if (res.status === 401) {
        await res.arrayBuffer();
        await logIn();
        res = await fetch(`${web.url}/api/extensions`, { headers: { Cookie: cookie } });
      }
      await res.arrayBuffer();
      return res.status === 200 ? undefined : `GET /api/extensions with the session answers ${res.status}`;
    },
  });
  assert.ok(wrote > 0, 'some inputs may act as the console and wrote: the check above can fail');
});
