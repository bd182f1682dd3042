/**
 * Publishing packages from a directory tree (the package-manifest or bundle layout, like the
 * community-operators corpus) to a registry, as `opm index add` did: every version becomes a
 * `registry+v1` bundle image, the package renders to FBC pointing at those images by digest,
 * and the whole becomes one catalog image. Used by the demo, the e2e tests and benchmarks.
 */
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import { ANNOTATION_CHANNELS, ANNOTATION_MANIFESTS, ANNOTATION_MEDIATYPE, ANNOTATION_METADATA, ANNOTATION_PACKAGE, MEDIATYPE_REGISTRY_V1, loadBundleDir } from '../bundle/index.js';
import { buildImage, pushImage, RegistryClient } from '../oci/index.js';
import { BinnacleError } from '../util/errors.js';
import { bundleDirsOf, renderPackageDir } from './package-dir.js';
import { defaultBundleRenderer } from './bundle-dir.js';
import { buildCatalogImage } from './build.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from './declcfg.js';
import { writeFbcFile } from './write.js';

export interface PublishOptions {
  /** Package directories (`<root>/<package>`). */
  packages: string[];
  /** Registry host, e.g. `127.0.0.1:5000`. */
  registry: string;
  /** Repository prefix inside the registry. */
  repository?: string;
  /** Catalog image tag (default `<registry>/<repository>/catalog:latest`). */
  catalogTag?: string;
  client?: RegistryClient;
  /** Rewrites a package's FBC before the catalog is built (tests use it to add deprecations). */
  transform?: (cfg: DeclarativeConfig) => void;
  onProgress?: (line: string) => void;
}

export interface PublishResult {
  /** Catalog image by digest. */
  catalog: string;
  bundles: { package: string; name: string; version: string; image: string }[];
  config: DeclarativeConfig;
}

const BUNDLE_LABELS = {
  [ANNOTATION_MEDIATYPE]: MEDIATYPE_REGISTRY_V1,
  [ANNOTATION_MANIFESTS]: 'manifests/',
  [ANNOTATION_METADATA]: 'metadata/',
};

/** Stages one version directory in the bundle layout and returns the layout's root. */
async function stageBundle(dir: string, pkg: string, work: string): Promise<{ root: string; labels: Record<string, string>; name: string; version: string }> {
  const bundle = await loadBundleDir(dir, { packageName: pkg });
  const root = join(work, basename(dir));
  await mkdir(join(root, 'metadata'), { recursive: true });
  if (bundle.layout === 'bundle') {
    await cp(join(dir, 'manifests'), join(root, 'manifests'), { recursive: true });
    await cp(join(dir, 'metadata'), join(root, 'metadata'), { recursive: true });
  } else {
    await mkdir(join(root, 'manifests'));
    for (const f of await readdir(dir)) if (/\.(ya?ml|json)$/.test(f)) await cp(join(dir, f), join(root, 'manifests', f));
  }
  const annotations = {
    ...BUNDLE_LABELS,
    ...bundle.annotations?.all,
    [ANNOTATION_PACKAGE]: pkg,
    [ANNOTATION_CHANNELS]: bundle.annotations?.channels.join(',') ?? 'stable',
  };
  if (bundle.layout !== 'bundle') await writeFile(join(root, 'metadata', 'annotations.yaml'), stringify({ annotations }));
  return { root, labels: annotations, name: bundle.name, version: bundle.csv.version };
}

export async function publishPackages(o: PublishOptions): Promise<PublishResult> {
  const client = o.client ?? new RegistryClient();
  const repo = o.repository ?? 'binnacle';
  const say = o.onProgress ?? (() => undefined);
  const work = await mkdtemp(join(tmpdir(), 'binnacle-publish-'));
  try {
    const merged = emptyDeclarativeConfig();
    const bundles: PublishResult['bundles'] = [];
    for (const pkgDir of o.packages) {
      const images = new Map<string, string>();
      const pkgName = basename(pkgDir);
      for (const dir of await bundleDirsOf(pkgDir)) {
        const staged = await stageBundle(dir, pkgName, join(work, pkgName)).catch(() => undefined);
        if (staged === undefined) continue; // the render below reports unreadable bundles
        const image = await buildImage({ layers: [{ dir: join(staged.root, 'manifests'), prefix: '/manifests' }, { dir: join(staged.root, 'metadata'), prefix: '/metadata' }], labels: staged.labels });
        const tag = `${o.registry}/${repo}/${pkgName}-bundle:v${staged.version || basename(dir)}`;
        const pushed = await pushImage(image, tag, client);
        await rm(image.layoutDir, { recursive: true, force: true });
        const byDigest = `${o.registry}/${repo}/${pkgName}-bundle@${pushed.digest}`;
        images.set(dir, byDigest);
        say(`pushed ${staged.name} as ${tag}`);
      }
      const rendered = await renderPackageDir(pkgDir, { renderBundle: defaultBundleRenderer, imageFor: (_pkg, b) => images.get(b.dir) });
      if (rendered.failures.length > 0) {
        throw new BinnacleError('PUBLISH_PACKAGE_INVALID', `package ${pkgDir} cannot be published: ${rendered.failures.map((f) => f.message).join('; ')}`);
      }
      merged.packages.push(...rendered.config.packages);
      merged.channels.push(...rendered.config.channels);
      merged.bundles.push(...rendered.config.bundles);
      merged.deprecations.push(...rendered.config.deprecations);
      for (const b of rendered.config.bundles) {
        const v = b.properties.find((p) => p.type === 'olm.package')?.value as { version?: string } | undefined;
        bundles.push({ package: b.package, name: b.name, version: v?.version ?? '', image: b.image });
      }
    }
    o.transform?.(merged);
    const fbcDir = join(work, 'catalog');
    await mkdir(fbcDir);
    await writeFbcFile(merged, join(fbcDir, 'catalog.json'), 'json');
    const tag = o.catalogTag ?? `${o.registry}/${repo}/catalog:latest`;
    const built = await buildCatalogImage(fbcDir, { tag, push: true });
    await rm(built.image.layoutDir, { recursive: true, force: true });
    say(`pushed catalog ${tag}`);
    return { catalog: built.pushed ?? tag, bundles, config: merged };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
