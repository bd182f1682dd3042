import assert from 'node:assert/strict';
import { mkdtemp, readFile, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { byteRanges, filterMetas, readRanges, sendRanges, storeCatalog } from './store.js';
import { manyPackages, openHandles } from './many-packages.test-helper.js';

async function collect(gen: AsyncGenerator<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of gen) chunks.push(c);
  return Buffer.concat(chunks);
}

test('a query of many scattered records streams exactly their lines, in order, from one file handle', async () => {
  const store = await storeCatalog(manyPackages(300), await mkdtemp(path.join(tmpdir(), 'store-')));
  const file = await readFile(store.file);
  for (const filter of [{ schema: 'olm.package' }, { package: 'pkg-0042' }, { schema: 'olm.bundle' }, {}]) {
    const metas = filterMetas(store, filter);
    assert.ok(metas.length > 0);
    const want = Buffer.concat(metas.map((m) => file.subarray(m.start, m.start + m.length)));
    const got = await collect(readRanges(store, byteRanges(metas)));
    assert.ok(got.equals(want), `${JSON.stringify(filter)}: ${got.length} bytes, want ${want.length}`);
  }
  const pkgs = filterMetas(store, { schema: 'olm.package' });
  assert.equal(byteRanges(pkgs).length, 300, 'the olm.package records are not adjacent: one range each');
});

test('a store file cut short under its index is a named error, not a short answer', async () => {
  const store = await storeCatalog(manyPackages(3), await mkdtemp(path.join(tmpdir(), 'store-')));
  await truncate(store.file, store.size - 1000);
  await assert.rejects(collect(readRanges(store, byteRanges(filterMetas(store, {})))), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CATALOG_STORE_CORRUPT');
    assert.match(err.message, /ends at byte/);
    return true;
  });
});

/** A sink that keeps each chunk until it calls back a turn later, and only then copies it: a buffer reused before its write was sent shows up as wrong bytes. */
class SlowSink extends Writable {
  readonly copies: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    setImmediate(() => {
      this.copies.push(Buffer.from(chunk));
      cb();
    });
  }
}

test('an answer is written in reused buffers, each refilled only after its write was sent, and the sink ended', async () => {
  const store = await storeCatalog(manyPackages(300), await mkdtemp(path.join(tmpdir(), 'store-')));
  const file = await readFile(store.file);
  for (const filter of [{ schema: 'olm.package' }, { package: 'pkg-0042' }, {}, { name: 'none' }]) {
    const metas = filterMetas(store, filter);
    const want = Buffer.concat(metas.map((m) => file.subarray(m.start, m.start + m.length)));
    const sink = new SlowSink();
    const finished = new Promise((resolve) => sink.once('finish', resolve));
    await sendRanges(store, byteRanges(metas), sink);
    await finished;
    const got = Buffer.concat(sink.copies);
    assert.ok(got.equals(want), `${JSON.stringify(filter)}: ${got.length} bytes, want ${want.length}`);
  }
  assert.ok(store.size > 3 * 1024 * 1024, 'the whole catalog spans several chunks, so both buffers are reused');
});

test('an answer whose client went away stops, ends nothing and closes the file', async () => {
  const store = await storeCatalog(manyPackages(300), await mkdtemp(path.join(tmpdir(), 'store-')));
  // A sink that never calls back, destroyed after its first chunk: without close releasing the write, this would hang.
  let writes = 0;
  const sink = new Writable({
    write(_chunk, _enc, _cb) {
      writes++;
      setImmediate(() => sink.destroy());
    },
  });
  let ended = false;
  sink.on('finish', () => (ended = true));
  await sendRanges(store, byteRanges(filterMetas(store, {})), sink);
  assert.ok(writes >= 1 && writes <= 2, `${writes} writes: it stopped at the close`);
  assert.equal(ended, false);
  assert.deepEqual(await openHandles(store.file), [], 'the store file is closed');
});

test('a store file cut short under its index fails the answer with the named error', async () => {
  const store = await storeCatalog(manyPackages(3), await mkdtemp(path.join(tmpdir(), 'store-')));
  await truncate(store.file, store.size - 1000);
  await assert.rejects(sendRanges(store, byteRanges(filterMetas(store, {})), new SlowSink()), (err: Error & { code?: string }) => err.code === 'CATALOG_STORE_CORRUPT');
});

test('small chunks give the same bytes; the event loop gets a turn before every chunk, even when each write calls back at once', async () => {
  const store = await storeCatalog(manyPackages(300), await mkdtemp(path.join(tmpdir(), 'store-')));
  const file = await readFile(store.file);
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(Buffer.from(chunk));
      cb(); // as a socket the kernel takes the data from at once
    },
  });
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  await sendRanges(store, byteRanges(filterMetas(store, {})), sink, { chunk: 64 * 1024 });
  counting = false;
  assert.ok(Buffer.concat(chunks).equals(file));
  assert.ok(chunks.length > 100, `${chunks.length} chunks`);
  assert.ok(turns >= chunks.length - 1, `${turns} turns of the event loop for ${chunks.length} chunks`);
});
