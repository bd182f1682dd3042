import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ALL_CRDS } from '../api/crds.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { CONTENT_SECURITY_POLICY } from './security.js';
import { startConsole, type RunningConsole } from './server.js';

/** The one fake cluster, where the console's identity, bob, may do nothing: every request is refused as Forbidden. */
const cluster = new FakeCluster({ objects: ALL_CRDS });
cluster.authorize = (r) => r.identity !== 'bob';
/** What was asked of the cluster since the last `mark()`, by verb. */
let since = 0;
const mark = (): void => {
  since = cluster.log.length;
};
const calls = (): string[] => cluster.log.slice(since).map((r) => r.verb);

let dir: string;
let web: RunningConsole;
let cookie = '';

/** A request of the browser that logged in. */
const req = (path: string, init: RequestInit = {}): Promise<Response> => fetch(`${web.url}${path}`, { ...init, headers: { Cookie: cookie, ...(init.headers as Record<string, string> | undefined) } });

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-test-'));
  await writeFile(join(dir, 'app.js'), 'export {};\n');
  await writeFile(join(dir, 'app.css'), 'body{}\n');
  web = await startConsole({ host: '127.0.0.1', port: 0, base: cluster.client({ user: 'bob' }), forToken: () => Promise.reject(new Error('no tokens here')), logger: pino({ level: 'silent' }), cacheDir: dir, assetsDir: dir });
  const login = await fetch(web.loginUrl() ?? '', { redirect: 'manual' });
  cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
});

after(async () => {
  await web.stop();
  await rm(dir, { recursive: true, force: true });
});

const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
  req(path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Binnacle-CSRF': web.csrfToken, ...headers }, body });

describe('console server', () => {
  it('serves the page with the CSRF token in a meta tag, no inline script, and the security headers on every response', async () => {
    for (const path of ['/', '/app.js', '/app.css', '/nope', '/api/nope', '/api/extensions']) {
      const res = await req(path);
      assert.equal(res.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer', path);
      if (path === '/') {
        const html = await res.text();
        assert.ok(html.includes(`<meta name="binnacle-csrf" content="${web.csrfToken}">`));
        assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script has a src');
        assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline handlers');
      } else await res.arrayBuffer();
    }
  });

  it('a 403 from the API server reaches the page as "forbidden: …" with its message', async () => {
    const res = await req(`/api/extensions`);
    assert.equal(res.status, 403);
    const body = (await res.json()) as { error: string };
    assert.ok(body.error.startsWith('forbidden: list clusterextensions.binnacle.dev — clusterextensions.binnacle.dev is forbidden: User "bob" cannot list resource "clusterextensions"'), body.error);
  });

  it('refuses a write without the CSRF token before touching the cluster', async () => {
    mark();
    const res = await req(`/api/extensions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 403);
    assert.match(((await res.json()) as { error: string }).error, /CSRF check failed: missing x-binnacle-csrf/);
    const del = await req(`/api/extensions/x`, { method: 'DELETE' });
    assert.equal(del.status, 403);
    await del.arrayBuffer();
    assert.deepEqual(calls(), []);
  });

  it('bad input is a 400 naming the field, and nothing is sent to the cluster', async () => {
    mark();
    const cases: [string, string, RegExp][] = [
      ['/api/extensions', 'not json', /^body: not JSON/],
      ['/api/extensions', '[]', /^body: expected a JSON object/],
      ['/api/extensions', '{"package":"Bad_Name","serviceAccount":"sa"}', /^package: "Bad_Name" must consist of lower case/],
      ['/api/extensions', '{"package":"ok"}', /^serviceAccount: required/],
      ['/api/extensions', '{"package":"ok","serviceAccount":"sa","version":"not a range!"}', /^version: "not a range!" is not a version range/],
      ['/api/plan', '{"package":42}', /^package: expected a string, got number/],
    ];
    for (const [path, body, want] of cases) {
      const res = await post(path, body);
      assert.equal(res.status, 400, body);
      assert.match(((await res.json()) as { error: string }).error, want);
    }
    const wrongType = await post('/api/extensions', '{}', { 'Content-Type': 'text/plain' });
    assert.equal(wrongType.status, 400);
    await wrongType.arrayBuffer();
    assert.deepEqual(calls(), []);
  });

  it('a malformed Authorization header is a 401, and a good request with a valid body is sent as the person', async () => {
    const bad = await req(`/api/extensions`, { headers: { Authorization: 'Basic abc' } });
    assert.equal(bad.status, 401);
    await bad.arrayBuffer();
    mark();
    const res = await post('/api/extensions', '{"package":"ok","serviceAccount":"sa"}');
    assert.equal(res.status, 403);
    await res.arrayBuffer();
    assert.deepEqual(calls(), ['create']);
  });
});
