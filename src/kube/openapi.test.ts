import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BinnacleError } from '../util/errors.js';
import { KubeApiError } from './errors.js';
import { OpenApiSchemas } from './openapi.js';

const widget = {
  components: {
    schemas: {
      'com.example.v1.Widget': { type: 'object', properties: { spec: { type: 'object' } }, 'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Widget' }] },
    },
  },
};
const core = {
  components: {
    schemas: {
      'io.k8s.api.core.v1.ConfigMap': { type: 'object', 'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'ConfigMap' }] },
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { type: 'object', properties: { name: { type: 'string' } } },
    },
  },
};

/** A fake server: the index names each document by a URL with its hash, as /openapi/v3 does. */
function server(hash: { widget: string }, hold?: (() => void)[]) {
  const calls: string[] = [];
  const client = {
    requestJson: async (method: string, path: string, opts: { query?: Record<string, string | undefined> }) => {
      const url = `${path}${opts.query?.hash === undefined ? '' : `?hash=${opts.query.hash}`}`;
      calls.push(url);
      // The index answered only when the test says (a read the API server is slow to answer).
      if (path === '/openapi/v3' && hold !== undefined) await new Promise<void>((resolve) => hold.push(resolve));
      if (path === '/openapi/v3') return Promise.resolve({ paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=C1' }, 'apis/example.com/v1': { serverRelativeURL: `/openapi/v3/apis/example.com/v1?hash=${hash.widget}` } } });
      if (path === '/openapi/v3/api/v1') return Promise.resolve(core);
      if (path === '/openapi/v3/apis/example.com/v1') return Promise.resolve(widget);
      return Promise.reject(new KubeApiError(404, 'NotFound', url));
    },
  };
  return { client, calls };
}

test('a kind is found in its group-version document; documents are read once per content hash, the index once until it is stale or invalidated', async () => {
  const hash = { widget: 'W1' };
  const { client, calls } = server(hash);
  let clock = 0;
  const schemas = new OpenApiSchemas(client, { now: () => clock });
  const snap = await schemas.snapshot();
  const w = await snap.kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  assert.equal(w?.origin, '/openapi/v3 apis/example.com/v1');
  assert.deepEqual(w?.root.properties, { spec: { type: 'object' } });
  assert.equal(await snap.kind({ group: 'example.com', version: 'v1', kind: 'Gadget' }), undefined);
  assert.equal(await snap.kind({ group: 'nowhere.io', version: 'v1', kind: 'Thing' }), undefined);
  assert.equal((await snap.objectMeta())?.root.type, 'object');
  assert.deepEqual(calls, ['/openapi/v3', '/openapi/v3/apis/example.com/v1?hash=W1', '/openapi/v3/api/v1?hash=C1']);

  calls.length = 0;
  await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  assert.deepEqual(calls, [], 'neither the index nor unchanged content is read again');

  // The CRD changed: once the index is invalidated (CRDs applied), the new hash is read.
  hash.widget = 'W2';
  calls.length = 0;
  schemas.invalidate();
  await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  assert.deepEqual(calls, ['/openapi/v3', '/openapi/v3/apis/example.com/v1?hash=W2']);

  // Changed by someone else: read again once the index is older than its max age (30 s); the
  // snapshot that finds it old is served the last index while it is read behind it.
  hash.widget = 'W3';
  calls.length = 0;
  clock += 29_000;
  await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  assert.deepEqual(calls, []);
  clock += 1_000;
  assert.equal((await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' }))?.origin, '/openapi/v3 apis/example.com/v1');
  assert.deepEqual(calls, ['/openapi/v3'], 'the index read behind; the document the last index named served');
  await new Promise((resolve) => setImmediate(resolve));
  await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  assert.deepEqual(calls, ['/openapi/v3', '/openapi/v3/apis/example.com/v1?hash=W3'], 'the new index from then on');

  // A group-version the index does not name (a CRD created since) reads the index again, at most once a second.
  calls.length = 0;
  clock += 1_000;
  const later = await schemas.snapshot();
  assert.equal(await later.kind({ group: 'nowhere.io', version: 'v1', kind: 'Thing' }), undefined);
  assert.equal(await later.kind({ group: 'nowhere.io', version: 'v1', kind: 'Thing' }), undefined);
  assert.deepEqual(calls, ['/openapi/v3']);
});

test('an index read the server is slow to answer holds no snapshot while the last index is young enough; one invalidated, or too old, waits', async () => {
  const hold: (() => void)[] = [];
  const { client, calls } = server({ widget: 'W1' }, hold);
  let clock = 0;
  const schemas = new OpenApiSchemas(client, { now: () => clock });
  const first = schemas.snapshot();
  await new Promise((resolve) => setImmediate(resolve));
  hold.splice(0).forEach((answer) => answer());
  assert.ok((await (await first).kind({ group: 'example.com', version: 'v1', kind: 'Widget' })) !== undefined);
  const quick = async <T>(p: Promise<T>): Promise<T | 'waiting'> => Promise.race([p, new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 50))]);
  clock += 31_000;
  calls.length = 0;
  const stale = await quick(schemas.snapshot());
  assert.notEqual(stale, 'waiting', 'the last index served while the new one is read');
  assert.deepEqual(calls, ['/openapi/v3']);
  assert.notEqual(await quick(schemas.snapshot()), 'waiting');
  assert.deepEqual(calls, ['/openapi/v3'], 'one read behind for every caller');
  hold.splice(0).forEach((answer) => answer());
  // Invalidated (CRDs installed): the next snapshot waits for the index.
  schemas.invalidate();
  const invalidated = schemas.snapshot();
  assert.equal(await quick(invalidated), 'waiting');
  hold.splice(0).forEach((answer) => answer());
  await invalidated;
  // Ten times its age and more: too old to serve; waits.
  clock += 301_000;
  const old = schemas.snapshot();
  assert.equal(await quick(old), 'waiting');
  hold.splice(0).forEach((answer) => answer());
  await old;
});

test('a group-version the index does not name is read for by that caller alone: other snapshots are served the index meanwhile, and a failed read leaves it', async () => {
  const hold: (() => void)[] = [];
  let holding = false;
  let failing = false;
  const calls: string[] = [];
  const client = {
    requestJson: async (_method: string, path: string) => {
      calls.push(path);
      if (path === '/openapi/v3') {
        if (holding) await new Promise<void>((resolve) => hold.push(resolve));
        if (failing) throw new KubeApiError(503, 'ServiceUnavailable', 'not now');
        return { paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=C1' }, 'apis/example.com/v1': { serverRelativeURL: '/openapi/v3/apis/example.com/v1?hash=W1' } } };
      }
      if (path === '/openapi/v3/api/v1') return core;
      if (path === '/openapi/v3/apis/example.com/v1') return widget;
      throw new KubeApiError(404, 'NotFound', path);
    },
  };
  let clock = 0;
  const schemas = new OpenApiSchemas(client, { now: () => clock });
  await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  clock += 5_000;
  holding = true;
  const missing = (await schemas.snapshot()).kind({ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics' });
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(calls.filter((c) => c === '/openapi/v3').length, 2, 'the index is read again for the miss');
  const quick = async <T>(p: Promise<T>): Promise<T | 'waiting'> => Promise.race([p, new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 50))]);
  const other = await quick(schemas.snapshot().then((snap) => snap.kind({ group: 'example.com', version: 'v1', kind: 'Widget' })));
  assert.notEqual(other, 'waiting', "another reconcile's snapshot is not held by the miss's read");
  hold.splice(0).forEach((answer) => answer());
  assert.equal(await missing, undefined);
  // The miss's read fails: the index stays.
  holding = false;
  failing = true;
  clock += 2_000;
  await assert.rejects((await schemas.snapshot()).kind({ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics' }), /OpenAPI v3/);
  calls.length = 0;
  assert.ok((await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' })) !== undefined, 'the index read before still serves');
  assert.deepEqual(calls, [], 'and is not read again');
});

test('one shared schema cache per client', () => {
  const { client } = server({ widget: 'W1' });
  assert.equal(OpenApiSchemas.shared(client), OpenApiSchemas.shared(client));
  assert.notEqual(OpenApiSchemas.shared(client), OpenApiSchemas.shared(server({ widget: 'W1' }).client));
});

test('a server without OpenAPI v3 knows no schema; other failures say so', async () => {
  const none = new OpenApiSchemas({ requestJson: () => Promise.reject(new KubeApiError(404, 'NotFound', 'no')) });
  assert.equal(await (await none.snapshot()).kind({ group: '', version: 'v1', kind: 'ConfigMap' }), undefined);
  const down = new OpenApiSchemas({ requestJson: () => Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'busy')) });
  await assert.rejects(down.snapshot(), (err: unknown) => err instanceof BinnacleError && err.code === 'OPENAPI_UNAVAILABLE');
  const bad = new OpenApiSchemas({ requestJson: () => Promise.resolve({ nope: true }) });
  await assert.rejects(bad.snapshot(), (err: unknown) => err instanceof BinnacleError && err.code === 'OPENAPI_INVALID');
});
