import { after, before, test } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { BinnacleError } from '../util/errors.js';
import { sha256Digest } from './digest.js';
import { startFakeRegistry, type FakeRegistry } from './fake-registry.test-helper.js';
import { MediaType } from './manifest.js';
import { RegistryClient } from './registry-client.js';

// A fake registry whose misbehaviour each test picks by repository name.
let registry: FakeRegistry;
let host = '';
const manifest = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: MediaType.ociConfig, digest: sha256Digest('{}'), size: 2 }, layers: [] }));

before(async () => {
  registry = await startFakeRegistry({
    intercept: (_req, res, { pathname: url }) => {
      if (url.startsWith('/v2/silent/')) return true; // never answers
      if (url.startsWith('/v2/stall/blobs/')) {
        res.writeHead(200, { 'content-length': '1000' });
        res.write(Buffer.alloc(10)); // then nothing, forever
        return true;
      }
      // A manifest and a tag list that begin and never end.
      if (url === '/v2/stall-doc/manifests/v1' || url === '/v2/stall-doc/tags/list') {
        res.writeHead(200, { 'content-type': url.endsWith('/v1') ? MediaType.ociManifest : 'application/json' });
        res.write('{"schemaVersion": 2, ');
        return true;
      }
      if (url === '/v2/lying/manifests/v1') {
        res.writeHead(200, { 'content-type': MediaType.ociManifest, 'docker-content-digest': sha256Digest('something else') }).end(manifest);
        return true;
      }
      if (url === '/v2/huge/manifests/v1') {
        res.writeHead(200, { 'content-type': MediaType.ociManifest }).end(Buffer.alloc(2048, 32));
        return true;
      }
      return false;
    },
  });
  registry.putManifest('good', 'v1', manifest, MediaType.ociManifest);
  host = registry.host;
});

after(() => registry.close());

function code(expected: string): (err: unknown) => boolean {
  return (err: unknown) => err instanceof BinnacleError && err.code === expected;
}

test('a registry that stops sending a blob times out instead of hanging', async () => {
  const client = new RegistryClient({ timeoutMs: 300, auth: () => undefined });
  const started = Date.now();
  await assert.rejects(async () => {
    for await (const _ of await client.getBlob(`${host}/stall:v1`, sha256Digest('x'), 1000)) {
      // drain
    }
  }, code('OCI_TIMEOUT'));
  assert.ok(Date.now() - started < 5000);
});

test('a registry that never answers fails at the deadline, naming the registry and the deadline', async () => {
  const client = new RegistryClient({ timeoutMs: 300, auth: () => undefined });
  await assert.rejects(client.getManifest(`${host}/silent:v1`), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'OCI_UNREACHABLE');
    assert.match(err.message, new RegExp(`^registry ${host} \\(GET http://${host}/v2/silent/manifests/v1\\): no answer from ${host} within 300 ms$`));
    return true;
  });
});

test('a manifest or a tag list that stops coming fails at the deadline as an unreachable registry, not as invalid JSON', async () => {
  const client = new RegistryClient({ timeoutMs: 300, auth: () => undefined });
  const atDeadline = (what: string) => (err: Error & { code?: string; errorClass?: string }) => {
    assert.equal(err.code, 'OCI_UNREACHABLE', err.message);
    assert.ok(err instanceof BinnacleError && err.errorClass === 'transient', 'tried again, as any unreachable registry');
    assert.equal(err.message, `${what}: reading the answer from ${host} failed: no answer from ${host} within 300 ms`);
    return true;
  };
  await assert.rejects(client.getManifest(`${host}/stall-doc:v1`), atDeadline(`manifest ${host}/stall-doc:v1`));
  await assert.rejects(client.listTags(`${host}/stall-doc`), atDeadline(`tags of ${host}/stall-doc`));
});

test('a manifest whose bytes do not match the announced digest is refused', async () => {
  const client = new RegistryClient({ auth: () => undefined });
  await assert.rejects(client.getManifest(`${host}/lying:v1`), code('OCI_DIGEST_MISMATCH'));
  const good = await client.getManifest(`${host}/good:v1`);
  assert.equal(good.digest, sha256Digest(manifest));
  // By digest, the bytes must hash to the digest asked for, whatever the headers say.
  await assert.rejects(client.getManifest(`${host}/good@${sha256Digest('other')}`), code('OCI_NOT_FOUND'));
});

test('a manifest over the size limit is refused', async () => {
  const client = new RegistryClient({ maxManifestBytes: 1024, auth: () => undefined });
  await assert.rejects(client.getManifest(`${host}/huge:v1`), code('OCI_TOO_LARGE'));
});

test('registry errors carry the registry error code text', async () => {
  const client = new RegistryClient({ auth: () => undefined });
  await assert.rejects(client.getManifest(`${host}/missing:v1`), (err: unknown) => code('OCI_NOT_FOUND')(err) && err instanceof Error && /NAME_UNKNOWN/.test(err.message));
});

test("an upload Location on another origin gets the blob but not the registry's credentials", async () => {
  const seen: { host: string; authorization?: string }[] = [];
  const storage = createServer((req, res) => {
    seen.push({ host: 'storage', ...(req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization }) });
    req.resume().on('end', () => void (req.url?.startsWith('/deny/') === true ? res.writeHead(401, { 'www-authenticate': 'Basic realm="storage"' }) : res.writeHead(201)).end());
  });
  await new Promise<void>((resolve) => storage.listen(0, '127.0.0.1', resolve));
  const storagePort = (storage.address() as AddressInfo).port;
  const guarded = await startFakeRegistry({
    intercept: (req, res, { pathname }) => {
      seen.push({ host: 'registry', ...(req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization }) });
      if (req.headers.authorization === undefined) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="fake"' }).end();
        return true;
      }
      if (req.method === 'POST' && (pathname === '/v2/app/blobs/uploads/' || pathname === '/v2/denied/blobs/uploads/')) {
        res.writeHead(202, { location: `http://127.0.0.1:${storagePort}/${pathname.startsWith('/v2/app/') ? 'upload' : 'deny'}/u1?session=1` }).end();
        return true;
      }
      return false;
    },
  });
  try {
    const client = new RegistryClient({ auth: { username: 'user', password: 'secret' } });
    const blob = Buffer.from('a layer');
    assert.equal(await client.uploadBlob(`${guarded.host}/app:v1`, { digest: sha256Digest(blob), size: blob.length, open: () => blob }), 'uploaded');
    const basic = `Basic ${Buffer.from('user:secret').toString('base64')}`;
    assert.ok(seen.some((s) => s.host === 'registry' && s.authorization === basic), 'the registry was sent the credentials');
    assert.deepEqual(seen.filter((s) => s.host === 'storage'), [{ host: 'storage' }], 'the storage origin was sent the blob once, without them');
    // One that asks for credentials is told none go off the registry's origin, and is sent none.
    await assert.rejects(client.uploadBlob(`${guarded.host}/denied:v1`, { digest: sha256Digest(blob), size: blob.length, open: () => blob }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'OCI_UNAUTHORIZED');
      assert.match(err.message, new RegExp(`the upload location http://127\\.0\\.0\\.1:${storagePort} asked for credentials, and the registry's are not sent off its own origin`));
      return true;
    });
    assert.ok(seen.every((s) => s.host !== 'storage' || s.authorization === undefined), 'no credentials reached the storage origin');
  } finally {
    storage.closeAllConnections();
    await new Promise((resolve) => storage.close(resolve));
    await guarded.close();
  }
});
