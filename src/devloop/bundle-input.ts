/**
 * The bundle a developer names on the command line: a directory, or an image in a registry.
 * Each failure says what was wrong and what to run next.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeclarativeConfig } from '../declcfg/index.js';
import { loadFbcDir } from '../catalog/load.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog/render.js';
import { readBundleDir, type BundleDirInfo } from '../catalog/bundle-dir.js';
import { resolveBundleSource } from '../bundle/index.js';
import { formatReference, parseReference, pullAndUnpack, withDigest, type RegistryClient } from '../oci/index.js';
import { BinnacleError, errorMessage } from '../util/errors.js';

export interface BundleInput {
  /** What the user gave. */
  arg: string;
  /** The image by digest, when an image was given. */
  image?: string;
  info: BundleDirInfo;
  /** The package the bundle belongs to. */
  packageName: string;
}

/** Anything that looks like a path (or exists) is a directory; everything else an image reference. */
function looksLikePath(arg: string): boolean {
  return /^(\.{0,2}\/|~)/.test(arg) || !/[:/]/.test(arg) || arg.endsWith('/');
}

export async function readBundleInput(arg: string, opts: { cacheDir: string; client?: RegistryClient }): Promise<BundleInput> {
  const st = await stat(arg).catch(() => undefined);
  if (st === undefined && looksLikePath(arg)) {
    throw new BinnacleError('RUN_BUNDLE_DIR_MISSING', `bundle directory ${arg} does not exist: pass a directory with manifests/ and metadata/ (see \`binnacle bundle generate\`), or a bundle image reference`);
  }
  if (st !== undefined && !st.isDirectory()) throw new BinnacleError('RUN_BUNDLE_DIR_MISSING', `${arg} is a file, not a bundle directory: pass the directory that holds manifests/ and metadata/`);
  let source: Awaited<ReturnType<typeof resolveBundleSource>>;
  try {
    source = await resolveBundleSource(arg, { cacheDir: opts.cacheDir, ...(opts.client === undefined ? {} : { client: opts.client }) });
  } catch (err) {
    if (err instanceof BinnacleError && (err.code === 'OCI_NOT_FOUND' || err.code === 'OCI_UNREACHABLE' || err.code === 'OCI_UNAUTHORIZED' || err.code === 'OCI_DENIED')) {
      const what = err.code === 'OCI_NOT_FOUND' ? 'was not found in its registry' : err.code === 'OCI_UNREACHABLE' ? 'cannot be reached' : 'cannot be read with the credentials at hand';
      throw new BinnacleError('RUN_BUNDLE_IMAGE', `bundle image ${arg} ${what} (${errorMessage(err)}): build and push it first with \`binnacle bundle build DIR --tag ${arg} --push\`, or pass the bundle directory`, { cause: err });
    }
    throw err;
  }
  const info = await readBundleDir(source.dir, source.packageName);
  const packageName = source.packageName ?? info.annotationPackage;
  if (packageName === undefined) {
    throw new BinnacleError('RUN_BUNDLE_NO_PACKAGE', `${arg}: no package name (metadata/annotations.yaml has no operators.operatorframework.io.bundle.package.v1): add it, e.g. with \`binnacle bundle generate\``);
  }
  const image = source.image !== undefined && source.digest !== undefined ? formatReference(withDigest(parseReference(source.image), source.digest)) : undefined;
  return { arg, info, packageName, ...(image === undefined ? {} : { image }) };
}

/** The FBC of an index (catalog) image, to add a bundle to (`run bundle --index-image`). */
export async function readIndexImage(ref: string, opts: { cacheDir: string; client?: RegistryClient }): Promise<DeclarativeConfig> {
  let pulled: Awaited<ReturnType<typeof pullAndUnpack>>;
  try {
    pulled = await pullAndUnpack(ref, { cacheDir: opts.cacheDir, ...(opts.client === undefined ? {} : { client: opts.client }) });
  } catch (err) {
    throw new BinnacleError('RUN_BUNDLE_INDEX_IMAGE', `--index-image ${ref}: ${errorMessage(err)}`, { cause: err });
  }
  const loaded = await loadFbcDir(join(pulled.dir, pulled.labels[LABEL_CATALOG_CONFIGS] ?? '/configs'));
  if (!loaded.result.ok) throw new BinnacleError('RUN_BUNDLE_INDEX_IMAGE', `--index-image ${ref}: its catalog cannot be read:\n${loaded.result.render()}`);
  return loaded.config;
}
