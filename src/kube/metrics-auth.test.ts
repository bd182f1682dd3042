import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCluster } from './fake-cluster.test-helper.js';
import { MetricsAuthorizer, bearerToken } from './metrics-auth.js';

/** An API server that knows two tokens: the reader's (may get /metrics) and a stranger's (may not). */
function fakeApi(opts: { failTokenReview?: boolean; failSar?: boolean; hold?: Promise<void> } = {}) {
  const cluster = new FakeCluster();
  cluster.tokens.set('reader-token', { username: 'system:serviceaccount:ns:metrics-reader', groups: ['system:serviceaccounts'] });
  cluster.tokens.set('stranger-token', { username: 'system:serviceaccount:ns:default', groups: ['system:serviceaccounts'] });
  cluster.reviewAccess = (r) => r.user === 'system:serviceaccount:ns:metrics-reader' && r.path === '/metrics' && r.verb === 'get';
  if (opts.failTokenReview === true) cluster.inject({ verb: 'create', kind: 'TokenReview', error: () => new Error('connection refused'), times: Infinity });
  if (opts.failSar === true) cluster.inject({ verb: 'create', kind: 'SubjectAccessReview', error: () => new Error('connection refused'), times: Infinity });
  const hold = opts.hold;
  if (hold !== undefined) cluster.latency = () => hold;
  return { client: cluster.client(), created: cluster.reviewed };
}

/** Every string a value holds, however deep: in objects, arrays, Maps (keys too) and Sets. */
function stringsIn(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null || seen.has(value)) return [];
  seen.add(value);
  if (value instanceof Map) return [...value.entries()].flatMap(([k, v]) => [...stringsIn(k, seen), ...stringsIn(v, seen)]);
  if (value instanceof Set || Array.isArray(value)) return [...(value as Iterable<unknown>)].flatMap((v) => stringsIn(v, seen));
  return Object.values(value).flatMap((v) => stringsIn(v, seen));
}

const get = (token?: string) => ({ method: 'GET', headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

describe('metrics RBAC (--metrics-require-rbac)', () => {
  it('answers 401 without a token or with one the API server does not authenticate, 403 without the right, 200 with it', async () => {
    const api = fakeApi();
    const auth = new MetricsAuthorizer({ client: api.client });
    assert.deepEqual(await auth.check(get(), '/metrics'), { status: 401, message: 'Unauthorized' });
    assert.deepEqual(await auth.check({ method: 'GET', headers: { authorization: 'Basic dXNlcjpwdw==' } }, '/metrics'), { status: 401, message: 'Unauthorized' });
    assert.deepEqual(await auth.check(get('forged'), '/metrics'), { status: 401, message: 'Unauthorized' });
    assert.deepEqual(await auth.check(get('stranger-token'), '/metrics'), { status: 403, message: 'Authorization denied for user system:serviceaccount:ns:default' });
    assert.deepEqual(await auth.check(get('reader-token'), '/metrics'), { status: 200, user: 'system:serviceaccount:ns:metrics-reader' });
  });

  it('asks the API server as controller-runtime does: a TokenReview, then a non-resource get on the path for that user', async () => {
    const api = fakeApi();
    await new MetricsAuthorizer({ client: api.client }).check(get('reader-token'), '/metrics');
    assert.deepEqual(api.created.map((o) => `${o.apiVersion} ${o.kind}`), ['authentication.k8s.io/v1 TokenReview', 'authorization.k8s.io/v1 SubjectAccessReview']);
    assert.deepEqual(api.created[0]?.spec, { token: 'reader-token' });
    assert.deepEqual(api.created[1]?.spec, { user: 'system:serviceaccount:ns:metrics-reader', groups: ['system:serviceaccounts'], nonResourceAttributes: { path: '/metrics', verb: 'get' } });
  });

  it('caches answers briefly: repeated scrapes ask once; expired answers are asked again', async () => {
    const api = fakeApi();
    let now = 1_000_000;
    const auth = new MetricsAuthorizer({ client: api.client, now: () => now });
    for (let i = 0; i < 5; i++) {
      assert.equal((await auth.check(get('reader-token'), '/metrics')).status, 200);
      assert.equal((await auth.check(get('stranger-token'), '/metrics')).status, 403);
      assert.equal((await auth.check(get('forged'), '/metrics')).status, 401);
    }
    assert.equal(auth.reviews, 5, 'three TokenReviews and two SubjectAccessReviews');
    now += 31_000; // the denial (30 s) expired; the token (1 min) and the allowance (5 min) did not
    assert.equal((await auth.check(get('stranger-token'), '/metrics')).status, 403);
    assert.equal(auth.reviews, 6);
    now += 30_000; // the tokens expired too
    assert.equal((await auth.check(get('reader-token'), '/metrics')).status, 200);
    assert.equal(auth.reviews, 7);
  });

  it('holds no more than its cap however many tokens an attacker sends, and never the token itself', async () => {
    const api = fakeApi();
    const auth = new MetricsAuthorizer({ client: api.client, maxEntries: 10 });
    for (let i = 0; i < 50; i++) assert.equal((await auth.check(get(`random-${i}`), '/metrics')).status, 401);
    assert.deepEqual(auth.cached(), { users: 10, decisions: 0 });
    // What the authorizer holds, not what the API server behind its client was sent.
    const held = stringsIn(auth, new Set([api.client]));
    assert.ok(held.length > 0, 'the walk reaches what the authorizer holds');
    assert.ok(!held.some((x) => x.includes('random-')), 'no token, nor a part of one');
  });

  it('shares one review among the requests waiting for it, and past maxInFlight answers 429 without asking', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const api = fakeApi({ hold });
    const auth = new MetricsAuthorizer({ client: api.client, maxInFlight: 2 });
    const same = [auth.check(get('reader-token'), '/metrics'), auth.check(get('reader-token'), '/metrics'), auth.check(get('reader-token'), '/metrics')];
    const other = auth.check(get('stranger-token'), '/metrics');
    assert.deepEqual(await auth.check(get('third'), '/metrics'), { status: 429, message: 'Too many requests' });
    release();
    assert.deepEqual((await Promise.all(same)).map((d) => d.status), [200, 200, 200]);
    assert.equal((await other).status, 403);
    assert.equal(api.created.filter((o) => o.kind === 'TokenReview').length, 2);
  });

  it('refuses an oversized token without asking; a failed TokenReview is 401 and a failed SubjectAccessReview 500', async () => {
    const api = fakeApi();
    assert.equal((await new MetricsAuthorizer({ client: api.client }).check(get('x'.repeat(10_000)), '/metrics')).status, 401);
    assert.equal(api.created.length, 0);
    assert.equal((await new MetricsAuthorizer({ client: fakeApi({ failTokenReview: true }).client }).check(get('reader-token'), '/metrics')).status, 401);
    assert.deepEqual(await new MetricsAuthorizer({ client: fakeApi({ failSar: true }).client }).check(get('reader-token'), '/metrics'), { status: 500, message: 'Authorization for user system:serviceaccount:ns:metrics-reader failed' });
  });

  it('reads only a Bearer token', () => {
    assert.equal(bearerToken({ headers: { authorization: 'Bearer abc' } }), 'abc');
    assert.equal(bearerToken({ headers: { authorization: 'bearer   abc ' } }), 'abc');
    assert.equal(bearerToken({ headers: { authorization: 'Bearer' } }), undefined);
    assert.equal(bearerToken({ headers: { authorization: 'Bearer a b' } }), undefined);
    assert.equal(bearerToken({ headers: {} }), undefined);
  });
});
