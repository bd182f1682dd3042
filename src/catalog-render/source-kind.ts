/**
 * What kind of source a path (or reference) is, for `render` and `catalog validate`: an FBC
 * directory or file, a bundle directory, a package directory, a directory of packages, or an
 * image reference. Only looks at names on disk, so deciding costs no catalog or bundle code.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_FILE } from '../bundle/types.js';
import { BinnacleError } from '../util/errors.js';

export type SourceKind = 'fbc' | 'bundle' | 'package' | 'packages' | 'image';

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

async function hasCsvFile(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).some((n) => /clusterserviceversion\.ya?ml$/i.test(n));
  } catch {
    return false;
  }
}

/** A bundle directory: `manifests/` + `metadata/`, or a version directory holding a CSV. */
export async function isBundleDir(dir: string): Promise<boolean> {
  if ((await isDir(path.join(dir, 'manifests'))) && (await exists(path.join(dir, 'metadata', 'annotations.yaml')))) return true;
  return hasCsvFile(dir);
}

/** A package directory: has a `*.package.yaml`, or its subdirectories are bundles. */
export async function isPackageDir(dir: string): Promise<boolean> {
  if ((await readdir(dir)).some((n) => PACKAGE_FILE.test(n))) return true;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory() && (await isBundleDir(path.join(dir, e.name)))) return true;
  }
  return false;
}

export async function detectSourceKind(source: string): Promise<SourceKind> {
  if (!(await exists(source))) {
    // A path (absolute, ./ or ../, or with a file extension) is never an image reference.
    if (/^(\/|\.\.?\/|~)/.test(source) || /\.(ya?ml|json)$/.test(source)) {
      throw new BinnacleError('input', 'RENDER_SOURCE_NOT_FOUND', `${source}: no such file or directory`);
    }
    return 'image';
  }
  if (!(await isDir(source))) return 'fbc';
  if (await isBundleDir(source)) return 'bundle';
  if (await isPackageDir(source)) return 'package';
  for (const e of await readdir(source, { withFileTypes: true })) {
    if (e.isDirectory() && (await isPackageDir(path.join(source, e.name)))) return 'packages';
  }
  return 'fbc';
}
