/**
 * The `lookup` bridge only reads: a template (or anything else inside the engine) cannot make
 * the manager's client write to the cluster or reach a subresource such as a service proxy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { confinedLookup, isLookupPath, readOnlyLookup } from './lookup-gate.js';

function recordingTransport(): { calls: string[]; transport: Parameters<typeof readOnlyLookup>[0] } {
  const calls: string[] = [];
  return { calls, transport: (method, path) => (calls.push(`${method} ${path}`), Promise.resolve({ status: 200, body: '{}' })) };
}

test('every method but GET is refused with a 405 Status, and nothing reaches the transport', async () => {
  const { calls, transport } = recordingTransport();
  const gate = readOnlyLookup(transport);
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'get', 'HEAD', 'OPTIONS', 'CONNECT']) {
    const res = await gate(method, '/api/v1/namespaces/default/configmaps/x', '{"data":{}}');
    assert.equal(res.status, 405, method);
    const status = JSON.parse(res.body) as { kind: string; reason: string; message: string };
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'MethodNotAllowed');
    assert.match(status.message, new RegExp(`lookup is read-only: ${method} /api/v1/namespaces/default/configmaps/x`));
  }
  assert.deepEqual(calls, []);
});

test('GET of discovery, a list or one object passes through unchanged', async () => {
  const { calls, transport } = recordingTransport();
  const gate = readOnlyLookup(transport);
  const reads = ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/api/v1/namespaces/kube-system', '/api/v1/namespaces', '/api/v1/namespaces/ns/configmaps', '/api/v1/namespaces/ns/configmaps/cm?timeout=32s', '/apis/apps/v1/namespaces/ns/deployments/d', '/apis/apps/v1/deployments', '/apis/example.com/v1/widgets/w'];
  for (const path of reads) assert.equal((await gate('GET', path, '')).status, 200, path);
  assert.deepEqual(calls, reads.map((p) => `GET ${p}`));
});

test('GET of a subresource (service proxy, pod exec or log, status) or an odd path is refused with a 403 Status', async () => {
  const { calls, transport } = recordingTransport();
  const gate = readOnlyLookup(transport);
  const refused = [
    '/api/v1/namespaces/ns/services/svc/proxy/admin',
    '/api/v1/namespaces/ns/services/http:svc:80/proxy',
    '/api/v1/namespaces/ns/pods/p/exec?command=sh',
    '/api/v1/namespaces/ns/pods/p/log',
    '/apis/apps/v1/namespaces/ns/deployments/d/status',
    '/api/v1/nodes/n/proxy/metrics',
    '/api/v1/namespaces/ns/configmaps/..%2Fx',
    '/api/v1/namespaces/ns/configmaps/../../secrets',
    '/healthz',
    '/version',
    'api/v1',
    '//evil/api/v1',
  ];
  for (const path of refused) {
    const res = await gate('GET', path, '');
    assert.equal(res.status, 403, path);
    assert.match((JSON.parse(res.body) as { message: string }).message, /lookup reads resources only/);
    assert.equal(isLookupPath(path), false, path);
  }
  assert.deepEqual(calls, []);
});

test("confined to a release's namespaces: another namespace's objects and lists across namespaces of a namespaced resource are refused; discovery, cluster-scoped resources and Namespace objects pass", async () => {
  const calls: string[] = [];
  const discovery: Record<string, unknown> = {
    '/api/v1': { resources: [{ name: 'secrets', namespaced: true }, { name: 'namespaces', namespaced: false }, { name: 'nodes', namespaced: false }] },
    '/apis/storage.k8s.io/v1': { resources: [{ name: 'storageclasses', namespaced: false }] },
    '/apis/example.com/v1': { resources: [{ name: 'namespaces', namespaced: true }] },
  };
  const gate = confinedLookup((method, path) => {
    calls.push(path);
    const doc = discovery[path];
    return Promise.resolve(doc === undefined ? { status: 200, body: '{}' } : { status: 200, body: JSON.stringify(doc) });
  }, new Set(['team-a', 'shared']));
  for (const path of ['/api/v1/namespaces/team-b/secrets/db', '/api/v1/namespaces/team-b/secrets', '/apis/apps/v1/namespaces/kube-system/deployments', '/api/v1/secrets', '/apis/example.com/v1/widgets', '/apis/example.com/v1/namespaces']) {
    const res = await gate('GET', path, '');
    assert.equal(res.status, 403, path);
    assert.match((JSON.parse(res.body) as { message: string }).message, /reads namespaced resources in shared, team-a only/);
  }
  assert.ok(!calls.some((c) => c.includes('/secrets') || c.includes('deployments') || c.includes('widgets')), `nothing named reached the transport: ${calls.join(' ')}`);
  for (const path of ['/api', '/api/v1', '/api/v1/namespaces/team-a/secrets/db', '/api/v1/namespaces/shared/configmaps', '/api/v1/namespaces/kube-system', '/api/v1/namespaces', '/api/v1/nodes', '/apis/storage.k8s.io/v1/storageclasses', '/apis/storage.k8s.io/v1/storageclasses/standard']) {
    assert.equal((await gate('GET', path, '')).status, 200, path);
  }
  // A template's loop of cluster-level lookups asks each group's discovery once a render.
  const asked = (): number => calls.filter((c) => c === '/apis/storage.k8s.io/v1').length;
  const before = asked();
  for (let i = 0; i < 5; i++) assert.equal((await gate('GET', '/apis/storage.k8s.io/v1/storageclasses', '')).status, 200);
  assert.equal(asked(), before, 'discovery of storage.k8s.io/v1 was asked once already');
  assert.equal(before, 1);
});
