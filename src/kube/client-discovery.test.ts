import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { CAPABILITIES_STALE_MS, CAPABILITIES_TTL_MS, KubeClient } from './client.js';
import { FakeClock } from './fake-clock.test-helper.js';

let server: Server;
let port: number;
/** Each request the server answered: path and impersonated user. */
const seen: string[] = [];
let gitVersion = 'v1.36.0';
/** The apps group's Kind as /apis answers it now. */
let appsKind = 'Deployment';
/** While set, /apis is answered only when it is called (a request the server is slow to answer). */
let holdApis: (() => void)[] | undefined;
/** While set, /apis is refused. */
let refuseApis = false;

const discovery = (items: unknown[]): string => JSON.stringify({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', items });

before(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.url ?? ''} as ${String(req.headers['impersonate-user'] ?? 'self')}`);
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/version') res.end(JSON.stringify({ gitVersion }));
    else if (req.url === '/api') res.end(discovery([{ metadata: { name: '' }, versions: [{ version: 'v1', resources: [{ responseKind: { kind: 'Pod' } }] }] }]));
    else if (req.url === '/apis' && refuseApis) {
      res.statusCode = 403;
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'not now' }));
    } else if (req.url === '/apis') {
      const answer = discovery([{ metadata: { name: 'apps' }, versions: [{ version: 'v1', resources: [{ responseKind: { kind: appsKind } }] }] }]);
      if (holdApis === undefined) res.end(answer);
      else holdApis.push(() => res.end(answer));
    }
    else res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

test("the server's version and API version set are discovered once for a client and every client impersonating from it, until invalidated", async () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const client = await KubeClient.fromKubeConfig(kc);
  try {
    assert.equal(await client.serverVersion(), 'v1.36.0');
    const set = await client.apiVersionSet();
    assert.deepEqual(set, ['apps/v1', 'apps/v1/Deployment', 'v1', 'v1/Pod']);
    set.push('mutated by a caller');
    // A release acting as its ServiceAccount, one new client per reconcile: discovery is not asked again.
    for (const n of ['a', 'b']) {
      const as = client.impersonate({ user: `system:serviceaccount:${n}:op` });
      assert.equal(await as.serverVersion(), 'v1.36.0');
      assert.deepEqual(await as.apiVersionSet(), ['apps/v1', 'apps/v1/Deployment', 'v1', 'v1/Pod'], "each caller gets its own copy");
    }
    assert.deepEqual(seen.sort(), ['/api as self', '/apis as self', '/version as self']);
    // Asked first by an impersonating client: asked as the client's own identity all the same.
    client.invalidateDiscovery();
    seen.length = 0;
    await client.impersonate({ user: 'system:serviceaccount:a:op' }).apiVersionSet();
    assert.deepEqual(seen.sort(), ['/api as self', '/apis as self'], "one identity's refusal must not become every caller's");
    // CRDs installed (by any of them): forgotten at once, for all.
    gitVersion = 'v1.36.1';
    client.impersonate({ user: 'system:serviceaccount:a:op' }).invalidateDiscovery();
    seen.length = 0;
    assert.equal(await client.serverVersion(), 'v1.36.1');
    await client.apiVersionSet();
    assert.deepEqual(seen.sort(), ['/api as self', '/apis as self', '/version as self']);
  } finally {
    client.close();
  }
});

test('an apiVersion that is not a group/version, or a name "." or "..", is refused before any request: in a URL path it would climb to another endpoint', async () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const client = await KubeClient.fromKubeConfig(kc);
  try {
    const before = seen.length;
    for (const apiVersion of ['../../healthz', 'apps/../../healthz', 'apps/v1/../x', '/v1', 'Apps/v1', 'apps/v1?x=1']) {
      await assert.rejects(client.find({ apiVersion, kind: 'Deployment', namespace: 'ns', name: 'a' }), (err: Error & { code?: string }) => err.code === 'INVALID_API_VERSION', apiVersion);
    }
    assert.deepEqual(seen.slice(before), [], 'nothing was asked of the server');
    await assert.rejects(client.find({ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: '..' }), /Pod "\.\.": field metadata\.name: "\.\." is not a Kubernetes name/);
    await assert.rejects(client.find({ apiVersion: 'v1', kind: 'Pod', namespace: '..', name: 'a' }), /field metadata\.namespace/);
    // Well-formed ones pass the check (the server here knows neither: NotFound).
    for (const apiVersion of ['v1', 'apps/v1', 'olm.operatorframework.io/v1', 'example.com/v1alpha1', 'example.com/v2beta3']) {
      await client.find({ apiVersion, kind: 'Nothing', name: 'a' }).catch((err: unknown) => assert.notEqual((err as { code?: string }).code, 'INVALID_API_VERSION', apiVersion));
    }
  } finally {
    client.close();
  }
});

test('past its time, the API version set is served while it is asked again: a slow discovery answer holds no render; a failed one keeps the last answer; past the stale bound and after invalidation callers wait', async () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const clock = new FakeClock();
  const client = await KubeClient.fromKubeConfig(kc, { clock });
  const waiting = async (): Promise<void> => {
    for (let i = 0; i < 200 && (holdApis?.length ?? 0) === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok((holdApis?.length ?? 0) > 0, '/apis was asked');
  };
  const settledWithin = async <T>(p: Promise<T>, ms: number): Promise<T | 'pending'> => Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
  try {
    appsKind = 'Deployment';
    assert.ok((await client.apiVersionSet()).includes('apps/v1/Deployment'));
    // Past the TTL, /apis answers slowly: the caller gets the last answer at once, and one request is made.
    clock.t += CAPABILITIES_TTL_MS + 1;
    holdApis = [];
    appsKind = 'StatefulSet';
    seen.length = 0;
    const stale = await settledWithin(client.apiVersionSet(), 2_000);
    assert.notEqual(stale, 'pending', 'the caller did not wait for the slow answer');
    assert.ok(stale !== 'pending' && stale.includes('apps/v1/Deployment'), 'the last answer');
    await waiting();
    assert.ok((await client.impersonate({ user: 'system:serviceaccount:a:op' }).apiVersionSet()).includes('apps/v1/Deployment'), 'another caller meanwhile: the last answer too');
    assert.equal(seen.filter((r) => r.startsWith('/apis')).length, 1, 'asked again once, not once a caller');
    // The answer comes: served from then on.
    for (const answer of holdApis.splice(0)) answer();
    holdApis = undefined;
    const fresh = await (async () => {
      for (let i = 0; i < 200; i++) {
        const set = await client.apiVersionSet();
        if (set.includes('apps/v1/StatefulSet')) return set;
        await new Promise((r) => setTimeout(r, 5));
      }
      return [];
    })();
    assert.ok(fresh.includes('apps/v1/StatefulSet') && !fresh.includes('apps/v1/Deployment'), 'the new answer replaced the old');
    // A refresh that fails keeps the last answer.
    clock.t += CAPABILITIES_TTL_MS + 1;
    refuseApis = true;
    seen.length = 0;
    assert.ok((await client.apiVersionSet()).includes('apps/v1/StatefulSet'));
    for (let i = 0; i < 200 && !seen.some((r) => r.startsWith('/apis')); i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(seen.some((r) => r.startsWith('/apis')), 'asked again, and refused');
    assert.ok((await client.apiVersionSet()).includes('apps/v1/StatefulSet'), 'kept after the refresh failed');
    refuseApis = false;
    // Past the stale bound the caller waits for a new answer.
    clock.t += CAPABILITIES_STALE_MS;
    holdApis = [];
    appsKind = 'DaemonSet';
    const waited = client.apiVersionSet();
    assert.equal(await settledWithin(waited, 100), 'pending', 'past the stale bound the caller waits');
    await waiting();
    for (const answer of holdApis.splice(0)) answer();
    holdApis = undefined;
    assert.ok((await waited).includes('apps/v1/DaemonSet'));
    // Invalidated (CRDs installed): the next caller waits for the new answer, however fresh the last one was.
    holdApis = [];
    appsKind = 'ReplicaSet';
    client.invalidateDiscovery();
    const afterInvalidate = client.apiVersionSet();
    assert.equal(await settledWithin(afterInvalidate, 100), 'pending', 'after invalidation the caller waits');
    await waiting();
    for (const answer of holdApis.splice(0)) answer();
    holdApis = undefined;
    assert.ok((await afterInvalidate).includes('apps/v1/ReplicaSet'));
  } finally {
    for (const answer of holdApis?.splice(0) ?? []) answer();
    holdApis = undefined;
    refuseApis = false;
    appsKind = 'Deployment';
    client.close();
  }
});
