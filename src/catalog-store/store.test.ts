import assert from 'node:assert/strict';
import { mkdtemp, readFile, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { DeclarativeConfig } from '../declcfg/index.js';
import { byteRanges, filterMetas, readRanges, storeCatalog } from './store.js';

/** A catalog of many packages, each with a channel and a bundle: its olm.package records are as many separate ranges. */
function manyPackages(n: number): DeclarativeConfig {
  const dc: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (let i = 0; i < n; i++) {
    const name = `pkg-${String(i).padStart(4, '0')}`;
    dc.packages.push({ schema: 'olm.package', name, defaultChannel: 'stable', description: 'x'.repeat(i % 300) });
    dc.channels.push({ schema: 'olm.channel', package: name, name: 'stable', entries: [{ name: `${name}.v1.0.0` }] });
    dc.bundles.push({ schema: 'olm.bundle', package: name, name: `${name}.v1.0.0`, image: `example.com/${name}:v1.0.0`, properties: [{ type: 'olm.package', value: { packageName: name, version: '1.0.0' } }, { type: 'olm.bundle.object', value: { data: 'y'.repeat(70_000 + i) } }] });
  }
  return dc;
}

async function collect(gen: AsyncGenerator<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of gen) chunks.push(c);
  return Buffer.concat(chunks);
}

test('a query of many scattered records streams exactly their lines, in order, from one file handle', async () => {
  const store = await storeCatalog(manyPackages(300), await mkdtemp(path.join(tmpdir(), 'store-')));
  const file = await readFile(store.file);
  for (const filter of [{ schema: 'olm.package' }, { package: 'pkg-0042' }, { schema: 'olm.bundle' }, {}]) {
    const metas = filterMetas(store, filter);
    assert.ok(metas.length > 0);
    const want = Buffer.concat(metas.map((m) => file.subarray(m.start, m.start + m.length)));
    const got = await collect(readRanges(store, byteRanges(metas)));
    assert.ok(got.equals(want), `${JSON.stringify(filter)}: ${got.length} bytes, want ${want.length}`);
  }
  const pkgs = filterMetas(store, { schema: 'olm.package' });
  assert.equal(byteRanges(pkgs).length, 300, 'the olm.package records are not adjacent: one range each');
});

test('a store file cut short under its index is a named error, not a short answer', async () => {
  const store = await storeCatalog(manyPackages(3), await mkdtemp(path.join(tmpdir(), 'store-')));
  await truncate(store.file, store.size - 1000);
  await assert.rejects(collect(readRanges(store, byteRanges(filterMetas(store, {})))), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CATALOG_STORE_CORRUPT');
    assert.match(err.message, /ends at byte/);
    return true;
  });
});
