import assert from 'node:assert/strict';
import { mkdir, mkdtemp, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadFbcDir, resolutionView, servingBlockers, validateConfig, writeFbcFile } from '../catalog/index.js';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { storeCatalog } from './store.js';
import { unpackCatalog } from './unpack.js';
import { manyPackages } from './many-packages.test-helper.js';

const acceptServable = (v: Parameters<typeof servingBlockers>[0]): boolean => servingBlockers(v).length === 0;

/** What the controller did before: the whole catalog loaded, validated, stored and viewed. */
async function wholeCatalog(root: string, dir: string) {
  const loaded = await loadFbcDir(root);
  const validation = validateConfig(loaded.config).result;
  return { loaded, validation, stored: await storeCatalog(loaded.config, dir), view: resolutionView(loaded.config) };
}

async function compareWithWhole(root: string): Promise<void> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const want = await wholeCatalog(root, path.join(tmp, 'whole'));
  // Stored whatever its validation says (manyPackages' bundle objects are not manifests): the bytes are what is compared.
  const got = await unpackCatalog(root, path.join(tmp, 'cat', 'sha'), () => true);
  assert.ok(got.result.ok, got.result.render());
  assert.equal(got.validation?.render(), want.validation.render(), 'validation reports what it reports of the whole catalog');
  assert.ok(got.stored !== undefined);
  assert.ok((await readFile(got.stored.file)).equals(await readFile(want.stored.file)), 'the store file is byte for byte the same');
  assert.equal(got.stored.sha256, want.stored.sha256);
  assert.equal(got.stored.size, want.stored.size);
  assert.deepEqual(got.stored.metas, want.stored.metas);
  assert.deepEqual(got.view, want.view, 'the view is resolutionView of the whole catalog');
  // deepEqual does not see sharing: equal properties of bundles with an image are one object.
  const props = got.view.bundles.filter((b) => b.image !== '').flatMap((b) => b.properties);
  const keys = new Set(props.map((p) => `${p.type}\n${JSON.stringify(p.value)}`));
  assert.equal(new Set(props).size, keys.size, 'one object for each distinct property');
  assert.deepEqual(await readdir(path.join(tmp, 'cat')), ['sha'], 'no spill file is left');
}

test('unpacking stores what storeCatalog stores and views what resolutionView views, for the valid fixture', async () => {
  const root = path.join(CATALOG_TESTDATA, 'fbc', 'valid');
  await compareWithWhole(root);
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const got = await unpackCatalog(root, path.join(tmp, 'sha'), acceptServable);
  assert.ok(got.stored !== undefined && got.validation?.ok === true, 'the valid fixture is accepted');
});

test('unpacking a catalog of many packages, written in an order opm would not write, stores them in opm order', async () => {
  const dc = manyPackages(40);
  // Reversed, and split over two files: the store's order must not depend on the files' order.
  const root = await mkdtemp(path.join(tmpdir(), 'unpack-src-'));
  await writeFbcFile({ ...dc, packages: dc.packages.slice(20).reverse(), channels: dc.channels.slice(20), bundles: dc.bundles.slice(20).reverse() }, path.join(root, 'b.json'), 'json');
  await writeFbcFile({ ...dc, packages: dc.packages.slice(0, 20), channels: dc.channels.slice(0, 20).reverse(), bundles: dc.bundles.slice(0, 20) }, path.join(root, 'a.yaml'), 'yaml');
  await compareWithWhole(root);
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const got = await unpackCatalog(root, path.join(tmp, 'sha'), () => true);
  const names = got.stored?.metas.filter((m) => m.schema === 'olm.package').map((m) => m.name);
  assert.deepEqual(names, [...(names ?? [])].sort());
  assert.equal(names?.length, 40);
  assert.ok(got.view.bundles.every((b) => b.properties.every((p) => p.type !== 'olm.bundle.object')), 'the view holds no bundle objects');
});

test('icons are checked as they are read, not held for validation: its warnings are those of the whole catalog', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'unpack-src-'));
  const pkg = (name: string, icon?: { base64data: string; mediatype: string }) => ({ schema: 'olm.package', name, defaultChannel: 'stable', ...(icon === undefined ? {} : { icon }) });
  const records = [
    pkg('a-png', { base64data: 'aWNvbg==', mediatype: 'image/png' }),
    pkg('b-empty', { base64data: '', mediatype: 'image/png' }),
    pkg('c-text', { base64data: 'aWNvbg==', mediatype: 'text/plain' }),
    pkg('d-none'),
    pkg('e-wrapped', { base64data: 'aWNv\nbg==', mediatype: 'image/png' }),
    ...['a-png', 'b-empty', 'c-text', 'd-none', 'e-wrapped'].flatMap((p) => [
      { schema: 'olm.channel', package: p, name: 'stable', entries: [{ name: `${p}.v1` }] },
      { schema: 'olm.bundle', package: p, name: `${p}.v1`, image: `example.com/${p}:v1`, properties: [{ type: 'olm.package', value: { packageName: p, version: '1.0.0' } }] },
    ]),
  ];
  await writeFile(path.join(root, 'catalog.json'), records.map((r) => JSON.stringify(r)).join('\n'));
  await compareWithWhole(root);
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const got = await unpackCatalog(root, path.join(tmp, 'sha'), () => true);
  const text = got.validation?.render() ?? '';
  assert.match(text, /icon base64data is empty/, 'the empty icon is still reported');
  assert.match(text, /icon mediatype "text\/plain"/, 'the odd media type is still reported');
  assert.equal(text.match(/\[package\.icon\]/g)?.length, 2, `the valid icons are not:\n${text}`);
});

test('a catalog that cannot be read is not validated or stored, and leaves nothing behind', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'unpack-src-'));
  await writeFile(path.join(root, 'catalog.json'), '{"schema":"olm.package","name":"p"}\n{"schema": "olm.bundle", "name": 5}\n');
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const got = await unpackCatalog(root, path.join(tmp, 'cat', 'sha'), () => true);
  assert.equal(got.result.ok, false);
  assert.match(got.result.render(), /catalog\.json/);
  assert.equal(got.validation, undefined);
  assert.equal(got.stored, undefined);
  assert.deepEqual(await readdir(path.join(tmp, 'cat')), [], 'no spill file, no store directory');
});

test('a catalog its validation refuses is not stored; the validation names the rule', async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const root = path.join(CATALOG_TESTDATA, 'invalid-model');
  const got = await unpackCatalog(root, path.join(tmp, 'cat', 'sha'), acceptServable);
  assert.ok(got.result.ok, got.result.render());
  assert.ok(got.validation !== undefined && servingBlockers(got.validation).length > 0, 'the fixture breaks a rule that blocks serving');
  assert.equal(got.validation.render(), validateConfig((await loadFbcDir(root)).config).result.render());
  assert.equal(got.stored, undefined);
  assert.deepEqual(await readdir(path.join(tmp, 'cat')), []);
});

test('a spill file an earlier unpack left (a crash) is removed by the next unpack of that catalog', async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  await mkdir(path.join(tmp, 'cat'));
  await writeFile(path.join(tmp, 'cat', '.unpack-old-0123456789ab'), 'x'.repeat(1000));
  const got = await unpackCatalog(path.join(CATALOG_TESTDATA, 'fbc', 'valid'), path.join(tmp, 'cat', 'sha'), acceptServable);
  assert.ok(got.stored !== undefined);
  assert.deepEqual(await readdir(path.join(tmp, 'cat')), ['sha']);
});

test('a record larger than the write buffer is spilled and copied whole', async () => {
  const dc = manyPackages(3);
  const big = dc.bundles[1];
  assert.ok(big !== undefined);
  big.properties.push({ type: 'olm.bundle.object', value: { data: 'z'.repeat(3 * 1024 * 1024) } });
  const root = await mkdtemp(path.join(tmpdir(), 'unpack-src-'));
  await writeFbcFile(dc, path.join(root, 'catalog.json'), 'json');
  await compareWithWhole(root);
});

test('a catalog whose records come to more than the store bound is refused naming the file and the bound; nothing is left', async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const root = path.join(CATALOG_TESTDATA, 'fbc', 'valid');
  await assert.rejects(unpackCatalog(root, path.join(tmp, 'cat', 'sha'), () => true, { maxStoreBytes: 2000 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CATALOG_STORE_TOO_LARGE');
    assert.match(err.message, /testdata\/fbc\/valid\/.*: the catalog's records come to more than 2000 bytes as stored/);
    return true;
  });
  assert.deepEqual(await readdir(path.join(tmp, 'cat')), [], 'no spill file, no store');
});

test('a new store replaces the old file by a rename: an answer reading the old one goes on reading it; no partial file is left', async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const dir = path.join(tmp, 'cat', 'sha');
  const first = await unpackCatalog(path.join(CATALOG_TESTDATA, 'fbc', 'valid'), dir, () => true);
  assert.ok(first.stored !== undefined);
  const oldBytes = await readFile(first.stored.file);
  const reading = await open(first.stored.file, 'r');
  try {
    // A stale partial file a crash left in the directory goes too.
    await writeFile(path.join(dir, '.unpack-catalog.jsonl-0123456789ab'), 'partial');
    const src = await mkdtemp(path.join(tmpdir(), 'unpack-src-'));
    await writeFbcFile(manyPackages(5), path.join(src, 'catalog.json'), 'json');
    const second = await unpackCatalog(src, dir, () => true);
    assert.ok(second.stored !== undefined && second.stored.sha256 !== first.stored.sha256);
    const { buffer } = await reading.read(Buffer.alloc(oldBytes.length), 0, oldBytes.length, 0);
    assert.ok(buffer.equals(oldBytes), 'the old file, still open, is whole');
    assert.deepEqual(await readdir(dir), ['catalog.jsonl']);
  } finally {
    await reading.close();
  }
});

test('an I/O failure of the store names the path and is transient', async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  // The catalog's directory is a file: nothing can be made under it.
  await writeFile(path.join(tmp, 'cat'), 'not a directory');
  await assert.rejects(unpackCatalog(path.join(CATALOG_TESTDATA, 'fbc', 'valid'), path.join(tmp, 'cat', 'sha'), () => true), (err: Error & { code?: string; errorClass?: string }) => {
    assert.equal(err.code, 'CATALOG_STORE_WRITE');
    assert.equal(err.errorClass, 'transient');
    assert.ok(err.message.startsWith(path.join(tmp, 'cat')), err.message);
    return true;
  });
});

test('a failure writing the store itself names the path; the spill and any partial file are removed', async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  await mkdir(path.join(tmp, 'cat'));
  // The digest's directory is a file: the catalog reads and validates, then the store cannot be made.
  await writeFile(path.join(tmp, 'cat', 'sha'), 'not a directory');
  await assert.rejects(unpackCatalog(path.join(CATALOG_TESTDATA, 'fbc', 'valid'), path.join(tmp, 'cat', 'sha'), () => true), (err: Error & { code?: string; errorClass?: string }) => {
    assert.equal(err.code, 'CATALOG_STORE_WRITE');
    assert.equal(err.errorClass, 'transient');
    assert.ok(err.message.startsWith(path.join(tmp, 'cat', 'sha')), err.message);
    return true;
  });
  assert.deepEqual(await readdir(path.join(tmp, 'cat')), ['sha'], 'no spill file left');
});

test('two unpacks of one catalog at once (a new leader and its own follower at a handover) both store, one after the other', async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const src = path.join(tmp, 'src');
  await mkdir(src);
  await writeFbcFile(manyPackages(30), path.join(src, 'catalog.json'), 'json');
  // Each removes the spill files it finds in the catalog's directory: run together, the second removed the first's.
  const [a, b] = await Promise.all([unpackCatalog(src, path.join(tmp, 'cat', 'one'), () => true), unpackCatalog(src, path.join(tmp, 'cat', 'two'), () => true)]);
  assert.ok(a.stored !== undefined && b.stored !== undefined);
  assert.equal(a.stored.sha256, b.stored.sha256);
  assert.deepEqual((await readdir(path.join(tmp, 'cat'))).sort(), ['one', 'two'], 'no spill file is left');
});

test('the unpack builds its view as resolutionRecords does: a property the same in every bundle is one object, one different in each is not merged', async () => {
  // Interning's and sharing's effect on the heap is measured where the records are built (catalog/resolution-view.test.ts).
  const root = await mkdtemp(path.join(tmpdir(), 'unpack-src-'));
  const lines = Array.from({ length: 1000 }, (_, i) => {
    const pkgName = `package-number-${i % 50}`;
    return JSON.stringify({
      schema: 'olm.bundle',
      package: pkgName,
      name: `${pkgName}.v${i}`,
      image: `example.com/${pkgName}@sha256:${String(i).padStart(64, '0')}`,
      properties: [
        { type: 'olm.package', value: { packageName: pkgName, version: `1.0.${i}` } },
        { type: 'olm.gvk', value: { group: 'cache.example.com', kind: 'MemcachedBackup', version: 'v1alpha1' } },
        { type: 'olm.csv.metadata', value: { displayName: `Memcached Operator ${i}`, provider: { name: 'Example Company' } } },
      ],
    });
  });
  await writeFile(path.join(root, 'catalog.json'), `${lines.join('\n')}\n`);
  const tmp = await mkdtemp(path.join(tmpdir(), 'unpack-'));
  const { view } = await unpackCatalog(root, path.join(tmp, 'sha'), () => true);
  const objects = (type: string) => new Set(view.bundles.map((b) => b.properties.find((p) => p.type === type))).size;
  assert.equal(objects('olm.gvk'), 1, 'olm.gvk: one object in 1,000 bundles');
  assert.ok(view.bundles.every((b) => Object.isFrozen(b.properties.find((p) => p.type === 'olm.gvk')?.value)));
  assert.equal(objects('olm.csv.metadata'), 1000);
  assert.equal(objects('olm.package'), 1000);
});
