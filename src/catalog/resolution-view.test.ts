import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Bundle, DeclarativeConfig } from '../declcfg/index.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { resolutionView, stringInterner } from './resolution-view.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

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

test('a view’s short strings are interned in place: every record reads the same, and repeated strings are held once', () => {
  const record = (i: number) => ({ schema: 'olm.bundle', name: `p.v${i}`, properties: [{ type: 'olm.gvk', value: { group: 'cache.example.com', kind: 'Memcached', version: 'v1alpha1' } }], installModes: ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'], long: 'd'.repeat(300) });
  // Parsed in a function of its own: the text is gone before the first measure.
  const parse = () => JSON.parse(JSON.stringify(Array.from({ length: 20_000 }, (_, i) => record(i)))) as ReturnType<typeof record>[];
  const heldAfterGc = (): number => {
    gc();
    return process.memoryUsage().heapUsed;
  };
  const parsed = parse();
  const before = heldAfterGc();
  const intern = stringInterner();
  for (const r of parsed) assert.equal(intern(r), r, 'interned in place');
  const after = heldAfterGc();
  assert.deepEqual(parsed, Array.from({ length: 20_000 }, (_, i) => record(i)), 'every record reads as it did');
  // Nine repeated strings of 7 to 17 characters in each of 20,000 records, at least 20 bytes each: 3.6 MB in all.
  assert.ok(before - after > 2_000_000, `held ${before} bytes before interning, ${after} after`);
});

test('the whole-catalog view and the record-by-record one intern the same: equal to the view without it', () => {
  const dc: DeclarativeConfig = { packages: [], channels: [{ schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1' }] }], bundles: [bundle('p.v1', 'example.com/p:v1')], deprecations: [], others: [{ schema: 'other', package: 'p', name: 'x', blob: { schema: 'other', note: 'n' } }] };
  const copy = structuredClone(dc);
  const view = resolutionView(dc);
  assert.deepEqual(dc, copy, 'the input reads as it did');
  assert.deepEqual(view.channels, copy.channels);
  assert.deepEqual(view.others, copy.others);
});
