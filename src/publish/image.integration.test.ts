/**
 * Catalog and bundle images through a real `docker-registry` on loopback: build → push → render
 * back from the image reference (catalog image via its configs label, bundle image via its
 * mediatype label), and a semver template whose bundles are images.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildImage, pullAndUnpack, pushImage, startLocalRegistry, type LocalRegistry } from '../oci/index.js';
import { buildCatalogImage } from './catalog-image.js';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { TESTDATA } from '../catalog-render/golden.test-helper.js';
import { imageBundleRenderer } from '../catalog-render/image-bundles.js';
import { readFbcDir } from '../catalog/load.js';
import { render, type ImagePuller } from '../catalog-render/render.js';
import { expandSemverTemplate } from '../catalog-render/template-semver.js';
import { toFbcJson } from '../catalog/write.js';

const pull: ImagePuller = (ref, opts) => pullAndUnpack(ref, opts);

describe('catalog images', { timeout: 120_000 }, () => {
  let registry: LocalRegistry;
  let base: string;

  before(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'catalog-img-'));
    registry = await startLocalRegistry({ dataDir: path.join(base, 'registry') });
    // Bundle images for foo 0.1.0 and 0.2.0, labelled as `opm` would.
    for (const v of ['0.1.0', '0.2.0']) {
      const img = await buildImage({
        layers: [{ dir: path.join(TESTDATA, 'bundles', `foo-${v}`), prefix: '/' }],
        labels: { 'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1', 'operators.operatorframework.io.bundle.package.v1': 'foo' },
      });
      await pushImage(img, `${registry.host}/foo-bundle:v${v}`);
    }
  });
  after(async () => {
    await registry.stop();
    await rm(base, { recursive: true, force: true });
  });

  it('builds and pushes a catalog image, and renders it back to the same catalog', async () => {
    const tag = `${registry.host}/catalogs/test:v1`;
    const built = await buildCatalogImage(path.join(CATALOG_TESTDATA, 'fbc/valid'), { tag, push: true });
    assert.match(built.pushed ?? '', /@sha256:[0-9a-f]{64}$/);
    const out = await render([tag], { pull, cacheDir: path.join(base, 'cache') });
    assert.deepEqual(out.failures, []);
    assert.equal(toFbcJson(out.config), toFbcJson(await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'))));
  });

  it('renders a bundle image, with the reference as the bundle image', async () => {
    const ref = `${registry.host}/foo-bundle:v0.2.0`;
    const out = await render([ref], { pull, cacheDir: path.join(base, 'cache') });
    assert.deepEqual(out.failures, []);
    assert.equal(out.config.bundles[0]?.name, 'foo.v0.2.0');
    assert.equal(out.config.bundles[0]?.image, ref);
  });

  it('renders a semver template whose bundles are images', async () => {
    const t = `schema: olm.semver\nstable:\n  bundles:\n  - image: ${registry.host}/foo-bundle:v0.1.0\n  - image: ${registry.host}/foo-bundle:v0.2.0\n`;
    const cfg = await expandSemverTemplate(t, 't.yaml', imageBundleRenderer({ pull, cacheDir: path.join(base, 'cache') }));
    assert.deepEqual(cfg.channels.map((c) => c.name), ['stable-v0.1', 'stable-v0.2']);
    assert.equal(cfg.channels[1]?.entries[0]?.replaces, 'foo.v0.1.0');
  });

  it('reports an image that is neither a catalog nor a bundle', async () => {
    const img = await buildImage({ layers: [{ dir: path.join(TESTDATA, 'templates'), prefix: '/x' }], labels: {} });
    await pushImage(img, `${registry.host}/plain:v1`);
    const out = await render([`${registry.host}/plain:v1`], { pull, cacheDir: path.join(base, 'cache') });
    assert.equal(out.failures[0]?.reason, 'RENDER_UNKNOWN_IMAGE');
  });
});
