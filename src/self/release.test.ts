import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeRegistry, type FakeRegistry } from '../oci/fake-registry.test-helper.js';
import { parseReference, RegistryClient, MediaType, sha256Digest, type ImageReference } from '../oci/index.js';
import { stringify } from 'yaml';
import { BinnacleError, InputError, ValidationResult } from '../util/errors.js';
import { aliasLines, BILLION_LAUGHS, BOMB_REASON } from '../util/yaml.test-helper.js';
import { fetchSelfVersion, publishSelfVersion, selfVersionRepository, selfVersionManifests, sortReleaseTags, validateReleaseObjects, DEFAULT_RELEASE_REPO, RELEASE_MEDIA_TYPE } from './release.js';

// An in-memory registry: releases are pushed to it and fetched from it.
let registry: FakeRegistry;
let host = '';

before(async () => {
  registry = await startFakeRegistry();
  host = registry.host;
});

after(() => registry.close());

const client = (): RegistryClient => new RegistryClient({ auth: () => undefined });
const repo = (name: string): ImageReference => ({ ...parseReference(`${host}/${name}`), tag: undefined });

/** Pushes an image manifest with the given config media type and config/layer bytes under `name:tag`. */
async function pushArtifact(name: string, tag: string, configType: string, configBytes: Buffer, layers: { type: string; bytes: Buffer }[]): Promise<void> {
  const c = client();
  const target = `${host}/${name}:${tag}`;
  await c.uploadBlob(target, { digest: sha256Digest(configBytes), size: configBytes.length, open: () => configBytes });
  for (const l of layers) await c.uploadBlob(target, { digest: sha256Digest(l.bytes), size: l.bytes.length, open: () => l.bytes });
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: { mediaType: configType, digest: sha256Digest(configBytes), size: configBytes.length },
    layers: layers.map((l) => ({ mediaType: l.type, digest: sha256Digest(l.bytes), size: l.bytes.length })),
  };
  await c.putManifest(target, Buffer.from(JSON.stringify(manifest)), MediaType.ociManifest);
}

async function rejectsWith(p: Promise<unknown>, code: string, ...parts: RegExp[]): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof BinnacleError, String(err));
    assert.equal(err.code, code, err.message);
    for (const part of parts) assert.match(err.message, part);
    return true;
  });
}

const IMAGE = (n: string): string => `${host}/binnacle/binnacle@sha256:${n.repeat(64)}`;

test('a published release comes back as the objects of that version, its Deployment running the image by digest', async () => {
  const repository = repo('rel/ok');
  const a = await publishSelfVersion({ version: '0.0.1', image: IMAGE('a'), repository, client: client() });
  const b = await publishSelfVersion({ version: '0.0.2', image: IMAGE('b'), repository, client: client() });
  assert.match(a.ref, new RegExp(`^${host}/rel/ok@sha256:[0-9a-f]{64}$`));
  const got = await fetchSelfVersion({ version: '0.0.1', repository, client: client() });
  assert.equal(got.config.image, IMAGE('a'));
  assert.equal(got.config.namespace, 'binnacle-system');
  const d = got.objects.find((o) => o.kind === 'Deployment') as { metadata: { annotations?: Record<string, string> }; spec: { template: { spec: { containers: { image: string }[] } } } } | undefined;
  assert.equal(d?.spec.template.spec.containers[0]?.image, IMAGE('a'));
  assert.equal(d?.metadata.annotations?.['binnacle.dev/release-version'], '0.0.1');
  assert.deepEqual(
    got.objects.map((o) => `${o.kind}/${o.metadata.name ?? ''}`),
    selfVersionManifests({ version: '0.0.1', image: IMAGE('a') }).objects.map((o) => `${o.kind}/${o.metadata.name ?? ''}`),
    'every object, in apply order',
  );
  assert.equal((await fetchSelfVersion({ version: '0.0.2', repository, client: client() })).config.image, b.image);
});

test('a tag as the image is pinned to the digest it points at; a missing image says how to push it', async () => {
  await pushArtifact('img/binnacle', 'v9', MediaType.ociConfig, Buffer.from('{}'), []);
  const r = await publishSelfVersion({ version: '0.0.9', image: `${host}/img/binnacle:v9`, repository: repo('rel/pinned'), client: client() });
  assert.match(r.image, new RegExp(`^${host}/img/binnacle@sha256:[0-9a-f]{64}$`));
  await rejectsWith(publishSelfVersion({ version: '0.0.9', image: `${host}/img/none:v1`, repository: repo('rel/pinned'), client: client() }), 'SELF_RELEASE_IMAGE', /not found/, /build-self-image/);
});

test('a version not in the repository names the versions that are, newest first; an empty repository says so', async () => {
  const repository = repo('rel/listed');
  for (const v of ['0.0.2', '0.0.10', '0.0.1']) await publishSelfVersion({ version: v, image: IMAGE('c'), repository, client: client() });
  await rejectsWith(fetchSelfVersion({ version: '0.3.0', repository, client: client() }), 'SELF_RELEASE_NOT_FOUND', /release 0\.3\.0 not found in .*rel\/listed; it has: 0\.0\.10, 0\.0\.2, 0\.0\.1\./, /release-self/);
  await rejectsWith(fetchSelfVersion({ version: '0.3.0', repository: repo('rel/nothing'), client: client() }), 'SELF_RELEASE_NOT_FOUND', /has no releases/, /--release-repo/);
});

test('a container image or another artifact under the tag is the wrong type, named', async () => {
  await pushArtifact('rel/mixed', '1.0.0', MediaType.ociConfig, Buffer.from('{}'), []);
  await rejectsWith(fetchSelfVersion({ version: '1.0.0', repository: repo('rel/mixed'), client: client() }), 'SELF_RELEASE_WRONG_TYPE', /is a container image \(config application\/vnd\.oci\.image\.config\.v1\+json\), not a Binnacle release/, /image repository/);
  await pushArtifact('rel/mixed', '2.0.0', 'application/vnd.cncf.helm.config.v1+json', Buffer.from('{}'), []);
  await rejectsWith(fetchSelfVersion({ version: '2.0.0', repository: repo('rel/mixed'), client: client() }), 'SELF_RELEASE_WRONG_TYPE', /an artifact of type application\/vnd\.cncf\.helm\.config\.v1\+json/);
});

test('a release without the manager Deployment, with a foreign kind, or whose config disagrees with its tag: every problem named', async () => {
  const full = selfVersionManifests({ version: '3.0.0', image: IMAGE('d') });
  const docs = full.objects.filter((o) => o.kind !== 'Deployment');
  docs.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token', namespace: 'binnacle-system', labels: { 'app.kubernetes.io/part-of': 'binnacle' } } });
  const yaml = docs.map((o) => `---\n${JSON.stringify(o)}\n`).join('');
  await pushArtifact('rel/bad', '3.0.0', RELEASE_MEDIA_TYPE.config, Buffer.from(JSON.stringify({ ...full.config, version: '2.9.9' })), [{ type: RELEASE_MEDIA_TYPE.manifests, bytes: Buffer.from(yaml) }]);
  await rejectsWith(
    fetchSelfVersion({ version: '3.0.0', repository: repo('rel/bad'), client: client() }),
    'SELF_RELEASE_INVALID',
    /is not a usable Binnacle release/,
    /config: version: the config says version 2\.9\.9, but the tag is 3\.0\.0/,
    /kind Secret is not part of a Binnacle installation/,
    /the release has no Deployment binnacle-manager/,
    /publish it again/,
  );
  await pushArtifact('rel/bad', '4.0.0', RELEASE_MEDIA_TYPE.config, Buffer.from('not json'), []);
  await rejectsWith(fetchSelfVersion({ version: '4.0.0', repository: repo('rel/bad'), client: client() }), 'SELF_RELEASE_INVALID', /config: not JSON/, /expected one layer of media type application\/vnd\.binnacle\.release\.manifests\.v1\+yaml, found 0/);
});

test('a release manifest with more than 100 YAML aliases is read; an alias bomb in it is named', async () => {
  const full = selfVersionManifests({ version: '5.0.0', image: IMAGE('e') });
  const yaml = full.objects.map((o, i) => `---\n${stringify(o)}${i === 0 ? aliasLines(300) : ''}`).join('');
  const config = Buffer.from(JSON.stringify(full.config));
  await pushArtifact('rel/aliases', '5.0.0', RELEASE_MEDIA_TYPE.config, config, [{ type: RELEASE_MEDIA_TYPE.manifests, bytes: Buffer.from(yaml) }]);
  const got = await fetchSelfVersion({ version: '5.0.0', repository: repo('rel/aliases'), client: client() });
  assert.equal(got.objects.length, full.objects.length);
  assert.equal((got.objects[0] as { aliases?: unknown[] }).aliases?.length, 300);
  const bomb = `${yaml}---\n${BILLION_LAUGHS}`;
  await pushArtifact('rel/aliases', '5.0.1', RELEASE_MEDIA_TYPE.config, Buffer.from(JSON.stringify({ ...full.config, version: '5.0.1' })), [{ type: RELEASE_MEDIA_TYPE.manifests, bytes: Buffer.from(bomb) }]);
  await rejectsWith(fetchSelfVersion({ version: '5.0.1', repository: repo('rel/aliases'), client: client() }), 'SELF_RELEASE_INVALID', new RegExp(`error \\[release\\.yaml\\] binnacle\\.yaml: document ${full.objects.length}: ${BOMB_REASON.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
});

test('validateReleaseObjects: an image not pinned by digest, objects outside the namespace, objects not labelled as Binnacle', () => {
  const r = selfVersionManifests({ version: '1.0.0', image: 'example.com/binnacle:1.0.0' });
  const objects = r.objects.map((o) => (o.kind === 'Service' ? { ...o, metadata: { ...o.metadata, namespace: 'elsewhere' } } : o.kind === 'ClusterRole' ? { ...o, metadata: { ...o.metadata, labels: {} } } : o));
  const res = new ValidationResult('release');
  validateReleaseObjects(objects, r.config, res);
  const text = res.render();
  assert.match(text, /example\.com\/binnacle:1\.0\.0 is not pinned by digest/);
  assert.match(text, /Service binnacle-catalogs: metadata\.namespace is elsewhere, but the release installs into binnacle-system/);
  assert.match(text, /ClusterRole binnacle-manager: metadata\.labels\["app\.kubernetes\.io\/part-of"\] must be "binnacle"/);
  const clean = new ValidationResult('release');
  const pinned = selfVersionManifests({ version: '1.0.0', image: IMAGE('e') });
  validateReleaseObjects(pinned.objects, pinned.config, clean);
  assert.ok(clean.ok, clean.render());
});

test('the release repository: the flag, else $BINNACLE_RELEASE_REPO, else the default; never a tag', () => {
  assert.equal(selfVersionRepository('reg.example:5000/team/rel', {}).repository, 'team/rel');
  assert.equal(selfVersionRepository(undefined, { BINNACLE_RELEASE_REPO: 'reg.example/from-env' }).repository, 'from-env');
  const d = selfVersionRepository(undefined, {});
  assert.equal(`${d.registry}/${d.repository}`, DEFAULT_RELEASE_REPO);
  assert.equal(d.tag, undefined);
  assert.throws(() => selfVersionRepository('reg.example:5000/team/rel:0.1.0', {}), (e: unknown) => e instanceof InputError && e.field === 'releaseRepo' && /^releaseRepo: reg\.example:5000\/team\/rel:0\.1\.0: name a repository \(registry\/path\), no tag or digest/.test(e.message));
  assert.throws(() => selfVersionRepository(undefined, { BINNACLE_RELEASE_REPO: 'reg.example/rel@sha256:' + 'f'.repeat(64) }), /\$BINNACLE_RELEASE_REPO/);
});

test('release tags sort newest first by semver, other tags after', () => {
  assert.deepEqual(sortReleaseTags(['latest', '0.0.2', '0.0.10', 'v0.1.0', '0.1.0-rc.1']), ['v0.1.0', '0.1.0-rc.1', '0.0.10', '0.0.2', 'latest']);
});
