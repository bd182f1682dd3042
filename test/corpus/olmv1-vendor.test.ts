/**
 * What Binnacle vendors from operator-controller (OLM v1) is the pinned module's, byte for byte:
 * the ClusterExtension and ClusterCatalog CRDs under src/api/olmv1/crds/, the e2e feature files
 * and the registry+v1 conversion testdata under test/vendor/operator-controller-v1.11.0/.
 * The module is downloaded with `go mod download` (Go is on every machine this runs on; without
 * it, or without the proxy and an empty module cache, the test fails). Both ways: every file of
 * each vendored piece is here unchanged, and nothing is here that the module lacks, apart from
 * the READMEs of ours. hack/vendor-olmv1.ts re-vendors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OLMV1_CRD_DIR, OLMV1_OWN_FILES, OLMV1_VENDORED, OLMV1_VENDOR_DIR, REPO_ROOT, filesUnder, olmv1ModuleDir } from './olmv1-vendor.test-helper.js';

const mod = olmv1ModuleDir();

for (const piece of OLMV1_VENDORED) {
  test(`${piece.to} is the module's ${piece.from}, unchanged (${piece.use})`, () => {
    const theirs = filesUnder(join(mod, piece.from));
    assert.ok(theirs.length > 0, `the module has no ${piece.from}`);
    const ours = filesUnder(join(REPO_ROOT, piece.to));
    assert.deepEqual(ours, theirs, 'the same files');
    for (const f of theirs) {
      const a = readFileSync(join(REPO_ROOT, piece.to, f));
      const b = readFileSync(join(mod, piece.from, f));
      assert.ok(a.equals(b), `${join(piece.to, f)} differs from the module's ${join(piece.from, f)}`);
    }
  });
}

test('the vendored directories hold nothing but the vendored pieces and our READMEs', () => {
  const known = new Set<string>(OLMV1_OWN_FILES);
  for (const piece of OLMV1_VENDORED) for (const f of filesUnder(join(REPO_ROOT, piece.to))) known.add(join(piece.to, f));
  for (const dir of [OLMV1_VENDOR_DIR, OLMV1_CRD_DIR]) {
    const stray = filesUnder(join(REPO_ROOT, dir))
      .map((f) => join(dir, f))
      .filter((f) => !known.has(f));
    assert.deepEqual(stray, [], `files in ${dir} that are neither vendored nor listed in OLMV1_OWN_FILES`);
  }
  for (const own of OLMV1_OWN_FILES) assert.ok(filesUnder(join(REPO_ROOT, own)).length === 1, `${own} exists`);
});

test('the counts the notes rely on: 13 feature files, 7 conversion cases over 2 bundles', () => {
  const features = filesUnder(join(REPO_ROOT, OLMV1_VENDOR_DIR, 'test/e2e/features')).filter((f) => f.endsWith('.feature'));
  assert.equal(features.length, 13);
  const expected = join(REPO_ROOT, OLMV1_VENDOR_DIR, 'test/regression/convert/testdata/expected-manifests');
  const cases = new Set(filesUnder(expected).map((f) => f.split('/').slice(0, 2).join('/')));
  assert.equal(cases.size, 7, [...cases].join(', '));
});
