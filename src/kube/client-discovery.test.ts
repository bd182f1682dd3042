import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from './client.js';

let server: Server;
let port: number;
/** Each request the server answered: path and impersonated user. */
const seen: string[] = [];
let gitVersion = 'v1.36.0';

const discovery = (items: unknown[]): string => JSON.stringify({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', items });

before(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.url ?? ''} as ${String(req.headers['impersonate-user'] ?? 'self')}`);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url === '/version') res.end(JSON.stringify({ gitVersion }));
    else if (req.url === '/api') res.end(discovery([{ metadata: { name: '' }, versions: [{ version: 'v1', resources: [{ responseKind: { kind: 'Pod' } }] }] }]));
    else if (req.url === '/apis') res.end(discovery([{ metadata: { name: 'apps' }, versions: [{ version: 'v1', resources: [{ responseKind: { kind: 'Deployment' } }] }] }]));
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
