import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaType, RegistryClient } from '../../oci/index.js';
import { NoMatchingVersionError } from './errors.js';
import { fetchChart, listChartVersions } from './fetch.js';
import { chartArchive, freshCacheIn, isCode, send, sha256Hex, startServer, type TestServer } from './fixtures.test-helper.js';
import { HelmMediaType, helmRegistryConfig } from './oci.js';
import type { OciChartRef } from './reference.js';

// A fake registry serving charts under charts/app and a container image under charts/image.
let registry: TestServer;
let host = '';
let base = '';
const manifests = new Map<string, Buffer>();

function blob(bytes: Buffer | string, route = true): { digest: string; size: number } {
  const b = Buffer.from(bytes);
  const digest = `sha256:${sha256Hex(b)}`;
  if (route) {
    for (const repo of ['app', 'image', 'tampered', 'indexed']) registry.routes.set(`/v2/charts/${repo}/blobs/${digest}`, send(b));
  }
  return { digest, size: b.length };
}

function manifest(repo: string, tags: string[], config: { mediaType: string; body: string }, layers: { mediaType: string; bytes: Buffer }[]): string {
  const doc = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.ociManifest,
      config: { mediaType: config.mediaType, ...blob(config.body) },
      layers: layers.map((l) => ({ mediaType: l.mediaType, ...blob(l.bytes) })),
    }),
  );
  const digest = `sha256:${sha256Hex(doc)}`;
  for (const ref of [...tags, digest]) {
    manifests.set(`/v2/charts/${repo}/manifests/${ref}`, doc);
    registry.routes.set(`/v2/charts/${repo}/manifests/${ref}`, send(doc, 200, { 'content-type': MediaType.ociManifest, 'docker-content-digest': digest }));
  }
  return digest;
}

const chartConfig = (name: string, version: string) => ({ mediaType: HelmMediaType.config, body: JSON.stringify({ name, version, apiVersion: 'v2' }) });
const chartLayer = (bytes: Buffer) => ({ mediaType: HelmMediaType.chart, bytes });
const archives = {
  '1.0.0': chartArchive('app', '1.0.0'),
  '1.1.0': chartArchive('app', '1.1.0'),
  '1.2.0': chartArchive('app', '1.2.0', {}, '1.3.0'), // lies about its version
  '2.0.0+build.1': chartArchive('app', '2.0.0+build.1'),
  '3.0.0-rc.1': chartArchive('app', '3.0.0-rc.1'),
};
let digest110 = '';
let indexDigest = '';

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'chart-oci-'));
  registry = await startServer();
  host = new URL(registry.url).host;
  registry.routes.set('/v2/', send('{}'));
  registry.routes.set('/v2/charts/app/tags/list', send(JSON.stringify({ name: 'charts/app', tags: ['1.0.0', '1.1.0', '2.0.0_build.1', 'latest', '1.2.0', '3.0.0-rc.1'] })));
  manifest('app', ['1.0.0', 'latest'], chartConfig('app', '1.0.0'), [chartLayer(archives['1.0.0'])]);
  digest110 = manifest('app', ['1.1.0'], chartConfig('app', '1.1.0'), [chartLayer(archives['1.1.0'])]);
  manifest('app', ['1.2.0'], chartConfig('app', '1.2.0'), [chartLayer(archives['1.2.0'])]);
  manifest('app', ['2.0.0_build.1'], chartConfig('app', '2.0.0+build.1'), [chartLayer(archives['2.0.0+build.1'])]);
  manifest('app', ['3.0.0-rc.1'], chartConfig('app', '3.0.0-rc.1'), [chartLayer(archives['3.0.0-rc.1']), { mediaType: HelmMediaType.provenance, bytes: Buffer.from('prov') }]);
  manifest('image', ['1.0.0'], { mediaType: MediaType.ociConfig, body: '{"architecture":"amd64","os":"linux"}' }, [{ mediaType: MediaType.ociLayerGzip, bytes: archives['1.0.0'] }]);
  // A manifest whose layer the registry serves with other bytes.
  const honest = chartArchive('tampered', '1.0.0');
  const doc = Buffer.from(
    JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config: { mediaType: HelmMediaType.config, ...blob('{}') }, layers: [{ mediaType: HelmMediaType.chart, ...blob(honest, false) }] }),
  );
  registry.routes.set('/v2/charts/tampered/manifests/1.0.0', send(doc, 200, { 'content-type': MediaType.ociManifest, 'docker-content-digest': `sha256:${sha256Hex(doc)}` }));
  registry.routes.set(`/v2/charts/tampered/blobs/sha256:${sha256Hex(honest)}`, send(chartArchive('tampered', '6.6.6')));
  // An index whose one manifest is the chart.
  const child = manifest('indexed', [], chartConfig('indexed', '1.0.0'), [chartLayer(chartArchive('indexed', '1.0.0'))]);
  const index = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociIndex, manifests: [{ mediaType: MediaType.ociManifest, digest: child, size: manifests.get(`/v2/charts/indexed/manifests/${child}`)?.length ?? 0 }] }));
  indexDigest = `sha256:${sha256Hex(index)}`;
  registry.routes.set('/v2/charts/indexed/manifests/1.0.0', send(index, 200, { 'content-type': MediaType.ociIndex, 'docker-content-digest': indexDigest }));
});

after(async () => {
  await registry.close();
  await rm(base, { recursive: true, force: true });
});

const freshCache = (): Promise<string> => freshCacheIn(base);
const client = new RegistryClient({ auth: () => undefined });
const oci = (ref: string, version?: string): OciChartRef => ({ type: 'oci', ref: `oci://${host}/charts/${ref}`, ...(version === undefined ? {} : { version }) });

test('a range is resolved against the tags (_ read as +), prereleases excluded; the layer lands in the cache', async () => {
  const cacheDir = await freshCache();
  const got = await fetchChart(oci('app', '>=1.1.0'), { cacheDir, registryClient: client });
  assert.equal(got.version, '2.0.0+build.1');
  assert.equal(got.digest, `sha256:${sha256Hex(archives['2.0.0+build.1'])}`);
  assert.deepEqual(await readFile(got.path), archives['2.0.0+build.1']);
  assert.match(got.source, new RegExp(`^oci://${host}/charts/app:2\\.0\\.0_build\\.1@sha256:[0-9a-f]{64}$`));
  assert.equal(got.source.endsWith(got.manifestDigest ?? 'none'), true);
  const small = await fetchChart(oci('app', '~1.1'), { cacheDir, registryClient: client });
  assert.equal(small.version, '1.1.0');
  assert.equal(small.manifestDigest, digest110);
  const rc = await fetchChart(oci('app', '>=3.0.0-0'), { cacheDir, registryClient: client });
  assert.equal(rc.version, '3.0.0-rc.1'); // the provenance layer is ignored
});

test('a tag is taken as it is; a digest pin is served from the cache without the network the second time', async () => {
  const cacheDir = await freshCache();
  const tagged = await fetchChart(oci('app:latest'), { cacheDir, registryClient: client });
  assert.equal(tagged.version, '1.0.0');
  const pinned = oci(`app@${digest110}`);
  const first = await fetchChart(pinned, { cacheDir, registryClient: client });
  assert.equal(first.version, '1.1.0');
  const hitsBefore = [...registry.hits.values()].reduce((a, b) => a + b, 0);
  const second = await fetchChart(pinned, { cacheDir, registryClient: client });
  assert.deepEqual({ ...second, ref: undefined }, { ...first, ref: undefined });
  assert.equal([...registry.hits.values()].reduce((a, b) => a + b, 0), hitsBefore, 'the registry was asked again');
});

test('an index is searched for its chart manifest', async () => {
  const got = await fetchChart(oci('indexed:1.0.0'), { cacheDir: await freshCache(), registryClient: client });
  assert.equal(got.name, 'indexed');
  assert.equal(got.manifestDigest, indexDigest);
});

test('versions: every version tag, highest first; none in range lists them', async () => {
  assert.deepEqual(await listChartVersions(oci('app:1.0.0'), { registryClient: client }), ['3.0.0-rc.1', '2.0.0+build.1', '1.2.0', '1.1.0', '1.0.0']);
  await assert.rejects(fetchChart(oci('app', '^4'), { cacheDir: await freshCache(), registryClient: client }), (err: unknown) => {
    assert.ok(err instanceof NoMatchingVersionError);
    assert.deepEqual(err.available, ['3.0.0-rc.1', '2.0.0+build.1', '1.2.0', '1.1.0', '1.0.0']);
    assert.match(err.message, new RegExp(`chart oci://${host}/charts/app \\(version "\\^4"\\): no version matches "\\^4"; available: 3\\.0\\.0-rc\\.1, 2\\.0\\.0\\+build\\.1`));
    return true;
  });
});

test('registry failures are named in chart terms', async () => {
  const cacheDir = await freshCache();
  await assert.rejects(fetchChart(oci('image:1.0.0'), { cacheDir, registryClient: client }), isCode('HELM_CHART_NOT_A_CHART', /config media type is "application\/vnd\.oci\.image\.config\.v1\+json"/));
  await assert.rejects(fetchChart(oci('app:9.9.9'), { cacheDir, registryClient: client }), isCode('HELM_CHART_NOT_FOUND', /app:9\.9\.9/));
  await assert.rejects(fetchChart(oci('nothing'), { cacheDir, registryClient: client }), isCode('HELM_CHART_NOT_FOUND', /tags\/list/));
  await assert.rejects(fetchChart(oci('app', '1.2.0'), { cacheDir, registryClient: client }), isCode('HELM_CHART_MISMATCH', /chosen for version 1\.2\.0, but the chart in it says version 1\.3\.0/));
  await assert.rejects(fetchChart(oci('tampered:1.0.0'), { cacheDir, registryClient: client }), isCode('HELM_CHART_DIGEST_MISMATCH'));
  await assert.rejects(fetchChart(oci('app:1.0.0'), { cacheDir, registryClient: client, maxArchiveBytes: 100 }), isCode('HELM_CHART_TOO_LARGE'));
  // Of the failed fetches only the verified archive of the mismatch stays (content-addressed, unreferenced until GC).
  assert.deepEqual(await readdir(join(cacheDir, 'charts', 'sha256')), [`${sha256Hex(archives['1.2.0'])}.tgz`]);
  assert.deepEqual(await readdir(join(cacheDir, 'tmp')).catch(() => []), []);
});

test('an exact version is its tag: no tags list is read, and a missing one lists what exists', async () => {
  const cacheDir = await freshCache();
  const listed = registry.hits.get('/v2/charts/app/tags/list') ?? 0;
  const got = await fetchChart(oci('app', '1.1.0'), { cacheDir, registryClient: client });
  assert.equal(got.version, '1.1.0');
  assert.equal(got.source, `oci://${host}/charts/app:1.1.0@${digest110}`);
  assert.equal(registry.hits.get('/v2/charts/app/tags/list') ?? 0, listed);
  await assert.rejects(fetchChart(oci('app', '7.7.7'), { cacheDir, registryClient: client }), (err: unknown) => {
    assert.ok(err instanceof NoMatchingVersionError);
    assert.deepEqual(err.available, ['3.0.0-rc.1', '2.0.0+build.1', '1.2.0', '1.1.0', '1.0.0']);
    return true;
  });
});

test('credentials of `helm registry login` are found where helm keeps them', () => {
  assert.equal(helmRegistryConfig({ HELM_REGISTRY_CONFIG: '/x/registry.json' }), '/x/registry.json');
  assert.equal(helmRegistryConfig({ HELM_CONFIG_HOME: '/h' }), '/h/registry/config.json');
  assert.equal(helmRegistryConfig({ XDG_CONFIG_HOME: '/xdg' }), '/xdg/helm/registry/config.json');
});
