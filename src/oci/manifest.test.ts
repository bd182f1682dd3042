import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManifestError, MediaType, parseImageConfig, parseManifestDocument, selectPlatform } from './manifest.js';

const d = (c: string): string => `sha256:${c.repeat(64)}`;

test('a Docker manifest list is an index; linux/amd64 is selected, variants only when asked', () => {
  const list = {
    schemaVersion: 2,
    mediaType: MediaType.dockerManifestList,
    manifests: [
      { mediaType: MediaType.dockerManifest, digest: d('1'), size: 10, platform: { architecture: 'arm', os: 'linux', variant: 'v7' } },
      { mediaType: MediaType.dockerManifest, digest: d('2'), size: 10, platform: { architecture: 'amd64', os: 'linux' } },
      { mediaType: MediaType.dockerManifest, digest: d('3'), size: 10, platform: { architecture: 'arm', os: 'linux', variant: 'v6' } },
    ],
  };
  const doc = parseManifestDocument('list', Buffer.from(JSON.stringify(list)));
  assert.equal(doc.kind, 'index');
  assert.ok(doc.kind === 'index');
  assert.equal(selectPlatform(doc)?.digest, d('2'));
  assert.equal(selectPlatform(doc, { os: 'linux', architecture: 'arm', variant: 'v6' })?.digest, d('3'));
  assert.equal(selectPlatform(doc, { os: 'windows', architecture: 'amd64' }), undefined);
});

test('a Docker schema2 manifest parses; the Content-Type decides when mediaType is absent', () => {
  const m = { schemaVersion: 2, config: { mediaType: MediaType.dockerConfig, digest: d('a'), size: 5 }, layers: [{ mediaType: MediaType.dockerLayerGzip, digest: d('b'), size: 7 }] };
  const doc = parseManifestDocument('m', Buffer.from(JSON.stringify(m)), MediaType.dockerManifest);
  assert.ok(doc.kind === 'manifest');
  assert.equal(doc.mediaType, MediaType.dockerManifest);
  assert.equal(doc.layers[0]?.digest, d('b'));
});

test('bad documents name the field and the reason', () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ schemaVersion: 1, name: 'x' }, /schemaVersion: expected 2.*schema 1/],
    [{ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: 'x', digest: 'sha256:zz', size: 1 }, layers: [] }, /config\.digest: expected sha256/],
    [{ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: 'x', digest: d('a'), size: -1 }, layers: [] }, /config\.size/],
    [{ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: 'x', digest: d('a'), size: 1 }, layers: [{}] }, /layers\[0\]\.mediaType/],
    [{ schemaVersion: 2, mediaType: 'application/vnd.example+json' }, /not an image manifest or index/],
    [[1, 2], /expected a JSON object/],
  ];
  for (const [doc, why] of cases) {
    assert.throws(() => parseManifestDocument('registry.example/x:v1', Buffer.from(JSON.stringify(doc))), (err: unknown) => {
      assert.ok(err instanceof ManifestError);
      assert.equal(err.code, 'OCI_BAD_MANIFEST');
      assert.match(err.message, /^registry\.example\/x:v1: /);
      assert.match(err.message, why);
      return true;
    });
  }
  assert.throws(() => parseManifestDocument('m', Buffer.from('{nope')), (err: unknown) => err instanceof ManifestError && /not valid JSON/.test(err.message));
  assert.throws(() => parseImageConfig('c', Buffer.from(JSON.stringify({ config: { Labels: { a: 1 } } }))), (err: unknown) => err instanceof ManifestError && /config\.Labels\.a: expected a string/.test(err.message));
});
