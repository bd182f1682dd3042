import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { BinnacleError } from '../util/errors.js';
import { COSIGN_SIGNATURE_ANNOTATION, SIMPLE_SIGNING_MEDIA_TYPE, readCosignSignatures, signatureRef, signatureTag } from './cosign.js';
import { startFakeRegistry, type FakeRegistry } from './fake-registry.test-helper.js';
import { MediaType } from './manifest.js';
import { formatReference, parseReference } from './reference.js';
import { RegistryClient } from './registry-client.js';
import { generateSigningKeyPair, parsePrivateKey, signImage } from './sign.js';
import { SignatureVerificationError, parsePublicKey, verifyImageSignature, type TrustedKey } from './verify-signature.js';

let registry: FakeRegistry;
const client = (): RegistryClient => new RegistryClient({ auth: () => undefined });
const code = (expected: string) => (err: unknown) => err instanceof BinnacleError && err.code === expected;

function manifest(marker: string): Buffer {
  // Only the manifest's digest is signed and checked: its content need not resolve to blobs.
  return Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: MediaType.ociConfig, size: 2, digest: `sha256:${marker.repeat(64).slice(0, 64)}` }, layers: [] }));
}

const pairA = generateSigningKeyPair();
const pairB = generateSigningKeyPair('s3cret');
const keyA = parsePrivateKey(pairA.privateKey, 'a.key');
const keyB = parsePrivateKey(pairB.privateKey, 'b.key', 's3cret');
const trustedA: TrustedKey = { name: 'a.pub', key: parsePublicKey(pairA.publicKey, 'a.pub') };
const trustedB: TrustedKey = { name: 'b.pub', key: parsePublicKey(pairB.publicKey, 'b.pub') };

before(async () => {
  registry = await startFakeRegistry();
});
after(() => registry.close());

function put(repo: string, tag: string, marker: string): { ref: string; digest: string } {
  const digest = registry.putManifest(repo, tag, manifest(marker), MediaType.ociManifest);
  return { ref: `${registry.host}/${repo}:${tag}`, digest };
}

test('a signature made with a key verifies with its public key, stored under cosign\'s tag', async () => {
  const { ref, digest } = put('sig/good', 'v1', 'a');
  const signed = await signImage(client(), ref, keyA);
  assert.equal(signed.digest, digest);
  assert.equal(signed.signatureRef, `${registry.host}/sig/good:${signatureTag(digest)}`);
  const sigs = await readCosignSignatures(client(), parseReference(ref), digest);
  assert.equal(sigs.length, 1);
  const payload = JSON.parse(sigs[0]?.payload.toString() ?? '{}') as { critical: { image: Record<string, string>; type: string } };
  assert.equal(payload.critical.image['docker-manifest-digest'], digest);
  const verified = await verifyImageSignature(client(), parseReference(ref), digest, [trustedA]);
  assert.equal(verified.keyName, 'a.pub');
});

test('a signature by another key is refused, naming the artifact, the digest and the keys tried', async () => {
  const { ref, digest } = put('sig/wrong-key', 'v1', 'b');
  await signImage(client(), ref, keyB);
  await assert.rejects(verifyImageSignature(client(), parseReference(ref), digest, [trustedA]), (err: unknown) => {
    assert.ok(err instanceof SignatureVerificationError);
    assert.equal(err.code, 'SIGNATURE_INVALID');
    assert.equal(err.reason, 'SignatureMismatch');
    assert.match(err.message, new RegExp(`${registry.host}/sig/wrong-key:v1 \\(digest ${digest}\\) is refused: .*no trusted key \\(a\\.pub\\) verifies it`));
    return true;
  });
});

test('an unsigned artifact is refused as unsigned', async () => {
  const { ref, digest } = put('sig/unsigned', 'v1', 'c');
  await assert.rejects(verifyImageSignature(client(), parseReference(ref), digest, [trustedA]), (err: unknown) => {
    assert.ok(err instanceof SignatureVerificationError);
    assert.equal(err.code, 'SIGNATURE_MISSING');
    assert.match(err.message, /has no cosign signature/);
    assert.ok(err.message.includes(digest));
    return true;
  });
});

test('tampered content: a good signature of other content copied to its tag is refused', async () => {
  const good = put('sig/tampered', 'v1', 'd');
  await signImage(client(), good.ref, keyA);
  // The attacker pushes other content under the same tag and copies the old signature manifest over.
  const evil = put('sig/tampered', 'v1', 'e');
  const repo = parseReference(good.ref);
  const sigManifest = await client().getManifest(signatureRef(repo, good.digest));
  registry.putManifest('sig/tampered', signatureTag(evil.digest), sigManifest.bytes, MediaType.ociManifest);
  await assert.rejects(verifyImageSignature(client(), repo, evil.digest, [trustedA]), (err: unknown) => {
    assert.ok(err instanceof SignatureVerificationError);
    assert.match(err.message, new RegExp(`signed by a\\.pub for ${good.digest}, not for this digest`));
    return true;
  });
});

test('tampered payload: a payload changed to name other content does not verify', async () => {
  const good = put('sig/payload', 'v1', 'f');
  const evil = put('sig/payload', 'v2', '0');
  await signImage(client(), good.ref, keyA);
  const repo = parseReference(good.ref);
  const [sig] = await readCosignSignatures(client(), repo, good.digest);
  assert.ok(sig !== undefined);
  const forged = Buffer.from(sig.payload.toString().replace(good.digest, evil.digest));
  const blobDigest = await uploadBlob(repo, forged);
  const layer = { mediaType: SIMPLE_SIGNING_MEDIA_TYPE, digest: blobDigest, size: forged.length, annotations: { [COSIGN_SIGNATURE_ANNOTATION]: sig.signature.toString('base64') } };
  const m = { schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: MediaType.ociConfig, size: 2, digest: blobDigest }, layers: [layer] };
  registry.putManifest('sig/payload', signatureTag(evil.digest), Buffer.from(JSON.stringify(m)), MediaType.ociManifest);
  await assert.rejects(verifyImageSignature(client(), repo, evil.digest, [trustedA]), /no trusted key \(a\.pub\) verifies it/);
});

async function uploadBlob(ref: ReturnType<typeof parseReference>, bytes: Buffer): Promise<string> {
  const { sha256Digest } = await import('./digest.js');
  const digest = sha256Digest(bytes);
  await client().uploadBlob(ref, { digest, size: bytes.length, open: () => bytes });
  return digest;
}

test('key rotation: signatures by old and new keys sit side by side; either trusted key accepts', async () => {
  const { ref, digest } = put('sig/rotation', 'v1', '1');
  await signImage(client(), ref, keyA);
  await signImage(client(), ref, keyB);
  assert.equal((await signImage(client(), ref, keyB)).added, false); // signing twice with one key adds nothing
  assert.equal((await readCosignSignatures(client(), parseReference(ref), digest)).length, 2);
  assert.equal((await verifyImageSignature(client(), parseReference(ref), digest, [trustedB])).keyName, 'b.pub');
  assert.equal((await verifyImageSignature(client(), parseReference(ref), digest, [trustedA, trustedB])).keyName, 'a.pub');
  // Content signed only by the old key is refused once the old key is dropped from the trusted set.
  const old = put('sig/rotation', 'v0', '2');
  await signImage(client(), old.ref, keyA);
  await assert.rejects(verifyImageSignature(client(), parseReference(old.ref), old.digest, [trustedB]), code('SIGNATURE_INVALID'));
  assert.equal((await verifyImageSignature(client(), parseReference(old.ref), old.digest, [trustedB, trustedA])).keyName, 'a.pub');
});

test('keys: a malformed public key, an encrypted private key without passphrase and cosign\'s own format are named', () => {
  assert.throws(() => parsePublicKey('not a key', 'Secret ns/keys data["cosign.pub"]'), (err: unknown) => err instanceof BinnacleError && err.code === 'SIGNATURE_BAD_KEY' && err.message.startsWith('Secret ns/keys data["cosign.pub"]: not a PEM public key'));
  assert.throws(() => parsePrivateKey(pairB.privateKey, 'b.key'), /b\.key: it is encrypted/);
  assert.throws(() => parsePrivateKey(pairB.privateKey, 'b.key', 'wrong'), /b\.key: wrong passphrase/);
  assert.throws(() => parsePrivateKey('-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nx\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----', 'cosign.key'), /cosign's own encrypted key format/);
  assert.equal(formatReference(signatureRef(parseReference('r.example/a/b@sha256:' + 'a'.repeat(64)), 'sha256:' + 'a'.repeat(64))), `r.example/a/b:sha256-${'a'.repeat(64)}.sig`);
});
