/**
 * Loading the package-manifest layout wherever a bundle directory is taken (issue 28 §3): a
 * version directory gets its package, channels and default channel from the package file one
 * level up; a package directory stands for its default channel's head; a version no channel
 * reaches loads with a warning and cannot become an image; a malformed package file is an error
 * naming the file and the field.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBundleDir } from './load.js';
import { loadError } from './load.test-helper.js';
import { bundleAnnotations } from './build.js';
import { InputError } from '../util/errors.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';
import { ANNOTATION_CHANNELS, ANNOTATION_DEFAULT_CHANNEL, ANNOTATION_PACKAGE } from './types.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata', 'pkgmanifest');
const tiny = join(testdata, 'tiny-operator');
const pkgFile = join(tiny, 'tiny-operator.package.yaml');

/** A writable copy of the tiny-operator package directory, removed afterwards: fn gets it and its package file. */
function withTinyCopy(fn: (pkg: string, file: string) => Promise<void>): Promise<void> {
  return withTempDir('pkgmanifest-', async (dir) => {
    const pkg = join(dir, 'tiny-operator');
    await cp(tiny, pkg, { recursive: true });
    await fn(pkg, join(pkg, 'tiny-operator.package.yaml'));
  });
}

describe('package-manifest layout', () => {
  it('a version directory: package, channels that reach it and the default channel come from the package file', async () => {
    const b = await loadBundleDir(join(tiny, '0.2.0'));
    assert.equal(b.layout, 'package-manifest');
    assert.equal(b.name, 'tiny-operator.v0.2.0');
    assert.equal(b.packageName, 'tiny-operator');
    // stable's head is 0.2.0; fast's head 0.3.0 replaces 0.2.0, so fast reaches it too.
    assert.deepEqual(b.packageManifest, { file: pkgFile, channels: ['stable', 'fast'], defaultChannel: 'stable' });
    const newest = await loadBundleDir(join(tiny, '0.3.0'));
    assert.deepEqual(newest.packageManifest?.channels, ['fast']);
    const oldest = await loadBundleDir(join(tiny, '0.1.0'));
    assert.deepEqual(oldest.packageManifest?.channels, ['stable', 'fast']);
    assert.deepEqual(b.loadWarnings, []);
  });

  it('the annotations a bundle image gets: package, channels, and the default channel only when the bundle is in it', async () => {
    const mid = bundleAnnotations(await loadBundleDir(join(tiny, '0.2.0')));
    assert.equal(mid[ANNOTATION_PACKAGE], 'tiny-operator');
    assert.equal(mid[ANNOTATION_CHANNELS], 'stable,fast');
    assert.equal(mid[ANNOTATION_DEFAULT_CHANNEL], 'stable');
    const newest = bundleAnnotations(await loadBundleDir(join(tiny, '0.3.0')));
    assert.equal(newest[ANNOTATION_CHANNELS], 'fast');
    assert.equal(newest[ANNOTATION_DEFAULT_CHANNEL], undefined);
  });

  it("a package directory loads as its default channel's head", async () => {
    const b = await loadBundleDir(tiny);
    assert.equal(b.name, 'tiny-operator.v0.2.0');
    assert.equal(b.dir, join(tiny, '0.2.0'));
    assert.deepEqual(b.packageManifest?.channels, ['stable', 'fast']);
  });

  it("a package directory whose default channel's head is missing, or that names no default among several channels, names the file and field", async () => {
    await withTinyCopy(async (pkg, file) => {
      await writeFile(file, 'packageName: tiny-operator\ndefaultChannel: stable\nchannels:\n- name: fast\n  currentCSV: tiny-operator.v0.3.0\n- name: stable\n  currentCSV: tiny-operator.v9.9.9\n');
      const missing = await loadError(pkg);
      assert.equal(missing.file, file);
      assert.equal(missing.field, 'channels[1].currentCSV');
      assert.match(missing.message, /default channel "stable" names currentCSV "tiny-operator\.v9\.9\.9", which no version directory/);
      await writeFile(file, 'packageName: tiny-operator\nchannels:\n- name: fast\n  currentCSV: tiny-operator.v0.3.0\n- name: stable\n  currentCSV: tiny-operator.v0.2.0\n');
      const none = await loadError(pkg);
      assert.equal(none.file, file);
      assert.equal(none.field, 'defaultChannel');
      // One channel needs no defaultChannel: it is the default, as opm reads it.
      await writeFile(file, 'packageName: tiny-operator\nchannels:\n- name: fast\n  currentCSV: tiny-operator.v0.3.0\n');
      assert.equal((await loadBundleDir(pkg)).name, 'tiny-operator.v0.3.0');
    });
  });

  it('a version no channel reaches loads with a warning naming the package file, and cannot become a bundle image', async () => {
    const dir = join(testdata, 'orphan', 'tiny-operator', '0.9.0');
    const file = join(testdata, 'orphan', 'tiny-operator', 'tiny-operator.package.yaml');
    const b = await loadBundleDir(dir);
    assert.equal(b.packageName, 'tiny-operator');
    assert.deepEqual(b.packageManifest, { file, channels: [], defaultChannel: 'stable' });
    assert.deepEqual(
      b.loadWarnings.map((p) => [p.rule, p.file, p.field]),
      [['package.no-channel', file, 'channels']],
    );
    assert.match(b.loadWarnings[0]?.message ?? '', /no channel's currentCSV reaches tiny-operator\.v0\.9\.0 .*stable → tiny-operator\.v0\.1\.0/);
    assert.throws(
      () => bundleAnnotations(b),
      (e: unknown) => e instanceof InputError && e.code === 'BUNDLE_NO_CHANNEL' && e.file === file && e.field === 'channels',
    );
    // The version its channel does reach is fine.
    assert.deepEqual((await loadBundleDir(join(testdata, 'orphan', 'tiny-operator', '0.1.0'))).packageManifest?.channels, ['stable']);
  });

  it('a malformed package file is a load error naming the file and the field, for a version directory and for the package directory', async () => {
    const file = join(testdata, 'malformed', 'tiny-operator', 'tiny-operator.package.yaml');
    for (const dir of [join(testdata, 'malformed', 'tiny-operator', '0.1.0'), join(testdata, 'malformed', 'tiny-operator')]) {
      const e = await loadError(dir);
      assert.deepEqual(
        e.problems.map((p) => [p.rule, p.file, p.field]),
        [['package.manifest', file, 'channels[0]']],
      );
      assert.match(e.message, /channels\[0\]: expected \{name: string, currentCSV: string\}/);
    }
  });

  it('a package file that is not YAML, or has no packageName, names the file (and field)', async () => {
    await withTinyCopy(async (pkg, file) => {
      await writeFile(file, 'packageName: [unclosed\n');
      const bad = await loadError(join(pkg, '0.2.0'));
      assert.equal(bad.problems[0]?.file, file);
      assert.equal(bad.problems[0]?.rule, 'package.manifest');
      await writeFile(file, 'channels: []\n');
      const noName = await loadError(join(pkg, '0.2.0'));
      assert.deepEqual([noName.problems[0]?.file, noName.problems[0]?.field], [file, 'packageName']);
    });
  });

  it('the catalog renderer, which reads the package file itself, can load a version without it', async () => {
    const b = await loadBundleDir(join(tiny, '0.2.0'), { packageName: 'tiny-operator', packageContext: false });
    assert.equal(b.packageManifest, undefined);
    assert.equal(b.packageName, 'tiny-operator');
  });

  it('a package file one level up cannot rename a bundle that has annotations, nor change its channels', async () => {
    await withTempDir('pkgmanifest-', async (dir) => {
      await cp(join(testdata, '..', 'webhook-operator'), join(dir, 'pkg', '0.2.0'), { recursive: true });
      await writeFile(join(dir, 'pkg', 'pkg.package.yaml'), 'packageName: other\ndefaultChannel: evil\nchannels:\n- name: evil\n  currentCSV: webhook-operator.v0.2.0\n');
      const b = await loadBundleDir(join(dir, 'pkg', '0.2.0'));
      assert.equal(b.packageName, 'webhook-operator');
      assert.equal(b.packageManifest, undefined);
      assert.equal(bundleAnnotations(b)[ANNOTATION_CHANNELS], 'stable,fast');
    });
  });
});
