import assert from 'node:assert/strict';
import { cp, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { assertGolden, TESTDATA } from './golden.test-helper.js';
import { detectSourceKind, LABEL_CATALOG_CONFIGS, render, type ImagePuller } from './render.js';
import { validateConfig } from '../catalog/validate.js';
import { toFbcJson } from '../catalog/write.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';

const IMAGE = 'quay.io/example/{package}-bundle:v{version}';

describe('render', () => {
  it('detects each source kind', async () => {
    assert.equal(await detectSourceKind(path.join(CATALOG_TESTDATA, 'fbc/valid')), 'fbc');
    assert.equal(await detectSourceKind(path.join(TESTDATA, 'bundles/foo-0.1.0')), 'bundle');
    assert.equal(await detectSourceKind(path.join(TESTDATA, 'package-manifest/replaces/foo')), 'package');
    assert.equal(await detectSourceKind(path.join(TESTDATA, 'package-manifest/replaces')), 'packages');
    assert.equal(await detectSourceKind('quay.io/example/catalog:latest'), 'image');
  });

  it('renders an FBC directory (golden), keeping unknown schemas', async () => {
    const out = await render([path.join(CATALOG_TESTDATA, 'fbc/valid')]);
    assert.deepEqual(out.failures, []);
    assert.ok(out.config.others.some((o) => o.schema === 'example.com.custom'));
    await assertGolden('render-fbc.json', toFbcJson(out.config));
  });

  it('renders a registry+v1 bundle directory (golden)', async () => {
    const out = await render([path.join(TESTDATA, 'bundles/foo-1.0.0')], { bundleImage: IMAGE });
    assert.deepEqual(out.failures, []);
    assert.equal(out.config.bundles.length, 1);
    assert.equal(out.config.bundles[0]?.image, 'quay.io/example/foo-bundle:v1.0.0');
    await assertGolden('render-bundle.json', toFbcJson(out.config));
  });

  it('renders a package-manifest tree in replaces-mode (golden, valid)', async () => {
    const out = await render([path.join(TESTDATA, 'package-manifest/replaces')], { bundleImage: IMAGE });
    assert.deepEqual(out.failures, []);
    const stable = out.config.channels.find((c) => c.name === 'stable');
    // currentCSV foo.v0.3.0 walks replaces to 0.2.0 and 0.1.0, and takes in the skipped 0.2.1.
    assert.deepEqual(stable?.entries.map((e) => e.name), ['foo.v0.1.0', 'foo.v0.2.0', 'foo.v0.2.1', 'foo.v0.3.0']);
    assert.equal(out.config.packages[0]?.defaultChannel, 'stable');
    assert.ok(validateConfig(out.config).result.ok, validateConfig(out.config).result.render());
    await assertGolden('render-package-replaces.json', toFbcJson(out.config));
  });

  it('renders a bundle-layout package in semver-mode (golden, valid)', async () => {
    const out = await render([path.join(TESTDATA, 'package-manifest/semver/bar')], { bundleImage: IMAGE });
    assert.deepEqual(out.failures, []);
    const stable = out.config.channels.find((c) => c.name === 'stable');
    // semver order (1.10.0 after 1.2.0), each replacing the previous version, not the CSV's replaces.
    assert.deepEqual(stable?.entries.map((e) => [e.name, e.replaces]), [
      ['bar.v1.0.0', undefined],
      ['bar.v1.2.0', 'bar.v1.0.0'],
      ['bar.v1.10.0', 'bar.v1.2.0'],
    ]);
    assert.ok(validateConfig(out.config).result.ok, validateConfig(out.config).result.render());
    await assertGolden('render-package-semver.json', toFbcJson(out.config));
  });

  it('reports failing sources and still renders the others', async () => {
    const out = await render([path.join(CATALOG_TESTDATA, 'bad/wrong-types'), path.join(CATALOG_TESTDATA, 'fbc/valid'), path.join(TESTDATA, 'does-not-exist')]);
    assert.equal(out.config.packages.length, 2);
    const reasons = new Set(out.failures.map((f) => f.reason));
    assert.ok(reasons.has('fbc.field'));
    assert.ok(reasons.has('fbc.parse'));
    assert.ok(reasons.has('RENDER_SOURCE_NOT_FOUND'));
  });
});

describe('render from a stream', () => {
  it('reads FBC from "-" (stdin)', async () => {
    const { Readable } = await import('node:stream');
    const text = '{"schema":"olm.package","name":"p","defaultChannel":"c"}\n{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1.0.0"}]}';
    const out = await render(['-'], { stdin: Readable.from([text]) });
    assert.deepEqual(out.failures, []);
    assert.equal(out.config.channels[0]?.entries[0]?.name, 'p.v1.0.0');
  });
});

describe('render an image', () => {
  /** A pull that unpacks to `<dir>/fs/aaa…`, with the configs label `label`; another image's tree, a valid catalog, sits beside it at `<dir>/fs/bbb…/configs`. */
  async function images(dir: string, label: string, tree?: string): Promise<ImagePuller> {
    const image = path.join(dir, 'fs', 'a'.repeat(64));
    await mkdir(image, { recursive: true });
    if (tree !== undefined) await cp(path.join(CATALOG_TESTDATA, 'fbc/valid'), path.join(image, tree), { recursive: true });
    await cp(path.join(CATALOG_TESTDATA, 'fbc/valid'), path.join(dir, 'fs', 'b'.repeat(64), 'configs'), { recursive: true });
    return () => Promise.resolve({ digest: `sha256:${'a'.repeat(64)}`, dir: image, labels: { [LABEL_CATALOG_CONFIGS]: label } });
  }

  it("refuses a configs label that climbs out of the image (another image's tree in the cache), reading nothing of it", async () => {
    await withTempDir('render-image-', async (dir) => {
      const out = await render(['quay.io/evil/catalog:1'], { pull: await images(dir, `../${'b'.repeat(64)}/configs`), cacheDir: dir });
      assert.equal(out.config.packages.length, 0, 'packages read from the image beside it in the cache');
      assert.deepEqual(out.failures.map((f) => [f.source, f.reason]), [['quay.io/evil/catalog:1', 'OCI_UNSAFE_PATH']]);
      assert.match(out.failures[0]?.message ?? '', /image label operators\.operatorframework\.io\.index\.configs\.v1="\.\.\/b+\/configs" contains "\.\."/);
    });
  });

  it('renders the catalog a legitimate label names: nested, relative', async () => {
    for (const [tree, label] of [
      ['configs/sub', '/configs/sub'],
      ['configs', 'configs'],
    ] as const) {
      await withTempDir('render-image-', async (dir) => {
        const out = await render(['quay.io/example/catalog:1'], { pull: await images(dir, label, tree), cacheDir: dir });
        assert.deepEqual(out.failures, []);
        assert.equal(out.config.packages.length, 2, label);
      });
    }
  });
});
