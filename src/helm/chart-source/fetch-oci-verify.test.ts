import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaType, RegistryClient, SignatureVerificationError, generateSigningKeyPair, parsePrivateKey, parsePublicKey, sha256Digest, signImage } from '../../oci/index.js';
import { startFakeRegistry, type FakeRegistry } from '../../oci/fake-registry.test-helper.js';
import { BinnacleError } from '../../util/errors.js';
import { fetchChart } from './fetch.js';
import { chartArchive } from './fixtures.test-helper.js';
import { HelmMediaType } from './oci.js';

let registry: FakeRegistry;
let cacheDir = '';
const client = (): RegistryClient => new RegistryClient({ auth: () => undefined });
const pair = generateSigningKeyPair();
const other = generateSigningKeyPair();
const keys = [{ name: 'keys:cosign.pub', key: parsePublicKey(pair.publicKey, 'cosign.pub') }];

async function pushChart(repo: string, version: string): Promise<string> {
  const archive = chartArchive('app', version);
  const config = Buffer.from(JSON.stringify({ name: 'app', version, apiVersion: 'v2' }));
  for (const b of [archive, config]) await client().uploadBlob(`${registry.host}/${repo}`, { digest: sha256Digest(b), size: b.length, open: () => b });
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: { mediaType: HelmMediaType.config, digest: sha256Digest(config), size: config.length },
    layers: [{ mediaType: HelmMediaType.chart, digest: sha256Digest(archive), size: archive.length }],
  };
  registry.putManifest(repo, version, Buffer.from(JSON.stringify(manifest)), MediaType.ociManifest);
  return `oci://${registry.host}/${repo}`;
}

before(async () => {
  registry = await startFakeRegistry();
  cacheDir = await mkdtemp(join(tmpdir(), 'chart-verify-'));
});
after(async () => {
  await registry.close();
  await rm(cacheDir, { recursive: true, force: true });
});

test('a signed OCI chart is fetched; an unsigned or wrongly signed one is refused before its layer is downloaded', async () => {
  const signed = await pushChart('charts/signed', '1.0.0');
  await signImage(client(), `${signed.slice(6)}:1.0.0`, parsePrivateKey(pair.privateKey, 'k'));
  const got = await fetchChart({ type: 'oci', ref: signed, version: '1.0.0' }, { cacheDir, verifyKeys: keys });
  assert.equal(got.version, '1.0.0');

  const unsigned = await pushChart('charts/unsigned', '1.0.0');
  await assert.rejects(fetchChart({ type: 'oci', ref: unsigned, version: '1.0.0' }, { cacheDir, verifyKeys: keys }), (err: unknown) => {
    assert.ok(err instanceof SignatureVerificationError);
    assert.match(err.message, /charts\/unsigned:1\.0\.0 \(digest sha256:[0-9a-f]{64}\) is refused: it has no cosign signature/);
    return true;
  });

  const wrong = await pushChart('charts/wrong', '1.0.0');
  await signImage(client(), `${wrong.slice(6)}:1.0.0`, parsePrivateKey(other.privateKey, 'k'));
  await assert.rejects(fetchChart({ type: 'oci', ref: wrong, version: '1.0.0' }, { cacheDir, verifyKeys: keys }), (err: unknown) => err instanceof BinnacleError && err.code === 'SIGNATURE_INVALID');
});

test("a chart from a Helm repository cannot be verified: refused, naming the source type", async () => {
  await assert.rejects(fetchChart({ type: 'repo', url: 'https://charts.example.com', chart: 'app' }, { cacheDir, verifyKeys: keys }), (err: unknown) => {
    assert.ok(err instanceof BinnacleError);
    assert.equal(err.code, 'SIGNATURE_UNSUPPORTED_SOURCE');
    assert.match(err.message, /a Helm repository's chart \(Helm's \.prov files are not supported\) cannot carry an OCI signature/);
    return true;
  });
});
