import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { loadFbcDir, validateConfig } from '../../src/catalog/index.js';
import { CatalogIndex, resolve } from '../../src/resolve/index.js';
import { renamedCopy, scaledCatalog, validPackages } from '../../bench/lib/fbc-scale.js';

const VALID = path.join(import.meta.dirname, '..', '..', 'src', 'catalog', 'testdata', 'fbc', 'valid');

test('a renamed copy of a catalog validates, keeps every record and its upgrade graph, under new names only', async () => {
  const { config } = await loadFbcDir(VALID);
  const copy = renamedCopy(config, '-x0');
  assert.equal(validateConfig(copy).result.errors().length + validateConfig(copy).result.children.flatMap((c) => c.errors()).length, 0);
  assert.deepEqual(copy.packages.map((p) => p.name), config.packages.map((p) => `${p.name}-x0`));
  assert.equal(copy.bundles.length, config.bundles.length);
  for (const [i, b] of copy.bundles.entries()) {
    const orig = config.bundles[i];
    assert.ok(orig !== undefined);
    assert.equal(b.name, `${orig.name}-x0`);
    assert.equal(b.image, orig.image, 'images are kept');
    const pkgProp = b.properties.find((p) => p.type === 'olm.package')?.value as { packageName: string; version: string };
    assert.equal(pkgProp.packageName, `${orig.package}-x0`);
  }
  for (const [i, c] of copy.channels.entries()) {
    const orig = config.channels[i];
    assert.ok(orig !== undefined);
    assert.deepEqual(c.entries.map((e) => e.replaces), orig.entries.map((e) => (e.replaces === undefined ? undefined : `${e.replaces}-x0`)));
  }
});

test('a scaled catalog reaches the bundle count asked for and resolves like the original', async () => {
  const { config } = await loadFbcDir(VALID);
  const { valid } = validPackages(config);
  const scaled = scaledCatalog(valid, valid.bundles.length * 3 + 1, 'a');
  assert.equal(scaled.bundles.length, valid.bundles.length * 4, 'whole copies until the count is reached');
  assert.equal(new Set(scaled.packages.map((p) => p.name)).size, scaled.packages.length, 'every package name is its own');
  const pkg = valid.packages[0]?.name ?? '';
  const pick = (dc: typeof valid, name: string): string[] => resolve({ catalogs: new CatalogIndex([{ name: 'c', config: dc, priority: 0 }]), installed: [], requests: [{ package: name, channels: [], upgradePolicy: 'CatalogProvided' }] }).bundles.map((b) => b.version);
  assert.deepEqual(pick(scaled, `${pkg}-a3`), pick(valid, pkg));
});
