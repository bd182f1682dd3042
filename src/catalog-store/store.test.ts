import assert from 'node:assert/strict';
import { mkdtemp, readFile, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { byteRanges, filterMetas, readRanges, sendBuffers, sendRanges, storeCatalog } from './store.js';
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

/** A sink that holds every write's callback until `flush`, copying each chunk only then. */
class HeldSink extends Writable {
  readonly copies: Buffer[] = [];
  private readonly held: { chunk: Buffer; cb: () => void }[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.held.push({ chunk, cb });
  }
  flush(): void {
    for (const { chunk, cb } of this.held.splice(0)) {
      this.copies.push(Buffer.from(chunk));
      cb();
    }
  }
}

test('send buffers are reused between answers, but never one whose write has not called back', async () => {
  const store = await storeCatalog(manyPackages(300), await mkdtemp(path.join(tmpdir(), 'store-')));
  const file = await readFile(store.file);
  // A chunk size no other test uses, and answers of exactly one chunk.
  const size = 8192;
  const first = [{ start: 0, end: size }];
  const second = [{ start: size, end: 2 * size }];
  const quick = (into: Buffer[]): Writable =>
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        into.push(Buffer.from(chunk));
        cb();
      },
    });
  assert.equal(sendBuffers.kept(size), 0);
  // An answer whose write is held: sendRanges returns with the write still pending.
  const held = new HeldSink();
  await sendRanges(store, first, held, { chunk: size });
  assert.equal(sendBuffers.kept(size), 0, 'a buffer whose write is pending is not back in the pool');
  // Another answer of the same chunk size, written at once: it must not take the held buffer.
  const chunks: Buffer[] = [];
  await sendRanges(store, second, quick(chunks), { chunk: size });
  assert.ok(Buffer.concat(chunks).equals(file.subarray(size, 2 * size)));
  assert.equal(sendBuffers.kept(size), 1, 'its buffer is kept: its write called back');
  held.flush();
  assert.ok(Buffer.concat(held.copies).equals(file.subarray(0, size)), 'the held answer kept its own bytes');
  assert.equal(sendBuffers.kept(size), 2, 'the held buffer came back once its write called back');
  // The next answers take kept buffers instead of allocating: the pool does not grow.
  for (let k = 0; k < 3; k++) {
    const again: Buffer[] = [];
    await sendRanges(store, first, quick(again), { chunk: size });
    assert.ok(Buffer.concat(again).equals(file.subarray(0, size)));
  }
  assert.equal(sendBuffers.kept(size), 2);
  // An answer smaller than its chunk takes a kept chunk when there is one and gives it back.
  const small: Buffer[] = [];
  await sendRanges(store, [{ start: 0, end: 100 }], quick(small), { chunk: size });
  assert.ok(Buffer.concat(small).equals(file.subarray(0, 100)));
  assert.equal(sendBuffers.kept(size), 2);
});
