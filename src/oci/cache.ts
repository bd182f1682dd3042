/**
 * The content-addressed image cache: `<cacheDir>/blobs/sha256/<hex>` holds verified manifests,
 * configs and layers; `<cacheDir>/fs/<manifest-hex>/` holds an image's unpacked file tree. Pulls
 * fill it, `gcCache` empties what nothing refers to.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DigestMismatchError, digestHex, sha256Digest } from './digest.js';
import { parseManifestDocument } from './manifest.js';
import { isSha256Digest } from './reference.js';

export function blobPath(cacheDir: string, digest: string): string {
  return join(cacheDir, 'blobs', 'sha256', digestHex(digest));
}

export function treePath(cacheDir: string, manifestDigest: string): string {
  return join(cacheDir, 'fs', digestHex(manifestDigest));
}

export function tempName(dir: string, stem: string): string {
  return join(dir, `.tmp-${stem}-${process.pid}-${Math.random().toString(36).slice(2)}`);
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Store bytes already verified by the caller under their digest. */
export async function putBlobBytes(cacheDir: string, bytes: Buffer): Promise<string> {
  const digest = sha256Digest(bytes);
  const dir = join(cacheDir, 'blobs', 'sha256');
  await mkdir(dir, { recursive: true });
  const final = blobPath(cacheDir, digest);
  if (!(await exists(final))) {
    const tmp = tempName(dir, 'blob');
    await writeFile(tmp, bytes);
    await rename(tmp, final);
  }
  return digest;
}

/** Store a verifying stream (from RegistryClient.getBlob): renamed into place only if it verified. */
export async function putBlobStream(cacheDir: string, digest: string, stream: Readable): Promise<void> {
  const dir = join(cacheDir, 'blobs', 'sha256');
  await mkdir(dir, { recursive: true });
  const tmp = tempName(dir, 'blob');
  try {
    await pipeline(stream, createWriteStream(tmp));
    await rename(tmp, blobPath(cacheDir, digest));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** A cached blob, re-verified: the cache is a disk anyone may have scribbled on. */
export async function readCachedBlob(cacheDir: string, digest: string): Promise<Buffer | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(blobPath(cacheDir, digest));
  } catch {
    return undefined;
  }
  const actual = sha256Digest(bytes);
  if (actual !== digest) throw new DigestMismatchError(`cached blob ${blobPath(cacheDir, digest)}`, digest, actual);
  return bytes;
}

export interface GcResult {
  removedTrees: number;
  removedBlobs: number;
  freedBytes: number;
}

async function sizeOf(path: string): Promise<number> {
  const st = await stat(path).catch(() => undefined);
  if (st === undefined) return 0;
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of await readdir(path)) total += await sizeOf(join(path, name));
  return total;
}

/**
 * Remove unpacked trees and blobs that no kept digest reaches. `keepDigests` are manifest or index
 * digests; what they reference (children, configs, layers) is kept with them.
 */
export async function gcCache(cacheDir: string, keepDigests: readonly string[]): Promise<GcResult> {
  const keep = new Set<string>();
  const visit = async (digest: string): Promise<void> => {
    if (keep.has(digest) || !isSha256Digest(digest)) return;
    keep.add(digest);
    const bytes = await readFile(blobPath(cacheDir, digest)).catch(() => undefined);
    if (bytes === undefined) return;
    let doc;
    try {
      doc = parseManifestDocument(digest, bytes);
    } catch {
      return; // A layer or config, not a manifest: nothing below it.
    }
    if (doc.kind === 'index') for (const m of doc.manifests) await visit(m.digest);
    else for (const d of [doc.config, ...doc.layers]) keep.add(d.digest);
  };
  for (const d of keepDigests) await visit(d);

  const keepHex = new Set([...keep].map(digestHex));
  const result: GcResult = { removedTrees: 0, removedBlobs: 0, freedBytes: 0 };
  const sweep = async (dir: string, counter: 'removedTrees' | 'removedBlobs'): Promise<void> => {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (keepHex.has(name)) continue;
      const path = join(dir, name);
      result.freedBytes += await sizeOf(path);
      await rm(path, { recursive: true, force: true });
      // Left-over temporaries of interrupted pulls go too, but are not counted as trees or blobs.
      if (!name.startsWith('.tmp-')) result[counter]++;
    }
  };
  await sweep(join(cacheDir, 'fs'), 'removedTrees');
  await sweep(join(cacheDir, 'blobs', 'sha256'), 'removedBlobs');
  return result;
}
