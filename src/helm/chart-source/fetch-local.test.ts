import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { digestTree } from '../../source/index.js';
import { archivePath, gcCharts } from './cache.js';
import { fetchChart, listChartVersions } from './fetch.js';
import { chartArchive, freshCacheIn, isCode, sha256Hex } from './fixtures.test-helper.js';

let sandbox = '';
let src = '';

before(async () => {
  sandbox = await mkdtemp(join(tmpdir(), 'chart-local-'));
  src = join(sandbox, 'src');
  await mkdir(join(src, 'memcached', 'templates'), { recursive: true });
  await writeFile(join(src, 'memcached', 'Chart.yaml'), 'apiVersion: v2\nname: memcached\nversion: 7.0.1\n');
  await writeFile(join(src, 'memcached', 'values.yaml'), 'replicas: 1\n');
  await writeFile(join(src, 'memcached', 'templates', 'cm.yaml'), 'kind: ConfigMap\n');
  await mkdir(join(src, 'no-chart-yaml'));
  await writeFile(join(src, 'no-chart-yaml', 'values.yaml'), 'a: 1\n');
  await mkdir(join(src, 'escaping'));
  await writeFile(join(src, 'escaping', 'Chart.yaml'), 'name: escaping\nversion: 1.0.0\n');
  await symlink('../../../../etc/passwd', join(src, 'escaping', 'passwd'));
  await writeFile(join(src, 'memcached-7.0.1.tgz'), chartArchive('memcached', '7.0.1'));
  // Entries that would escape if anyone unpacked them: fetching never unpacks.
  await writeFile(join(src, 'evil-1.0.0.tgz'), chartArchive('evil', '1.0.0', { '../../../escaped.txt': 'pwned', '/abs.txt': 'pwned' }));
  await writeFile(join(src, 'garbage.tgz'), 'this is not gzip at all\n'.repeat(50));
  await writeFile(join(src, 'no-chart.tgz'), chartArchive('x', '1.0.0').subarray(0, 0));
});

after(async () => {
  await rm(sandbox, { recursive: true, force: true });
});

const freshCache = (): Promise<string> => freshCacheIn(sandbox);

/** Every path under dir (relative), with file contents and link targets. */
async function snapshot(dir: string, root = dir): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) {
    const abs = join(dir, name);
    const st = await lstat(abs);
    const rel = relative(root, abs);
    if (st.isDirectory()) Object.assign(out, { [`${rel}/`]: '' }, await snapshot(abs, root));
    else out[rel] = st.isSymbolicLink() ? `-> ${await readlink(abs)}` : sha256Hex(await readFile(abs));
  }
  return out;
}

const allow = { allowHostPaths: true };

test('a directory is copied into the cache as a tree with a deterministic digest; later edits do not reach it', async () => {
  const cacheDir = await freshCache();
  const got = await fetchChart({ type: 'dir', path: join(src, 'memcached') }, { cacheDir, ...allow });
  assert.equal(got.kind, 'dir');
  assert.deepEqual([got.name, got.version], ['memcached', '7.0.1']);
  assert.equal(got.path, join(cacheDir, 'trees', got.digest.slice('sha256:'.length)));
  assert.equal((await digestTree(got.path)).digest, got.digest);
  assert.equal(await readFile(join(got.path, 'templates', 'cm.yaml'), 'utf8'), 'kind: ConfigMap\n');
  // Same content in another cache: same digest.
  const other = await fetchChart({ type: 'dir', path: join(src, 'memcached') }, { cacheDir: await freshCache(), ...allow });
  assert.equal(other.digest, got.digest);
  await writeFile(join(src, 'memcached', 'values.yaml'), 'replicas: 2\n');
  try {
    assert.equal(await readFile(join(got.path, 'values.yaml'), 'utf8'), 'replicas: 1\n');
    const changed = await fetchChart({ type: 'dir', path: join(src, 'memcached') }, { cacheDir, ...allow });
    assert.notEqual(changed.digest, got.digest);
  } finally {
    await writeFile(join(src, 'memcached', 'values.yaml'), 'replicas: 1\n');
  }
});

test('an archive is copied in by its sha256 and keeps its .tgz name', async () => {
  const cacheDir = await freshCache();
  const bytes = await readFile(join(src, 'memcached-7.0.1.tgz'));
  const got = await fetchChart({ type: 'archive', path: join(src, 'memcached-7.0.1.tgz') }, { cacheDir, ...allow });
  assert.equal(got.digest, `sha256:${sha256Hex(bytes)}`);
  assert.equal(got.path, archivePath(cacheDir, got.digest));
  assert.ok(got.path.endsWith('.tgz'));
  assert.deepEqual(await readFile(got.path), bytes);
  assert.deepEqual(await listChartVersions({ type: 'archive', path: join(src, 'memcached-7.0.1.tgz') }, allow), ['7.0.1']);
  assert.deepEqual(await listChartVersions({ type: 'dir', path: join(src, 'memcached') }, allow), ['7.0.1']);
});

test('nothing is ever written outside the cache, even for archives with escaping entries', async () => {
  const cacheDir = await freshCache();
  const outside = await snapshot(sandbox);
  const got = await fetchChart({ type: 'archive', path: join(src, 'evil-1.0.0.tgz') }, { cacheDir, ...allow });
  assert.equal(got.name, 'evil');
  await fetchChart({ type: 'dir', path: join(src, 'memcached') }, { cacheDir, ...allow });
  const after = await snapshot(sandbox);
  const changed = Object.keys(after).filter((k) => after[k] !== outside[k]);
  assert.ok(changed.length > 0);
  for (const k of changed) assert.ok(join(sandbox, k).startsWith(`${cacheDir}/`), `${k} was written outside the cache`);
  assert.deepEqual(Object.keys(outside).filter((k) => !(k in after)), []);
  assert.deepEqual(await readdir(join(cacheDir, 'tmp')), []);
});

test('local charts need allowHostPaths', async () => {
  await assert.rejects(fetchChart({ type: 'dir', path: join(src, 'memcached') }, { cacheDir: await freshCache() }), isCode('HELM_CHART_HOST_PATH_DENIED'));
  await assert.rejects(listChartVersions({ type: 'archive', path: join(src, 'memcached-7.0.1.tgz') }), isCode('HELM_CHART_HOST_PATH_DENIED'));
});

test('what is not a chart is named for what it is', async () => {
  const cacheDir = await freshCache();
  await assert.rejects(fetchChart({ type: 'dir', path: join(src, 'missing') }, { cacheDir, ...allow }), isCode('HELM_CHART_NOT_FOUND', /does not exist/));
  await assert.rejects(fetchChart({ type: 'dir', path: 'bitnami/memcached' }, { cacheDir, ...allow }), isCode('HELM_CHART_NOT_FOUND', /repository URL/));
  await assert.rejects(fetchChart({ type: 'dir', path: join(src, 'no-chart-yaml') }, { cacheDir, ...allow }), isCode('HELM_CHART_NOT_A_CHART', /no Chart\.yaml/));
  await assert.rejects(fetchChart({ type: 'dir', path: join(src, 'memcached-7.0.1.tgz') }, { cacheDir, ...allow }), isCode('HELM_CHART_NOT_A_CHART', /is a file/));
  await assert.rejects(fetchChart({ type: 'archive', path: join(src, 'memcached') }, { cacheDir, ...allow }), isCode('HELM_CHART_NOT_A_CHART', /is a directory/));
  await assert.rejects(fetchChart({ type: 'archive', path: join(src, 'garbage.tgz') }, { cacheDir, ...allow }), isCode('HELM_CHART_NOT_A_CHART', /not a gzipped tar|no Chart\.yaml/));
  await assert.rejects(fetchChart({ type: 'archive', path: join(src, 'no-chart.tgz') }, { cacheDir, ...allow }), isCode('HELM_CHART_NOT_A_CHART'));
  await assert.rejects(fetchChart({ type: 'dir', path: join(src, 'escaping') }, { cacheDir, ...allow }), isCode('SOURCE_UNSAFE_LINK', /passwd/));
  await assert.rejects(fetchChart({ type: 'dir', path: join(src, 'memcached') }, { cacheDir, maxTreeBytes: 10, ...allow }), isCode('SOURCE_TOO_LARGE'));
  await assert.rejects(fetchChart({ type: 'archive', path: join(src, 'memcached-7.0.1.tgz') }, { cacheDir, maxArchiveBytes: 10, ...allow }), isCode('HELM_CHART_TOO_LARGE'));
});

test('gcCharts keeps the digests asked for and removes the rest', async () => {
  const cacheDir = await freshCache();
  const a = await fetchChart({ type: 'archive', path: join(src, 'memcached-7.0.1.tgz') }, { cacheDir, ...allow });
  const b = await fetchChart({ type: 'archive', path: join(src, 'evil-1.0.0.tgz') }, { cacheDir, ...allow });
  assert.deepEqual(await gcCharts(cacheDir, [a.digest]), { removedArchives: 1, removedPins: 0 });
  assert.ok((await lstat(a.path)).isFile());
  await assert.rejects(lstat(b.path));
});

test('a packaged chart cut off in its gzip stream is refused as not a chart instead of waiting for ever (found by test/fuzz)', async () => {
  const { readArchiveChartMetadata } = await import('./chart-file.js');
  const file = join(sandbox, 'cut.tgz');
  const whole = chartArchive('cut', '1.0.0');
  await writeFile(file, whole.subarray(0, Math.floor(whole.length / 2)));
  await assert.rejects(readArchiveChartMetadata(file, 'cut.tgz', 1024 * 1024), isCode('HELM_CHART_NOT_A_CHART', /not a gzipped tar archive/));
});
