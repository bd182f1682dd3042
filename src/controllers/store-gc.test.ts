import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { collectCatalogStore, collectSourceCache, StoreMetrics } from './store-gc.js';

const HOUR = 60 * 60_000;
const hex = (c: string): string => c.repeat(64);

async function aged(path: string, ms: number): Promise<void> {
  const t = new Date(Date.now() - ms);
  await utimes(path, t, t);
}

test('the source cache keeps trees a BundleDeployment records and recent ones, and removes the rest with their refs', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'binnacle-gc-'));
  try {
    for (const c of ['a', 'b', 'c']) {
      await mkdir(join(dir, 'trees', hex(c)), { recursive: true });
      await writeFile(join(dir, 'trees', hex(c), 'manifest.yaml'), 'x'.repeat(100));
    }
    await mkdir(join(dir, 'refs'), { recursive: true });
    await writeFile(join(dir, 'refs', 'to-b.json'), JSON.stringify({ key: 'k', digest: `sha256:${hex('b')}` }));
    await writeFile(join(dir, 'refs', 'to-a.json'), JSON.stringify({ key: 'k', digest: `sha256:${hex('a')}` }));
    await mkdir(join(dir, 'tmp', 'unpack-old'), { recursive: true });
    await aged(join(dir, 'trees', hex('a')), 2 * HOUR); // in use
    await aged(join(dir, 'trees', hex('b')), 2 * HOUR); // garbage
    // c: just unpacked, its BundleDeployment's status not written yet
    await aged(join(dir, 'refs', 'to-b.json'), 2 * HOUR);
    await aged(join(dir, 'tmp', 'unpack-old'), 2 * HOUR);

    const stats = await collectSourceCache(dir, new Set([`sha256:${hex('a')}`]));
    assert.deepEqual((await readdir(join(dir, 'trees'))).sort(), [hex('a'), hex('c')]);
    assert.deepEqual(await readdir(join(dir, 'refs')), ['to-a.json']);
    assert.deepEqual(await readdir(join(dir, 'tmp')), []);
    assert.equal(stats.removed, 1);
    assert.equal(stats.entries, 2);
    assert.ok(stats.bytes >= 200, `${stats.bytes} bytes counted`);

    const registry = new Registry();
    new StoreMetrics(registry).record('sources', stats);
    const text = await registry.metrics();
    assert.match(text, /binnacle_store_entries\{store="sources"\} 2/);
    assert.match(text, new RegExp(`binnacle_store_bytes\\{store="sources"\\} ${stats.bytes}`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the catalog store keeps the version each catalog serves and removes old versions and deleted catalogs', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'binnacle-gc-'));
  try {
    for (const [name, version] of [['ops', 'v1'], ['ops', 'v2'], ['gone', 'v1']] as const) {
      await mkdir(join(dir, name, version), { recursive: true });
      await writeFile(join(dir, name, version, 'catalog.json'), '{}');
      await aged(join(dir, name, version), 2 * HOUR);
    }
    const stats = await collectCatalogStore(dir, new Map([['ops', join(dir, 'ops', 'v2', 'catalog.json')]]));
    assert.deepEqual(await readdir(dir), ['ops']);
    assert.deepEqual(await readdir(join(dir, 'ops')), ['v2']);
    assert.deepEqual({ entries: stats.entries, removed: stats.removed }, { entries: 1, removed: 2 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
