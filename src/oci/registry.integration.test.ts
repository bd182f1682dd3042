/**
 * Against a real `docker-registry` on loopback (started by startLocalRegistry): build → push →
 * pull, re-tagging, tampered blobs, multi-platform indexes, cache GC, Basic (htpasswd) auth and
 * the Bearer token flow with a token server started here. Every process is stopped in `after`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BinnacleError, InputError } from '../util/errors.js';
import {
  MediaType,
  RegistryClient,
  buildImage,
  credentialsFromAuthFiles,
  findDebianTool,
  gcCache,
  manifestToJson,
  parseRegistriesConf,
  pullAndUnpack,
  pushImage,
  startLocalRegistry,
  type BuiltImage,
  type LocalRegistry,
} from './index.js';

const cleanups: Array<() => Promise<void>> = [];
let base = '';
let registry: LocalRegistry;

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'oci-it-'));
  cleanups.push(() => rm(base, { recursive: true, force: true }));
  registry = await startLocalRegistry({ dataDir: join(base, 'registry') });
  cleanups.push(() => registry.stop());
});

after(async () => {
  // Registries and servers first, files last.
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

async function sourceTree(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(base, 'src', name);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

/** Every file (content) and symlink (target) under dir, by relative path. */
async function snapshot(dir: string, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) {
    const abs = join(dir, name);
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    const st = await lstat(abs);
    if (st.isDirectory()) Object.assign(out, await snapshot(abs, rel));
    else if (st.isSymbolicLink()) out[rel] = `-> ${await readlink(abs)}`;
    else out[rel] = await readFile(abs, 'utf8');
  }
  return out;
}

function isCode(code: string): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof BinnacleError, `expected a BinnacleError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  };
}

const CATALOG_LABEL = 'operators.operatorframework.io.index.configs.v1';

test('build → push → pull gives byte-identical files and the labels; a second pull reuses the tree', async () => {
  const files = { 'etcd/catalog.json': '{"schema":"olm.package","name":"etcd"}\n', 'etcd/channels.yaml': 'schema: olm.channel\n', 'README': 'x'.repeat(100_000) };
  const src = await sourceTree('catalog-v1', files);
  const image = await buildImage({ layers: [{ dir: src, prefix: '/configs' }], labels: { [CATALOG_LABEL]: '/configs' } });
  cleanups.push(() => rm(image.layoutDir, { recursive: true, force: true }));
  const client = new RegistryClient();
  const pushed = await pushImage(image, `${registry.host}/catalogs/demo:v1`, client);
  assert.equal(pushed.digest, image.manifestDigest);
  assert.equal(pushed.ref, `${registry.host}/catalogs/demo@${image.manifestDigest}`);

  const cacheDir = join(base, 'cache-1');
  const pulled = await pullAndUnpack(`${registry.host}/catalogs/demo:v1`, { cacheDir, client });
  assert.equal(pulled.digest, image.manifestDigest);
  assert.deepEqual(pulled.labels, { [CATALOG_LABEL]: '/configs' });
  assert.deepEqual(await snapshot(join(pulled.dir, 'configs')), await snapshot(src));

  // Cross-repository mount: the registry links the blob instead of receiving it again.
  const layer = image.manifest.layers[0];
  assert.ok(layer !== undefined);
  const source = { digest: layer.digest, size: layer.size, open: () => Buffer.alloc(0) };
  assert.equal(await client.uploadBlob(`${registry.host}/catalogs/mounted:v1`, source, { mountFrom: 'catalogs/demo' }), 'mounted');
  assert.equal(await client.uploadBlob(`${registry.host}/catalogs/mounted:v1`, source), 'exists');

  const head = await client.headManifest(`${registry.host}/catalogs/demo:v1`);
  assert.equal(head?.digest, image.manifestDigest);
  assert.equal(await client.headManifest(`${registry.host}/catalogs/demo:nope`), undefined);

  // By digest, with everything cached, no request is made: a client that cannot reach anything still works.
  const offline = new RegistryClient({ insecure: false });
  const again = await pullAndUnpack(pushed.ref, { cacheDir, client: offline });
  assert.equal(again.dir, pulled.dir);
  assert.deepEqual(again.labels, pulled.labels);
  await assert.rejects(pullAndUnpack(`${registry.host}/catalogs/demo:v1`, { cacheDir, client: offline }), isCode('OCI_UNREACHABLE'));
});

test('re-pushing a tag with new content yields a new digest and pulls the new files; gcCache drops the old tree', async () => {
  const client = new RegistryClient();
  const ref = `${registry.host}/catalogs/moving:latest`;
  const cacheDir = join(base, 'cache-2');
  const one = await buildImage({ layers: [{ dir: await sourceTree('moving-1', { 'a.yaml': 'one' }), prefix: '/configs' }], labels: { v: '1' } });
  const two = await buildImage({ layers: [{ dir: await sourceTree('moving-2', { 'a.yaml': 'two' }), prefix: '/configs' }], labels: { v: '2' } });
  cleanups.push(() => rm(one.layoutDir, { recursive: true, force: true }), () => rm(two.layoutDir, { recursive: true, force: true }));

  const first = await pushImage(one, ref, client);
  const p1 = await pullAndUnpack(ref, { cacheDir, client });
  const second = await pushImage(two, ref, client);
  assert.notEqual(first.digest, second.digest);
  const p2 = await pullAndUnpack(ref, { cacheDir, client });
  assert.equal(p2.digest, second.digest);
  assert.equal(await readFile(join(p2.dir, 'configs/a.yaml'), 'utf8'), 'two');
  assert.deepEqual(p2.labels, { v: '2' });

  const gc = await gcCache(cacheDir, [p2.digest]);
  assert.equal(gc.removedTrees, 1);
  assert.equal(gc.removedBlobs, 3); // the old manifest, config and layer
  assert.ok(gc.freedBytes > 0);
  await assert.rejects(lstat(p1.dir));
  assert.equal(await readFile(join(p2.dir, 'configs/a.yaml'), 'utf8'), 'two');
  // What is kept still pulls offline by digest.
  const offline = await pullAndUnpack(second.ref, { cacheDir, client: new RegistryClient({ insecure: false }) });
  assert.equal(offline.dir, p2.dir);
});

test('a blob tampered with in the registry storage fails digest verification and leaves nothing in the cache', async () => {
  const client = new RegistryClient();
  const image = await buildImage({ layers: [{ dir: await sourceTree('tamper', { 'f.txt': 'honest content' }), prefix: '/' }], labels: {} });
  cleanups.push(() => rm(image.layoutDir, { recursive: true, force: true }));
  await pushImage(image, `${registry.host}/evil/image:v1`, client);
  const layer = image.manifest.layers[0];
  assert.ok(layer !== undefined);
  const hex = layer.digest.slice(7);
  const data = join(registry.storageDir, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data');
  const original = await readFile(data);
  const evil = Buffer.from(original);
  evil[evil.length - 20] = (evil[evil.length - 20] ?? 0) ^ 0xff; // same size, different bytes
  await writeFile(data, evil);

  const cacheDir = join(base, 'cache-3');
  await assert.rejects(pullAndUnpack(`${registry.host}/evil/image:v1`, { cacheDir, client }), isCode('OCI_DIGEST_MISMATCH'));
  await assert.rejects(lstat(join(cacheDir, 'blobs/sha256', hex)));
  assert.deepEqual(await readdir(join(cacheDir, 'fs')).catch(() => []), []);
  // A cached blob corrupted on disk is caught too.
  await writeFile(data, original);
  const ok = await pullAndUnpack(`${registry.host}/evil/image:v1`, { cacheDir, client });
  await rm(ok.dir, { recursive: true });
  await writeFile(join(cacheDir, 'blobs/sha256', hex), evil);
  await assert.rejects(pullAndUnpack(`${registry.host}/evil/image:v1`, { cacheDir, client }), isCode('OCI_DIGEST_MISMATCH'));
});

test('an OCI index with two platforms: linux/amd64 is picked by default, another on request', async () => {
  const client = new RegistryClient();
  const images: Record<string, BuiltImage> = {};
  for (const arch of ['arm64', 'amd64']) {
    const img = await buildImage({
      layers: [{ dir: await sourceTree(`multi-${arch}`, { arch }), prefix: '/' }],
      labels: { arch },
      platform: { os: 'linux', architecture: arch },
    });
    cleanups.push(() => rm(img.layoutDir, { recursive: true, force: true }));
    await pushImage(img, `${registry.host}/multi/app:${arch}`, client);
    images[arch] = img;
  }
  const entries = ['arm64', 'amd64'].map((arch) => {
    const img = images[arch];
    assert.ok(img !== undefined);
    return { mediaType: MediaType.ociManifest, digest: img.manifestDigest, size: img.manifestBytes.length, platform: { os: 'linux', architecture: arch } };
  });
  const indexBytes = Buffer.from(manifestToJson({ kind: 'index', schemaVersion: 2, mediaType: MediaType.ociIndex, manifests: entries }));
  await client.putManifest(`${registry.host}/multi/app:latest`, indexBytes, MediaType.ociIndex);

  const cacheDir = join(base, 'cache-4');
  const amd = await pullAndUnpack(`${registry.host}/multi/app:latest`, { cacheDir, client });
  assert.equal(amd.digest, images.amd64?.manifestDigest);
  assert.deepEqual(amd.labels, { arch: 'amd64' });
  assert.equal(await readFile(join(amd.dir, 'arch'), 'utf8'), 'amd64');
  const arm = await pullAndUnpack(`${registry.host}/multi/app:latest`, { cacheDir, client, platform: { os: 'linux', architecture: 'arm64' } });
  assert.deepEqual(arm.labels, { arch: 'arm64' });
  await assert.rejects(
    pullAndUnpack(`${registry.host}/multi/app:latest`, { cacheDir, client, platform: { os: 'linux', architecture: 's390x' } }),
    (err: unknown) => isCode('OCI_NO_PLATFORM')(err) && err instanceof Error && /linux\/arm64, linux\/amd64/.test(err.message),
  );
  // A single-platform image is taken as it is, as containerd does: bundles are data.
  assert.deepEqual((await pullAndUnpack(`${registry.host}/multi/app:arm64`, { cacheDir, client })).labels, { arch: 'arm64' });
  // gcCache keeps an index's children: nothing pulled through it goes.
  const gc = await gcCache(cacheDir, [(await client.getManifest(`${registry.host}/multi/app:latest`)).digest]);
  assert.equal(gc.removedTrees, 0);
});

test("registries.conf: a moved prefix and a mirror pull from where the admin says; a mirror that does not answer falls through to the next; none answering names each place tried", async () => {
  const client = new RegistryClient();
  const image = await buildImage({ layers: [{ dir: await sourceTree('mirrored', { 'm.yaml': 'mirrored' }), prefix: '/configs' }], labels: { m: '1' } });
  cleanups.push(() => rm(image.layoutDir, { recursive: true, force: true }));
  const pushed = await pushImage(image, `${registry.host}/mirrors/demo:v1`, client);
  // OLM v1's e2e: a name no DNS knows, moved to the real registry.
  const moved = parseRegistriesConf(`[[registry]]\nprefix = "mirrored-registry.example.local:5000"\nlocation = "${registry.host}/mirrors"\n`, 'moved.conf');
  const pulled = await pullAndUnpack('mirrored-registry.example.local:5000/demo:v1', { cacheDir: join(base, 'cache-mirror-1'), client: new RegistryClient({ registries: moved }) });
  assert.equal(pulled.digest, pushed.digest);
  assert.deepEqual(pulled.labels, { m: '1' });
  // A mirror that does not answer (a closed port), then one that has it; the primary is never asked.
  const mirrored = parseRegistriesConf(`[[registry]]\nprefix = "quay.example.local"\n[[registry.mirror]]\nlocation = "127.0.0.1:9/nothing"\n[[registry.mirror]]\nlocation = "${registry.host}/mirrors"\n`, 'mirrors.conf');
  const viaMirrors = new RegistryClient({ registries: mirrored, timeoutMs: 5_000 });
  const viaMirror = await pullAndUnpack('quay.example.local/demo:v1', { cacheDir: join(base, 'cache-mirror-2'), client: viaMirrors });
  assert.equal(viaMirror.digest, pushed.digest);
  await assert.rejects(pullAndUnpack('quay.example.local/absent:v1', { cacheDir: join(base, 'cache-mirror-3'), client: viaMirrors }), (err: unknown) => {
    assert.ok(err instanceof BinnacleError && err.code === 'OCI_PULL_FAILED', String(err));
    assert.match(err.message, /quay\.example\.local\/absent:v1 could not be read from any place registries\.conf gives for it: mirror 127\.0\.0\.1:9\/nothing\/absent:v1: .*; mirror [^ ]+\/mirrors\/absent:v1: .*; primary quay\.example\.local\/absent:v1: /);
    return true;
  });
  // Every read goes where the file says, not only a pull: a digest resolved for an approval or a
  // signature check (HEAD), a tag list (a catalog's or chart's versions), a manifest.
  assert.equal((await viaMirrors.headManifest('quay.example.local/demo:v1'))?.digest, pushed.digest);
  assert.deepEqual(await viaMirrors.listTags('quay.example.local/demo'), ['v1']);
  assert.equal((await new RegistryClient({ registries: moved }).getManifest('mirrored-registry.example.local:5000/demo:v1')).digest, pushed.digest);
  // A HEAD some place answers 404 for (the closed mirror fails, the next has no such tag) is "not there", not an error.
  assert.equal(await viaMirrors.headManifest('quay.example.local/demo:absent'), undefined);
  // A blocked prefix refuses every read, naming the file and the rule.
  const blocked = new RegistryClient({ registries: parseRegistriesConf(`[[registry]]\nprefix = "${registry.host}/mirrors"\nblocked = true\n`, 'blocked.conf') });
  for (const read of [() => blocked.headManifest(`${registry.host}/mirrors/demo:v1`), () => blocked.getManifest(`${registry.host}/mirrors/demo:v1`), () => blocked.listTags(`${registry.host}/mirrors/demo`)]) {
    await assert.rejects(read(), (err: unknown) => err instanceof InputError && err.code === 'REGISTRY_BLOCKED' && /blocked\.conf/.test(err.message) && /registry\[0\]\.blocked/.test(err.message));
  }
  // Pushes go where their reference says: a blocked prefix for reads does not stop a push.
  assert.equal((await pushImage(image, `${registry.host}/mirrors/demo:v2`, blocked)).digest, pushed.digest);
});

test('pulling what does not exist names it', async () => {
  await assert.rejects(pullAndUnpack(`${registry.host}/nothing/here:v1`, { cacheDir: join(base, 'cache-5') }), (err: unknown) => {
    assert.ok(isCode('OCI_NOT_FOUND')(err) && err instanceof Error);
    assert.match(err.message, /nothing\/here/);
    assert.match(err.message, /MANIFEST_UNKNOWN|NAME_UNKNOWN/);
    return true;
  });
});

test('Basic auth against a registry with an htpasswd file', async () => {
  const dir = join(base, 'basic');
  await mkdir(dir, { recursive: true });
  const htpasswd = join(dir, 'htpasswd');
  await writeFile(htpasswd, execFileSync(findDebianTool(['htpasswd'], 'apache2-utils'), ['-Bbn', 'alice', 'wonderland'], { encoding: 'utf8' }));
  const secured = await startLocalRegistry({ dataDir: join(dir, 'registry'), auth: { htpasswd: { path: htpasswd } } });
  cleanups.push(() => secured.stop());
  const image = await buildImage({ layers: [{ dir: await sourceTree('basic', { 'x': 'secret' }), prefix: '/' }], labels: { a: 'b' } });
  cleanups.push(() => rm(image.layoutDir, { recursive: true, force: true }));
  const ref = `${secured.host}/private/app:v1`;

  await assert.rejects(pushImage(image, ref, new RegistryClient({ auth: () => undefined })), isCode('OCI_UNAUTHORIZED'));
  await assert.rejects(pushImage(image, ref, new RegistryClient({ auth: { username: 'alice', password: 'wrong' } })), isCode('OCI_UNAUTHORIZED'));

  // Credentials from a docker-style auth file, as REGISTRY_AUTH_FILE would give them.
  const authFile = join(dir, 'auth.json');
  await writeFile(authFile, JSON.stringify({ auths: { [secured.host]: { auth: Buffer.from('alice:wonderland').toString('base64') } } }));
  const client = new RegistryClient({ auth: credentialsFromAuthFiles([authFile]) });
  await pushImage(image, ref, client);
  const pulled = await pullAndUnpack(ref, { cacheDir: join(dir, 'cache'), client });
  assert.equal(await readFile(join(pulled.dir, 'x'), 'utf8'), 'secret');
});

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

test('Bearer token flow with a token server started here', async () => {
  const dir = join(base, 'bearer');
  await mkdir(dir, { recursive: true });
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(findDebianTool(['openssl'], 'openssl'), ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=binnacle-test-token'], { stdio: 'ignore' });
  const key = createPrivateKey(await readFile(keyPath));
  const certDer = Buffer.from(
    (await readFile(certPath, 'utf8')).replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, ''),
    'base64',
  );
  const service = 'binnacle-test-registry';
  const issuer = 'binnacle-test-issuer';
  const requests: string[] = [];

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(url.searchParams.getAll('scope').join(' '));
    if (req.headers.authorization !== `Basic ${Buffer.from('bob:builder').toString('base64')}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] }));
      return;
    }
    const access = url.searchParams.getAll('scope').flatMap((s) => {
      const [type, name, actions] = s.split(':');
      return type === undefined || name === undefined || actions === undefined ? [] : [{ type, name, actions: actions.split(',') }];
    });
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [certDer.toString('base64')] }));
    const claims = b64url(JSON.stringify({ iss: issuer, sub: 'bob', aud: url.searchParams.get('service'), exp: now + 300, nbf: now - 10, iat: now, jti: String(Math.random()), access }));
    const signature = b64url(sign('sha256', Buffer.from(`${header}.${claims}`), key));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: `${header}.${claims}.${signature}`, expires_in: 300 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const addr = server.address();
  assert.ok(addr !== null && typeof addr === 'object');

  const secured = await startLocalRegistry({
    dataDir: join(dir, 'registry'),
    auth: { token: { realm: `http://127.0.0.1:${addr.port}/token`, service, issuer, rootCertBundle: certPath } },
  });
  cleanups.push(() => secured.stop());
  const image = await buildImage({ layers: [{ dir: await sourceTree('bearer', { 'y': 'token-protected' }), prefix: '/data' }], labels: { via: 'bearer' } });
  cleanups.push(() => rm(image.layoutDir, { recursive: true, force: true }));
  const ref = `${secured.host}/team/app:v1`;

  await assert.rejects(pushImage(image, ref, new RegistryClient({ auth: () => undefined })), (err: unknown) => isCode('OCI_UNAUTHORIZED')(err) && err instanceof Error && /bad credentials/.test(err.message));

  const client = new RegistryClient({ auth: { username: 'bob', password: 'builder' } });
  requests.length = 0;
  const pushed = await pushImage(image, ref, client);
  // One token per scope set, reused for every blob and the manifest.
  assert.deepEqual(requests, ['repository:team/app:pull,push']);
  const pulled = await pullAndUnpack(ref, { cacheDir: join(dir, 'cache'), client });
  assert.equal(pulled.digest, pushed.digest);
  assert.deepEqual(pulled.labels, { via: 'bearer' });
  assert.equal(await readFile(join(pulled.dir, 'data/y'), 'utf8'), 'token-protected');
  assert.deepEqual(requests, ['repository:team/app:pull,push', 'repository:team/app:pull']);
});
