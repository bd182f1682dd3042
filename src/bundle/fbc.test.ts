import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBundleDir } from './load.js';
import { channelEntryOf, toFbcBundle } from './fbc.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');

describe('toFbcBundle', () => {
  it('derives properties as opm does, sorted by type then value', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const fbc = toFbcBundle(b, { image: 'quay.io/example/webhook-operator-bundle:v0.2.0' });
    assert.equal(fbc.schema, 'olm.bundle');
    assert.equal(fbc.name, 'webhook-operator.v0.2.0');
    assert.equal(fbc.package, 'webhook-operator');
    const props = fbc.properties.filter((p) => p.type !== 'olm.csv.metadata');
    assert.deepEqual(props, [
      {
        type: 'olm.constraint',
        value: {
          failureMessage: 'needs a metrics stack',
          any: {
            constraints: [
              { package: { packageName: 'prometheus', versionRange: '>=0.40.0' } },
              { gvk: { group: 'monitoring.coreos.com', version: 'v1', kind: 'ServiceMonitor' } },
            ],
          },
        },
      },
      { type: 'olm.gvk', value: { group: 'example.com', kind: 'Widget', version: 'v1' } },
      // CSV required CRDs and olm.gvk dependencies both become olm.gvk.required
      { type: 'olm.gvk.required', value: { group: 'other.io', kind: 'Gadget', version: 'v1alpha1' } },
      { type: 'olm.gvk.required', value: { group: 'other.io', kind: 'Gizmo', version: 'v1' } },
      { type: 'olm.label', value: 'tier=backend' },
      { type: 'olm.maxOpenShiftVersion', value: '4.12' },
      { type: 'olm.package', value: { packageName: 'webhook-operator', version: '0.2.0' } },
      { type: 'olm.package.required', value: { packageName: 'cert-helper', versionRange: '>=1.0.0 <2.0.0' } },
    ]);
    const meta = fbc.properties.find((p) => p.type === 'olm.csv.metadata')?.value as Record<string, unknown>;
    assert.equal(meta.displayName, 'Webhook Operator');
    assert.equal(meta.minKubeVersion, '1.21.0');
    assert.deepEqual(fbc.relatedImages?.map((r) => r.image), [
      'quay.io/example/webhook-operator@sha256:0000000000000000000000000000000000000000000000000000000000000001',
      'quay.io/example/webhook-operator-bundle:v0.2.0',
    ]);
  });

  it('counts every version of every bundled CRD and owned API services', async () => {
    const b = await loadBundleDir(join(testdata, 'conversion-operator', '1.0.0'));
    const gvks = toFbcBundle(b).properties.filter((p) => p.type === 'olm.gvk').map((p) => p.value);
    assert.deepEqual(gvks, [
      { group: 'example.com', kind: 'Thing', version: 'v1' },
      { group: 'example.com', kind: 'Thing', version: 'v1alpha1' },
      { group: 'legacy.example.com', kind: 'Old', version: 'v1beta1' },
      { group: 'metrics.example.com', kind: 'Metric', version: 'v1' },
    ]);
  });

  it('gives the channel entry fields from the CSV', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    assert.deepEqual(channelEntryOf(b), {
      name: 'webhook-operator.v0.2.0',
      replaces: 'webhook-operator.v0.1.0',
      skips: ['webhook-operator.v0.1.1'],
      skipRange: '>=0.1.0 <0.2.0',
    });
  });

  it('without an image keeps every manifest as an olm.bundle.object, as opm does, and has no olm.csv.metadata', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const fbc = toFbcBundle(b);
    assert.equal(fbc.image, '');
    assert.equal(fbc.properties.some((p) => p.type === 'olm.csv.metadata'), false);
    const objects = fbc.properties.filter((p) => p.type === 'olm.bundle.object').map((p) => (p.value as { data: string }).data);
    assert.equal(objects.length, b.objects.length);
    // Each is the manifest as Go's JSON writes it: compact, keys sorted, HTML characters escaped.
    const texts = objects.map((d) => Buffer.from(d, 'base64').toString('utf8'));
    const csvText = texts.find((t) => t.includes('"kind":"ClusterServiceVersion"'));
    assert.ok(csvText !== undefined, 'the CSV is one of them');
    assert.deepEqual(JSON.parse(csvText), b.csv.raw);
    assert.match(csvText, /^\{"apiVersion":"operators\.coreos\.com\/v1alpha1","kind":"ClusterServiceVersion","metadata":\{"annotations":/);
    // Sorted by their data, as opm sorts properties by value.
    assert.deepEqual(objects, [...objects].sort());
    // With an image, the CSV's metadata stands for them.
    const withImage = toFbcBundle(b, { image: 'quay.io/example/webhook-operator-bundle:v0.2.0' });
    assert.equal(withImage.properties.some((p) => p.type === 'olm.bundle.object'), false);
    assert.equal(withImage.properties.filter((p) => p.type === 'olm.csv.metadata').length, 1);
  });

  it('refuses a bundle without a package name, naming the annotation', async () => {
    const b = await loadBundleDir(join(testdata, 'conversion-operator', '1.0.0'));
    assert.throws(() => toFbcBundle({ ...b, packageName: '' }), (e: unknown) => e instanceof Error && /package name/.test(e.message));
  });
});
