import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Bundle, DeclarativeConfig } from '../declcfg/index.js';
import { resolutionView } from './resolution-view.js';

const csvMetadata = { minKubeVersion: '1.20.0', displayName: 'P', keywords: ['k'], description: 'long markdown', annotations: { 'alm-examples': '[]' }, crdDescriptions: { owned: [] } };

const bundle = (name: string, image: string): Bundle => ({
  schema: 'olm.bundle',
  package: 'p',
  name,
  image,
  relatedImages: [{ name: 'operator', image: 'example.com/operator:v1' }],
  properties: [
    { type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } },
    { type: 'olm.bundle.object', value: { data: 'e30=' } },
    { type: 'olm.gvk', value: { group: 'g', kind: 'K', version: 'v1' } },
    { type: 'olm.csv.metadata', value: csvMetadata },
  ],
});

test('bundles with an image keep what resolution reads: no olm.bundle.object, no relatedImages, olm.csv.metadata without its long fields', () => {
  const dc: DeclarativeConfig = { packages: [{ schema: 'olm.package', name: 'p', defaultChannel: 'stable', icon: { base64data: 'aWNvbg==', mediatype: 'image/png' }, description: 'about p' }], channels: [], bundles: [bundle('p.v1', 'example.com/p:v1'), bundle('p.v0', '')], deprecations: [], others: [] };
  const view = resolutionView(dc);
  assert.deepEqual(view.bundles[0]?.properties, [
    { type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } },
    { type: 'olm.gvk', value: { group: 'g', kind: 'K', version: 'v1' } },
    { type: 'olm.csv.metadata', value: { minKubeVersion: '1.20.0', displayName: 'P', keywords: ['k'] } },
  ]);
  assert.equal(view.bundles[0]?.relatedImages, undefined, 'nothing resolves or installs from related images');
  assert.equal(view.bundles[1], dc.bundles[1], 'an image-less bundle is its objects: kept as it is');
  assert.deepEqual(view.packages, [{ schema: 'olm.package', name: 'p', defaultChannel: 'stable' }], 'no icon, no description');
  assert.equal(dc.bundles[0]?.properties.length, 4, 'the input is not changed');
  assert.equal(dc.bundles[0]?.relatedImages?.length, 1);
  assert.equal(dc.packages[0]?.icon?.mediatype, 'image/png');
});
