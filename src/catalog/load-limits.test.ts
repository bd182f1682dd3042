/**
 * What the FBC loader reads, and how much: a catalog's path may come from an untrusted image, so
 * only regular files are read (a device never ends, a FIFO's open waits for a writer), a file
 * gives at most the per-file limit whatever its size says, and a catalog's files together at most
 * the per-catalog limit (it is held whole in memory).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { open, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { withoutEndlessRead } from '../util/endless-read.test-helper.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';
import { DEFAULT_MAX_CATALOG_BYTES, loadFbcDir } from './load.js';

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
