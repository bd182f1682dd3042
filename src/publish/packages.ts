/**
 * Publishing packages from a directory tree (the package-manifest or bundle layout, like the
 * community-operators corpus) to a registry, as `opm index add` did: every version becomes a
 * `registry+v1` bundle image, the package renders to FBC pointing at those images by digest,
 * and the whole becomes one catalog image. Used by the demo, the e2e tests and benchmarks.
 *
 * Every package is rendered first; then the chosen bundles (all by default) are built and
 * pushed. A catalog as large as the community corpus thus publishes in the time its installs
 * need: push only the bundles the resolver will pick, and skip packages that cannot be
 * published (reported with why) instead of failing the whole catalog.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { bundleAnnotations, loadBundleDir, stageBundleLayout } from '../bundle/index.js';
import { buildImage, formatReference, parseReference, pushImage, RegistryClient, withDigest } from '../oci/index.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { fbcFromPackageDir } from '../catalog-render/package-dir.js';
import { addBundleToConfig, defaultBundleRenderer, readBundleDir, type BundleDirInfo } from '../catalog-render/bundle-dir.js';
import { isBundleDir } from '../catalog-render/source-kind.js';
import { buildCatalogImage } from './catalog-image.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { validateConfig } from '../catalog/validate.js';
import { writeFbcFile } from '../catalog/write.js';

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
  /**
   * The names of the bundles to build and push, chosen from the rendered catalog (before
   * `transform`; images are still tags then). Default: every bundle. The others keep their tag
   * reference, which is never pushed.
   */
  select?: (cfg: DeclarativeConfig) => ReadonlySet<string>;
  /**
   * Leave out a package that cannot be published (a bundle that cannot be read, or FBC that
   * fails validation) and report it in `rejected`, instead of failing the whole publish.
   */
  skipInvalid?: boolean;
  onProgress?: (line: string) => void;
}

export interface PublishResult {
  /** Catalog image by digest. */
  catalog: string;
  /** Every bundle in the catalog; `pushed` is false for those `select` left out. */
  bundles: { package: string; name: string; version: string; image: string; pushed: boolean }[];
  config: DeclarativeConfig;
  /** Package directories left out under `skipInvalid`: a stable code and the whole reason. */
  rejected: { dir: string; code: string; message: string }[];
}

/** Where a rendered bundle comes from and where it is pushed. */
interface BundleOrigin {
  dir: string;
  pkgDir: string;
  packageName: string;
  tag: string;
}

/**
 * Stages one version directory in the bundle layout and returns the layout's root. A
 * package-manifest version gets its annotations from the rendered catalog's channels.
 */
async function stageBundle(dir: string, pkg: string, channels: string[], work: string): Promise<{ root: string; labels: Record<string, string>; name: string; version: string }> {
  const bundle = await loadBundleDir(dir, { packageName: pkg, packageContext: false });
  const root = join(work, basename(dir));
  // The catalog's channels where the bundle names none of its own (package-manifest layout).
  const labels = bundleAnnotations(bundle, (bundle.annotations?.channels.length ?? 0) === 0 ? channels : undefined);
  await stageBundleLayout(bundle, root, labels);
  return { root, labels, name: bundle.name, version: bundle.csv.version };
}

/**
 * A lone version directory (either layout) as a package of one bundle: its channels and default
 * channel from its annotations or the package file one level up, as `run bundle` makes its catalog.
 */
async function renderVersionDir(dir: string, imageFor: (pkg: string, b: BundleDirInfo) => string): Promise<{ config: DeclarativeConfig; packageName: string; failures: { code: string; message: string }[] }> {
  const info = await readBundleDir(dir);
  const pkg = info.annotationPackage ?? info.bundle.packageName;
  const cfg = emptyDeclarativeConfig();
  // Refused like a bundle image would be: no package, or (package-manifest) no channel reaches it.
  bundleAnnotations(info.bundle);
  await addBundleToConfig(cfg, info, { packageName: pkg, image: imageFor(pkg, info) });
  return { config: cfg, packageName: pkg, failures: [] };
}

/** Renders one package directory (or lone version directory) into `into.merged`, with where each bundle came from; one that fails is refused, or with skipInvalid set aside. */
async function addPackage(pkgDir: string, o: PublishOptions, repo: string, into: { merged: DeclarativeConfig; origins: Map<string, BundleOrigin>; rejected: PublishResult['rejected'] }): Promise<void> {
  const { merged, origins, rejected } = into;
  const versionDir = await isBundleDir(pkgDir);
  const dirName = basename(pkgDir);
  const found = new Map<string, BundleOrigin>();
  // A tag allows [A-Za-z0-9_.-] only: semver build metadata (`+…`) becomes `-`.
  // The repository is named for the package directory, or for a lone version's package.
  const tagFor = (pkg: string, b: { dir: string; version: string }): string =>
    `${o.registry}/${repo}/${versionDir ? pkg : dirName}-bundle:v${(b.version || basename(b.dir)).replace(/[^A-Za-z0-9_.-]/g, '-')}`;
  const imageFor = (pkg: string, b: BundleDirInfo): string => {
    found.set(b.name, { dir: b.dir, pkgDir: dirName, packageName: pkg, tag: tagFor(pkg, b) });
    return tagFor(pkg, b);
  };
  // A version directory is published as a package of that one bundle; a package directory whole.
  const rendered = await (versionDir ? renderVersionDir(pkgDir, imageFor) : fbcFromPackageDir(pkgDir, { renderBundle: defaultBundleRenderer, imageFor })).catch((err: unknown) => ({ failures: [{ code: err instanceof BinnacleError ? err.code : 'PUBLISH_RENDER_FAILED', message: errorMessage(err) }], config: emptyDeclarativeConfig() }));
  if (rendered.failures.length > 0) {
    const message = `package ${pkgDir} cannot be published: ${rendered.failures.map((f) => f.message).join('; ')}`;
    if (o.skipInvalid !== true) throw new BinnacleError('input', 'PUBLISH_PACKAGE_INVALID', message);
    rejected.push({ dir: pkgDir, code: rendered.failures[0]?.code ?? 'PUBLISH_PACKAGE_INVALID', message });
    return;
  }
  if (o.skipInvalid === true) {
    const first = validateConfig(rendered.config, `package ${dirName}`).result;
    const rule = first.errors()[0]?.rule;
    if (rule !== undefined) {
      rejected.push({ dir: pkgDir, code: rule, message: first.render() });
      return;
    }
  }
  for (const [name, origin] of found) origins.set(name, origin);
  merged.packages.push(...rendered.config.packages);
  merged.channels.push(...rendered.config.channels);
  merged.bundles.push(...rendered.config.bundles);
  merged.deprecations.push(...rendered.config.deprecations);
}

/** Stages the bundle with its channels, builds its image and pushes it to its tag; answers the pushed reference by digest. */
async function pushBundle(origin: BundleOrigin, channels: string[], stageDir: string, client: RegistryClient, say: (line: string) => void): Promise<string> {
  const staged = await stageBundle(origin.dir, origin.packageName, channels, stageDir);
  const image = await buildImage({ layers: [{ dir: join(staged.root, 'manifests'), prefix: '/manifests' }, { dir: join(staged.root, 'metadata'), prefix: '/metadata' }], labels: staged.labels });
  const result = await pushImage(image, origin.tag, client);
  await rm(image.layoutDir, { recursive: true, force: true });
  say(`pushed ${staged.name} as ${origin.tag}`);
  return formatReference(withDigest(parseReference(origin.tag), result.digest));
}

export async function publishPackages(o: PublishOptions): Promise<PublishResult> {
  const client = o.client ?? new RegistryClient();
  const repo = o.repository ?? 'binnacle';
  const say = o.onProgress ?? (() => undefined);
  const work = await mkdtemp(join(tmpdir(), 'binnacle-publish-'));
  try {
    const merged = emptyDeclarativeConfig();
    const rejected: PublishResult['rejected'] = [];
    const origins = new Map<string, BundleOrigin>();
    for (const pkgDir of o.packages) await addPackage(pkgDir, o, repo, { merged, origins, rejected });
    const chosen = o.select?.(merged) ?? new Set(merged.bundles.map((b) => b.name));
    const pushed = new Set<string>();
    for (const b of merged.bundles) {
      const origin = origins.get(b.name);
      if (origin === undefined || !chosen.has(b.name)) continue;
      // In the catalog, the bundle is the image just pushed, by digest.
      b.image = await pushBundle(origin, merged.channels.filter((c) => c.package === b.package && c.entries.some((e) => e.name === b.name)).map((c) => c.name), join(work, origin.pkgDir), client, say);
      pushed.add(b.name);
    }
    const bundles: PublishResult['bundles'] = merged.bundles.map((b) => {
      const v = b.properties.find((p) => p.type === 'olm.package')?.value as { version?: string } | undefined;
      return { package: b.package, name: b.name, version: v?.version ?? '', image: b.image, pushed: pushed.has(b.name) };
    });
    o.transform?.(merged);
    const fbcDir = join(work, 'catalog');
    await mkdir(fbcDir);
    await writeFbcFile(merged, join(fbcDir, 'catalog.json'), 'json');
    const tag = o.catalogTag ?? `${o.registry}/${repo}/catalog:latest`;
    const built = await buildCatalogImage(fbcDir, { tag, push: true });
    await rm(built.image.layoutDir, { recursive: true, force: true });
    say(`pushed catalog ${tag}`);
    return { catalog: built.pushed ?? tag, bundles, config: merged, rejected };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
