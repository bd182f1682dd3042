import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { TESTDATA } from './golden.test-helper.js';
import { render } from './render.js';
import { allFbcSources, toFbc } from './render-fbc.js';
import { fbcChunks } from '../catalog/write.js';

const work = mkdtempSync(path.join(tmpdir(), 'render-fbc-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** What the model path writes for these sources: the output the streamed render must equal. */
async function modelOutput(sources: string[]): Promise<string> {
  const out = await render(sources);
  return [...fbcChunks(out.config, 'json')].join('');
}

async function streamed(sources: string[]): Promise<{ text: string; copied: number; records: number; failures: number }> {
  let text = '';
  const r = await toFbc(sources, {}, (t) => (text += t));
  return { text, copied: r.copied, records: r.records, failures: r.failures.length };
}

const BUNDLE_OBJECT = { type: 'olm.bundle.object', value: { data: Buffer.from('{"kind":"ConfigMap"}').toString('base64') } };

/** A catalog whose records come in no particular order and in every layout the loader reads (made once). */
function mixedCatalog(): string {
  const dir = path.join(work, 'mixed');
  if (existsSync(dir)) return dir;
  mkdirSync(dir);
  const pretty = (o: unknown): string => `${JSON.stringify(o, null, 4)}\n`;
  writeFileSync(
    path.join(dir, 'b-canonical.json'),
    // Already as render writes it: copied from the file.
    pretty({ schema: 'olm.package', name: 'zeta', defaultChannel: 'stable' }) +
      pretty({ schema: 'olm.channel', name: 'stable', package: 'zeta', entries: [{ name: 'zeta.v1.0.0' }] }) +
      pretty({ schema: 'olm.bundle', name: 'zeta.v1.0.0', package: 'zeta', image: 'example.com/zeta:v1', properties: [{ type: 'olm.package', value: { packageName: 'zeta', version: '1.0.0' } }] }),
  );
  writeFileSync(
    path.join(dir, 'a-compact.json'),
    // Compact JSON, a bundle object before another property and related images out of order: written anew.
    `${JSON.stringify({ schema: 'olm.bundle', name: 'alpha.v2.0.0', package: 'alpha', image: 'example.com/alpha:v2', properties: [BUNDLE_OBJECT, { type: 'olm.package', value: { packageName: 'alpha', version: '2.0.0' } }], relatedImages: [{ name: 'b', image: 'z.io/b' }, { name: 'a', image: 'a.io/a' }] })}\n` +
      `${JSON.stringify({ schema: 'olm.channel', name: 'stable', package: 'alpha', entries: [{ name: 'alpha.v2.0.0' }] })}\n`,
  );
  writeFileSync(
    path.join(dir, 'c.yaml'),
    ['schema: olm.package', 'name: alpha', 'defaultChannel: stable', '---', 'schema: example.com.note', 'package: alpha', 'text: hello', '---', 'schema: example.com.free', 'text: no package', '---', 'schema: olm.deprecations', 'package: zeta', 'entries:', '- reference: {schema: olm.package}', '  message: gone', ''].join('\n'),
  );
  return dir;
}

describe('toFbc', () => {
  it('writes what the model path writes, byte for byte, copying the records already in render form', async () => {
    const dir = mixedCatalog();
    const expected = await modelOutput([dir]);
    const got = await streamed([dir]);
    assert.equal(got.failures, 0);
    assert.equal(got.text, expected);
    assert.equal(got.records, 9);
    assert.equal(got.copied, 3, 'the three records of b-canonical.json are copied');
    // The order is opm's: package alpha before zeta, records of no package last.
    assert.ok(got.text.indexOf('"name": "alpha"') < got.text.indexOf('"name": "zeta"'));
    assert.ok(got.text.trimEnd().endsWith('}') && got.text.lastIndexOf('example.com.free') > got.text.lastIndexOf('olm.deprecations'));
  });

  it('matches the model path on the test catalogs, one or several sources', async () => {
    const valid = path.join(CATALOG_TESTDATA, 'fbc/valid');
    for (const sources of [[valid], [valid, mixedCatalog()]]) {
      const got = await streamed(sources);
      assert.equal(got.text, await modelOutput(sources));
    }
    // Its own output, rendered again, is copied whole.
    const again = path.join(work, 'again.json');
    writeFileSync(again, (await streamed([valid])).text);
    const second = await streamed([again]);
    assert.equal(second.text, await modelOutput([valid]));
    assert.equal(second.copied, second.records);
  });

  it('reports a source that does not load and renders the others', async () => {
    const bad = path.join(work, 'bad.json');
    writeFileSync(bad, '{"schema": "olm.package", "name": 7}\n');
    let text = '';
    const r = await toFbc([path.join(CATALOG_TESTDATA, 'fbc/valid'), bad], {}, (t) => (text += t));
    assert.equal(r.failures.length, 1);
    assert.equal(r.failures[0]?.source, bad);
    assert.match(r.failures[0]?.message ?? '', /bad\.json/);
    assert.equal(text, await modelOutput([path.join(CATALOG_TESTDATA, 'fbc/valid')]));
    const none = await toFbc([bad], {}, () => assert.fail('nothing is written when nothing rendered'));
    assert.equal(none.rendered, false);
  });

  /** A catalog of two pretty-printed files, a.json and b.json; `during` runs at the first write, between the passes. */
  async function renderChangingCatalog(name: string, during: (b: string) => void): Promise<unknown> {
    const dir = path.join(work, name);
    mkdirSync(dir);
    for (const n of ['a', 'b']) writeFileSync(path.join(dir, `${n}.json`), pretty({ schema: 'olm.package', name: n }));
    let writes = 0;
    return toFbc([dir], {}, () => {
      if (writes++ === 0) during(path.join(dir, 'b.json'));
    });
  }
  const pretty = (o: unknown): string => `${JSON.stringify(o, null, 4)}\n`;

  it('refuses a file that changed between reading and copying', async () => {
    await assert.rejects(
      renderChangingCatalog('changing', (b) => appendFileSync(b, pretty({ schema: 'olm.package', name: 'c' }))),
      (err: Error & { code?: string }) => err.code === 'RENDER_SOURCE_CHANGED' && err.message.includes('b.json'),
    );
  });

  it('refuses a file deleted between reading and copying, with the same reason', async () => {
    await assert.rejects(
      renderChangingCatalog('vanishing', (b) => rmSync(b)),
      (err: Error & { code?: string }) => err.code === 'RENDER_SOURCE_CHANGED' && err.message.includes('b.json') && /ENOENT/.test(err.message),
    );
  });

  it('is taken only for FBC sources on disk', async () => {
    assert.equal(await allFbcSources([path.join(CATALOG_TESTDATA, 'fbc/valid')]), true);
    assert.equal(await allFbcSources([path.join(CATALOG_TESTDATA, 'fbc/valid'), path.join(TESTDATA, 'bundles/foo-1.0.0')]), false);
    assert.equal(await allFbcSources(['-']), false);
    assert.equal(await allFbcSources([path.join(work, 'no-such-dir')]), false);
    assert.equal(await allFbcSources([]), false);
  });
});
