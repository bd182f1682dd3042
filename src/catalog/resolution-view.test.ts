import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Bundle, DeclarativeConfig } from '../declcfg/index.js';
import { resolutionView } from './resolution-view.js';

const bundle = (name: string, image: string): Bundle => ({
  schema: 'olm.bundle',
  package: 'p',
  name,
  image,
  properties: [
    { type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } },
    { type: 'olm.bundle.object', value: { data: 'e30=' } },
    { type: 'olm.gvk', value: { group: 'g', kind: 'K', version: 'v1' } },
    { type: 'olm.csv.metadata', value: { minKubeVersion: '1.20.0' } },
  ],
});

test('bundles with an image lose their olm.bundle.object properties and keep every other; image-less bundles keep them all', () => {
  const dc: DeclarativeConfig = { packages: [{ schema: 'olm.package', name: 'p' }], channels: [], bundles: [bundle('p.v1', 'example.com/p:v1'), bundle('p.v0', '')], deprecations: [], others: [] };
  const view = resolutionView(dc);
  assert.deepEqual(view.bundles[0]?.properties.map((p) => p.type), ['olm.package', 'olm.gvk', 'olm.csv.metadata']);
  assert.equal(view.bundles[1], dc.bundles[1], 'an image-less bundle is its objects: kept as it is');
  assert.equal(view.packages, dc.packages);
  assert.equal(dc.bundles[0]?.properties.length, 4, 'the input is not changed');
});
