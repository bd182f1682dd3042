/**
 * Render's fixtures (`testdata/`: bundle directories, package-manifest trees, templates) and
 * golden-file comparison for its tests: `UPDATE_GOLDEN=1` rewrites the expected files. The
 * catalogs render reads back come from the catalog's own fixtures (`CATALOG_TESTDATA`).
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Bundle } from '../declcfg/index.js';
import { defaultBundleRenderer, readBundleDir } from './bundle-dir.js';
import type { ImageBundleRenderer } from './template-basic.js';

export const TESTDATA = path.join(import.meta.dirname, 'testdata');

export async function assertGolden(name: string, actual: string): Promise<void> {
  const file = path.join(TESTDATA, 'golden', name);
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(file, actual);
  const expected = await readFile(file, 'utf8');
  assert.equal(actual, expected, `output differs from golden file ${file} (UPDATE_GOLDEN=1 to rewrite)`);
}

/** Test images `example.com/foo-bundle:vX` are the bundle directories `testdata/bundles/foo-X`. */
export const testImages: ImageBundleRenderer = async (image: string): Promise<Bundle[]> => {
  const m = /^example\.com\/foo-bundle:v(.+)$/.exec(image);
  if (m === null) throw new Error(`unknown test image ${image}`);
  const info = await readBundleDir(path.join(TESTDATA, 'bundles', `foo-${m[1] ?? ''}`));
  return [await defaultBundleRenderer(info, { packageName: 'foo', image })];
};
