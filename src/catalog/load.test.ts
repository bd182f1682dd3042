import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { ValidationError, ValidationResult } from '../util/errors.js';
import { CATALOG_TESTDATA } from './testdata.test-helper.js';
import { JsonDocumentSplitter, listCatalogFiles, loadFbcDir, loadFbcStream, loadText, parseJsonStream, readFbcDir, type SourceDocument } from './load.js';
import { emptyDeclarativeConfig } from '../declcfg/index.js';
import { IndexIgnore } from './indexignore.js';
import { toFbcJson, toFbcYaml } from './write.js';

describe('load', () => {
  it('reads concatenated JSON and multi-document YAML, honouring .indexignore', async () => {
    const files = await listCatalogFiles(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    assert.deepEqual(files.map((f) => path.relative(path.join(CATALOG_TESTDATA, 'fbc/valid'), f)), ['alpha-op/catalog.json', 'beta-op/catalog.yaml']);
    const { config, result } = await loadFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    assert.ok(result.ok, result.render());
    assert.equal(config.packages.length, 2);
    assert.equal(config.channels.length, 2);
    assert.equal(config.bundles.length, 5);
    assert.equal(config.deprecations.length, 1);
    assert.deepEqual(config.others.map((o) => [o.schema, o.package, o.name]), [['example.com.custom', 'alpha-op', 'extra']]);
  });

  it('writes deterministically, and JSON/YAML round-trip to the same catalog', async () => {
    const cfg = await readFbcDir(path.join(CATALOG_TESTDATA, 'fbc/valid'));
    const json = toFbcJson(cfg);
    const dir = await mkdtemp(path.join(tmpdir(), 'fbc-rt-'));
    await writeFile(path.join(dir, 'a.json'), json);
    await mkdir(path.join(dir, 'y'));
    await writeFile(path.join(dir, 'y', 'b.yaml'), toFbcYaml(cfg));
    const fromJson = await loadFbcStream(Readable.from([json]), 'stdin');
    assert.ok(fromJson.result.ok);
    assert.equal(toFbcJson(fromJson.config), json);
    const yamlOnly = await loadFbcDir(path.join(dir, 'y'));
    assert.equal(toFbcJson(yamlOnly.config), json);
    // opm order: package, then channels, then bundles by name; the first record is alpha-op's package.
    assert.match(json, /^\{\n {4}"schema": "olm.package",\n {4}"name": "alpha-op"/);
  });

  it('reports broken YAML with file and line, keeping the good documents', async () => {
    const { config, result } = await loadFbcDir(path.join(CATALOG_TESTDATA, 'bad/broken-yaml'));
    assert.equal(result.ok, false);
    const [p] = result.errors();
    assert.equal(p?.rule, 'fbc.parse');
    assert.match(p?.file ?? '', /broken-yaml\/catalog\.yaml:5$/);
    assert.match(p?.message ?? '', /document 1 is not valid YAML/);
    assert.equal(config.packages[0]?.name, 'good');
  });

  it('reads pretty-printed, compact and mixed JSON streams alike, with the line of each document', () => {
    const result = new ValidationResult('t');
    const pretty = '{\n    "schema": "a",\n    "x": {\n        "y": "}"\n    }\n}\n{\n    "schema": "b"\n}\n';
    const docs = parseJsonStream(`${pretty}{"schema":"c"}{"schema":"d"}\n{\n  "schema": "e",\n  "z": [1,\n2]\n}\n{"broken":\n}\n{"schema":"f"}`, 'f.json', result);
    assert.deepEqual(
      docs.map((d) => [(d.value as { schema: string }).schema, d.line, d.index]),
      [['a', 1, 0], ['b', 7, 1], ['c', 10, 2], ['d', 10, 3], ['e', 11, 4], ['f', 18, 6]],
    );
    assert.deepEqual(result.errors().map((e) => [e.file, e.message.split(':')[0]]), [['f.json:16', 'document 5 is not valid JSON']]);
  });

  it('reads a JSON file as bytes: characters beyond Latin-1 and a byte-order mark change no value, line or error', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fbc-utf8-'));
    try {
      const text =
        '\ufeff{\n    "schema": "olm.package",\n    "name": "zürich",\n    "description": "日本語 — “quoted” 🚢"\n}\n' +
        '{"schema":"olm.channel","package":"zürich","name":"stable","entries":[]}\n{"schema":"olm.channel",\n"name": "😀" broken}\n';
      await writeFile(path.join(dir, 'catalog.json'), text);
      const { config, result } = await loadFbcDir(dir);
      assert.equal(config.packages[0]?.name, 'zürich');
      assert.equal(config.packages[0]?.description, '日本語 — “quoted” 🚢');
      assert.equal(config.channels[0]?.package, 'zürich');
      assert.deepEqual(result.errors().map((e) => [e.file, e.message.split(':')[0]]), [[`${path.join(dir, 'catalog.json')}:7`, 'document 2 is not valid JSON']]);
      // The same text given as a string parses to the same documents.
      const fromText = parseJsonStream(text.slice(1), 'f.json', new ValidationResult('t'));
      assert.deepEqual(fromText.map((d) => d.line), [1, 6]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('splits JSON given in chunks of any size exactly as given whole: values, lines, errors, a character across two chunks', () => {
    const text = Buffer.from(
      '\ufeff{\n    "schema": "a",\n    "d": "日本語 🚢"\n}\n{"schema":"b"}{"schema":"c"}\n{\n  "schema": "é",\n  "z": [1,\n2]\n}\n{"broken":\n}\n"bare" {"schema":"f"}',
      'utf8',
    );
    const run = (size: number): [unknown[], string[]] => {
      const result = new ValidationResult('t');
      const docs: SourceDocument[] = [];
      const splitter = new JsonDocumentSplitter('f.json', result, (d) => docs.push(d));
      for (let i = 0; i < text.length; i += size) splitter.push(Buffer.from(text.subarray(i, i + size)));
      splitter.end();
      return [docs.map((d) => [d.value, d.line, d.index]), result.errors().map((e) => `${e.file} ${e.message.split(':')[0]}`)];
    };
    const whole = run(text.length);
    assert.deepEqual(whole[1], ['f.json:11 document 4 is not valid JSON']);
    assert.equal(whole[0].length, 6);
    for (const size of [1, 2, 3, 5, 7, 64]) assert.deepEqual(run(size), whole, `chunks of ${size} bytes`);
  });

  it('a large JSON file is loaded in chunks with the same catalog and errors as read whole; one not UTF-8 is refused whole', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fbc-big-'));
    try {
      // Over the streaming threshold (4 MiB) and several 1 MiB chunks, with multi-byte characters throughout.
      const docs = ['{\n    "schema": "olm.package",\n    "name": "big",\n    "defaultChannel": "stable"\n}'];
      for (let i = 0; i < 3000; i++) docs.push(JSON.stringify({ schema: 'example.custom', package: 'big', n: i, text: `ünïcødé ✓ ${'x'.repeat(i % 7)}${'é'.repeat(1000)}` }, null, 4));
      docs.splice(2500, 0, '{"schema": "example.custom",\n"broken"}');
      const text = `${docs.join('\n')}\n`;
      assert.ok(Buffer.byteLength(text) > 5 * 1024 * 1024);
      await writeFile(path.join(dir, 'catalog.json'), text);
      const streamed = await loadFbcDir(dir);
      const whole = { config: emptyDeclarativeConfig(), result: new ValidationResult(`catalog ${dir}`) };
      loadText(whole.config, text, path.join(dir, 'catalog.json'), whole.result);
      assert.equal(streamed.config.others.length, 3000);
      assert.deepEqual(streamed.config, whole.config);
      assert.deepEqual(streamed.result.errors().map((e) => [e.file, e.message]), whole.result.errors().map((e) => [e.file, e.message]));
      assert.equal(streamed.result.errors().length, 1);

      const bad = Buffer.from(text);
      bad[3 * 1024 * 1024 + 17] = 0xff;
      await writeFile(path.join(dir, 'catalog.json'), bad);
      const refused = await loadFbcDir(dir);
      assert.equal(refused.config.packages.length + refused.config.others.length, 0, 'nothing of it is taken');
      assert.match(refused.result.render(), /file is not UTF-8 text/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a document nested too deep to walk (pretty or compact), naming its line, and keeps the others', () => {
    const result = new ValidationResult('t');
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const text = `{\n    "schema": "a",\n    "x": ${deep}\n}\n{"schema":"b"}\n{"schema":"c","y":${deep}}\n{"schema":"d"}\n`;
    const docs = parseJsonStream(text, 'f.json', result);
    assert.deepEqual(docs.map((d) => (d.value as { schema: string }).schema), ['b', 'd']);
    assert.deepEqual(
      result.errors().map((e) => [e.file, e.message]),
      [['f.json:1', 'document 0 nests deeper than 256 levels'], ['f.json:6', 'document 2 nests deeper than 256 levels']],
    );
  });

  it('reports every wrong type with its record, document and field', async () => {
    const { result } = await loadFbcDir(path.join(CATALOG_TESTDATA, 'bad/wrong-types'));
    const text = result.render();
    assert.match(text, /olm\.channel "stable" of package "etcd" \(document 1\)\n.*catalog\.json:2: entries\[2\]\.name: expected a string, got a number/);
    assert.match(text, /olm\.package "etcd".*\n.*defaultChannel: expected a string, got a number/);
    assert.match(text, /properties: expected a list, got a string/);
    assert.match(text, /schema: object is missing root schema field/);
    assert.match(text, /catalog\.json:5: document 4 is not valid JSON/);
    assert.equal(result.errors().length, 5);
    await assert.rejects(readFbcDir(path.join(CATALOG_TESTDATA, 'bad/wrong-types')), (e: unknown) => e instanceof ValidationError && e.code === 'INVALID');
  });

  it('refuses an over-size file without reading it, and an over-size stream', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fbc-big-'));
    const big = path.join(dir, 'huge.json');
    await writeFile(big, '');
    await truncate(big, 1024 ** 3); // a sparse 1 GiB file: instant to make, would exhaust memory to read
    const { result } = await loadFbcDir(dir, { maxFileBytes: 64 * 1024 * 1024 });
    const [p] = result.errors();
    assert.equal(p?.rule, 'fbc.file-too-large');
    assert.equal(p?.file, big);
    assert.match(p?.message ?? '', /1073741824 bytes, over the 67108864-byte limit/);
    const stream = await loadFbcStream(Readable.from([Buffer.alloc(2048, 32)]), 'stdin', { maxFileBytes: 1024 });
    assert.equal(stream.result.errors()[0]?.rule, 'fbc.file-too-large');
  });

  it('applies .indexignore patterns like gitignore, each file under its own directory', () => {
    const ig = new IndexIgnore();
    ig.addRules('# c\n*.md\n/top-only\ndir/\n!keep.md\n');
    ig.addRules('local.json\n', 'sub');
    assert.equal(ig.ignores('a/b/readme.md', false), true);
    assert.equal(ig.ignores('keep.md', false), false);
    assert.equal(ig.ignores('top-only', false), true);
    assert.equal(ig.ignores('x/top-only', false), false);
    assert.equal(ig.ignores('x/dir', true), true);
    assert.equal(ig.ignores('x/dir', false), false);
    assert.equal(ig.ignores('catalog.yaml', false), false);
    assert.equal(ig.ignores('sub/local.json', false), true);
    assert.equal(ig.ignores('local.json', false), false);
  });
});
