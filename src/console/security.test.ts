import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONTENT_SECURITY_POLICY, CsrfGuard } from './security.js';
import { forbiddenSummary, httpErrorOf, InputError } from './errors.js';
import { ConsoleIdentity, IdentityError } from './identity.js';
import { bearerToken } from '../util/http-server.js';
import type { Person } from './access.js';
import { KubeApiError } from '../kube/errors.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { parseListen } from './server.js';

describe('console CSRF check', () => {
  const guard = new CsrfGuard('t0ken');
  const req = (method: string, headers: Record<string, string>) => ({ method, headers: { host: '127.0.0.1:8443', ...headers } });

  it('lets reads through without a token', () => {
    assert.equal(guard.problem(req('GET', {})), undefined);
    assert.equal(guard.problem(req('HEAD', {})), undefined);
  });

  it('refuses a write without the token, with a wrong one, or from another origin', () => {
    for (const m of ['POST', 'PATCH', 'DELETE', 'PUT']) assert.match(guard.problem(req(m, {})) ?? '', /missing x-binnacle-csrf/);
    assert.match(guard.problem(req('POST', { 'x-binnacle-csrf': 'wrong' })) ?? '', /wrong/);
    assert.match(guard.problem(req('POST', { 'x-binnacle-csrf': 't0ken', origin: 'https://evil.example' })) ?? '', /not this console/);
    assert.match(guard.problem(req('POST', { 'x-binnacle-csrf': 't0ken', origin: 'null' })) ?? '', /null/);
  });

  it('accepts the token from the same origin, or with no Origin', () => {
    assert.equal(guard.problem(req('POST', { 'x-binnacle-csrf': 't0ken', origin: 'http://127.0.0.1:8443' })), undefined);
    assert.equal(guard.problem(req('DELETE', { 'x-binnacle-csrf': 't0ken' })), undefined);
  });

  it('a fresh guard has a long random token', () => {
    const a = new CsrfGuard();
    assert.ok(a.token.length >= 40);
    assert.notEqual(a.token, new CsrfGuard().token);
  });

  it('the CSP allows only the page’s own script and no framing', () => {
    assert.match(CONTENT_SECURITY_POLICY, /script-src 'self'(;|$)/);
    assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
    assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
    assert.match(CONTENT_SECURITY_POLICY, /object-src 'none'/);
  });
});

describe('console errors', () => {
  it('a 403 reads "forbidden: VERB RESOURCE" and keeps the API server’s message', () => {
    const msg = 'clusterextensions.olm.binnacle.dev is forbidden: User "system:serviceaccount:v:viewer" cannot create resource "clusterextensions" in API group "olm.binnacle.dev" at the cluster scope';
    const e = httpErrorOf(new KubeApiError(403, 'Forbidden', msg));
    assert.equal(e?.status, 403);
    assert.ok(e?.body.error.startsWith('forbidden: create clusterextensions.olm.binnacle.dev — '));
    assert.ok(e?.body.error.includes(msg));
    assert.equal(forbiddenSummary('something else'), 'forbidden');
    assert.equal(forbiddenSummary('cannot list resource "secrets" in API group "" in the namespace "x"'), 'forbidden: list secrets');
  });

  it('bad input is a 400 naming the field; other API errors keep their status', () => {
    assert.deepEqual(httpErrorOf(new InputError('namespace', 'required')), { status: 400, body: { error: 'namespace: required', field: 'namespace' } });
    assert.equal(httpErrorOf(new KubeApiError(404, 'NotFound', 'x'))?.status, 404);
    assert.equal(httpErrorOf(new KubeApiError(500, 'InternalError', 'x'))?.status, 502);
    assert.equal(httpErrorOf(new IdentityError('bad'))?.status, 401);
    assert.equal(httpErrorOf(new Error('boom')), undefined, 'the server answers 500 itself');
  });
});

describe('console identity', () => {
  it('reads a bearer token and refuses a malformed Authorization header', () => {
    assert.deepEqual(bearerToken({ headers: {} }), {});
    assert.deepEqual(bearerToken({ headers: { authorization: 'Bearer abc.def-ghi' } }), { token: 'abc.def-ghi' });
    assert.match(bearerToken({ headers: { authorization: 'Basic dXNlcjpwdw==' } }).problem ?? '', /Bearer TOKEN/);
  });

  it('runs a bearer person as their token, a proxied one impersonated, and only a lent one as the base identity (impersonating when told)', async () => {
    const made: string[] = [];
    const cluster = new FakeCluster();
    // The console's identity is `console`; a token's client is the user the token is.
    const id = new ConsoleIdentity({ base: cluster.client({ user: 'console' }), forToken: (t) => { made.push(t); return Promise.resolve(cluster.client({ user: `token ${t}` })); }, impersonate: { user: 'alice' } });
    /** Whom the person's client reaches the API server as. */
    const runsAs = async (person: Person): Promise<string> => {
      await (await id.clientOf(person)).find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'x' });
      return cluster.log.at(-1)?.identity ?? '';
    };
    assert.equal(await runsAs({ kind: 'lent', key: 's' }), 'alice', 'the base identity impersonating --as');
    assert.equal(await runsAs({ kind: 'bearer', token: 't1', key: 'b1' }), 'token t1');
    assert.equal(await id.clientOf({ kind: 'bearer', token: 't1', key: 'b1' }), await id.clientOf({ kind: 'bearer', token: 't1', key: 'b1' }), 'the same client again');
    assert.equal(await runsAs({ kind: 'bearer', token: 't2', key: 'b2' }), 'token t2');
    assert.equal(await runsAs({ kind: 'proxy', user: 'bob', groups: [], key: 'u' }), 'bob', 'the user the proxy names, not --as');
    assert.deepEqual(made, ['t1', 't2'], 'one client per token');
    assert.ok(!cluster.log.some((r) => r.identity === 'console'), 'never the console itself');
    id.close();
    await new Promise((r) => setImmediate(r));
    assert.equal(cluster.closed, 2, "the tokens' clients are closed");
  });
});

describe('console --listen', () => {
  it('takes HOST:PORT, loopback when the host is empty, and refuses anything else naming the flag', () => {
    assert.deepEqual(parseListen('--listen', '127.0.0.1:8443'), { host: '127.0.0.1', port: 8443 });
    assert.deepEqual(parseListen('--listen', ':9000'), { host: '127.0.0.1', port: 9000 });
    assert.deepEqual(parseListen('--listen', '[::1]:0'), { host: '::1', port: 0 });
    assert.throws(() => parseListen('--listen', '8443'), /--listen "8443": expected HOST:PORT/);
    assert.throws(() => parseListen('--listen', 'a:99999'), /expected HOST:PORT/);
  });
});
