import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildImage, generateSigningKeyPair, parsePrivateKey, pushImage, RegistryClient, signImage, SignatureVerificationError } from '../oci/index.js';
import { startFakeRegistry, type FakeRegistry } from '../oci/fake-registry.test-helper.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, InputError } from '../util/errors.js';
import { parseBundleSource } from './validate.js';
import { unpackSource } from './unpack.js';
import type { SecretReader, SecretRef } from './secrets.js';
import { trustedKeysFromSecret } from './verify.js';

const logger = pino({ level: 'silent' });
const oldPair = generateSigningKeyPair();
const newPair = generateSigningKeyPair();
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A SecretReader over fixed Secrets, acting as `identity`; a Secret it does not hold is forbidden to it. */
function reader(identity: string, secrets: Record<string, Record<string, string>>): SecretReader & { reads: string[] } {
  const reads: string[] = [];
  return {
    identity,
    reads,
    get: (ref: SecretRef): Promise<KubeObject> => {
      reads.push(`${ref.namespace}/${ref.name}`);
      const data = secrets[`${ref.namespace}/${ref.name}`];
      if (data === undefined) return Promise.reject(new KubeApiError(403, 'Forbidden', 'forbidden'));
      return Promise.resolve({ apiVersion: 'v1', kind: 'Secret', metadata: { name: ref.name, namespace: ref.namespace }, data });
    },
  };
}

let registry: FakeRegistry;
let work: string;
let signedRef = '';
let unsignedRef = '';
let oldSignedRef = '';

async function pushDemo(tag: string, text: string): Promise<string> {
  const dir = join(work, tag);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'manifest.yaml'), text);
  const image = await buildImage({ layers: [{ dir, prefix: '/manifests' }], labels: {}, outputDir: join(work, `layout-${tag}`) });
  const ref = `${registry.host}/bundles/demo:${tag}`;
  await pushImage(image, ref, new RegistryClient({ auth: () => undefined }));
  return ref;
}

before(async () => {
  registry = await startFakeRegistry();
  work = await mkdtemp(join(tmpdir(), 'verify-test-'));
  signedRef = await pushDemo('signed', 'kind: ConfigMap\n');
  unsignedRef = await pushDemo('unsigned', 'kind: Secret\n');
  oldSignedRef = await pushDemo('old', 'kind: Service\n');
  const client = new RegistryClient({ auth: () => undefined });
  await signImage(client, signedRef, parsePrivateKey(newPair.privateKey, 'new.key'));
  await signImage(client, oldSignedRef, parsePrivateKey(oldPair.privateKey, 'old.key'));
});
after(async () => {
  await registry.close();
  await rm(work, { recursive: true, force: true });
});

const verify = { provider: 'cosign', secretRef: { namespace: 'team', name: 'keys' } };
const source = (ref: string) => parseBundleSource({ type: 'image', image: { ref }, verify }).source;

test('a verify policy on a source that cannot carry a signature is refused, naming the source type', () => {
  const git = parseBundleSource({ type: 'git', git: { repository: 'https://example.com/r.git', ref: { branch: 'main' } }, verify });
  assert.equal(git.source, undefined);
  assert.match(git.result.render(), /spec\.source\.verify.*a git source cannot carry an OCI signature/);
  for (const [type, member] of [['http', { url: 'https://example.com/b.tgz' }], ['configMaps', [{ namespace: 'a', name: 'b' }]]] as const) {
    const r = parseBundleSource({ type, [type]: member, verify });
    assert.match(r.result.render(), new RegExp(`a ${type} source cannot carry an OCI signature`));
  }
  assert.match(parseBundleSource({ type: 'image', image: { ref: 'r.example/a:1' }, verify: { provider: 'notation', secretRef: { namespace: 'a', name: 'b' } } }).result.render(), /notation is not supported/);
  const ok = source('r.example/a:1');
  assert.deepEqual(ok?.type === 'image' ? ok.verify : undefined, { provider: 'cosign', secretRef: { namespace: 'team', name: 'keys' } });
});

test('a malformed key Secret is refused naming the Secret and the field', async () => {
  const r = reader('service account team/installer', { 'team/none': { 'cosign.key': b64('x') }, 'team/bad': { 'good.pub': b64(newPair.publicKey), 'cosign.pub': b64('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n') } });
  await assert.rejects(trustedKeysFromSecret(r, { namespace: 'team', name: 'none' }), (err: unknown) => err instanceof InputError && err.field === 'data' && /Secret team\/none: data: has no key ending in \.pub/.test(err.message));
  await assert.rejects(trustedKeysFromSecret(r, { namespace: 'team', name: 'bad' }), (err: unknown) => err instanceof BinnacleError && err.code === 'SIGNATURE_BAD_KEY' && err.message.startsWith('Secret team/bad data["cosign.pub"]: not a PEM public key'));
});

test('a signed image is unpacked; an unsigned one is refused before anything is pulled', async () => {
  const cacheDir = join(work, 'cache1');
  const r = reader('service account team/installer', { 'team/keys': { 'cosign.pub': b64(newPair.publicKey) } });
  const s = source(signedRef);
  assert.ok(s);
  const out = await unpackSource(s, { cacheDir, secrets: r, logger });
  assert.equal(out.resolved.image?.ref, signedRef);
  assert.deepEqual(r.reads, ['team/keys']);
  const u = source(unsignedRef);
  assert.ok(u);
  await assert.rejects(unpackSource(u, { cacheDir, secrets: r, logger }), (err: unknown) => {
    assert.ok(err instanceof SignatureVerificationError);
    assert.match(err.message, new RegExp(`bundles/demo:unsigned \\(digest sha256:[0-9a-f]{64}\\) is refused: it has no cosign signature`));
    return true;
  });
});

test('content cached by an unverified pull is not served to a verified source whose signature fails', async () => {
  const cacheDir = join(work, 'cache2');
  const plain = parseBundleSource({ type: 'image', image: { ref: unsignedRef } }).source;
  assert.ok(plain);
  const first = await unpackSource(plain, { cacheDir, logger });
  const pinned = unsignedRef.replace(':unsigned', `@${first.resolved.image?.digest ?? ''}`);
  const s = source(pinned);
  assert.ok(s);
  const r = reader('service account team/installer', { 'team/keys': { 'cosign.pub': b64(newPair.publicKey) } });
  await assert.rejects(unpackSource(s, { cacheDir, secrets: r, logger }), (err: unknown) => err instanceof BinnacleError && err.code === 'SIGNATURE_MISSING');
});

test('the key Secret is read as the installing identity: one it may not read is refused, naming both', async () => {
  const s = source(signedRef);
  assert.ok(s);
  const r = reader('service account team/installer', {});
  await assert.rejects(unpackSource(s, { cacheDir: join(work, 'cache3'), secrets: r, logger }), (err: unknown) => err instanceof BinnacleError && err.code === 'SOURCE_SECRET_FORBIDDEN' && /service account team\/installer may not read the verification key Secret team\/keys/.test(err.message));
});

test('key rotation: with the old and the new key both trusted, content signed by either is accepted; with the new one only, old content is refused', async () => {
  const both = reader('sa', { 'team/keys': { 'old.pub': b64(oldPair.publicKey), 'new.pub': b64(newPair.publicKey) } });
  const newOnly = reader('sa', { 'team/keys': { 'new.pub': b64(newPair.publicKey) } });
  const cacheDir = join(work, 'cache4');
  for (const ref of [signedRef, oldSignedRef]) {
    const s = source(ref);
    assert.ok(s);
    await unpackSource(s, { cacheDir, secrets: both, logger });
  }
  const old = source(oldSignedRef);
  assert.ok(old);
  await assert.rejects(unpackSource(old, { cacheDir, secrets: newOnly, logger }), /no trusted key \(team\/keys:new\.pub\) verifies it/);
});
