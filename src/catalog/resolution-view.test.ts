import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Bundle, DeclarativeConfig } from '../declcfg/index.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { propertySharer, resolutionBundle, resolutionView, stringInterner } from './resolution-view.js';

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
  // Six repeated strings of 10 to 17 characters in each of 20,000 records (JSON.parse itself shares
  // shorter ones: olm.gvk, Memcached, v1alpha1), at least 20 bytes each: 2.4 MB or more.
  assert.ok(before - after > 2_000_000, `held ${before} bytes before interning, ${after} after`);
});

test('resolutionView interns: the view of a parsed catalog holds less heap than the same view without interning', () => {
  // Each bundle's properties its own (none shared), with repeated strings of ten characters or more in them.
  const bundles = Array.from({ length: 10_000 }, (_, i): Bundle => ({
    schema: 'olm.bundle',
    package: `package-number-${i % 50}`,
    name: `package-number-${i % 50}.v${i}`,
    image: `example.com/p:v${i}`,
    properties: [
      { type: 'olm.package', value: { packageName: `package-number-${i % 50}`, version: `1.0.${i}` } },
      { type: 'olm.gvk', value: { group: 'cache.example.com', kind: 'MemcachedBackup', version: `v${i}` } },
    ],
  }));
  const parse = (): DeclarativeConfig => JSON.parse(JSON.stringify({ packages: [], channels: [], bundles, deprecations: [], others: [] })) as DeclarativeConfig;
  // What `make`'s result holds once collected (it is dropped when the function returns).
  const heldBy = (make: () => { length: number }): number => {
    gc();
    const base = process.memoryUsage().heapUsed;
    const kept = make();
    gc();
    const after = process.memoryUsage().heapUsed;
    assert.equal(kept.length, 10_000);
    return after - base;
  };
  // Without interning, its properties shared as the view shares them: what is left between the two is interning's.
  const sharedOnly = () => {
    const share = propertySharer();
    return parse().bundles.map((b) => share(resolutionBundle(b)));
  };
  // Both ways once first: the functions' code and feedback are not counted against either.
  sharedOnly();
  resolutionView(parse());
  // The smaller of two measures each: what else of the process allocates meanwhile only adds.
  const plainHeld = Math.min(heldBy(sharedOnly), heldBy(sharedOnly));
  const viewHeld = Math.min(heldBy(() => resolutionView(parse()).bundles), heldBy(() => resolutionView(parse()).bundles));
  // The same bundles' view, without and with interning: four repeated strings of ten characters or
  // more a bundle outside what is shared (the package's name twice, the GVK's group and kind), about 2 MB here.
  assert.ok(plainHeld - viewHeld > 800_000, `without interning ${plainHeld} bytes, with ${viewHeld}`);
});

test('a frozen object is walked, not written: its strings stay its own', () => {
  const frozen = Object.freeze({ group: 'cache.example.com', nested: { kind: 'MemcachedBackup' } });
  const intern = stringInterner();
  assert.equal(intern(frozen), frozen);
  assert.equal(intern({ a: [Object.freeze(['cache.example.com'])] }).a[0]?.[0], 'cache.example.com');
});

test('equal properties of different bundles are one frozen object in the view; the input keeps its own, and an image-less bundle is kept as it is', () => {
  const parse = (): DeclarativeConfig =>
    JSON.parse(JSON.stringify({ packages: [], channels: [], bundles: [bundle('p.v1', 'example.com/p:v1'), bundle('p.v2', 'example.com/p:v2'), bundle('p.v0', '')], deprecations: [], others: [] })) as DeclarativeConfig;
  // p.v2 provides another kind: that property differs, the rest are equal to p.v1's.
  const withOtherKind = (c: DeclarativeConfig): DeclarativeConfig => {
    const gvk = c.bundles[1]?.properties.find((p) => p.type === 'olm.gvk');
    assert.ok(gvk !== undefined);
    gvk.value = { group: 'g', kind: 'Other', version: 'v1' };
    return c;
  };
  const dc = withOtherKind(parse());
  const view = resolutionView(dc);
  const [v1, v2, v0] = view.bundles;
  assert.ok(v1 !== undefined && v2 !== undefined && v0 !== undefined);
  const ofType = (b: Bundle, type: string) => b.properties.find((p) => p.type === type);
  assert.equal(ofType(v2, 'olm.csv.metadata'), ofType(v1, 'olm.csv.metadata'), 'the same CSV metadata is one object');
  assert.equal(ofType(v2, 'olm.package'), ofType(v1, 'olm.package'), 'equal values of one type are one object');
  assert.notEqual(ofType(v2, 'olm.gvk'), ofType(v1, 'olm.gvk'), 'different values are not shared');
  assert.deepEqual(ofType(v2, 'olm.gvk')?.value, { group: 'g', kind: 'Other', version: 'v1' });
  // Frozen all through: a change through one bundle cannot reach another.
  const shared = ofType(v1, 'olm.csv.metadata');
  assert.ok(shared !== undefined && Object.isFrozen(shared) && Object.isFrozen(shared.value));
  assert.throws(() => {
    (shared.value as { keywords: string[] }).keywords.push('x');
  }, TypeError);
  // The view reads as the unshared one does, and the input is its own, unfrozen.
  assert.deepEqual(view.bundles, withOtherKind(parse()).bundles.map(resolutionBundle));
  assert.ok(!Object.isFrozen(dc.bundles[0]?.properties[0]) && !Object.isFrozen(dc.bundles[0]?.properties[0]?.value), 'the input is not frozen');
  assert.deepEqual(dc, withOtherKind(parse()), 'the input reads as it did');
  assert.equal(v0, dc.bundles[2], 'an image-less bundle is its objects: kept as it is');
});

test('a property of different type but the same value is not shared', () => {
  const b = (name: string, type: string): Bundle => ({ schema: 'olm.bundle', package: 'p', name, image: `example.com/p:${name}`, properties: [{ type, value: { group: 'g', kind: 'K', version: 'v1' } }] });
  const view = resolutionView({ packages: [], channels: [], bundles: [b('a', 'olm.gvk'), b('b', 'olm.gvk.required')], deprecations: [], others: [] });
  assert.notEqual(view.bundles[0]?.properties[0], view.bundles[1]?.properties[0]);
  assert.equal(view.bundles[1]?.properties[0]?.type, 'olm.gvk.required');
});

test('a value JSON would change (NaN, Infinity, -0, which YAML can say) is not shared, nor a very long one', () => {
  const b = (name: string, value: unknown): Bundle => ({ schema: 'olm.bundle', package: 'p', name, image: `example.com/p:${name}`, properties: [{ type: 'example.com/x', value }] });
  const long = { text: 'x'.repeat(10_000) };
  const pairs: [unknown, unknown][] = [[{ n: Number.NaN }, { n: null }], [{ n: null }, { n: Number.NaN }], [[Infinity], [null]], [{ n: -0 }, { n: 0 }], [{ n: 0 }, { n: -0 }], [long, { ...long }]];
  for (const [first, second] of pairs) {
    const view = resolutionView({ packages: [], channels: [], bundles: [b('a', first), b('b', second)], deprecations: [], others: [] });
    const [x, y] = view.bundles.map((v) => v.properties[0]);
    assert.notEqual(x, y, `${JSON.stringify(first)} and ${JSON.stringify(second)} are two`);
    assert.ok(Object.is((x?.value as { n?: unknown }).n, (first as { n?: unknown }).n));
    assert.ok(Object.is((y?.value as { n?: unknown }).n, (second as { n?: unknown }).n));
  }
});

test('the sharing table stops growing at its cap: what it holds is still shared, what comes after is not', () => {
  const b = (name: string, value: unknown): Bundle => ({ schema: 'olm.bundle', package: 'p', name, image: `example.com/p:${name}`, properties: [{ type: 'example.com/x', value }] });
  // 8,000 characters each, all different: 1,100 of them pass the table's 8 Mi characters.
  const filler = Array.from({ length: 1100 }, (_, i) => b(`f${i}`, { text: `${i}`.padEnd(8000, '.') }));
  const early = { kind: 'early' };
  const late = { kind: 'late' };
  const view = resolutionView({ packages: [], channels: [], bundles: [b('e1', early), ...filler, b('e2', early), b('l1', late), b('l2', late)], deprecations: [], others: [] });
  const prop = (name: string) => view.bundles.find((x) => x.name === name)?.properties[0];
  assert.equal(prop('e1'), prop('e2'), 'a property the table holds is shared after it is full');
  assert.notEqual(prop('l1'), prop('l2'), 'a property first seen after it is full is not');
  assert.deepEqual(prop('l2')?.value, late);
});
