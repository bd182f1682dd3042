/**
 * `run bundle --index-image IMAGE` reads the catalog of a third party's image: its configs label
 * (`operators.operatorframework.io.index.configs.v1`) must name a directory inside that image,
 * not another image's tree in the local cache nor a file of the person running the command.
 */
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/render.js';
import { startFakeRegistry, type FakeRegistry } from '../oci/fake-registry.test-helper.js';
import { buildImage, pullAndUnpack, pushImage, RegistryClient } from '../oci/index.js';
import { BinnacleError } from '../util/errors.js';
import { readIndexImage } from './bundle-input.js';

let registry: FakeRegistry;
let work: string;
const client = (): RegistryClient => new RegistryClient({ auth: () => undefined });

before(async () => {
  registry = await startFakeRegistry();
  work = await mkdtemp(join(tmpdir(), 'index-image-test-'));
});
after(async () => {
  await registry.close();
  await rm(work, { recursive: true, force: true });
});

/** Pushes a catalog image: the valid fixture catalog at `/<tree>` (none when undefined, only a README), and the configs label `label`. */
async function pushCatalog(name: string, label: string, tree: string | undefined): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'README'), 'a catalog\n');
  if (tree !== undefined) await cp(join(CATALOG_TESTDATA, 'fbc', 'valid'), join(dir, tree), { recursive: true });
  const image = await buildImage({ layers: [{ dir, prefix: '/' }], labels: { [LABEL_CATALOG_CONFIGS]: label }, outputDir: join(work, `layout-${name}`) });
  const ref = `${registry.host}/catalogs/${name}:1`;
  await pushImage(image, ref, client());
  return ref;
}

async function refused(p: Promise<unknown>, text: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof BinnacleError, String(err));
    assert.equal(err.code, 'RUN_BUNDLE_INDEX_IMAGE');
    assert.match(err.message, text);
    return true;
  });
}

test("an index image whose configs label climbs out to another image's tree in the cache is refused, not read", async () => {
  const cacheDir = join(work, 'cache-sibling');
  const other = await pullAndUnpack(await pushCatalog('private', '/configs', 'configs'), { cacheDir, client: client() });
  const label = `../${basename(other.dir)}/configs`;
  const evil = await pushCatalog('evil', label, undefined);
  await refused(readIndexImage(evil, { cacheDir, client: client() }), new RegExp(`--index-image ${evil.replace(/\./g, '\\.')}: image label ${LABEL_CATALOG_CONFIGS.replace(/\./g, '\\.')}="\\.\\./[0-9a-f]{64}/configs" contains "\\.\\."`));
});

test('an index image whose label names a directory it lacks says it is not a catalog image', async () => {
  const cacheDir = join(work, 'cache-missing');
  const ref = await pushCatalog('missing', '/nope', 'configs');
  await refused(readIndexImage(ref, { cacheDir, client: client() }), /is not a catalog image: it has no \/nope directory, which its label operators\.operatorframework\.io\.index\.configs\.v1 names/);
});

test('a legitimate label, nested or relative, is read', async () => {
  for (const [name, tree, label] of [
    ['nested', 'configs/sub', '/configs/sub'],
    ['relative', 'configs', 'configs'],
  ] as const) {
    const cacheDir = join(work, `cache-${name}`);
    const config = await readIndexImage(await pushCatalog(name, label, tree), { cacheDir, client: client() });
    assert.equal(config.packages.length, 2, label);
  }
});
