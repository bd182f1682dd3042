import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdir, readFile, readlink, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { TAR_END, filePadding, ustarHeader } from './tar-writer.js';
import { tarOf, type RawEntry } from './tar.test-helper.js';
import { BinnacleError } from '../util/errors.js';
import { UnsafeEntryError, unpackTarSafely } from './unpack.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';

const withDir = (fn: (dir: string) => Promise<void>): Promise<void> => withTempDir('oci-unpack-', fn);

async function expectUnsafe(entries: RawEntry[], code: string, entry: string, message: RegExp, limits = {}): Promise<void> {
  await withDir(async (base) => {
    const dest = join(base, 'root', 'dest');
    await assert.rejects(unpackTarSafely(Readable.from([tarOf(entries)]), dest, { source: 'test.tar', ...limits }), (err: unknown) => {
      assert.ok(err instanceof UnsafeEntryError, `expected UnsafeEntryError, got ${String(err)}`);
      assert.equal(err.code, code);
      assert.equal(err.entry, entry);
      assert.equal(err.file, 'test.tar');
      assert.match(err.message, message);
      return true;
    });
    // Nothing was written next to or above the destination.
    assert.deepEqual(await readdir(join(base, 'root')), ['dest']);
    assert.deepEqual(await readdir(base), ['root']);
  });
}

test('rejects a path with ..', () => expectUnsafe([{ path: '../x', body: 'evil' }], 'OCI_UNSAFE_PATH', '../x', /contains "\.\."/));
test('rejects .. hidden in the middle of a path', () => expectUnsafe([{ path: 'a/../../x', body: 'evil' }], 'OCI_UNSAFE_PATH', 'a/../../x', /\.\./));
test('rejects an absolute path', () => expectUnsafe([{ path: '/abs', body: 'evil' }], 'OCI_UNSAFE_PATH', '/abs', /absolute/));
test('rejects a symlink to ../../etc', () =>
  expectUnsafe([{ path: 'etc-link', type: '2', link: '../../etc' }], 'OCI_UNSAFE_LINK', 'etc-link', /outside the destination/));
test('rejects a symlink chain that climbs out through another link', () =>
  expectUnsafe(
    [
      { path: 'sub', type: '2', link: '.' },
      { path: 'sub/up', type: '2', link: '../x' },
    ],
    'OCI_UNSAFE_LINK',
    'sub/up',
    /outside the destination/,
  ));
test('rejects a symlink with .. after a name', () =>
  expectUnsafe([{ path: 'l', type: '2', link: 'a/../../x' }], 'OCI_UNSAFE_LINK', 'l', /after a path component/));
test('rejects a hardlink outside the root', () =>
  expectUnsafe([{ path: 'passwd', type: '1', link: '../../etc/passwd' }], 'OCI_UNSAFE_LINK', 'passwd', /hardlink target .* outside/));
test('rejects a hardlink to an absolute path', () =>
  expectUnsafe([{ path: 'passwd', type: '1', link: '/etc/passwd' }], 'OCI_UNSAFE_LINK', 'passwd', /hardlink target .* outside/));
test('rejects a hardlink to a symlink, which would move a relative link to a shallower directory and point it outside', () =>
  expectUnsafe(
    [
      { path: 'dir', type: '5' },
      { path: 'dir/l', type: '2', link: '../a' },
      { path: 'hl', type: '1', link: 'dir/l' },
    ],
    'OCI_UNSAFE_LINK',
    'hl',
    /hardlink target "dir\/l" is a symlink/,
  ));
test('rejects a character device', () => expectUnsafe([{ path: 'dev/null', type: '3' }], 'OCI_UNSAFE_TYPE', 'dev/null', /CharacterDevice/));
test('rejects a block device and a FIFO', async () => {
  await expectUnsafe([{ path: 'sda', type: '4' }], 'OCI_UNSAFE_TYPE', 'sda', /BlockDevice/);
  await expectUnsafe([{ path: 'pipe', type: '6' }], 'OCI_UNSAFE_TYPE', 'pipe', /FIFO/);
});
test('rejects a size bomb over the limit before writing it', async () => {
  // 2 MiB of zeros gzip to a few KiB: the declared size is what counts.
  const big = 'x'.repeat(2 * 1024 * 1024);
  await withDir(async (base) => {
    const gz = gzipSync(tarOf([{ path: 'small', body: 'ok' }, { path: 'bomb', body: big }]));
    assert.ok(gz.length < 64 * 1024);
    await assert.rejects(unpackTarSafely(Readable.from([gz]), join(base, 'd'), { maxBytes: 1024 * 1024, source: 'bomb.tar.gz' }), (err: unknown) => {
      assert.ok(err instanceof UnsafeEntryError);
      assert.equal(err.code, 'OCI_TOO_LARGE');
      assert.equal(err.entry, 'bomb');
      assert.match(err.message, /limit of 1048576 bytes/);
      return true;
    });
    await assert.rejects(lstat(join(base, 'd', 'bomb')));
  });
});
test('the size budget is shared across layers', async () => {
  await withDir(async (base) => {
    const budget = { bytes: 0, entries: 0 };
    const layer = tarOf([{ path: 'f', body: 'x'.repeat(600) }]);
    await unpackTarSafely(Readable.from([layer]), join(base, 'd'), { maxBytes: 1000, budget });
    await assert.rejects(unpackTarSafely(Readable.from([layer]), join(base, 'd'), { maxBytes: 1000, budget }), (err: unknown) => err instanceof UnsafeEntryError && err.code === 'OCI_TOO_LARGE');
  });
});

test('a corrupt archive is a clear error, not a crash', async () => {
  await withDir(async (base) => {
    const garbage = Buffer.concat([ustarHeader('f', '0', 0o644, 10, '', 0), Buffer.from('short')]);
    garbage.write('zzzz', 148, 'ascii'); // break the checksum
    await assert.rejects(unpackTarSafely(Readable.from([garbage]), join(base, 'd'), { source: 'bad.tar' }), (err: unknown) => {
      assert.ok(err instanceof Error && 'code' in err);
      assert.equal(err.code, 'OCI_BAD_ARCHIVE');
      assert.match(err.message, /bad\.tar/);
      return true;
    });
  });
});

test('unpacks files, dirs, safe links and applies whiteouts', async () => {
  await withDir(async (base) => {
    const dest = join(base, 'd');
    await unpackTarSafely(
      Readable.from([
        tarOf([
          { path: './', type: '5' },
          { path: 'etc/', type: '5' },
          { path: 'etc/conf', body: 'v1' },
          { path: 'etc/gone', body: 'x' },
          { path: 'opaque/', type: '5' },
          { path: 'opaque/lower', body: 'lower' },
          { path: 'bin/', type: '5' },
          { path: 'bin/tool', body: 'tool', mode: 0o755 },
          { path: 'abs-link', type: '2', link: '/etc/conf' },
          { path: 'bin/rel-link', type: '2', link: '../etc/conf' },
          { path: 'hard', type: '1', link: 'etc/conf' },
        ]),
      ]),
      dest,
    );
    // The upper layer: replaces a file with a link, whites out one file and a directory's lower contents.
    await unpackTarSafely(
      Readable.from([
        tarOf([
          { path: 'etc/.wh.gone' },
          { path: 'opaque/upper', body: 'upper' },
          { path: 'opaque/.wh..wh..opq' },
          { path: 'etc/conf', body: 'v2' },
        ]),
      ]),
      dest,
    );
    assert.equal(await readFile(join(dest, 'etc/conf'), 'utf8'), 'v2');
    await assert.rejects(lstat(join(dest, 'etc/gone')));
    assert.deepEqual(await readdir(join(dest, 'opaque')), ['upper']);
    assert.equal((await lstat(join(dest, 'bin/tool'))).mode & 0o777, 0o755);
    // Absolute targets are re-rooted inside the destination.
    assert.equal(await readlink(join(dest, 'abs-link')), 'etc/conf');
    assert.equal(await readlink(join(dest, 'bin/rel-link')), '../etc/conf');
    assert.equal(await readFile(join(dest, 'hard'), 'utf8'), 'v1'); // the hardlink kept the old inode
  });
});

test('a file entry never writes through a symlink an earlier entry left at its path', async () => {
  await withDir(async (base) => {
    const outside = join(base, 'outside.txt');
    await writeFile(outside, 'untouched');
    const dest = join(base, 'd');
    await mkdir(dest);
    await unpackTarSafely(
      Readable.from([tarOf([{ path: 'target', type: '2', link: 'elsewhere' }, { path: 'target', body: 'new' }])]),
      dest,
    );
    assert.equal((await lstat(join(dest, 'target'))).isFile(), true);
    assert.equal(await readFile(outside, 'utf8'), 'untouched');
  });
});

test('a gzip stream cut off inside a file’s body is an error, not a wait for ever', async () => {
  await withDir(async (base) => {
    const body = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${(i * 7919) % 104729}`).join('\n');
    const gz = gzipSync(tarOf([{ path: 'big.txt', body }, { path: 'after.txt', body: 'x' }]));
    const cut = gz.subarray(0, Math.floor(gz.length / 2));
    await assert.rejects(unpackTarSafely(Readable.from([cut]), join(base, 'dest'), { source: 'cut.tar.gz' }), /cut\.tar\.gz|unexpected end|not a valid tar|unpacking failed/i);
  });
});

// Each way an archive can be bad has its own message naming the source, the entry when the
// parser knows it, and the class of damage (found by the tar fuzz run, test/fuzz/tar.test.ts).

/** A header whose checksum is recomputed after `edit` changed it. */
function edited(h: Buffer, edit: (h: Buffer) => void): Buffer {
  const out = Buffer.from(h);
  edit(out);
  out.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of out) sum += b;
  out.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'ascii');
  return out;
}

async function expectBad(bytes: Buffer | Buffer[], message: string | RegExp): Promise<void> {
  await withDir(async (base) => {
    await assert.rejects(unpackTarSafely(Readable.from(Array.isArray(bytes) ? bytes : [bytes]), join(base, 'd'), { source: 'layer sha256:abc' }), (err: unknown) => {
      assert.ok(err instanceof BinnacleError, String(err));
      assert.equal(err.code, 'OCI_BAD_ARCHIVE');
      if (typeof message === 'string') assert.equal(err.message, `layer sha256:abc: not a valid tar archive: ${message}`);
      else assert.match(err.message, message);
      return true;
    });
  });
}

test('bad archive: a damaged header checksum names the entry', async () => {
  const tar = tarOf([{ path: 'manifests/csv.yaml', body: 'kind: x' }]);
  tar.write('zzzz', 148, 'ascii');
  await expectBad(tar, 'bad header checksum at entry "manifests/csv.yaml": the header is damaged, or this is not a tar archive');
});

test('bad archive: a header without a path', () => expectBad(tarOf([{ path: '', body: 'x' }]), 'bad header: an entry has no path'));

test('bad archive: a link without a target, a file with one', async () => {
  await expectBad(tarOf([{ path: 'l', type: '2' }]), 'bad header: entry "l" is a SymbolicLink without a link target');
  await expectBad(tarOf([{ path: 'f', body: 'x', link: 'g' }]), 'bad header: entry "f" is a File but has a link target, which only links have');
});

test('bad archive: a size field that is not a number', async () => {
  const h = edited(ustarHeader('f', '0', 0o644, 1, '', 0), (b) => b.fill(0x81, 124, 136)); // base-256 marks only 0x80 or 0xff
  await expectBad(Buffer.concat([h, Buffer.alloc(512), TAR_END]), 'bad header: a number field (size, mode, owner or time) cannot be read: invalid base256 encoding');
});

test('bad archive: truncated inside an entry, plain and gzip', async () => {
  const tar = tarOf([{ path: 'a.txt', body: 'x'.repeat(2000) }]);
  await expectBad(tar.subarray(0, 1000), 'truncated archive: it ends inside entry "a.txt" (declared size 2000 bytes), 1560 bytes short');
  const gz = gzipSync(tar);
  await expectBad(gz.subarray(0, gz.length - 10), 'truncated gzip stream: unexpected end of file');
});

test('bad archive: corrupt gzip data', async () => {
  const gz = gzipSync(tarOf([{ path: 'a.txt', body: 'hello' }]));
  gz[gz.length - 6] = (gz[gz.length - 6] ?? 0) ^ 0xff; // the CRC-32 of the data
  await expectBad(gz, 'bad gzip data: incorrect data check');
});

test('bad archive: empty, or not a tar at all', async () => {
  await expectBad(Buffer.alloc(0), 'the archive is empty');
  await expectBad(Buffer.from('{"schemaVersion": 2}\n'), 'no tar entry found: this is not a tar archive, nor a gzip or zstd of one');
});

test('bad archive: zstd, where this Node.js cannot decompress it, is said so (not a TypeError)', async () => {
  const zstdMagic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00]);
  const zstd = 'createZstdDecompress' in (await import('node:zlib'));
  if (zstd) await expectBad(zstdMagic, /^layer sha256:abc: not a valid tar archive: /);
  else await expectBad(zstdMagic, `zstd-compressed, which this Node.js ${process.version} cannot decompress (zstd needs Node.js 22.15 or later)`);
});

test('a parent that is a symlink to nothing, or a loop of symlinks, is refused naming the link (was OCI_UNPACK: ENOENT or ELOOP from mkdir)', async () => {
  await expectUnsafe(
    [
      { path: 'a', type: '5' },
      { path: 'a/d', type: '2', link: 'missing/dir' },
      { path: 'a/d/secret', body: 'x' },
    ],
    'OCI_UNSAFE_LINK',
    'a/d/secret',
    /^test\.tar: entry "a\/d\/secret": its parent "a\/d" is a symlink to "missing\/dir", which does not exist$/,
  );
  await expectUnsafe(
    [
      { path: 'x', type: '2', link: 'y' },
      { path: 'y', type: '2', link: 'x' },
      { path: 'x/f', body: 'x' },
    ],
    'OCI_UNSAFE_LINK',
    'x/f',
    /^test\.tar: entry "x\/f": its parent "x" is a symlink to "y", which leads to a loop of symlinks$/,
  );
});

test('a name too long for the file system is OCI_UNSAFE_PATH naming the entry', async () => {
  const long = `dir/${'n'.repeat(300)}`;
  const record = (() => {
    const body = ` path=${long}\n`;
    let len = Buffer.byteLength(body) + 3;
    while (`${len}${body}`.length !== len) len = `${len}${body}`.length;
    return Buffer.from(`${len}${body}`);
  })();
  const tar = Buffer.concat([ustarHeader('PaxHeader', 'x', 0o644, record.length, '', 0), record, filePadding(record.length), ustarHeader('short', '0', 0o644, 1, '', 0), Buffer.from('x'), filePadding(1), TAR_END]);
  await withDir(async (base) => {
    await assert.rejects(unpackTarSafely(Readable.from([tar]), join(base, 'd'), { source: 'test.tar' }), {
      code: 'OCI_UNSAFE_PATH',
      message: `test.tar: entry "${long}": its path is too long for the file system (ENAMETOOLONG)`,
    });
  });
});

test('a failing source stream is OCI_UNPACK saying the reading failed', async () => {
  async function* failing(): AsyncIterable<Uint8Array> {
    yield tarOf([{ path: 'a', body: 'x' }]).subarray(0, 512);
    await Promise.resolve();
    throw new Error('connection reset');
  }
  await withDir(async (base) => {
    await assert.rejects(unpackTarSafely(failing(), join(base, 'd'), { source: 'layer sha256:abc' }), { code: 'OCI_UNPACK', message: 'layer sha256:abc: reading the archive failed: connection reset' });
  });
});
