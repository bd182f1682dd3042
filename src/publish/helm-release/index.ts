/**
 * A chart operator's next version in one step (`binnacle helm release`): from a new chart
 * version, the next `registry+v1` bundle of its operator, into the catalog the operator is
 * installed from. The catalog's source is an `olm.semver` template (a file the maintainer
 * keeps, as opm's); the template rendered is what the catalog holds today.
 *
 * Steps: Catalog → Chart → Edges → Bundle → Push → Template → Publish.
 * - Catalog: the template is read and rendered (its bundle images pulled).
 * - Chart: the chart's name and version (the bundle's version unless one is given).
 * - Edges: `replaces`/`skipRange` from the archetype's bundles (template-semver-next.ts); a
 *   version not newer than the head, or one the catalog has, is refused here, before anything
 *   is written or pushed.
 * - Bundle: `helm bundle` writes and validates it (src/publish/helm-bundle), in the channel the
 *   template will put it in.
 * - Push: the bundle image, then referred to by digest.
 * - Template: the image added; the template rendered again (the new image pulled back) and the
 *   catalog validated.
 * - Publish: the catalog image built and pushed; only then is the template file rewritten, so a
 *   failed release leaves the maintainer's file as it was.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../catalog/validate.js';
import { writeFbcFile } from '../../catalog/write.js';
import { addBundleImage, imageBundleRenderer, nextBundle, parseSemverTemplate, expandSemverTemplate, type Archetype, type ImageBundleRenderer, type NextBundle, type SemverTemplate } from '../../catalog-render/index.js';
import { buildBundleImage, loadBundleDir } from '../../bundle/index.js';
import { PROP_CSV_METADATA, emptyDeclarativeConfig, type DeclarativeConfig } from '../../declcfg/index.js';
import { buildCatalogImage } from '../catalog-image.js';
import { isValidImageReference, pullAndUnpack, RegistryClient } from '../../oci/index.js';
import { InputError, UsageError, ValidationError, errorMessage } from '../../util/errors.js';
import { helmEngine, HelmError, type HelmEngine } from '../../helm-engine/engine.js';
import { dnsLabel, helmBundle, type HelmBundleOptions, type HelmBundleResult } from '../helm-bundle/index.js';
import { chartDirectory } from '../helm-bundle/chart-dir.js';
import { changedDefaults, describeChangedDefault, type ChangedDefault } from './defaults.js';

export { changedDefaults, describeChangedDefault, type ChangedDefault } from './defaults.js';

export interface ChartPublishOptions extends Omit<HelmBundleOptions, 'outputDir' | 'channels' | 'defaultChannel' | 'replaces' | 'skipRange' | 'engine'> {
  /** The catalog's `olm.semver` template; rewritten with the new bundle when the release is published. */
  template: string;
  /** Which bundle list of the template the version joins (default stable). */
  archetype?: Archetype;
  /** Repository the bundle image is pushed to, tagged `v<version>` (`host/org/pkg-bundle`). */
  bundleRepository: string;
  /** The catalog image's reference (a tag), pushed with the rendered template. */
  catalogImage: string;
  /** Where the bundle is written (default: a work folder, removed after the push). */
  outputDir?: string;
  /** Where the rendered catalog is written as `catalog.json` (default: a work folder). */
  catalogDir?: string;
  /** Where pulled bundle images are unpacked. */
  cacheDir: string;
  client?: RegistryClient;
  engine?: HelmEngine;
  onProgress?: (line: string) => void;
}

export interface ChartPublishResult {
  next: NextBundle;
  bundle: HelmBundleResult;
  /** The bundle image by digest, as the template now lists it. */
  bundleImage: string;
  /** The catalog image by digest. */
  catalogImage: string;
  /** The catalog as published. */
  catalog: DeclarativeConfig;
  /** Chart defaults changed or removed since the head bundle (which CRD upgrade safety cannot see). */
  changedDefaults: ChangedDefault[];
}

const ARCHETYPE_NAMES: readonly string[] = ['stable', 'fast', 'candidate'];

/** The template, parsed, and the catalog it renders to today. */
async function readCatalog(file: string, render: ImageBundleRenderer): Promise<{ text: string; template: SemverTemplate; catalog: DeclarativeConfig }> {
  const text = await readFile(file, 'utf8').catch((err: unknown) => {
    throw new InputError('RELEASE_TEMPLATE', `cannot read the catalog template: ${errorMessage(err)}`, { file, cause: err });
  });
  const template = parseSemverTemplate(text, file);
  const empty = Object.values(template.bundles).every((b) => b.length === 0);
  return { text, template, catalog: empty ? emptyDeclarativeConfig() : await expandSemverTemplate(text, file, render) };
}

/** The `alm-examples` of a bundle of the catalog, from its CSV metadata. */
function examplesOf(cfg: DeclarativeConfig, name: string): string | undefined {
  const meta = cfg.bundles.find((b) => b.name === name)?.properties.find((p) => p.type === PROP_CSV_METADATA)?.value as { annotations?: Record<string, unknown> } | undefined;
  const v = meta?.annotations?.['alm-examples'];
  return typeof v === 'string' ? v : undefined;
}

/** The chart's name and version, as Helm loads them. */
async function chartMetadata(chart: string, engine: HelmEngine): Promise<{ name: string; version: string }> {
  const work = await mkdtemp(join(tmpdir(), 'binnacle-helm-release-'));
  try {
    const dir = await chartDirectory(chart, work);
    const root = (await engine.inspect(dir))[0];
    if (root === undefined) throw new InputError('HELM_BUNDLE_CHART', 'Helm found no chart', { file: chart });
    return { name: root.metadata.name, version: root.metadata.version };
  } catch (err) {
    if (err instanceof HelmError) throw new InputError('HELM_BUNDLE_CHART', `Helm cannot load the chart: ${err.message}`, { file: chart, cause: err });
    throw err;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function checkOptions(o: ChartPublishOptions): Archetype {
  const archetype = o.archetype ?? 'stable';
  if (!ARCHETYPE_NAMES.includes(archetype)) throw new UsageError(`--channel ${archetype as string}: expected stable, fast or candidate (the template's bundle lists)`);
  if (!isValidImageReference(`${o.bundleRepository}:v0`) || o.bundleRepository.includes('@') || /:[^/]*$/.test(o.bundleRepository.replace(/^[^/]*\//, ''))) {
    throw new UsageError(`--bundle-repository ${o.bundleRepository}: expected a repository without tag or digest, e.g. registry.example.com/org/beacon-bundle`);
  }
  if (!isValidImageReference(o.catalogImage)) throw new UsageError(`--catalog-image ${o.catalogImage}: not a valid image reference`);
  return archetype;
}

/** Releases the chart's next operator version into the template's catalog, and publishes it. */
export async function publishChartVersion(o: ChartPublishOptions): Promise<ChartPublishResult> {
  const archetype = checkOptions(o);
  const say = o.onProgress ?? (() => undefined);
  const engine = o.engine ?? helmEngine();
  const client = o.client ?? new RegistryClient();
  const render = imageBundleRenderer({ pull: (ref, p) => pullAndUnpack(ref, { ...p, client }), cacheDir: o.cacheDir });
  const work = await mkdtemp(join(tmpdir(), 'binnacle-helm-release-'));
  try {
    const { text, template, catalog } = await readCatalog(o.template, render);
    const chart = await chartMetadata(o.chart, engine);
    const version = o.version ?? chart.version;
    const packageName = o.packageName ?? catalog.packages[0]?.name ?? dnsLabel(chart.name);
    const next = nextBundle({ template, catalog, archetype, packageName, version, file: o.template });
    say(`${next.name}: ${next.reason}`);
    const outputDir = o.outputDir ?? join(work, 'bundle');
    const bundle = await helmBundle({ ...o, outputDir, version, packageName, channels: [next.channel], defaultChannel: next.channel, engine, ...(next.replaces === undefined ? {} : { replaces: next.replaces }), ...(next.skipRange === undefined ? {} : { skipRange: next.skipRange }) });
    say(`wrote and validated ${bundle.csvName}`);
    const defaults = next.head === undefined ? [] : changedDefaults(examplesOf(catalog, next.head.name), (await loadBundleDir(outputDir)).csv.annotations['alm-examples']);
    for (const d of defaults) say(describeChangedDefault(d, next.head?.name ?? ''));
    const tag = `${o.bundleRepository}:v${version.replace(/[^A-Za-z0-9_.-]/g, '-')}`;
    const built = await buildBundleImage(outputDir, { tag, push: true, client, layoutDir: join(work, 'bundle-image') });
    const bundleImage = built.pushed?.ref ?? tag;
    say(`pushed ${tag} as ${bundleImage}`);
    const nextText = addBundleImage(text, o.template, archetype, bundleImage);
    const published = await expandSemverTemplate(nextText, o.template, render);
    const { result } = validateConfig(published, `catalog of ${o.template}`);
    if (!result.ok) throw new ValidationError(result);
    const catalogDir = o.catalogDir ?? join(work, 'catalog');
    await mkdir(catalogDir, { recursive: true });
    await writeFbcFile(published, join(catalogDir, 'catalog.json'), 'json');
    const cat = await buildCatalogImage(catalogDir, { tag: o.catalogImage, push: true, client, outputDir: join(work, 'catalog-image') });
    const catalogImage = cat.pushed ?? o.catalogImage;
    say(`pushed catalog ${o.catalogImage} as ${catalogImage}`);
    await writeFile(o.template, nextText);
    return { next, bundle, bundleImage, catalogImage, catalog: published, changedDefaults: defaults };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
