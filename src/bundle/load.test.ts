import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BundleLoadError, loadBundleDir } from './load.js';
import { loadError } from './load.test-helper.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');

describe('loadBundleDir', () => {
  it('loads the bundle layout with metadata', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    assert.equal(b.layout, 'bundle');
    assert.equal(b.name, 'webhook-operator.v0.2.0');
    assert.equal(b.packageName, 'webhook-operator');
    assert.deepEqual(b.annotations?.channels, ['stable', 'fast']);
    assert.equal(b.annotations?.defaultChannel, 'stable');
    assert.equal(b.crds.length, 1);
    assert.deepEqual(b.others.map((o) => o.kind).sort(), ['ConfigMap', 'PriorityClass', 'Service']);
    assert.equal(b.objects.length, 5);
    assert.equal(b.dependencies.length, 3);
    assert.deepEqual(b.properties, [{ type: 'olm.label', value: 'tier=backend' }]);
    assert.equal(b.csv.webhooks.length, 2);
    assert.equal(b.csv.skipRange, '>=0.1.0 <0.2.0');
    // every object keeps its file name
    assert.ok(b.objects.every((o) => o.file.startsWith('manifests/')));
  });

  it('loads a package-manifest version directory, package name from the parent', async () => {
    const b = await loadBundleDir(join(testdata, 'conversion-operator', '1.0.0'));
    assert.equal(b.layout, 'package-manifest');
    assert.equal(b.packageName, 'conversion-operator');
    assert.equal(b.crds.length, 2);
    const given = await loadBundleDir(join(testdata, 'conversion-operator', '1.0.0'), { packageName: 'other' });
    assert.equal(given.packageName, 'other');
  });

  it('missing CSV: names the manifests directory', async () => {
    const e = await loadError(join(testdata, 'bad/missing-csv'));
    assert.equal(e.code, 'BUNDLE_NO_CSV');
    assert.equal(e.file, 'manifests/');
    assert.match(e.message, /no ClusterServiceVersion/);
  });

  it('two CSVs: names both files', async () => {
    const e = await loadError(join(testdata, 'bad/two-csvs'));
    assert.equal(e.code, 'BUNDLE_MULTIPLE_CSV');
    assert.match(e.message, /conversion-operator\.v1\.0\.0\.clusterserviceversion\.yaml/);
    assert.match(e.message, /second\.clusterserviceversion\.yaml/);
  });

  it('CSV that is not YAML: names the file and the line', async () => {
    const e = await loadError(join(testdata, 'bad/csv-not-yaml'));
    assert.equal(e.code, 'BUNDLE_YAML');
    assert.equal(e.file, 'broken.clusterserviceversion.yaml');
    assert.match(e.message, /not valid YAML \(line \d+\)/);
  });

  it('wrong field types: every bad field, each with file and field path', async () => {
    const e = await loadError(join(testdata, 'bad/wrong-types'));
    const fields = e.problems.map((p) => p.field);
    assert.deepEqual(fields, [
      'metadata.annotations.replicas',
      'spec.installModes',
      'spec.customresourcedefinitions.owned',
      'spec.install.spec.permissions[0].serviceAccountName',
    ]);
    assert.ok(e.problems.every((p) => p.file === 'wrong.clusterserviceversion.yaml'));
    assert.equal(e.field, 'metadata.annotations.replicas');
  });

  it('a deployment spec that is not a Deployment spec', async () => {
    const e = await loadError(join(testdata, 'bad/bad-deployment'));
    assert.deepEqual(
      e.problems.map((p) => p.field),
      ['spec.install.spec.deployments[0].spec.template'],
    );
    assert.match(e.message, /baddep\.clusterserviceversion\.yaml: spec\.install\.spec\.deployments\[0\]\.spec\.template: is required/);
  });

  it('a path that is not a directory', async () => {
    await assert.rejects(loadBundleDir(join(testdata, 'nope')), (e: unknown) => e instanceof BundleLoadError && e.code === 'BUNDLE_NOT_FOUND');
  });
});

describe('loadBundleDir with links that are not files (found by test/fuzz)', () => {
  it('a manifest or metadata symlink to a directory, or to nothing, is a BundleLoadError naming the file', async () => {
    const { cp, mkdtemp, rm, symlink } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'bundle-links-'));
    try {
      await cp(join(testdata, 'webhook-operator'), join(dir, 'b'), { recursive: true });
      await symlink(tmpdir(), join(dir, 'b', 'manifests', 'dir-link.yaml'));
      await symlink(join(dir, 'nothing'), join(dir, 'b', 'metadata', 'dangling.yaml'));
      await assert.rejects(
        loadBundleDir(join(dir, 'b')),
        (e: unknown) => e instanceof BundleLoadError && /manifests\/dir-link\.yaml: is \(a symlink to\) a directory/.test(e.message) && /metadata\/dangling\.yaml: is a symlink to nothing/.test(e.message),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
