/** Bundle-loading tests' checks: a directory that must not load, and the error it gives. */
import assert from 'node:assert/strict';
import { BundleLoadError, loadBundleDir } from './load.js';
import { InputError } from '../util/errors.js';

/** The BundleLoadError (an InputError) loading dir gives; fails the test if dir loads. */
export async function loadError(dir: string): Promise<BundleLoadError> {
  try {
    await loadBundleDir(dir);
  } catch (e) {
    assert.ok(e instanceof BundleLoadError, `expected BundleLoadError, got ${String(e)}`);
    assert.ok(e instanceof InputError);
    return e;
  }
  assert.fail(`${dir} loaded but should not have`);
}
