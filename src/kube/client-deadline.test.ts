import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from './client.js';

let server: Server;
let port: number;
const held: ServerResponse[] = [];

function kubeconfig(server: string, skipTLSVerify: boolean): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify }],
    users: [{ name: 'u', token: 'abc' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

before(async () => {
  server = createServer((req, res) => {
    held.push(res);
    // /version never answers; /apis/stall/v1 sends its headers and half a body, then stalls.
    if (req.url?.startsWith('/apis/stall/v1') === true) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"resources": [');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => {
  for (const r of held) r.destroy();
  server.closeAllConnections();
  server.close();
});

test('an API server that never answers fails each request at its deadline, naming the server and the deadline', { timeout: 30_000 }, async () => {
  const client = await KubeClient.fromKubeConfig(kubeconfig(`http://127.0.0.1:${port}`, true), { timeoutMs: 300 });
  try {
    await assert.rejects(client.serverVersion(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'KUBE_TIMEOUT');
      assert.equal(err.message, `get server version: no answer from the API server at 127.0.0.1:${port} within 300 ms`);
      return true;
    });
    // Headers came, the body never ends: the deadline covers the body too.
    await assert.rejects(client.resourceFor('stall/v1', 'Thing'), { code: 'KUBE_TIMEOUT', message: /^discover stall\/v1: no answer from the API server at 127\.0\.0\.1:\d+ within 300 ms$/ });
    await assert.rejects(client.rawRequest('GET', '/version'), { code: 'KUBE_TIMEOUT' });
  } finally {
    client.close();
  }
});

test('an http:// API server gets a one-line error naming the cluster, not a stack trace', async () => {
  await assert.rejects(KubeClient.fromKubeConfig(kubeconfig('http://127.0.0.1:1', false)), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'KUBECONFIG_INSECURE_SERVER');
    assert.match(err.message, /^cluster "c": server http:\/\/127\.0\.0\.1:1 is plain http:\/\/; binnacle talks to API servers over https:\/\/ only/);
    assert.doesNotMatch(err.message, /\n/);
    return true;
  });
});
