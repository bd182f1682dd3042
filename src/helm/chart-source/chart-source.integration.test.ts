/**
 * Chart sources against the real `helm` CLI as the independent witness: charts from the shared
 * corpus are packaged by `helm package` in several versions, then (a) served as a chart
 * repository (`helm repo index` + a loopback HTTP server) and (b) pushed with `helm push` to a real
 * `docker-registry` on loopback. For each reference, fetchChart must choose the version `helm pull`
 * chooses and deliver the same bytes, under the digests Helm and the registry report.
 * Needs `.cache/bin/helm` (hack/build-tools.sh helm) or helm on PATH, and docker-registry.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { RegistryClient, startLocalRegistry, type LocalRegistry } from '../../oci/index.js';
import { digestTree } from '../../source/index.js';
import { fetchChart, listChartVersions, type ChartRef, type FetchedChart } from './index.js';
import { freshCacheIn, isCode, sha256Hex } from './fixtures.test-helper.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CORPUS = process.env.BINNACLE_CHARTS_CORPUS ?? join(repoRoot, '..', 'shared', 'corpus', 'charts');
const CHART_DIR = join(CORPUS, 'bitnami__memcached');
const VERSIONS = ['8.0.0', '8.0.1', '8.1.0+build.5', '9.0.0-rc.1'];

let base = '';
let helmBin = '';
let helmEnv: NodeJS.ProcessEnv = {};
let packaged = new Map<string, string>(); // version → .tgz path
let repoServer: Server | undefined;
let repoUrl = '';
let registry: LocalRegistry | undefined;
const pushDigests = new Map<string, string>(); // version → manifest digest helm push printed

function findHelm(): string {
  const candidates = [join(repoRoot, '.cache', 'bin', 'helm'), ...(process.env.PATH ?? '').split(delimiter).filter((d) => d !== '').map((d) => join(d, 'helm'))];
  for (const c of candidates) {
    try {
      accessSync(c, fsConstants.X_OK);
      return c;
    } catch {
      // keep looking
    }
  }
  throw new Error(`the helm CLI is needed as the witness of these tests and was not found in ${candidates[0] ?? ''} or on PATH; build it with: bash hack/build-tools.sh helm`);
}

async function helm(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    execFile(helmBin, args, { env: helmEnv, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`helm ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolvePromise({ stdout, stderr });
    });
  });
}

/** `helm pull` into a fresh directory; the one file it wrote. */
async function helmPull(args: string[]): Promise<{ file: string; bytes: Buffer }> {
  const dest = await mkdtemp(join(base, 'pull-'));
  await helm(['pull', ...args, '--destination', dest]);
  const files = await readdir(dest);
  assert.equal(files.length, 1, `helm pull wrote ${files.join(', ')}`);
  const file = files[0] ?? '';
  return { file, bytes: await readFile(join(dest, file)) };
}

const freshCache = (): Promise<string> => freshCacheIn(base);

before(async () => {
  helmBin = findHelm();
  base = await mkdtemp(join(tmpdir(), 'chart-source-it-'));
  // Helm's own caches and config stay in the sandbox.
  helmEnv = {
    ...process.env,
    HELM_CACHE_HOME: join(base, 'helm', 'cache'),
    HELM_CONFIG_HOME: join(base, 'helm', 'config'),
    HELM_DATA_HOME: join(base, 'helm', 'data'),
    HELM_REGISTRY_CONFIG: join(base, 'helm', 'registry.json'),
    HELM_REPOSITORY_CONFIG: join(base, 'helm', 'repositories.yaml'),
  };
  const charts = join(base, 'repo', 'charts');
  await mkdir(charts, { recursive: true });
  packaged = new Map();
  for (const v of VERSIONS) {
    const { stdout } = await helm(['package', CHART_DIR, '--version', v, '--destination', charts]);
    const path = /saved it to: (.+\.tgz)/.exec(stdout)?.[1]?.trim();
    assert.ok(path !== undefined, `helm package said: ${stdout}`);
    packaged.set(v, path);
  }
  // (a) A chart repository with relative URLs (no --url), served from loopback.
  await helm(['repo', 'index', charts]);
  repoServer = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (!path.startsWith('/charts/') || path.includes('..')) {
      res.writeHead(404).end();
      return;
    }
    readFile(join(charts, path.slice('/charts/'.length))).then(
      (body) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((r) => repoServer?.listen(0, '127.0.0.1', r));
  const addr = repoServer.address();
  assert.ok(addr !== null && typeof addr === 'object');
  repoUrl = `http://127.0.0.1:${addr.port}/charts`;
  // (b) A real registry; helm pushes every version.
  registry = await startLocalRegistry({ dataDir: join(base, 'registry') });
  for (const [v, path] of packaged) {
    const out = await helm(['push', path, `oci://${registry.host}/charts`, '--plain-http']);
    const digest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(`${out.stdout}\n${out.stderr}`)?.[1];
    assert.ok(digest !== undefined, `helm push printed no digest: ${out.stdout}${out.stderr}`);
    pushDigests.set(v, digest);
  }
});

after(async () => {
  await registry?.stop().catch(() => undefined);
  repoServer?.closeAllConnections();
  await new Promise<void>((r) => (repoServer === undefined ? r() : repoServer.close(() => r())));
  if (base !== '') await rm(base, { recursive: true, force: true });
});

const repoRef = (version?: string): ChartRef => ({ type: 'repo', url: repoUrl, chart: 'memcached', ...(version === undefined ? {} : { version }) });
const ociRef = (suffix = '', version?: string): ChartRef => ({ type: 'oci', ref: `oci://${registry?.host ?? ''}/charts/memcached${suffix}`, ...(version === undefined ? {} : { version }) });

async function assertSameAsHelm(got: FetchedChart, pulled: { file: string; bytes: Buffer }, helmFile = `memcached-${got.version}.tgz`): Promise<void> {
  assert.equal(pulled.file, helmFile, 'helm chose another version');
  const ours = await readFile(got.path);
  assert.ok(ours.equals(pulled.bytes), `bytes differ from helm pull's ${pulled.file}`);
  assert.equal(got.digest, `sha256:${sha256Hex(pulled.bytes)}`);
}

test('repository: for each range, the version and bytes are what helm pull gives, under the digest helm repo index wrote', async () => {
  const index: unknown = parse(await readFile(join(base, 'repo', 'charts', 'index.yaml'), 'utf8'));
  const entries = (index as { entries: { memcached: { version: string; digest: string; urls: string[] }[] } }).entries.memcached;
  assert.ok(entries.every((e) => !/^https?:/.test(e.urls[0] ?? '')), 'the index should have relative URLs');
  const cacheDir = await freshCache();
  for (const [range, expected] of [
    [undefined, '8.1.0+build.5'],
    ['>=8.0.0 <9', '8.1.0+build.5'],
    ['~8.0', '8.0.1'],
    ['8.0.0', '8.0.0'],
    ['>=9.0.0-0', '9.0.0-rc.1'],
  ] as const) {
    const got = await fetchChart(repoRef(range), { cacheDir, auth: () => undefined });
    assert.equal(got.version, expected, `range ${String(range)}`);
    assert.equal(got.name, 'memcached');
    assert.ok(got.path.startsWith(`${cacheDir}/`));
    const pulled = await helmPull(['memcached', '--repo', repoUrl, ...(range === undefined ? [] : ['--version', range])]);
    await assertSameAsHelm(got, pulled);
    assert.equal(got.digest, `sha256:${entries.find((e) => e.version === expected)?.digest ?? ''}`);
  }
  assert.deepEqual(await listChartVersions(repoRef('^8'), { auth: () => undefined }), ['9.0.0-rc.1', '8.1.0+build.5', '8.0.1', '8.0.0']);
  await assert.rejects(fetchChart(repoRef('^10'), { cacheDir, auth: () => undefined }), isCode('HELM_CHART_NO_VERSION', /available: 9\.0\.0-rc\.1, 8\.1\.0\+build\.5, 8\.0\.1, 8\.0\.0/));
  // Helm agrees that nothing matches.
  await assert.rejects(helmPull(['memcached', '--repo', repoUrl, '--version', '^10']));
});

// Before the registry test below, which stops the registry at its end.
test("an image source given a chart `helm push` stored (as Flux's OCIRepository reads it): pulled and unpacked to the chart's own directory, the one format helm renders", async () => {
  const reg = registry;
  assert.ok(reg !== undefined);
  const { pullAndUnpack } = await import('../../oci/index.js');
  const { findChart } = await import('../chart-render.js');
  const pulled = await pullAndUnpack(`${reg.host}/charts/memcached:8.0.1`, { cacheDir: await freshCache(), client: new RegistryClient({ insecure: true }) });
  assert.equal(pulled.digest, pushDigests.get('8.0.1'), 'the manifest helm push printed');
  assert.deepEqual(await readdir(pulled.dir), ['memcached']);
  const chart = findChart(pulled.dir);
  assert.equal(chart, join(pulled.dir, 'memcached'));
  assert.match(await readFile(join(chart, 'Chart.yaml'), 'utf8'), /^version: 8\.0\.1$/m);
});

test('registry: by tag, by range and by digest, the same bytes as helm pull, the layer digest the registry reports and the manifest digest helm push printed', async () => {
  assert.ok(registry !== undefined);
  const cacheDir = await freshCache();
  // What the registry itself says, read without Binnacle's client.
  const registryView = async (tag: string): Promise<{ manifestDigest: string; layerDigest: string }> => {
    const res = await fetch(`${registry?.url ?? ''}/v2/charts/memcached/manifests/${tag}`, { headers: { accept: 'application/vnd.oci.image.manifest.v1+json' } });
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { config: { mediaType: string }; layers: { mediaType: string; digest: string }[] };
    assert.equal(doc.config.mediaType, 'application/vnd.cncf.helm.config.v1+json');
    const layer = doc.layers.find((l) => l.mediaType === 'application/vnd.cncf.helm.chart.content.v1.tar+gzip');
    return { manifestDigest: res.headers.get('docker-content-digest') ?? '', layerDigest: layer?.digest ?? '' };
  };
  for (const [suffix, version, expected] of [
    [':8.0.1', undefined, '8.0.1'],
    [':8.1.0_build.5', undefined, '8.1.0+build.5'],
    ['', '>=8.0.0 <9', '8.1.0+build.5'],
    ['', '~8.0', '8.0.1'],
    ['', '8.1.0+build.5', '8.1.0+build.5'],
    ['', undefined, '8.1.0+build.5'],
    ['', '>=9.0.0-0', '9.0.0-rc.1'],
  ] as const) {
    const got = await fetchChart(ociRef(suffix, version), { cacheDir, auth: () => undefined });
    assert.equal(got.version, expected, `${suffix} ${String(version)}`);
    const view = await registryView(expected.replaceAll('+', '_'));
    assert.equal(got.digest, view.layerDigest);
    assert.equal(got.manifestDigest, view.manifestDigest);
    assert.equal(got.manifestDigest, pushDigests.get(expected));
    assert.equal(got.source, `oci://${registry.host}/charts/memcached:${expected.replaceAll('+', '_')}@${view.manifestDigest}`);
    // Helm reads a tag as a version constraint, and `8.1.0_build.5` is none: give it the version instead.
    const helmArgs = suffix.includes('_') ? [`oci://${registry.host}/charts/memcached`, '--version', expected] : [`oci://${registry.host}/charts/memcached${suffix}`];
    const pulled = await helmPull([...helmArgs, '--plain-http', ...(version === undefined ? [] : ['--version', version])]);
    await assertSameAsHelm(got, pulled);
    // The same archive a repository serves: helm package made it once.
    assert.ok((await readFile(got.path)).equals(await readFile(packaged.get(expected) ?? '')));
  }
  const pinnedDigest = pushDigests.get('8.0.0') ?? '';
  const pinned = await fetchChart(ociRef(`@${pinnedDigest}`), { cacheDir, auth: () => undefined });
  assert.equal(pinned.version, '8.0.0');
  // helm names a chart pulled by digest after the digest.
  const byDigest = await helmPull([`oci://${registry.host}/charts/memcached@${pinnedDigest}`, '--plain-http']);
  await assertSameAsHelm(pinned, byDigest, `memcached@${pinnedDigest.replace(':', '-')}.tgz`);
  assert.deepEqual(await listChartVersions(ociRef(), { auth: () => undefined }), ['9.0.0-rc.1', '8.1.0+build.5', '8.0.1', '8.0.0']);
  await assert.rejects(fetchChart(ociRef(':7.0.0'), { cacheDir, auth: () => undefined }), isCode('HELM_CHART_NOT_FOUND', /memcached:7\.0\.0/));
  await assert.rejects(fetchChart(ociRef('', '^10'), { cacheDir, auth: () => undefined }), isCode('HELM_CHART_NO_VERSION', /available: 9\.0\.0-rc\.1, 8\.1\.0\+build\.5/));

  // With the registry gone: a pinned digest is answered from the cache, a tag names the unreachable host.
  await registry.stop();
  const offline = await fetchChart(ociRef(`@${pinnedDigest}`), { cacheDir, auth: () => undefined });
  assert.equal(offline.path, pinned.path);
  await assert.rejects(fetchChart(ociRef(':8.0.1'), { cacheDir, auth: () => undefined }), isCode('HELM_CHART_UNREACHABLE', new RegExp(`cannot reach registry ${registry.host.replaceAll('.', '\\.')}`)));
});

test('local: the corpus directory and a helm-packaged archive, each under its own digest', async () => {
  const cacheDir = await freshCache();
  const dir = await fetchChart({ type: 'dir', path: CHART_DIR }, { cacheDir, allowHostPaths: true });
  assert.deepEqual([dir.kind, dir.name, dir.version], ['dir', 'memcached', '8.0.0']);
  assert.equal((await digestTree(dir.path)).digest, dir.digest);
  assert.ok((await readFile(join(dir.path, 'charts', 'common-2.31.10.tgz'))).equals(await readFile(join(CHART_DIR, 'charts', 'common-2.31.10.tgz'))));
  const archivePath = packaged.get('8.0.1') ?? '';
  const archive = await fetchChart({ type: 'archive', path: archivePath }, { cacheDir, allowHostPaths: true });
  assert.deepEqual([archive.kind, archive.name, archive.version], ['archive', 'memcached', '8.0.1']);
  assert.equal(archive.digest, `sha256:${sha256Hex(await readFile(archivePath))}`);
  // helm itself reads the cached copies as charts.
  for (const path of [dir.path, archive.path]) {
    const { stdout } = await helm(['show', 'chart', path]);
    assert.match(stdout, /^name: memcached$/m);
  }
});

