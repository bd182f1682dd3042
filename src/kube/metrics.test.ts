import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { KubeClient, requestTarget } from './client.js';
import { collectProcessMetrics, countApiRequests, EVENT_LOOP_LAG_SAMPLE_MS, EVENT_LOOP_SAMPLE_MS } from './metrics.js';

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
    client.invalidateDiscovery(); // the version is kept otherwise: two requests wanted
    await client.serverVersion();
    await assert.rejects(client.impersonate({ user: 'someone' }).rawRequest('GET', '/nope').then((r) => (r.status === 404 ? Promise.reject(new Error('404')) : r)));
    const text = await registry.metrics();
    assert.match(text, /binnacle_rest_client_requests_total\{method="GET",code="200"\} 2/);
    assert.match(text, /binnacle_rest_client_requests_total\{method="GET",code="404"\} 1/);
    assert.match(text, /binnacle_rest_client_requests_by_resource_total\{verb="get",resource="\/version"\} 2/);
  } finally {
    client.close();
    server.closeAllConnections();
    server.close();
  }
});

test('a request is named by its verb and resource, as the audit log names it', () => {
  assert.deepEqual(requestTarget('GET', '/apis/binnacle.dev/v1alpha1/bundledeployments'), { verb: 'list', resource: 'bundledeployments' });
  assert.deepEqual(requestTarget('GET', '/apis/binnacle.dev/v1alpha1/bundledeployments', true), { verb: 'watch', resource: 'bundledeployments' });
  assert.deepEqual(requestTarget('PATCH', '/apis/binnacle.dev/v1alpha1/clusterextensions/a/status'), { verb: 'patch', resource: 'clusterextensions/status' });
  assert.deepEqual(requestTarget('GET', '/api/v1/namespaces/ns/configmaps/c'), { verb: 'get', resource: 'configmaps' });
  assert.deepEqual(requestTarget('DELETE', '/api/v1/namespaces/ns/configmaps'), { verb: 'deletecollection', resource: 'configmaps' });
  assert.deepEqual(requestTarget('POST', '/api/v1/namespaces'), { verb: 'create', resource: 'namespaces' });
  assert.deepEqual(requestTarget('GET', '/api/v1/namespaces/ns'), { verb: 'get', resource: 'namespaces' });
  assert.deepEqual(requestTarget('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l'), { verb: 'update', resource: 'leases' });
  assert.deepEqual(requestTarget('GET', '/apis/binnacle.dev/v1alpha1'), { verb: 'get', resource: '/apis/binnacle.dev/v1alpha1' });
  assert.deepEqual(requestTarget('GET', '/version'), { verb: 'get', resource: '/version' });
});

test("the process metrics are Go's process collector's and Node's, under the prefix asked, the event loop sampled every EVENT_LOOP_SAMPLE_MS", async () => {
  const registry = new Registry();
  collectProcessMetrics(registry, 'binnacle_process_');
  const text = await registry.metrics();
  for (const name of ['binnacle_process_process_cpu_seconds_total', 'binnacle_process_process_resident_memory_bytes', 'binnacle_process_nodejs_eventloop_lag_seconds']) assert.match(text, new RegExp(`^${name} `, 'm'), name);
  // prom-client's 10 ms default would wake an idle operator a hundred times a second. The
  // histogram records the time between its samples: none shorter than the interval asked.
  assert.ok(EVENT_LOOP_SAMPLE_MS >= 100);
  await new Promise((r) => setTimeout(r, EVENT_LOOP_SAMPLE_MS * 5));
  const min = Number(/^binnacle_process_nodejs_eventloop_lag_min_seconds (\S+)$/m.exec(await registry.metrics())?.[1]);
  assert.ok(min >= (EVENT_LOOP_SAMPLE_MS * 0.9) / 1000, `the shortest time between samples was ${min} s`);
  registry.clear();
});

test('event_loop_lag_max_seconds is how long the loop was held past its sampling interval since the last scrape: about 0 idle, the block when held', async () => {
  const registry = new Registry();
  collectProcessMetrics(registry, 'binnacle_process_');
  const lag = async (): Promise<number> => Number(/^binnacle_process_event_loop_lag_max_seconds (\S+)$/m.exec(await registry.metrics())?.[1]);
  await lag();
  // Other test files share this process and may hold its loop in any one window (CI read 0.07 s
  // once): the quietest of up to five windows, each its own scrape. A metric that read its own
  // interval would read it in every one.
  let idle = Infinity;
  for (let window = 0; window < 5 && idle >= 0.05; window++) {
    await new Promise((r) => setTimeout(r, EVENT_LOOP_LAG_SAMPLE_MS * 6));
    idle = Math.min(idle, await lag());
  }
  assert.ok(idle < 0.05, `an idle loop reads ${idle} s (not the ${EVENT_LOOP_LAG_SAMPLE_MS} ms interval)`);
  const until = Date.now() + 300;
  while (Date.now() < until) {
    // Hold the loop 300 ms.
  }
  await new Promise((r) => setTimeout(r, EVENT_LOOP_LAG_SAMPLE_MS * 3));
  const held = await lag();
  assert.ok(held >= 0.3 - EVENT_LOOP_LAG_SAMPLE_MS / 1000 && held < 1, `a 300 ms block reads ${held} s`);
  assert.ok((await lag()) < 0.3, 'reset by the scrape');
  registry.clear();
});
