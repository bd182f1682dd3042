import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { KubeClient } from './client.js';
import { countApiRequests } from './metrics.js';

test('every API response is counted by method and status, for clients made from the observed one too', async () => {
  const server = createServer((req, res) => {
    const found = req.url === '/version';
    res.writeHead(found ? 200 : 404, { 'Content-Type': 'application/json' });
    res.end(found ? '{"gitVersion":"v1.36.3"}' : '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const client = await KubeClient.fromKubeConfig(kc);
  const registry = new Registry();
  countApiRequests(registry, client);
  try {
    await client.serverVersion();
    await client.serverVersion();
    await assert.rejects(client.impersonate({ user: 'someone' }).rawRequest('GET', '/nope').then((r) => (r.status === 404 ? Promise.reject(new Error('404')) : r)));
    const text = await registry.metrics();
    assert.match(text, /binnacle_rest_client_requests_total\{method="GET",code="200"\} 2/);
    assert.match(text, /binnacle_rest_client_requests_total\{method="GET",code="404"\} 1/);
  } finally {
    client.close();
    server.closeAllConnections();
    server.close();
  }
});
