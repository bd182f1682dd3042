import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { InputError, ValidationError } from '../util/errors.js';
import type { Bundle } from '../declcfg/index.js';
import { assertGolden, TESTDATA, testImages } from './golden.test-helper.js';
import { expandBasicTemplate } from './template-basic.js';
import { expandSemverTemplate } from './template-semver.js';
import { validateConfig } from '../catalog/validate.js';
import { toFbcJson } from '../catalog/write.js';

async function text(name: string): Promise<string> {
  return readFile(path.join(TESTDATA, 'templates', name), 'utf8');
}

describe('olm.template.basic', () => {
  it('renders bundles from their images (golden, valid)', async () => {
    const cfg = await expandBasicTemplate(await text('basic.yaml'), 'basic.yaml', testImages);
    assert.deepEqual(cfg.bundles.map((b) => b.name).sort(), ['foo.v0.1.0', 'foo.v0.1.1']);
    assert.ok(validateConfig(cfg).result.ok, validateConfig(cfg).result.render());
    await assertGolden('template-basic.json', toFbcJson(cfg));
  });

  it('refuses a bundle entry with more than schema and image', async () => {
    const t = 'schema: olm.template.basic\nentries:\n  - {schema: olm.bundle, image: example.com/foo-bundle:v0.1.0, package: foo}\n';
    await assert.rejects(expandBasicTemplate(t, 't.yaml', testImages), (e: unknown) => e instanceof ValidationError && /unexpected fields present.*package/.test(e.message));
  });

  it('refuses a wrong schema, naming the file and field', async () => {
    await assert.rejects(expandBasicTemplate('schema: olm.semver\n', 't.yaml', testImages), (e: unknown) => e instanceof InputError && e.file === 't.yaml' && e.field === 'schema');
  });
});

describe('olm.semver', () => {
  it('generates major and minor channels with skips within and replaces across minors (golden)', async () => {
    const cfg = await expandSemverTemplate(await text('semver.yaml'), 'semver.yaml', testImages);
    const names = cfg.channels.map((c) => c.name);
    assert.deepEqual(names, ['candidate-v0', 'candidate-v0.1', 'candidate-v0.2', 'candidate-v1', 'candidate-v1.0', 'candidate-v1.1', 'fast-v0', 'fast-v0.1', 'fast-v0.2', 'fast-v1', 'fast-v1.0', 'stable-v0', 'stable-v0.2', 'stable-v1', 'stable-v1.0']);
    // Most stable archetype, newest version, minor preferred.
    assert.equal(cfg.packages[0]?.defaultChannel, 'stable-v1.0');
    const cv0 = cfg.channels.find((c) => c.name === 'candidate-v0');
    assert.deepEqual(cv0?.entries, [
      { name: 'foo.v0.1.0' },
      { name: 'foo.v0.1.1', skips: ['foo.v0.1.0'] },
      { name: 'foo.v0.2.0', replaces: 'foo.v0.1.1', skips: ['foo.v0.1.0'] },
    ]);
    assert.equal(cfg.packages[0]?.description, 'Foo operator 1.0.0.');
    assert.ok(validateConfig(cfg).result.ok, validateConfig(cfg).result.render());
    await assertGolden('template-semver.json', toFbcJson(cfg));
  });

  it('major-only template defaults to a major channel (golden)', async () => {
    const cfg = await expandSemverTemplate(await text('semver-major.yaml'), 'semver-major.yaml', testImages);
    assert.deepEqual(cfg.channels.map((c) => c.name), ['stable-v0', 'stable-v1']);
    assert.equal(cfg.packages[0]?.defaultChannel, 'stable-v1');
    assert.ok(validateConfig(cfg).result.ok, validateConfig(cfg).result.render());
    await assertGolden('template-semver-major.json', toFbcJson(cfg));
  });

  it('refuses a preference for channels it does not generate, and unknown fields', async () => {
    const bad = 'schema: olm.semver\ngenerateMinorChannels: true\ndefaultChannelTypePreference: major\nstable: {bundles: [{image: example.com/foo-bundle:v0.1.0}]}\n';
    await assert.rejects(expandSemverTemplate(bad, 's.yaml', testImages), (e: unknown) => e instanceof InputError && e.field === 'defaultChannelTypePreference');
    const unknown = 'schema: olm.semver\nstabel: {bundles: []}\n';
    await assert.rejects(expandSemverTemplate(unknown, 's.yaml', testImages), (e: unknown) => e instanceof InputError && e.field === 'stabel');
  });
});

describe('olm.semver, opm parity', () => {
  // operator-registry alpha/template/semver TestLinkChannels: "No edges between successive major channels".
  it('links major channels exactly as opm does', async () => {
    const versions = ['0.1.0', '0.1.1', '1.1.0', '1.2.1', '1.3.1', '2.1.0', '2.1.1', '2.3.1', '2.3.2'];
    const synthetic = (image: string): Promise<Bundle[]> =>
      Promise.resolve([{ schema: 'olm.bundle', name: image, package: 'a', image, properties: [{ type: 'olm.package', value: { packageName: 'a', version: image.slice(3) } }] }]);
    const t = `schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: false\nstable:\n  bundles:\n${versions.map((v) => `  - image: a-v${v}\n`).join('')}`;
    const cfg = await expandSemverTemplate(t, 't.yaml', synthetic);
    assert.deepEqual(
      cfg.channels.map((c) => [c.name, c.entries]),
      [
        ['stable-v0', [{ name: 'a-v0.1.0' }, { name: 'a-v0.1.1', skips: ['a-v0.1.0'] }]],
        ['stable-v1', [{ name: 'a-v1.1.0' }, { name: 'a-v1.2.1', replaces: 'a-v1.1.0' }, { name: 'a-v1.3.1', replaces: 'a-v1.2.1', skips: ['a-v1.1.0'] }]],
        [
          'stable-v2',
          [{ name: 'a-v2.1.0' }, { name: 'a-v2.1.1', skips: ['a-v2.1.0'] }, { name: 'a-v2.3.1' }, { name: 'a-v2.3.2', replaces: 'a-v2.1.1', skips: ['a-v2.1.0', 'a-v2.3.1'] }],
        ],
      ],
    );
    assert.equal(cfg.packages[0]?.defaultChannel, 'stable-v2');
  });
});
