import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { UnsafeEntryError } from '../oci/unpack.js';
import { copyTree, digestTree, symlinkEscape } from './tree.js';
import { gcSources } from './cache.js';
import { unpackSource } from './unpack.js';
import { withTempDir } from '../util/temp-dir.test-helper.js';

const logger = pino({ level: 'silent' });

const withDir = (fn: (dir: string) => Promise<void>): Promise<void> => withTempDir('source-tree-', fn);

/** A small bundle-like tree: a file, a nested file, an executable, an inner symlink. */
async function makeTree(root: string): Promise<void> {
  await mkdir(join(root, 'manifests'), { recursive: true });
  await mkdir(join(root, 'metadata'), { recursive: true });
  await writeFile(join(root, 'manifests', 'csv.yaml'), 'kind: ClusterServiceVersion\n');
  await writeFile(join(root, 'metadata', 'annotations.yaml'), 'annotations: {}\n');
  await writeFile(join(root, 'run.sh'), '#!/bin/sh\n');
  await chmod(join(root, 'run.sh'), 0o755);
  await chmod(join(root, 'manifests', 'csv.yaml'), 0o644);
  await symlink('../manifests/csv.yaml', join(root, 'metadata', 'csv-link'));
}

async function expectUnsafe(p: Promise<unknown>, code: string, entry: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof UnsafeEntryError, `expected UnsafeEntryError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.equal(err.entry, entry);
    assert.ok(err.message.includes(entry), 'the message names the entry');
    return true;
  });
}

test('symlinkEscape judges link targets from the link position', () => {
  assert.equal(symlinkEscape('a', 'b'), undefined);
  assert.equal(symlinkEscape('d/a', '../b'), undefined);
  assert.equal(symlinkEscape('d/e/a', '../../b/c'), undefined);
  assert.match(symlinkEscape('a', '../b') ?? '', /outside the tree/);
  assert.match(symlinkEscape('d/a', '../../b') ?? '', /outside the tree/);
  assert.match(symlinkEscape('d/a', '/etc/passwd') ?? '', /absolute/);
  assert.match(symlinkEscape('d/a', 'x/../../..') ?? '', /after a path component/);
  assert.match(symlinkEscape('a', '') ?? '', /empty/);
});

test('the same tree has the same digest; a changed byte, mode, name or link does not', async () => {
  await withDir(async (base) => {
    const a = join(base, 'a');
    const b = join(base, 'b');
    await makeTree(a);
    await makeTree(b);
    const da = await digestTree(a);
    assert.match(da.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal((await digestTree(b)).digest, da.digest, 'same content, same digest');
    assert.equal((await digestTree(a)).digest, da.digest, 'stable across runs');
    assert.equal(da.entries, 6);

    await writeFile(join(b, 'manifests', 'csv.yaml'), 'kind: ClusterServiceVersioN\n');
    const byteChanged = (await digestTree(b)).digest;
    assert.notEqual(byteChanged, da.digest, 'a changed byte');
    await writeFile(join(b, 'manifests', 'csv.yaml'), 'kind: ClusterServiceVersion\n');
    assert.equal((await digestTree(b)).digest, da.digest, 'restored');

    await chmod(join(b, 'manifests', 'csv.yaml'), 0o755);
    assert.notEqual((await digestTree(b)).digest, da.digest, 'a changed mode');
    await chmod(join(b, 'manifests', 'csv.yaml'), 0o644);

    await rm(join(b, 'metadata', 'csv-link'));
    await symlink('../run.sh', join(b, 'metadata', 'csv-link'));
    assert.notEqual((await digestTree(b)).digest, da.digest, 'a changed link target');
    await rm(join(b, 'metadata', 'csv-link'));
    await symlink('../manifests/csv.yaml', join(b, 'metadata', 'csv-link'));

    await mkdir(join(b, 'empty'));
    assert.notEqual((await digestTree(b)).digest, da.digest, 'an added empty directory');
  });
});

test('digestTree refuses escaping links, devices and FIFOs, and trees over the limit', async () => {
  await withDir(async (base) => {
    const t = join(base, 't');
    await makeTree(t);
    await symlink('../../outside', join(t, 'manifests', 'escape'));
    await expectUnsafe(digestTree(t), 'SOURCE_UNSAFE_LINK', 'manifests/escape');
    await rm(join(t, 'manifests', 'escape'));
    await symlink('/etc/passwd', join(t, 'abs'));
    await expectUnsafe(digestTree(t), 'SOURCE_UNSAFE_LINK', 'abs');
    await rm(join(t, 'abs'));

    execFileSync('mkfifo', [join(t, 'metadata', 'pipe')]);
    await expectUnsafe(digestTree(t), 'SOURCE_UNSAFE_TYPE', 'metadata/pipe');
    await rm(join(t, 'metadata', 'pipe'));

    await writeFile(join(t, 'zbig'), Buffer.alloc(5000));
    await expectUnsafe(digestTree(t, { maxBytes: 4096 }), 'SOURCE_TOO_LARGE', 'zbig');
    assert.ok((await digestTree(t, { maxBytes: 10_000 })).bytes > 5000);
  });
});

test('copyTree copies files, modes and inner links, and refuses links out of the tree', async () => {
  await withDir(async (base) => {
    const src = join(base, 'src');
    await makeTree(src);
    const dest = join(base, 'dest');
    await copyTree(src, dest);
    assert.equal(await readFile(join(dest, 'manifests', 'csv.yaml'), 'utf8'), 'kind: ClusterServiceVersion\n');
    assert.equal(await readlink(join(dest, 'metadata', 'csv-link')), '../manifests/csv.yaml');
    assert.equal((await lstat(join(dest, 'run.sh'))).mode & 0o111, 0o111);
    assert.equal((await digestTree(dest)).digest, (await digestTree(src)).digest);

    // A link that climbs out, even one that dangles, must not be copied.
    await symlink('../../../etc/shadow', join(src, 'metadata', 'shadow'));
    await expectUnsafe(copyTree(src, join(base, 'dest2')), 'SOURCE_UNSAFE_LINK', 'metadata/shadow');
  });
});

test('local source: copy into trees/<hex>, reuse, safety, and gc', async () => {
  await withDir(async (base) => {
    const src = join(base, 'bundle');
    await makeTree(src);
    const cacheDir = join(base, 'cache');
    const first = await unpackSource({ type: 'local', path: src }, { cacheDir, logger, allowHostPaths: true });
    assert.equal(first.dir, join(cacheDir, 'trees', first.digest.slice(7)));
    assert.deepEqual(first.resolved, { type: 'local' });
    assert.equal(await readFile(join(first.dir, 'manifests', 'csv.yaml'), 'utf8'), 'kind: ClusterServiceVersion\n');
    // Modes are canonical in the cache whatever the source's umask gave.
    assert.equal((await lstat(join(first.dir, 'manifests', 'csv.yaml'))).mode & 0o777, 0o644);
    assert.equal((await lstat(join(first.dir, 'run.sh'))).mode & 0o777, 0o755);
    assert.equal((await digestTree(first.dir)).digest, first.digest, 'the digest is the digest of the cached tree');

    const again = await unpackSource({ type: 'local', path: src }, { cacheDir, logger, allowHostPaths: true });
    assert.equal(again.digest, first.digest);

    await chmod(join(src, 'manifests', 'csv.yaml'), 0o600);
    assert.equal((await unpackSource({ type: 'local', path: src }, { cacheDir, logger, allowHostPaths: true })).digest, first.digest, '0600 and 0644 both become 0644');

    await writeFile(join(src, 'manifests', 'csv.yaml'), 'changed\n');
    const changed = await unpackSource({ type: 'local', path: src }, { cacheDir, logger, allowHostPaths: true });
    assert.notEqual(changed.digest, first.digest);

    await symlink('../../secret', join(src, 'manifests', 'out'));
    await expectUnsafe(unpackSource({ type: 'local', path: src }, { cacheDir, logger, allowHostPaths: true }), 'SOURCE_UNSAFE_LINK', 'manifests/out');
    await rm(join(src, 'manifests', 'out'));
    await assert.rejects(unpackSource({ type: 'local', path: join(base, 'nope') }, { cacheDir, logger, allowHostPaths: true }), { code: 'SOURCE_LOCAL_MISSING' });
    await writeFile(join(base, 'file'), 'x');
    await assert.rejects(unpackSource({ type: 'local', path: join(base, 'file') }, { cacheDir, logger, allowHostPaths: true }), { code: 'SOURCE_NOT_DIRECTORY' });
    await assert.rejects(unpackSource({ type: 'local', path: src }, { cacheDir, logger, allowHostPaths: true, maxBytes: 10 }), { code: 'SOURCE_TOO_LARGE' });

    // Without allowHostPaths (as in a controller) nothing of this machine's files is read.
    await assert.rejects(unpackSource({ type: 'local', path: src }, { cacheDir, logger }), { code: 'SOURCE_HOST_PATH_DENIED', message: /local .*not allowed/ });
    await assert.rejects(unpackSource({ type: 'git', repository: `file://${src}`, ref: { branch: 'main' } }, { cacheDir, logger }), { code: 'SOURCE_HOST_PATH_DENIED' });

    // A source built in code is checked like one from a CRD.
    await assert.rejects(unpackSource({ type: 'git', repository: 'https://h/r', ref: { branch: 'main' }, directory: '../../etc' }, { cacheDir, logger }), {
      code: 'INVALID',
      message: /source\.git\.directory: must not contain "\.\."/,
    });

    const gc = await gcSources(cacheDir, [changed.digest]);
    assert.equal(gc.removedTrees, 1);
    await assert.rejects(lstat(first.dir));
    assert.ok((await lstat(changed.dir)).isDirectory());
    // Nothing left in the work area after failures.
    const left = await lstat(join(cacheDir, 'tmp')).then(() => execFileSync('ls', ['-A', join(cacheDir, 'tmp')], { encoding: 'utf8' }));
    assert.equal(left, '');
  });
});
