import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BinnacleError } from '../util/errors.js';
import { startFakeRegistry, type FakeRegistry } from './fake-registry.test-helper.js';
import { MediaType } from './manifest.js';
import { RegistryClient } from './registry-client.js';

// A fake registry: `paged` answers in pages of two with Link headers, `empty` with `"tags": null`,
// `elsewhere` with a next link to another host.
let registry: FakeRegistry;
let host = '';
const pagedTags = ['1.0.0', '1.1.0', '2.0.0', '2.1.0-rc.1', 'latest'];

before(async () => {
  registry = await startFakeRegistry({
    tagPageSize: 2,
    intercept: (_req, res, url) => {
      if (url.pathname === '/v2/charts/empty/tags/list') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'charts/empty', tags: null }));
        return true;
      }
      if (url.pathname === '/v2/charts/elsewhere/tags/list') {
        res.writeHead(200, { 'content-type': 'application/json', link: '<http://evil.example/v2/x/tags/list?last=a>; rel="next"' }).end(JSON.stringify({ tags: ['a'] }));
        return true;
      }
      return false;
    },
  });
  for (const tag of pagedTags) registry.putManifest('charts/paged', tag, Buffer.from('{}'), MediaType.ociManifest); // only the tags are read
  host = registry.host;
});

after(() => registry.close());

const client = (): RegistryClient => new RegistryClient({ auth: () => undefined });
const code = (expected: string) => (err: unknown) => err instanceof BinnacleError && err.code === expected;

test('listTags follows Link pages and keeps the registry order', async () => {
  assert.deepEqual(await client().listTags(`${host}/charts/paged`), pagedTags);
});

test('listTags reads "tags": null as no tags', async () => {
  assert.deepEqual(await client().listTags(`${host}/charts/empty`), []);
});

test('listTags refuses to follow a page link to another host, and reports a missing repository as not found', async () => {
  await assert.rejects(client().listTags(`${host}/charts/elsewhere`), code('OCI_REGISTRY_ERROR'));
  await assert.rejects(client().listTags(`${host}/charts/missing`), (err: unknown) => code('OCI_NOT_FOUND')(err) && /NAME_UNKNOWN/.test(String(err)));
});

test('listTags stops after maxPages', async () => {
  await assert.rejects(client().listTags(`${host}/charts/paged`, { maxPages: 2 }), code('OCI_TOO_LARGE'));
});
