import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { BinnacleError } from '../util/errors.js';
import { RegistryClient } from './registry-client.js';

// A fake registry: `paged` answers in pages of two with Link headers, `empty` with `"tags": null`,
// `elsewhere` with a next link to another host.
let server: Server;
let host = '';
const pagedTags = ['1.0.0', '1.1.0', '2.0.0', '2.1.0-rc.1', 'latest'];

before(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/v2/charts/paged/tags/list') {
      const last = url.searchParams.get('last');
      const start = last === null ? 0 : pagedTags.indexOf(last) + 1;
      const page = pagedTags.slice(start, start + 2);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (start + 2 < pagedTags.length) headers.link = `</v2/charts/paged/tags/list?n=2&last=${page[page.length - 1] ?? ''}>; rel="next"`;
      res.writeHead(200, headers).end(JSON.stringify({ name: 'charts/paged', tags: page }));
      return;
    }
    if (url.pathname === '/v2/charts/empty/tags/list') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'charts/empty', tags: null }));
      return;
    }
    if (url.pathname === '/v2/charts/elsewhere/tags/list') {
      res.writeHead(200, { 'content-type': 'application/json', link: '<http://evil.example/v2/x/tags/list?last=a>; rel="next"' }).end(JSON.stringify({ tags: ['a'] }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry' }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  assert.ok(addr !== null && typeof addr === 'object');
  host = `127.0.0.1:${addr.port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

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
