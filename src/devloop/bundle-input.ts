/**
 * The bundle a developer names on the command line: a directory, or an image in a registry.
 * Each failure says what was wrong and what to run next.
 */
import { stat } from 'node:fs/promises';
import type { DeclarativeConfig } from '../declcfg/index.js';
import { loadFbcDir } from '../catalog/load.js';
import { LABEL_BUNDLE_MEDIATYPE, LABEL_CATALOG_CONFIGS } from '../catalog-render/render.js';
import { blockingErrors, validateConfig } from '../catalog/validate.js';
import { readBundleDir, type BundleDirInfo } from '../catalog-render/bundle-dir.js';
import { resolveBundleSource } from '../bundle/index.js';
import { formatReference, imageLabelDir, parseReference, pullAndUnpack, withDigest, type RegistryClient } from '../oci/index.js';
import { BinnacleError, InputError, errorMessage } from '../util/errors.js';

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
  await checkBundleArg(arg);
  let source: Awaited<ReturnType<typeof resolveBundleSource>>;
  try {
    source = await resolveBundleSource(arg, { cacheDir: opts.cacheDir, ...(opts.client === undefined ? {} : { client: opts.client }) });
  } catch (err) {
    throw bundleImageError(err, arg);
  }
  // A package-manifest package directory loads as its default channel's head (src/bundle/load.ts).
  const info = await readBundleDir(source.dir, source.packageName);
  const packageName = source.packageName ?? info.annotationPackage ?? (info.bundle.packageName === '' ? undefined : info.bundle.packageName);
  if (packageName === undefined) {
    throw new BinnacleError('input', 'RUN_BUNDLE_NO_PACKAGE', `${arg}: no package name (metadata/annotations.yaml has no operators.operatorframework.io.bundle.package.v1, and there is no <package>.package.yaml one level up): add it, e.g. with \`binnacle bundle generate\``);
  }
  const pm = info.bundle.packageManifest;
  if (pm !== undefined && pm.channels.length === 0) {
    throw new InputError('RUN_BUNDLE_NO_CHANNEL', `no channel's currentCSV reaches ${info.name} along replaces/skips, so no catalog can offer it: add it to a channel, or run a version a channel reaches`, { file: pm.file, field: 'channels' });
  }
  const image = source.image !== undefined && source.digest !== undefined ? formatReference(withDigest(parseReference(source.image), source.digest)) : undefined;
  return { arg, info, packageName, ...(image === undefined ? {} : { image }) };
}

/** A path that is missing or a file is refused here, with what to pass instead; an image reference goes on. */
async function checkBundleArg(arg: string): Promise<void> {
  const st = await stat(arg).catch(() => undefined);
  if (st === undefined && looksLikePath(arg)) {
    throw new BinnacleError('input', 'RUN_BUNDLE_DIR_MISSING', `bundle directory ${arg} does not exist: pass a directory with manifests/ and metadata/ (see \`binnacle bundle generate\`), a package-manifest version or package directory, or a bundle image reference`);
  }
  if (st !== undefined && !st.isDirectory()) throw new BinnacleError('input', 'RUN_BUNDLE_DIR_MISSING', `${arg} is a file, not a bundle directory: pass the directory that holds manifests/ and metadata/`);
}

const IMAGE_UNREADABLE: Readonly<Record<string, string>> = {
  OCI_NOT_FOUND: 'was not found in its registry',
  OCI_UNREACHABLE: 'cannot be reached',
  OCI_UNAUTHORIZED: 'cannot be read with the credentials at hand',
  OCI_DENIED: 'cannot be read with the credentials at hand',
};

/** A bundle image that cannot be pulled says how to build and push it; other errors pass as they are. */
function bundleImageError(err: unknown, arg: string): unknown {
  const what = err instanceof BinnacleError && Object.hasOwn(IMAGE_UNREADABLE, err.code) ? IMAGE_UNREADABLE[err.code] : undefined;
  if (!(err instanceof BinnacleError) || what === undefined) return err;
  return new BinnacleError(err.errorClass, 'RUN_BUNDLE_IMAGE', `bundle image ${arg} ${what} (${errorMessage(err)}): build and push it first with \`binnacle bundle build DIR --tag ${arg} --push\`, or pass the bundle directory`, { cause: err });
}

/** The label of an old SQLite-based index image (`opm index add`), which holds no file-based catalog. */
const LABEL_INDEX_DATABASE = 'operators.operatorframework.io.index.database.v1';

/**
 * The FBC of an index (catalog) image, to add a bundle to (`run bundle --index-image`). Checked
 * before anything is changed on the cluster: an image that is not there, a bundle image, an old
 * SQLite index, an image without a catalog, or a catalog that is not valid each get their own
 * error saying what to pass instead.
 */
export async function readIndexImage(ref: string, opts: { cacheDir: string; client?: RegistryClient }): Promise<DeclarativeConfig> {
  const fail = (why: string, cause?: unknown): BinnacleError => new BinnacleError(cause instanceof BinnacleError ? cause.errorClass : 'input', 'RUN_BUNDLE_INDEX_IMAGE', `--index-image ${ref}: ${why}`, cause === undefined ? undefined : { cause });
  let pulled: Awaited<ReturnType<typeof pullAndUnpack>>;
  try {
    pulled = await pullAndUnpack(ref, { cacheDir: opts.cacheDir, ...(opts.client === undefined ? {} : { client: opts.client }) });
  } catch (err) {
    if (err instanceof BinnacleError && err.code === 'OCI_NOT_FOUND') {
      throw fail(`was not found in its registry (${errorMessage(err)}): check the reference, or build and push the catalog first with \`binnacle catalog build DIR --tag ${ref} --push\``, err);
    }
    if (err instanceof BinnacleError && (err.code === 'OCI_UNREACHABLE' || err.code === 'OCI_UNAUTHORIZED' || err.code === 'OCI_DENIED')) {
      throw fail(`${err.code === 'OCI_UNREACHABLE' ? 'cannot be reached' : 'cannot be read with the credentials at hand'} (${errorMessage(err)})`, err);
    }
    throw fail(errorMessage(err), err);
  }
  const configs = pulled.labels[LABEL_CATALOG_CONFIGS];
  if (configs === undefined) {
    if (pulled.labels[LABEL_BUNDLE_MEDIATYPE] !== undefined) {
      throw fail(`is a bundle image (label ${LABEL_BUNDLE_MEDIATYPE}), not a catalog: pass it as the bundle (\`binnacle run bundle ${ref}\`), and a catalog image as --index-image`);
    }
    if (pulled.labels[LABEL_INDEX_DATABASE] !== undefined) {
      throw fail(`is a SQLite-based index image (label ${LABEL_INDEX_DATABASE}), which Binnacle does not read: migrate it to a file-based catalog with \`opm migrate ${ref} DIR\`, build it with \`binnacle catalog build DIR --tag REF --push\`, and pass that`);
    }
  }
  let dir: string;
  try {
    // The label is the image author's: it must name a directory inside this image.
    dir = await imageLabelDir(pulled.dir, LABEL_CATALOG_CONFIGS, configs ?? '/configs');
  } catch (err) {
    if (err instanceof BinnacleError && err.code === 'OCI_LABEL_PATH_MISSING') {
      throw fail(`is not a catalog image: ${configs === undefined ? `it has no label ${LABEL_CATALOG_CONFIGS} and no /configs directory` : `it has no ${configs} directory, which its label ${LABEL_CATALOG_CONFIGS} names`}; build a catalog with \`binnacle catalog build DIR --tag REF --push\``, err);
    }
    throw fail(errorMessage(err), err);
  }
  const loaded = await loadFbcDir(dir);
  if (!loaded.result.ok) throw fail(`its catalog cannot be read:\n${loaded.result.render()}`);
  const valid = validateConfig(loaded.config).result;
  // Rules opm added since v1.47.0 do not stop us using an index an older opm built.
  if (blockingErrors(valid).length > 0) throw fail(`its catalog is not valid (before the bundle was added):\n${valid.render()}`);
  return loaded.config;
}
