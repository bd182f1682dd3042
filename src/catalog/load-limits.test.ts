/**
 * What the FBC loader reads, and how much: a catalog's path may come from an untrusted image, so
 * only regular files are read (a device never ends, a FIFO's open waits for a writer), a file
 * gives at most the per-file limit whatever its size says, and a catalog's files together at most
 * the per-catalog limit (it is held whole in memory), and those bytes parse into at most one value
 * per BYTES_PER_ITEM bytes of that limit, with at most MAX_LOAD_PROBLEMS problems.
 */
// test process: its own (it reads the process's peak memory, and its endless-read guard stops the process)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { open, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { withoutEndlessRead } from '../util/endless-read.test-helper.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';
import { treeShape } from '../util/nesting.js';
import { DEFAULT_MAX_CATALOG_BYTES, loadFbcDir } from './load.js';
import { BYTES_PER_ITEM, itemLimitFor, jsonItems, MAX_LOAD_PROBLEMS, yamlItemsAtMost } from './parse-budget.js';

/** A JSON record of `bytes` bytes (with its newline): an unknown schema, named `name`. */
function record(name: string, bytes: number): string {
  const head = JSON.stringify({ schema: 'example.com.filler', name, pad: '' });
  return `${head.slice(0, -2)}${'x'.repeat(bytes - head.length - 1)}"}\n`;
}

describe('load: only regular files', () => {
  it('refuses a device as the catalog (/dev/zero, whose size says 0) without reading it', async () => {
    const { result } = await withoutEndlessRead('loading /dev/zero as a catalog', () => loadFbcDir('/dev/zero'));
    assert.deepEqual(
      result.errors().map((p) => [p.rule, p.file, p.message]),
      [['fbc.not-regular-file', '/dev/zero', 'is a device, not a regular file: only regular files are read as catalog files']],
    );
  });

  it('refuses a FIFO as the catalog without opening it (its open would wait for a writer)', async () => {
    await withTempDir('fbc-fifo-', async (dir) => {
      const fifo = path.join(dir, 'catalog.json');
      execFileSync('mkfifo', [fifo]);
      // A loader that opens it waits in a thread the process cannot end (exit joins it): a writer
      // comes by and leaves, so that open returns, reads nothing and the test fails instead of hanging.
      const writer = setInterval(() => {
        open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).then(
          (fh) => fh.close(),
          () => undefined, // ENXIO: nobody has it open to read
        );
      }, 200);
      const loaded = await loadFbcDir(fifo).finally(() => clearInterval(writer));
      const { result } = loaded;
      assert.deepEqual(
        result.errors().map((p) => [p.rule, p.file]),
        [['fbc.not-regular-file', fifo]],
      );
      assert.match(result.render(), /is a FIFO, not a regular file/);
    });
  });

  it('bounds the bytes read, not the size a file says (a /proc file says 0)', async () => {
    const file = '/proc/self/status';
    const { result } = await loadFbcDir(file, { maxFileBytes: 256 });
    assert.deepEqual(
      result.errors().map((p) => [p.rule, p.file, p.message]),
      [['fbc.file-too-large', file, 'more than 256 bytes were read from the file (its size said 0), over the limit for one catalog file']],
    );
  });
});

describe('load: a bound on a catalog, all its files together', () => {
  it('loads up to the bound; past it the catalog is refused, naming the bound, and no later file is read', async () => {
    await withTempDir('fbc-total-', async (dir) => {
      for (const name of ['a', 'b', 'c', 'd']) await writeFile(path.join(dir, `${name}.json`), record(name, 1000));
      const under = await loadFbcDir(dir, { maxCatalogBytes: 4000 });
      assert.ok(under.result.ok, under.result.render());
      assert.deepEqual(under.config.others.map((o) => o.name), ['a', 'b', 'c', 'd']);
      const over = await loadFbcDir(dir, { maxCatalogBytes: 2500 });
      assert.deepEqual(
        over.result.errors().map((p) => [p.rule, p.file]),
        [['fbc.catalog-too-large', path.join(dir, 'c.json')]],
      );
      assert.match(over.result.render(), /the catalog's files hold more than 2500 bytes together, over the limit for one catalog .*: split the catalog into smaller catalogs/);
      assert.deepEqual(over.config.others.map((o) => o.name), ['a', 'b'], 'c and d not loaded');
    });
  });

  it('a larger per-file bound raises it (one file that large is a catalog that large: --max-file-size keeps working)', async () => {
    await withTempDir('fbc-total-', async (dir) => {
      await writeFile(path.join(dir, 'a.json'), record('a', 3000));
      const raised = await loadFbcDir(dir, { maxCatalogBytes: 1000, maxFileBytes: 4000 });
      assert.ok(raised.result.ok, raised.result.render());
      assert.deepEqual(raised.config.others.map((o) => o.name), ['a']);
    });
  });

  it('counts the bytes read, not the sizes files say', async () => {
    const { result } = await loadFbcDir('/proc/self/status', { maxCatalogBytes: 256 });
    assert.deepEqual(
      result.errors().map((p) => p.rule),
      ['fbc.catalog-too-large'],
    );
  });

  it(`applies a default bound (${DEFAULT_MAX_CATALOG_BYTES} bytes) when given none, before reading the file that crosses it (each file within its own bound, raised to it)`, async () => {
    await withTempDir('fbc-total-', async (dir) => {
      await writeFile(path.join(dir, 'a.json'), record('a', 1000));
      // Sparse: nothing is written; a loader that read it would read 512 MiB of NUL bytes.
      await writeFile(path.join(dir, 'b.json'), '');
      await truncate(path.join(dir, 'b.json'), DEFAULT_MAX_CATALOG_BYTES);
      const { result, config } = await withoutEndlessRead('loading a catalog over the default bound', () => loadFbcDir(dir, { maxFileBytes: DEFAULT_MAX_CATALOG_BYTES }));
      assert.deepEqual(
        result.errors().map((p) => [p.rule, p.file]),
        [['fbc.catalog-too-large', path.join(dir, 'b.json')]],
      );
      assert.deepEqual(config.others.map((o) => o.name), ['a']);
    });
  });
});

/**
 * A bundle as real catalogs have them (the operatorhub-2021 corpus rendered: a CSV's metadata with
 * its description, GVKs, related images), pretty-printed as opm writes it: one item per 45 bytes
 * (a shorter description than most: the corpus's bundles hold one per 66).
 */
function realisticBundle(i: number): string {
  const pkg = `operator-${i % 97}`;
  const version = `1.${i}.0`;
  const bundle = {
    schema: 'olm.bundle',
    name: `${pkg}.v${version}`,
    package: pkg,
    image: `quay.io/example/${pkg}-bundle@sha256:${'0123456789abcdef'.repeat(4)}`,
    properties: [
      { type: 'olm.gvk', value: { group: 'example.com', kind: 'Widget', version: 'v1' } },
      { type: 'olm.gvk', value: { group: 'example.com', kind: 'Gadget', version: 'v1alpha1' } },
      { type: 'olm.package', value: { packageName: pkg, version } },
      {
        type: 'olm.csv.metadata',
        value: {
          annotations: { capabilities: 'Basic Install', categories: 'Database', containerImage: `quay.io/example/${pkg}:v${version}`, createdAt: '2021-06-01T00:00:00Z', support: 'Example' },
          description: `## About\n${pkg} manages widgets and gadgets on Kubernetes, with backups, upgrades and monitoring. `.repeat(12),
          displayName: `Example ${pkg}`,
          installModes: ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'].map((type) => ({ type, supported: type !== 'MultiNamespace' })),
          keywords: ['widgets', 'gadgets'],
          links: [{ name: 'Documentation', url: `https://example.com/${pkg}` }],
          maintainers: [{ email: 'team@example.com', name: 'Example team' }],
          maturity: 'stable',
          provider: { name: 'Example' },
        },
      },
    ],
    relatedImages: [{ name: '', image: `quay.io/example/${pkg}:v${version}` }],
  };
  return `${JSON.stringify(bundle, null, 4)}\n`;
}

/** JSON text of about `bytes` bytes: `unit(i)` for i = 0, 1, … */
function repeated(bytes: number, unit: (i: number) => string): string {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const u = unit(i);
    parts.push(u);
    n += u.length;
  }
  return parts.join('');
}

/** One record holding `n` empty objects (3 bytes each): 21 bytes of heap a byte once parsed. */
const emptyObjects = (n: number): string => `{"schema":"example.com.x","name":"a","v":[${'{},'.repeat(n)}{}]}\n`;

/** What `fn` grew the process's peak RSS and its heap by (the heap held after it, collected). */
async function growth<T>(fn: () => Promise<T>): Promise<{ value: T; peakMiB: number; heapMiB: number }> {
  const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
  gc();
  const peak = process.resourceUsage().maxRSS * 1024;
  const heap = process.memoryUsage().heapUsed;
  const value = await fn();
  gc();
  return { value, peakMiB: (process.resourceUsage().maxRSS * 1024 - peak) / 2 ** 20, heapMiB: (process.memoryUsage().heapUsed - heap) / 2 ** 20 };
}

describe('load: a bound on what a catalog parses into, not only its bytes', () => {
  // First in the file's heavy tests, so the peak RSS it reads is not an earlier test's.
  it('refuses 20 MB of empty objects (8.4 M values: 427 MiB of heap and 1 GiB peak RSS when parsed) under the default bounds, before parsing, naming the file', async () => {
    await withTempDir('fbc-values-', async (dir) => {
      const file = path.join(dir, 'catalog.json');
      await writeFile(file, emptyObjects(7_000_000));
      const { value: loaded, peakMiB, heapMiB } = await growth(() => loadFbcDir(dir));
      assert.deepEqual(
        loaded.result.errors().map((p) => [p.rule, p.file]),
        [['fbc.too-many-values', `${file}:1`]],
      );
      assert.match(loaded.result.render(), new RegExp(`more than ${itemLimitFor(DEFAULT_MAX_CATALOG_BYTES)} values .*one per ${BYTES_PER_ITEM} bytes of its ${DEFAULT_MAX_CATALOG_BYTES}-byte bound`));
      assert.ok(peakMiB < 96, `peak RSS grew by ${peakMiB.toFixed(0)} MiB`);
      assert.ok(heapMiB < 16, `heap grew by ${heapMiB.toFixed(0)} MiB`);
    });
  });

  it('refuses 20 MB of documents `{}` (each a problem: 3.5 GiB of heap) past the bound on problems', async () => {
    await withTempDir('fbc-values-', async (dir) => {
      const file = path.join(dir, 'catalog.json');
      await writeFile(file, '{}\n'.repeat(7_000_000));
      const { value: loaded, peakMiB } = await growth(() => loadFbcDir(dir));
      const errors = loaded.result.errors();
      // The problems of the first MAX_LOAD_PROBLEMS + 1 documents, then the refusal naming where it stopped.
      assert.equal(errors.length, MAX_LOAD_PROBLEMS + 2);
      assert.deepEqual(
        errors.filter((p) => p.rule !== 'fbc.field').map((p) => [p.rule, p.file]),
        [['fbc.too-many-problems', `${file}:${MAX_LOAD_PROBLEMS + 1}`]],
      );
      assert.ok(peakMiB < 96, `peak RSS grew by ${peakMiB.toFixed(0)} MiB`);
    });
  });

  it('counts a YAML text at least at its items, whatever it nests on one line', async () => {
    const { load } = await import('js-yaml');
    for (const text of ['- - - - - - - - x\n'.repeat(3), '[[[[[[1]]]]]]\n', '{a: {b: {c: [1, [2, [3]]]}}}\n', 'a:\n  - b: [1, {c: d}]\n    e: [f]\n', Array.from({ length: 10 }, (_, i) => `k${i}: v\n`).join(''), '- {}\n- []\n- [[], {}]\n']) {
      const items = treeShape(load(text), Infinity).items;
      assert.ok(yamlItemsAtMost(text) >= items, `${JSON.stringify(text)}: counted ${yamlItemsAtMost(text)}, holds ${items}`);
    }
  });

  it('counts a large YAML document before reading it (5 M items of a block sequence)', async () => {
    await withTempDir('fbc-values-', async (dir) => {
      const file = path.join(dir, 'catalog.yaml');
      await writeFile(file, `schema: example.com.x\nname: a\nv:\n${'- 1\n'.repeat(5_000_000)}`);
      const { value: loaded, peakMiB } = await growth(() => loadFbcDir(dir, { maxCatalogBytes: 256 * 1024 * 1024 }));
      assert.deepEqual(
        loaded.result.errors().map((p) => [p.rule, p.file]),
        [['fbc.too-many-values', `${file}:1`]],
      );
      assert.ok(peakMiB < 96, `peak RSS grew by ${peakMiB.toFixed(0)} MiB`);
    });
  });

  it('at one byte bound, loads a realistic catalog of a size that an adversarial one of the same size is refused at', async () => {
    const bound = 4 * 1024 * 1024;
    // Half the bound: these bundles are denser than the corpus's (one item per 45 bytes, not 83).
    const size = 2 * 1024 * 1024;
    await withTempDir('fbc-values-', async (dir) => {
      const real = repeated(size, realisticBundle);
      const ratio = real.length / jsonItems(Buffer.from(real));
      assert.ok(ratio > 32 && ratio < 83, `the realistic catalog holds one item per ${ratio.toFixed(1)} bytes`);
      await writeFile(path.join(dir, 'catalog.json'), real);
      const loaded = await loadFbcDir(dir, { maxCatalogBytes: bound });
      assert.ok(loaded.result.ok, loaded.result.render());
      assert.ok(loaded.config.bundles.length > 300, String(loaded.config.bundles.length));
    });
    for (const [shape, text] of [
      ['an array of empty objects', emptyObjects(size / 3)],
      ['tiny records', repeated(size, (i) => `{"schema":"example.com.x","name":"n${i}"}\n`)],
      ['arrays nested 250 deep', repeated(size, () => `{"schema":"example.com.x","name":"n","v":${'['.repeat(250)}${']'.repeat(250)}}\n`)],
      ['small numbers', `{"schema":"example.com.x","name":"a","v":[${'1,'.repeat(size / 2)}1]}\n`],
    ] as const) {
      await withTempDir('fbc-values-', async (dir) => {
        await writeFile(path.join(dir, 'catalog.json'), text);
        const loaded = await loadFbcDir(dir, { maxCatalogBytes: bound });
        assert.deepEqual(loaded.result.errors().map((p) => p.rule), ['fbc.too-many-values'], shape);
      });
    }
  });

  it("refuses YAML whose aliases write out to many times its size (the store writes and serves every copy): each alias costs what it expands to", async () => {
    await withTempDir('fbc-values-', async (dir) => {
      const file = path.join(dir, 'catalog.yaml');
      // 100 KB anchored once and named 100 times a document: 3 documents are 300 KB of text and 30 MB written out.
      const doc = (i: number): string => `schema: example.com.x\nname: n${i}\ns: &s ${'x'.repeat(100_000)}\nv:\n${'- *s\n'.repeat(100)}`;
      await writeFile(file, [0, 1, 2].map(doc).join('---\n'));
      const loaded = await loadFbcDir(dir, { maxCatalogBytes: 4 * 1024 * 1024 });
      assert.deepEqual(
        loaded.result.errors().map((p) => [p.rule, p.file]),
        [['fbc.too-many-values', `${file}:1`]],
      );
      // The same anchors named a few times load: aliases are YAML, not an attack.
      await writeFile(file, `schema: example.com.x\nname: a\ns: &s ${'x'.repeat(1000)}\nv: [*s, *s]\n`);
      const few = await loadFbcDir(dir, { maxCatalogBytes: 4 * 1024 * 1024 });
      assert.ok(few.result.ok, few.result.render());
    });
  });

  it('a larger per-file bound raises the bound on values in proportion (--max-file-size)', async () => {
    await withTempDir('fbc-values-', async (dir) => {
      await writeFile(path.join(dir, 'catalog.json'), emptyObjects(100_000));
      const small = await loadFbcDir(dir, { maxCatalogBytes: 1024 * 1024 });
      assert.deepEqual(small.result.errors().map((p) => p.rule), ['fbc.too-many-values']);
      const raised = await loadFbcDir(dir, { maxCatalogBytes: 1024 * 1024, maxFileBytes: 16 * 1024 * 1024 });
      assert.ok(raised.result.ok, raised.result.render());
    });
  });

  it('counts on bytes as it counts on values (the prescan and the walk agree)', () => {
    for (const text of ['{}', '[]', '{"a":1}', '{"a":[1,2,{"b":"x,{["}],"c":{}}', '[[],[[]],{"k":"\\"]"}]', realisticBundle(3)]) {
      assert.equal(jsonItems(Buffer.from(text)), treeShape(JSON.parse(text)).items, text);
    }
  });
});
