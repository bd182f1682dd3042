import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CATALOG_TESTDATA } from './testdata.test-helper.js';
import { readdirSync } from 'node:fs';
import { configSink, loadFbcDir, readFbcDir } from './load.js';
import { emptyDeclarativeConfig } from '../declcfg/index.js';
import { isValidImageReference, parseStrictSemver } from './model.js';
import { decodeDocument, iconDataChecked } from './decode.js';
import type { Bundle, Channel } from '../declcfg/index.js';
import { blockingErrors, loadFbcForValidation, recordForValidation, validateConfig } from './validate.js';

describe('validate', () => {
  it('accepts a valid catalog and links the model', async () => {
    const { model, result } = validateConfig(await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid')));
    assert.ok(result.ok, result.render());
    const beta = model.packages.get('beta-op');
    assert.equal(beta?.defaultChannel?.name, 'fast');
    assert.equal(beta?.bundles.get('beta-op.v0.1.0')?.deprecation, 'beta-op.v0.1.0 is deprecated');
    assert.equal(beta?.channels.get('fast')?.entries.get('beta-op.v0.2.0')?.bundle?.version?.version, '0.2.0');
  });

  it('collects every rule violation, each under its package/channel/bundle', async () => {
    const { result } = validateConfig(await readFbcDir(path.join(CATALOG_TESTDATA, 'invalid-model')));
    const rules = new Set(result.errors().map((p) => p.rule));
    for (const rule of [
      'package.name',
      'package.default-channel',
      'package.channels',
      'package.duplicate-version',
      'channel.single-head',
      'channel.replaces-cycle',
      'channel.stranded',
      'channel.entry-bundle',
      'bundle.package',
      'bundle.package-property',
      'bundle.duplicate',
      'bundle.channel',
      'deprecation.reference',
      'deprecation.duplicate',
      // operator-registry main refuses these; v1.47.0 accepted them.
      'channel.skip-range',
      'bundle.image-pull-spec',
    ]) {
      assert.ok(rules.has(rule), `missing rule ${rule} in:\n${result.render()}`);
    }
    // What opm accepts is a warning (an icon's media type).
    const warned = new Set(result.warnings().map((p) => p.rule));
    for (const rule of ['package.icon']) {
      assert.ok(warned.has(rule) && !rules.has(rule), `rule ${rule} should warn, not fail, in:\n${result.render()}`);
    }
    const text = result.render();
    assert.match(text, /package "graph"\n(?:.*\n)*? {4}channel "stable"\n(?:.*\n)*?.*detected cycle in replaces chain of upgrade graph: graph\.v1\.2\.0 -> graph\.v1\.1\.0 -> graph\.v1\.0\.0 -> graph\.v1\.2\.0/);
    assert.match(text, /channel "stranded"\n.*stranded bundles \(not reachable from head "graph\.v2\.0\.0" by replaces\): graph\.v1\.0\.0, graph\.v1\.2\.0/);
    assert.match(text, /bundle "graph\.v1\.2\.0"\n.*must have exactly 1 "olm\.package" property, found 2/);
  });

  it('refuses icon data that is not base64 in a catalog built in memory (rendered from bundles), as opm does; only warns on its media type', async () => {
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    const pkg = cfg.packages.find((p) => p.name === 'beta-op');
    assert.ok(pkg);
    pkg.icon = { base64data: 'iVBO**rw0KGgo=', mediatype: 'image/bmp' };
    const { result } = validateConfig(cfg);
    assert.deepEqual(result.errors().map((p) => [p.rule, p.message]), [['package.icon', 'icon base64data: illegal base64 data at input byte 4 (the icon data must be standard, padded base64)']]);
    assert.deepEqual(result.warnings().map((p) => p.rule), ['package.icon']);
  });

  it("applies operator-registry main's release rules: a valid release, the normalized name, no build metadata", async () => {
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    const b = cfg.bundles.find((x) => x.name === 'beta-op.v0.2.0');
    const ch = cfg.channels.find((c) => c.name === 'fast');
    assert.ok(b && ch);
    const release = (name: string, version: string, rel: string): string => {
      const old = b.name;
      b.name = name;
      b.properties = b.properties.map((p) => (p.type === 'olm.package' ? { type: p.type, value: { packageName: 'beta-op', version, release: rel } } : p));
      ch.entries = ch.entries.map((e) => (e.name === old ? { ...e, name } : e));
      const r = validateConfig(cfg).result;
      return r.errors().map((p) => `${p.rule}: ${p.message}`).join('\n');
    };
    assert.equal(release('beta-op-v0.2.0-alpha.1', '0.2.0', 'alpha.1'), '');
    assert.match(release('beta-op.v0.2.0', '0.2.0', 'alpha.1'), /bundle\.normalized-name: name "beta-op\.v0\.2\.0" does not match normalized name "beta-op-v0\.2\.0-alpha\.1"/);
    assert.match(release('beta-op-v0.2.0-01', '0.2.0', '01'), /bundle\.release: .*segment 0 "01"/);
    assert.match(release('beta-op-v0.2.0-x', '0.2.0', 'a.!'), /bundle\.release: .*segment 1/);
    assert.match(release('beta-op-v0.2.0-x', '0.2.0', 'a'.repeat(21)), /bundle\.release: .*maximum length of 20/);
    assert.match(release('beta-op-v0.2.0+b1-1', '0.2.0+b1', '1'), /cannot use build metadata in version with a release version/);
    // Two releases of one version are two versions; the same release twice is a duplicate.
    assert.equal(release('beta-op-v0.1.1-2', '0.1.1', '2'), '');
    assert.match(release('beta-op.v0.2.0', '0.1.1', ''), /package\.duplicate-version: duplicate version 0\.1\.1 in bundles: beta-op\.v0\.1\.1, beta-op\.v0\.2\.0/);
  });

  it("refuses skipRanges blang/semver cannot parse and digests go-digest does not know, as operator-registry main does", async () => {
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    const ch = cfg.channels.find((c) => c.name === 'fast');
    const b = cfg.bundles.find((x) => x.name === 'beta-op.v0.2.0');
    assert.ok(ch && b);
    const errors = (): string[] => validateConfig(cfg).result.errors().map((p) => p.rule);
    for (const range of ['>v0.1.0', '>1.00.1']) {
      ch.entries = ch.entries.map((e) => (e.name === 'beta-op.v0.2.0' ? { ...e, skipRange: range } : e));
      assert.deepEqual(errors(), ['channel.skip-range'], range);
    }
    ch.entries = ch.entries.map((e) => (e.name === 'beta-op.v0.2.0' ? { ...e, skipRange: '>=0.1.0 <0.2.0' } : e));
    assert.deepEqual(errors(), []);
    b.image = `quay.io/o/b@ssha256:${'ab'.repeat(32)}`;
    assert.deepEqual(errors(), ['bundle.image-pull-spec']);
    b.image = `quay.io/o/b:v0.2.0@sha256:${'ab'.repeat(32)}`;
    b.relatedImages = [{ name: 'op', image: 'quay.io/o/op@md5:0123456789abcdef0123456789abcdef' }];
    assert.deepEqual(errors(), ['bundle.related-image']);
    // A catalog an older opm built with these is still used (served, run bundle's index)…
    ch.entries = ch.entries.map((e) => (e.name === 'beta-op.v0.2.0' ? { ...e, skipRange: 'v1.0.0' } : e));
    assert.deepEqual(blockingErrors(validateConfig(cfg).result), []);
    // …but not one that breaks a rule v1.47.0 had.
    b.image = '';
    assert.deepEqual(blockingErrors(validateConfig(cfg).result).map((p) => p.rule), ['bundle.image']);
  });

  it('finds stranded bundles that the head cannot reach', async () => {
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    const ch = cfg.channels.find((c) => c.name === 'fast');
    assert.ok(ch);
    // 0.2.0 no longer skips 0.1.1, and nothing replaces 0.1.1: two heads.
    ch.entries = ch.entries.map((e) => (e.name === 'beta-op.v0.2.0' ? { name: e.name, replaces: 'beta-op.v0.1.0' } : e));
    const r1 = validateConfig(cfg).result;
    assert.match(r1.render(), /multiple channel heads found in graph: beta-op\.v0\.1\.1, beta-op\.v0\.2\.0/);
    // Now 0.2.0 replaces 0.1.1, which replaces nothing: 0.1.0 is stranded.
    ch.entries = [{ name: 'beta-op.v0.2.0', replaces: 'beta-op.v0.1.1' }, { name: 'beta-op.v0.1.1' }, { name: 'beta-op.v0.1.0' }];
    const r2 = validateConfig(cfg).result;
    assert.deepEqual(r2.errors().map((p) => p.rule), ['channel.single-head']);
    ch.entries = [{ name: 'beta-op.v0.2.0', replaces: 'beta-op.v0.1.1', skips: ['beta-op.v0.0.9'] }, { name: 'beta-op.v0.1.1', skips: ['beta-op.v0.1.0'] }, { name: 'beta-op.v0.1.0' }];
    assert.ok(validateConfig(cfg).result.ok, validateConfig(cfg).result.render());
  });

  it('parses semver strictly and image references like the docker reference grammar', () => {
    assert.ok(parseStrictSemver('1.2.3-rc.1+build.5'));
    assert.equal(parseStrictSemver('v1.2.3'), undefined);
    assert.equal(parseStrictSemver('1.2'), undefined);
    assert.equal(parseStrictSemver('01.2.3'), undefined);
    assert.ok(isValidImageReference('quay.io/org/op-bundle:v1.0.0'));
    assert.ok(isValidImageReference('localhost:5000/a/b@sha256:' + 'a'.repeat(64)));
    assert.ok(isValidImageReference('busybox'));
    assert.equal(isValidImageReference('docker.io/strimzi/operator@@sha256:' + 'a'.repeat(64)), false);
    assert.equal(isValidImageReference('Quay.io/UPPER/case'), false);
  });

  it('says the same of a catalog whose bundle objects, CSV metadata and related images were checked as read and dropped (every parity case)', async () => {
    const parity = path.join(CATALOG_TESTDATA, 'parity');
    const cases = readdirSync(parity);
    assert.ok(cases.length > 100, `parity cases in ${parity}`);
    let withObjects = 0;
    let withMetadata = 0;
    for (const c of cases) {
      const full = await loadFbcDir(path.join(parity, c));
      const lean = await loadFbcForValidation(path.join(parity, c));
      assert.equal(lean.result.render(), full.result.render(), c);
      assert.equal(validateConfig(lean.config).result.render(), validateConfig(full.config).result.render(), c);
      const props = lean.config.bundles.flatMap((b) => b.properties);
      if (props.some((p) => p.type === 'olm.bundle.object')) withObjects++;
      if (props.some((p) => p.type === 'olm.csv.metadata')) withMetadata++;
      // What is held of them is a verdict: no value JSON can show.
      for (const p of props.filter((x) => x.type === 'olm.bundle.object' || x.type === 'olm.csv.metadata')) assert.equal(JSON.stringify(p.value ?? null), '{}', c);
    }
    assert.ok(withObjects >= 3 && withMetadata >= 1, `parity cases with bundle objects (${withObjects}) and CSV metadata (${withMetadata}) were read`);
  });
});

it('does not scan again an icon the decoder found valid, and scans one made elsewhere', () => {
  const { decoded } = decodeDocument({ schema: 'olm.package', name: 'p', defaultChannel: 'stable', icon: { base64data: 'aWNvbg==', mediatype: 'image/png' } });
  assert.ok(decoded?.kind === 'package');
  assert.ok(decoded.value.icon !== undefined && iconDataChecked(decoded.value.icon));
  const pkg = decoded.value;
  const channel: Channel = { schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1' }] };
  const bundle: Bundle = { schema: 'olm.bundle', package: 'p', name: 'p.v1', image: 'example.com/p:v1', properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }] };
  const clean = validateConfig({ packages: [pkg], channels: [channel], bundles: [bundle], deprecations: [], others: [] }).result;
  assert.equal(clean.all().filter((p) => p.field === 'icon.base64data').length, 0);
  // The same package with icon data not from the decoder (a package rendered from bundles): checked here.
  const made = { ...pkg, icon: { base64data: 'not base64!', mediatype: 'image/png' } };
  const bad = validateConfig({ packages: [made], channels: [channel], bundles: [bundle], deprecations: [], others: [] }).result;
  assert.match(bad.render(), /icon base64data: illegal base64 data at input byte 3/);
});

it('recordForValidation holds a checked icon as a stand-in; an empty one, one the decoder did not check and a bundle-less record stay as they are', () => {
  const pkg = (icon: unknown) => decodeDocument({ schema: 'olm.package', name: 'p', ...(icon === undefined ? {} : { icon }) }).decoded;
  const valid = pkg({ base64data: 'aWNv\nbg==', mediatype: 'image/svg+xml' });
  assert.equal(valid?.kind, 'package');
  const held = valid === undefined ? undefined : recordForValidation(valid);
  assert.deepEqual(held?.kind === 'package' ? held.value.icon : undefined, { base64data: 'AA==', mediatype: 'image/svg+xml' }, 'the data dropped, the media type kept');
  assert.equal(valid?.kind === 'package' ? valid.value.icon?.base64data : undefined, 'aWNvbg==', 'the record itself is not changed');
  const bad = pkg({ base64data: 'aWNvbg==aWNvbg==', mediatype: 'image/png' });
  assert.equal(bad === undefined ? undefined : recordForValidation(bad), bad, 'data the decoder found bad stays, for validation to report');
  const empty = pkg({ base64data: '', mediatype: 'image/png' });
  assert.equal(empty === undefined ? undefined : recordForValidation(empty), empty, 'an empty icon: validation warns of it');
  const none = pkg(undefined);
  assert.equal(none === undefined ? undefined : recordForValidation(none), none);
  // An icon no decoder checked (a record made in code): validation checks its data itself.
  const made = { kind: 'package' as const, value: { schema: 'olm.package' as const, name: 'p', icon: { base64data: 'not base64!', mediatype: 'image/png' } } };
  assert.equal(recordForValidation(made), made);
  const channel = decodeDocument({ schema: 'olm.channel', package: 'p', name: 'stable', entries: [] }).decoded;
  assert.equal(channel === undefined ? undefined : recordForValidation(channel), channel);
});

it('recordForValidation holds only the related images validation reports, at their indices, and no package description', () => {
  const decode = (doc: Record<string, unknown>) => {
    const { decoded } = decodeDocument(doc);
    assert.ok(decoded !== undefined);
    return decoded;
  };
  const pkg = decode({ schema: 'olm.package', name: 'p', defaultChannel: 'stable', description: 'a long read' });
  const channel = decode({ schema: 'olm.channel', package: 'p', name: 'stable', entries: [{ name: 'p.v1' }] });
  const relatedImages = [
    { name: 'operator', image: 'quay.io/p/operator@sha256:' + 'a'.repeat(64) },
    { name: 'proxy', image: 'quay.io/p/proxy:v1' },
    { name: 'none', image: '' },
    { name: 'bad', image: 'quay.io/p/Bad:v1' },
  ];
  const bundle = (images: unknown) => decode({ schema: 'olm.bundle', package: 'p', name: 'p.v1', image: 'quay.io/p/bundle:v1', properties: [{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }], relatedImages: images });
  const configOf = (records: ReturnType<typeof decode>[]) => {
    const cfg = emptyDeclarativeConfig();
    const add = configSink(cfg);
    for (const r of records) add(r, 'catalog.json', undefined);
    return cfg;
  };

  const mixed = bundle(relatedImages);
  const held = recordForValidation(mixed);
  assert.ok(held.kind === 'bundle');
  const kept = held.value.relatedImages ?? [];
  assert.deepEqual(Object.keys(kept), ['2', '3'], 'only the empty and the invalid one, at their indices');
  assert.equal(kept.length, 4);
  assert.deepEqual([kept[2], kept[3]], [relatedImages[2], relatedImages[3]]);
  assert.equal(mixed.kind === 'bundle' ? mixed.value.relatedImages?.length : undefined, 4, 'the record itself is not changed');
  const full = validateConfig(configOf([pkg, channel, mixed])).result.render();
  assert.match(full, /warning \[bundle\.related-image\] relatedImages\[2\]\.image: related image "none" has no image/);
  assert.match(full, /error \[bundle\.related-image\] relatedImages\[3\]\.image: invalid image pull spec "quay\.io\/p\/Bad:v1"/);
  assert.equal(validateConfig(configOf([recordForValidation(pkg), channel, held])).result.render(), full);

  const clean = recordForValidation(bundle(relatedImages.slice(0, 2)));
  assert.ok(clean.kind === 'bundle');
  assert.equal(clean.value.relatedImages, undefined, 'none to report: none held');

  const lean = recordForValidation(pkg);
  assert.ok(lean.kind === 'package' && pkg.kind === 'package');
  assert.equal(lean.value.description, undefined);
  assert.equal(pkg.value.description, 'a long read', 'the record itself is not changed');
  assert.equal(lean.value.defaultChannel, 'stable');
});
