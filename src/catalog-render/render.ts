/**
 * `opm render` for Binnacle: turns sources into one `DeclarativeConfig`. A source is an FBC
 * directory or file, a `registry+v1` bundle directory, a package directory (package-manifest or
 * bundle layout), a directory of many packages (each rendered on its own; failures are reported
 * and the rest still rendered), or an image reference (pulled with the injected `pull`).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BinnacleError, errorMessage } from '../util/errors.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { failuresFromResult, normalizeBundle } from './render-fbc.js';
import { ANNOTATION_MEDIATYPE, defaultBundleRenderer, readBundleDir, type BundleRenderer } from './bundle-dir.js';
import { loadFbcDir, loadFbcStream, type LoadOptions } from '../catalog/load.js';
import { imageLabelDir } from '../oci/image-path.js';
import { fbcFromPackageDir } from './package-dir.js';
import { detectSourceKind, isPackageDir, type SourceKind } from './source-kind.js';

export { detectSourceKind, isBundleDir, isPackageDir, type SourceKind } from './source-kind.js';

export const LABEL_CATALOG_CONFIGS = 'operators.operatorframework.io.index.configs.v1';
export const LABEL_BUNDLE_MEDIATYPE = ANNOTATION_MEDIATYPE;

/** What `src/oci`'s `pullAndUnpack` returns; injected so the catalog does not depend on OCI. */
export interface PulledImage {
  digest: string;
  dir: string;
  labels: Record<string, string>;
}
export type ImagePuller = (ref: string, opts: { cacheDir: string }) => Promise<PulledImage>;


import type { ConversionFailure } from './conversion-failure.js';

export type { ConversionFailure };

export interface RenderOutput {
  config: DeclarativeConfig;
  failures: ConversionFailure[];
  /** Non-fatal findings (e.g. bundles no channel reaches, left out). */
  warnings: ConversionFailure[];
  /** Packages rendered per source kind, for reporting. */
  kinds: { source: string; kind: SourceKind }[];
}

export interface RenderOptions extends LoadOptions {
  renderBundle?: BundleRenderer;
  pull?: ImagePuller;
  cacheDir?: string;
  /**
   * Image reference for bundles rendered from directories, e.g.
   * `quay.io/openshift-community-operators/{package}:v{version}` ({name} is the CSV name).
   * Without it such bundles get no image (as with opm, validation then asks for one).
   */
  bundleImage?: string;
  /** Where `-` reads from (default: standard input). */
  stdin?: Readable;
}

export function expandBundleImage(template: string, pkg: string, version: string, name: string): string {
  return template.replaceAll('{package}', pkg).replaceAll('{version}', version).replaceAll('{name}', name);
}


/**
 * A copy of records rendered from directories that holds only what they say: their strings
 * are slices of the YAML files they were read from (V8 keeps the whole text of a file alive for
 * any slice of it), so without the copy every CSV's full text stays in memory as long as the
 * catalog does (on the corpus: 290-320 MB for the whole render instead of 225-235).
 */
function detached(cfg: DeclarativeConfig): DeclarativeConfig {
  return JSON.parse(JSON.stringify(cfg)) as DeclarativeConfig;
}

function merge(into: DeclarativeConfig, from: DeclarativeConfig): void {
  for (const b of from.bundles) normalizeBundle(b);
  into.packages.push(...from.packages);
  into.channels.push(...from.channels);
  into.bundles.push(...from.bundles);
  into.deprecations.push(...from.deprecations);
  into.others.push(...from.others);
}


/** Renders one package directory into `out`; all-or-nothing per package. */
async function renderOnePackage(dir: string, opts: RenderOptions, out: RenderOutput): Promise<void> {
  const renderBundle = opts.renderBundle ?? defaultBundleRenderer;
  try {
    const tpl = opts.bundleImage;
    const r = await fbcFromPackageDir(
      dir,
      tpl === undefined ? { renderBundle } : { renderBundle, imageFor: (pkg, b) => expandBundleImage(tpl, pkg, b.version, b.name) },
    );
    if (r.failures.length > 0) {
      for (const f of r.failures) out.failures.push({ source: dir, package: r.packageName, reason: f.code, message: f.message });
      return;
    }
    for (const u of r.unreachable) {
      out.warnings.push({ source: dir, package: r.packageName, reason: 'BUNDLE_UNREACHABLE', message: `bundle "${u}" is in no channel (not reachable from any currentCSV) and was left out` });
    }
    merge(out.config, detached(r.config));
  } catch (err) {
    if (!(err instanceof BinnacleError)) throw err;
    out.failures.push({ source: dir, package: path.basename(dir), reason: err.code, message: err.message });
  }
}

async function renderImage(ref: string, opts: RenderOptions, out: RenderOutput): Promise<void> {
  if (opts.pull === undefined) {
    out.failures.push({ source: ref, package: undefined, reason: 'RENDER_SOURCE_NOT_FOUND', message: `${ref}: no such file or directory, and image pulling is not available here` });
    return;
  }
  const img = await opts.pull(ref, { cacheDir: opts.cacheDir ?? path.join('.cache', 'images') });
  const configs = img.labels[LABEL_CATALOG_CONFIGS];
  if (configs !== undefined) {
    // The label is the image author's: it must name a directory inside this image (an InputError, reported as this source's failure).
    const loaded = await loadFbcDir(await imageLabelDir(img.dir, LABEL_CATALOG_CONFIGS, configs), opts);
    if (!loaded.result.ok) out.failures.push(...failuresFromResult(ref, undefined, loaded.result));
    else merge(out.config, loaded.config);
    return;
  }
  if (img.labels[LABEL_BUNDLE_MEDIATYPE] !== undefined) {
    await renderBundleSource(img.dir, { ...opts, image: ref }, out);
    return;
  }
  out.failures.push({
    source: ref,
    package: undefined,
    reason: 'RENDER_UNKNOWN_IMAGE',
    message: `${ref}: image has neither label ${LABEL_CATALOG_CONFIGS} (catalog) nor ${LABEL_BUNDLE_MEDIATYPE} (bundle)`,
  });
}

async function renderBundleSource(dir: string, opts: RenderOptions & { image?: string }, out: RenderOutput): Promise<void> {
  const renderBundle = opts.renderBundle ?? defaultBundleRenderer;
  try {
    const info = await readBundleDir(dir);
    const packageName = info.annotationPackage ?? path.basename(path.dirname(path.resolve(dir)));
    const image = opts.image ?? (opts.bundleImage === undefined ? undefined : expandBundleImage(opts.bundleImage, packageName, info.version, info.name));
    const one = emptyDeclarativeConfig();
    one.bundles.push(await renderBundle(info, image === undefined ? { packageName } : { packageName, image }));
    merge(out.config, detached(one));
  } catch (err) {
    if (!(err instanceof BinnacleError)) throw err;
    out.failures.push({ source: dir, package: undefined, reason: err.code, message: err.message });
  }
}

/** Renders every source; a failing source or package never stops the others. */
export async function render(sources: readonly string[], opts: RenderOptions = {}): Promise<RenderOutput> {
  const out: RenderOutput = { config: emptyDeclarativeConfig(), failures: [], warnings: [], kinds: [] };
  for (const source of sources) {
    if (source === '-') {
      // `-` is FBC (JSON or YAML) on standard input.
      const loaded = await loadFbcStream(opts.stdin ?? process.stdin, 'stdin', opts);
      if (!loaded.result.ok) out.failures.push(...failuresFromResult(source, undefined, loaded.result));
      else merge(out.config, loaded.config);
      out.kinds.push({ source, kind: 'fbc' });
      continue;
    }
    try {
      const kind = await detectSourceKind(source);
      out.kinds.push({ source, kind });
      switch (kind) {
        case 'fbc': {
          const loaded = await loadFbcDir(source, opts);
          if (!loaded.result.ok) out.failures.push(...failuresFromResult(source, undefined, loaded.result));
          else merge(out.config, loaded.config);
          break;
        }
        case 'bundle':
          await renderBundleSource(source, opts, out);
          break;
        case 'package':
          await renderOnePackage(source, opts, out);
          break;
        case 'packages':
          for (const e of (await readdir(source, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
            const dir = path.join(source, e.name);
            if (e.isDirectory() && !e.name.startsWith('.') && (await isPackageDir(dir))) await renderOnePackage(dir, opts, out);
          }
          break;
        case 'image':
          await renderImage(source, opts, out);
      }
    } catch (err) {
      if (!(err instanceof BinnacleError)) throw err;
      out.failures.push({ source, package: undefined, reason: err.code, message: errorMessage(err) });
    }
  }
  return out;
}
