import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InputError } from '../util/errors.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { testImages } from './golden.test-helper.js';
import { parseSemverTemplate, expandSemverTemplate } from './template-semver.js';
import { addBundleImage, nextBundle } from './template-semver-next.js';

const MAJOR = 'schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: false\n';
const image = (v: string): string => `example.com/foo-bundle:v${v}`;
const template = (head: string, stable: string[], extra = ''): string => `${head}${extra}stable:\n  bundles:\n${stable.map((v) => `    - image: ${image(v)}\n`).join('')}`;

async function rendered(text: string): Promise<DeclarativeConfig> {
  return expandSemverTemplate(text, 'catalog.yaml', testImages);
}

async function next(text: string, version: string, packageName = 'foo'): Promise<ReturnType<typeof nextBundle>> {
  return nextBundle({ template: parseSemverTemplate(text, 'catalog.yaml'), catalog: await rendered(text), archetype: 'stable', packageName, version, file: 'catalog.yaml' });
}

function refused(code: string, field: string, message: RegExp): (e: unknown) => boolean {
  return (e: unknown) => e instanceof InputError && e.code === code && e.file === 'catalog.yaml' && e.field === field && message.test(e.message);
}

describe('nextBundle: replaces and skipRange from what the catalog has', () => {
  it('replaces the newest bundle of its major and skips every earlier one of that major', async () => {
    const n = await next(template(MAJOR, ['0.1.0', '0.1.1', '0.2.0']), '0.3.0');
    assert.equal(n.name, 'foo.v0.3.0');
    assert.equal(n.channel, 'stable-v0');
    assert.deepEqual(n.head, { name: 'foo.v0.2.0', version: '0.2.0' });
    assert.equal(n.replaces, 'foo.v0.2.0');
    assert.equal(n.skipRange, '>=0.1.0 <0.3.0');
  });

  it('a patch release replaces the newest of the major too, whatever order the template lists', async () => {
    const n = await next(template(MAJOR, ['1.1.0', '1.0.0']), '1.1.1');
    assert.equal(n.replaces, 'foo.v1.1.0');
    assert.equal(n.skipRange, '>=1.0.0 <1.1.1');
  });

  it('a new major replaces nothing: the semver template does not link majors', async () => {
    const n = await next(template(MAJOR, ['0.2.0', '1.0.0', '1.1.0']), '2.0.0');
    assert.equal(n.replaces, undefined);
    assert.equal(n.skipRange, undefined);
    assert.equal(n.channel, 'stable-v2');
    assert.match(n.reason, /first stable bundle of major version 2/);
  });

  it('the first release into an empty catalog replaces nothing; minor channels name the minor', () => {
    const t = parseSemverTemplate('schema: olm.semver\nstable:\n  bundles: []\n', 'catalog.yaml');
    const n = nextBundle({ template: t, catalog: emptyDeclarativeConfig(), archetype: 'stable', packageName: 'foo', version: '1.2.0', file: 'catalog.yaml' });
    assert.deepEqual([n.name, n.channel, n.replaces, n.skipRange, n.head], ['foo.v1.2.0', 'stable-v1.2', undefined, undefined, undefined]);
  });

  it('looks only at its archetype: a candidate bundle does not become the stable head', async () => {
    const text = template(MAJOR, ['0.1.0'], `candidate:\n  bundles:\n    - image: ${image('0.2.0')}\n`);
    const n = await next(text, '0.1.1');
    assert.equal(n.replaces, 'foo.v0.1.0');
  });

  it('refuses a version not newer than the head, one the catalog has, a non-semver version and another package', async () => {
    const text = template(MAJOR, ['0.1.0', '0.2.0']);
    await assert.rejects(next(text, '0.1.1'), refused('RELEASE_NOT_NEWER', 'stable.bundles', /0\.1\.1 is not newer than the catalog's head of stable, foo\.v0\.2\.0 \(0\.2\.0\)/));
    await assert.rejects(next(text, '0.2.0'), refused('RELEASE_VERSION_EXISTS', 'version', /version 0\.2\.0 is in the catalog already \(bundle foo\.v0\.2\.0\)/));
    await assert.rejects(next(text, 'v1'), refused('RELEASE_VERSION', 'version', /not a semantic version/));
    await assert.rejects(next(text, '0.3.0', 'bar'), refused('RELEASE_PACKAGE', 'stable.bundles', /holds package foo, not bar/));
  });
});

describe('addBundleImage: the template edit', () => {
  it('appends to the archetype, keeping comments, other archetypes and order', () => {
    const text = `# the catalog of foo\n${MAJOR}candidate:\n  bundles:\n    - image: ${image('0.1.0')} # first\nstable:\n  bundles:\n    - image: ${image('0.1.0')}\n`;
    const out = addBundleImage(text, 'catalog.yaml', 'stable', image('0.1.1'));
    assert.equal(out, `# the catalog of foo\n${MAJOR}candidate:\n  bundles:\n    - image: ${image('0.1.0')} # first\nstable:\n  bundles:\n    - image: ${image('0.1.0')}\n    - image: ${image('0.1.1')}\n`);
  });

  it('creates the archetype or its bundle list when absent, as a block list', () => {
    assert.equal(addBundleImage(MAJOR, 'catalog.yaml', 'stable', image('0.1.0')), `${MAJOR}stable:\n  bundles:\n    - image: ${image('0.1.0')}\n`);
    assert.equal(addBundleImage(`${MAJOR}stable:\n  bundles: []\n`, 'catalog.yaml', 'stable', image('0.1.0')), `${MAJOR}stable:\n  bundles:\n    - image: ${image('0.1.0')}\n`);
  });

  it('refuses an image the template lists already, and a template that is not olm.semver', () => {
    assert.throws(() => addBundleImage(template(MAJOR, ['0.1.0']), 'catalog.yaml', 'stable', image('0.1.0')), refused('RELEASE_IMAGE_EXISTS', 'stable.bundles', /lists example\.com\/foo-bundle:v0\.1\.0 already/));
    assert.throws(() => addBundleImage('schema: olm.template.basic\n', 'catalog.yaml', 'stable', image('0.1.0')), (e: unknown) => e instanceof InputError && e.field === 'schema');
  });

  it('the rendered catalog links the new bundle as nextBundle said', async () => {
    const before = template(MAJOR, ['1.0.0']);
    const n = await next(before, '1.1.0');
    const cfg = await rendered(addBundleImage(before, 'catalog.yaml', 'stable', image('1.1.0')));
    const entry = cfg.channels.find((c) => c.name === n.channel)?.entries.find((e) => e.name === n.name);
    assert.equal(entry?.replaces, n.replaces);
    assert.equal(cfg.packages[0]?.defaultChannel, 'stable-v1');
  });
});
