import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Parser, type ReadEntry } from 'tar';
import { buildImage } from './build.js';
import { sha256Digest } from './digest.js';
import { readImageLayout } from './layout.js';
import { parseImageConfig } from './manifest.js';
import { unpackTarSafely } from './unpack.js';

async function fixture(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'oci-build-'));
  await mkdir(join(dir, 'etcd', 'deep'), { recursive: true });
  await writeFile(join(dir, 'etcd', 'catalog.yaml'), 'schema: olm.package\nname: etcd\n');
  await writeFile(join(dir, 'etcd', 'deep', 'run.sh'), '#!/bin/sh\necho hi\n');
  await chmod(join(dir, 'etcd', 'deep', 'run.sh'), 0o755);
  await writeFile(join(dir, 'b.json'), '{}');
  await writeFile(join(dir, 'a.json'), '[]');
  await writeFile(join(dir, `${'long-name-'.repeat(12)}.json`), 'long');
  await symlink('etcd/catalog.yaml', join(dir, 'link.yaml'));
  return dir;
}

async function listLayer(path: string): Promise<Array<{ path: string; uid: number | undefined; mtime: number | undefined }>> {
  const entries: Array<{ path: string; uid: number | undefined; mtime: number | undefined }> = [];
  const parser = new Parser();
  parser.on('entry', (e: ReadEntry) => {
    entries.push({ path: e.path, uid: e.uid, mtime: e.mtime?.getTime() });
    e.resume();
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
    createReadStream(path).on('data', (c) => parser.write(c as Buffer)).on('end', () => parser.end());
  });
  return entries;
}

test('buildImage is deterministic: same input, same digest, even with new mtimes and another output dir', async () => {
  const src = await fixture();
  const out1 = await mkdtemp(join(tmpdir(), 'oci-out-'));
  const out2 = await mkdtemp(join(tmpdir(), 'oci-out-'));
  try {
    const labels = { 'z.label': 'last', 'operators.operatorframework.io.index.configs.v1': '/configs' };
    const a = await buildImage({ layers: [{ dir: src, prefix: '/configs' }], labels, outputDir: out1 });
    await utimes(join(src, 'a.json'), new Date(), new Date(2020, 1, 1));
    const b = await buildImage({ layers: [{ dir: src, prefix: '/configs' }], labels: { ...labels }, outputDir: out2 });
    assert.equal(a.manifestDigest, b.manifestDigest);
    assert.equal(sha256Digest(a.manifestBytes), a.manifestDigest);
    assert.match(a.manifestDigest, /^sha256:[a-f0-9]{64}$/);

    // A change in content changes the digest.
    await writeFile(join(src, 'a.json'), '[1]');
    const c = await buildImage({ layers: [{ dir: src, prefix: '/configs' }], labels });
    assert.notEqual(c.manifestDigest, a.manifestDigest);
    await rm(c.layoutDir, { recursive: true, force: true });

    // Entries are sorted, parents first, owned by root, with mtime 0.
    const layer = a.manifest.layers[0];
    assert.ok(layer !== undefined);
    const entries = await listLayer(a.blobPath(layer.digest));
    assert.deepEqual(
      entries.map((e) => e.path),
      ['configs/', 'configs/a.json', 'configs/b.json', 'configs/etcd/', 'configs/etcd/catalog.yaml', 'configs/etcd/deep/', 'configs/etcd/deep/run.sh', 'configs/link.yaml', `configs/${'long-name-'.repeat(12)}.json`],
    );
    assert.ok(entries.every((e) => e.uid === 0 && e.mtime === 0));

    // The config carries platform, labels and one diff_id per layer.
    const config = parseImageConfig('config', await readFile(a.blobPath(a.manifest.config.digest)));
    assert.equal(config.os, 'linux');
    assert.equal(config.architecture, 'amd64');
    assert.deepEqual(config.labels, labels);
    assert.equal(config.diffIds.length, 1);

    // The layout reads back to the same image.
    const again = await readImageLayout(out1);
    assert.equal(again.manifestDigest, a.manifestDigest);

    // And the layer unpacks to the same files, modes and links.
    const dest = join(out1, 'unpacked');
    await unpackTarSafely(createReadStream(a.blobPath(layer.digest)), dest);
    assert.equal(await readFile(join(dest, 'configs/etcd/catalog.yaml'), 'utf8'), 'schema: olm.package\nname: etcd\n');
    assert.equal((await stat(join(dest, 'configs/etcd/deep/run.sh'))).mode & 0o777, 0o755);
    assert.equal(await readlink(join(dest, 'configs/link.yaml')), 'etcd/catalog.yaml');
    assert.equal(await readFile(join(dest, `configs/${'long-name-'.repeat(12)}.json`), 'utf8'), 'long');
  } finally {
    for (const d of [src, out1, out2]) await rm(d, { recursive: true, force: true });
  }
});

test('buildImage names the directory when a layer source is missing', async () => {
  await assert.rejects(
    buildImage({ layers: [{ dir: '/nonexistent/binnacle-layer', prefix: '/' }], labels: {} }),
    (err: unknown) => err instanceof Error && 'code' in err && err.code === 'OCI_BAD_LAYER' && err.message.includes('/nonexistent/binnacle-layer'),
  );
});
