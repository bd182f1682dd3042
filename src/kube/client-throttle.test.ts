/**
 * The client's rate limiter and its retries of answers that ask for one (429 of API Priority and
 * Fairness, 5xx with Retry-After), against a local HTTP server, on a fake clock: no test sleeps.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { KubeClient } from './client.js';
import { KubeApiError } from './errors.js';
import { FakeClock } from './fake-clock.test-helper.js';
import { countApiRequests } from './metrics.js';
import { MAX_RETRIES, type RateLimit, type ThrottleEvent } from './rate-limit.js';

let server: Server;
let port: number;
/** Each request as the server saw it: method, path, the impersonated user. */
let seen: { method: string; path: string; user: string | undefined; body: string }[] = [];
/** How many 429s (with this Retry-After) each path gets before its answer; `Infinity`: always. */
let refusals = new Map<string, { times: number; retryAfter?: string; status?: number }>();

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = '';
    req.on('data', (c: Buffer) => (s += c.toString()));
    req.on('end', () => resolve(s));
  });
}

before(async () => {
  server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      seen.push({ method: req.method ?? '', path, user: req.headers['impersonate-user'] as string | undefined, body });
      const refusal = refusals.get(path);
      if (refusal !== undefined && refusal.times > 0) {
        refusal.times--;
        const headers: Record<string, string> = { 'Content-Type': 'text/plain', 'X-Kubernetes-PF-FlowSchema-UID': 'fs-uid-1' };
        if (refusal.retryAfter !== undefined) headers['Retry-After'] = refusal.retryAfter;
        res.writeHead(refusal.status ?? 429, headers);
        res.end('Too many requests, please try again later.\n');
        return;
      }
      if (path === '/api/v1') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'list', 'create', 'watch'] }] }));
        return;
      }
      if (req.url?.includes('watch=1') === true) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'w' } } })}\n`);
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(req.method === 'POST' ? body : JSON.stringify({ metadata: { name: path.split('/').pop() } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

/** Each test starts with nothing seen and no refusals planned (in each describe: a top-level hook would run before every file's tests where unit files share a process). */
function freshServerState(): void {
  seen = [];
  refusals = new Map();
}

async function client(o: { rateLimit?: RateLimit | false; clock: FakeClock; timeoutMs?: number }): Promise<KubeClient> {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return KubeClient.fromKubeConfig(kc, { rateLimit: o.rateLimit ?? false, clock: o.clock, random: () => 0, ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }) });
}

const times = (n: number, s: string): string[] => Array.from({ length: n }, () => s);
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name });
const CM_PATH = '/api/v1/namespaces/ns/configmaps';

describe('429 and Retry-After', () => {
  beforeEach(freshServerState);
  it('waits as Retry-After says and sends the request again, until it is answered', async () => {
    const clock = new FakeClock();
    const c = await client({ clock });
    const events: ThrottleEvent[] = [];
    c.observeThrottling((e) => events.push(e));
    try {
      await c.resourceFor('v1', 'ConfigMap'); // discovery out of the way
      refusals.set(`${CM_PATH}/a`, { times: 3, retryAfter: '2' });
      const got = await c.get(cm('a'));
      assert.equal(got.metadata.name, 'a');
      assert.equal(seen.filter((r) => r.path === `${CM_PATH}/a`).length, 4);
      assert.deepEqual(clock.slept, [2000, 2000, 2000]);
      assert.deepEqual(events.map((e) => e.type === 'retry' && [e.status, e.verb, e.resource, e.ms]), [[429, 'get', 'configmaps', 2000], [429, 'get', 'configmaps', 2000], [429, 'get', 'configmaps', 2000]]);
    } finally {
      c.close();
    }
  });

  it('sends a write again too, body and all (API Priority and Fairness refuses before the request runs)', async () => {
    const clock = new FakeClock();
    const c = await client({ clock });
    try {
      refusals.set(CM_PATH, { times: 1, retryAfter: '1' });
      const made = await c.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'new', namespace: 'ns' }, data: { k: 'v' } });
      assert.deepEqual(made.data, { k: 'v' });
      const posts = seen.filter((r) => r.method === 'POST');
      assert.equal(posts.length, 2);
      assert.equal(posts[0]?.body, posts[1]?.body);
    } finally {
      c.close();
    }
  });

  it('retries a 5xx that carries Retry-After, and not one without it', async () => {
    const clock = new FakeClock();
    const c = await client({ clock });
    try {
      await c.resourceFor('v1', 'ConfigMap');
      refusals.set(`${CM_PATH}/b`, { times: 1, retryAfter: '1', status: 503 });
      assert.equal((await c.get(cm('b'))).metadata.name, 'b');
      refusals.set(`${CM_PATH}/c`, { times: 1, status: 500 });
      await assert.rejects(c.get(cm('c')), (err: KubeApiError) => err.statusCode === 500 && !/retr/.test(err.message));
      assert.equal(seen.filter((r) => r.path === `${CM_PATH}/c`).length, 1);
    } finally {
      c.close();
    }
  });

  it('gives up after MAX_RETRIES with an error that names the request, the answer and the retries', async () => {
    const clock = new FakeClock();
    const c = await client({ clock });
    try {
      await c.resourceFor('v1', 'ConfigMap');
      refusals.set(`${CM_PATH}/d`, { times: Infinity, retryAfter: '1' });
      await assert.rejects(c.get(cm('d')), (err: KubeApiError) => {
        assert.equal(err.statusCode, 429);
        assert.equal(err.reason, 'TooManyRequests');
        assert.equal(err.errorClass, 'transient');
        assert.equal(
          err.message,
          `get ConfigMap ns/d: the API server still answered 429 TooManyRequests (Retry-After 1 s) after ${MAX_RETRIES} retries over 49.0 s; API Priority and Fairness put it in FlowSchema UID fs-uid-1: Too many requests, please try again later.`,
        );
        return true;
      });
      assert.equal(seen.filter((r) => r.path === `${CM_PATH}/d`).length, MAX_RETRIES + 1);
    } finally {
      c.close();
    }
  });

  it("never waits past the request's deadline: the answer in hand is the error", async () => {
    const clock = new FakeClock();
    const c = await client({ clock, timeoutMs: 2_500 });
    try {
      await c.resourceFor('v1', 'ConfigMap');
      refusals.set(`${CM_PATH}/e`, { times: Infinity, retryAfter: '1' });
      await assert.rejects(c.get(cm('e')), /get ConfigMap ns\/e: the API server still answered 429 TooManyRequests \(Retry-After 1 s\) after 2 retries over 2\.0 s/);
      assert.deepEqual(clock.slept, [1000, 1000]);
    } finally {
      c.close();
    }
  });

  it('starts a watch again after a 429, and its stream then flows', async () => {
    const clock = new FakeClock();
    const c = await client({ clock, rateLimit: { qps: 1, burst: 1 } });
    try {
      await c.resourceFor('v1', 'ConfigMap');
      clock.slept.length = 0;
      refusals.set(CM_PATH, { times: 1, retryAfter: '1' });
      const names: string[] = [];
      for await (const ev of c.watch('v1', 'ConfigMap', { namespace: 'ns' })) names.push(ev.object.metadata.name ?? '');
      assert.deepEqual(names, ['w']);
      // The start waited for the limiter (discovery took the one token), the retry for
      // Retry-After; the limiter then had a token again (a second had passed): no third wait.
      assert.deepEqual(clock.slept, [1000, 1000]);
    } finally {
      c.close();
    }
  });
});

describe('client-side rate limit', () => {
  beforeEach(freshServerState);
  it('holds each identity to its own bucket: the one the client impersonates does not wait for the client, nor the client for it', async () => {
    const clock = new FakeClock();
    const c = await client({ clock, rateLimit: { qps: 2, burst: 2 } });
    const waits: string[] = [];
    c.observeThrottling((e) => {
      if (e.type === 'wait') waits.push(`${e.verb} ${e.resource} ${e.ms}`);
    });
    try {
      const own = async (name: string) => c.rawRequest('GET', `${CM_PATH}/${name}`);
      const sa = c.impersonate({ user: 'system:serviceaccount:ns:installer' });
      const other = c.impersonate({ user: 'system:serviceaccount:ns:other' });
      await own('1');
      await own('2');
      await own('3'); // the third in the same instant: half a second (2 QPS)
      assert.deepEqual(clock.slept, [500]);
      await sa.rawRequest('GET', `${CM_PATH}/sa1`);
      await sa.rawRequest('GET', `${CM_PATH}/sa2`);
      await other.rawRequest('GET', `${CM_PATH}/o1`);
      await other.rawRequest('GET', `${CM_PATH}/o2`);
      assert.deepEqual(clock.slept, [500]); // their own buckets were full
      await sa.rawRequest('GET', `${CM_PATH}/sa3`);
      assert.deepEqual(clock.slept, [500, 500]);
      // A client made again for the same identity (each reconcile makes one) shares its bucket.
      await c.impersonate({ user: 'system:serviceaccount:ns:installer' }).rawRequest('GET', `${CM_PATH}/sa4`);
      assert.deepEqual(clock.slept, [500, 500, 500]);
      // The same user with other groups is another identity.
      await c.impersonate({ user: 'system:serviceaccount:ns:installer', groups: ['g'] }).rawRequest('GET', `${CM_PATH}/sa5`);
      assert.deepEqual(clock.slept, [500, 500, 500]);
      assert.deepEqual(waits, ['get configmaps 500', 'get configmaps 500', 'get configmaps 500']);
      assert.deepEqual(seen.map((r) => r.user), [undefined, undefined, undefined, ...times(2, 'system:serviceaccount:ns:installer'), ...times(2, 'system:serviceaccount:ns:other'), ...times(3, 'system:serviceaccount:ns:installer')]);
    } finally {
      c.close();
    }
  });

  it("gives leader election a bucket of its own: a renewal does not wait behind the controllers' requests", async () => {
    const clock = new FakeClock();
    const c = await client({ clock, rateLimit: { qps: 1, burst: 1 } });
    try {
      await c.rawRequest('GET', `${CM_PATH}/x`); // the controllers took the one token
      await c.withOwnRateLimit('leader-election').rawRequest('GET', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/l');
      assert.deepEqual(clock.slept, []);
      await c.rawRequest('GET', `${CM_PATH}/y`);
      assert.deepEqual(clock.slept, [1000]);
      assert.equal(seen[1]?.user, undefined); // the same identity, only another bucket
    } finally {
      c.close();
    }
  });

  it('is off when told (rateLimit: false): a burst goes out at once', async () => {
    const clock = new FakeClock();
    const c = await client({ clock, rateLimit: false });
    try {
      await Promise.all(Array.from({ length: 50 }, (_, i) => c.rawRequest('GET', `${CM_PATH}/${i}`)));
      assert.deepEqual(clock.slept, []);
      assert.equal(c.rateLimit, undefined);
    } finally {
      c.close();
    }
  });

  it("has Binnacle's default when not told: no client-side limit, as controller-runtime's", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const c = await KubeClient.fromKubeConfig(kc);
    assert.equal(c.rateLimit, undefined);
    c.close();
  });

  it("counts the limiter's waits and the server's retries in the manager's metrics", async () => {
    const clock = new FakeClock();
    const c = await client({ clock, rateLimit: { qps: 1, burst: 1 } });
    const registry = new Registry();
    countApiRequests(registry, c);
    try {
      await c.rawRequest('GET', `${CM_PATH}/m1`);
      refusals.set(`${CM_PATH}/m2`, { times: 2, retryAfter: '1' });
      await c.rawRequest('GET', `${CM_PATH}/m2`);
      const text = await registry.metrics();
      assert.match(text, /binnacle_rest_client_request_retries_total\{method="GET",code="429"\} 2/);
      // m2 waited for a token once (the first send came right after m1); its retries found one each (Retry-After was a whole second).
      assert.match(text, /binnacle_rest_client_rate_limiter_throttled_total\{verb="get"\} 1/);
      assert.match(text, /binnacle_rest_client_rate_limiter_wait_seconds_total\{verb="get"\} 1/);
      assert.match(text, /binnacle_rest_client_requests_total\{method="GET",code="429"\} 2/);
    } finally {
      c.close();
    }
  });
});
