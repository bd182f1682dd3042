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
function server(hash: { widget: string }) {
  const calls: string[] = [];
  const client = {
    requestJson: (method: string, path: string, opts: { query?: Record<string, string | undefined> }) => {
      const url = `${path}${opts.query?.hash === undefined ? '' : `?hash=${opts.query.hash}`}`;
      calls.push(url);
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

  // Changed by someone else: read again once the index is older than its max age (30 s).
  hash.widget = 'W3';
  calls.length = 0;
  clock += 29_000;
  await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  assert.deepEqual(calls, []);
  clock += 1_000;
  await (await schemas.snapshot()).kind({ group: 'example.com', version: 'v1', kind: 'Widget' });
  assert.deepEqual(calls, ['/openapi/v3', '/openapi/v3/apis/example.com/v1?hash=W3']);

  // A group-version the index does not name (a CRD created since) reads the index again, at most once a second.
  calls.length = 0;
  clock += 1_000;
  const later = await schemas.snapshot();
  assert.equal(await later.kind({ group: 'nowhere.io', version: 'v1', kind: 'Thing' }), undefined);
  assert.equal(await later.kind({ group: 'nowhere.io', version: 'v1', kind: 'Thing' }), undefined);
  assert.deepEqual(calls, ['/openapi/v3']);
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
