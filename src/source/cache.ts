/**
 * The source cache under one directory:
 * - `trees/<hex>/`: unpacked bundle trees, named by their tree digest; written once, by rename;
 * - `refs/<hex>.json`: immutable reference (image digest, git commit, http sha256) → tree, so a
 *   pinned source that was unpacked before needs no network;
 * - `oci/`: src/oci's image cache (blobs and its own unpacked trees);
 * - `tmp/`: work directories of unpacks in flight.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gcCache } from '../oci/index.js';
import { digestTree, normalizeModes, type TreeLimits } from './tree.js';
import type { ResolvedSource, UnpackedSource } from './types.js';
import { isRecord } from '../util/object.js';

export function treesDir(cacheDir: string): string {
  return join(cacheDir, 'trees');
}

export function ociCacheDir(cacheDir: string): string {
  return join(cacheDir, 'oci');
}

function hexOf(digest: string): string {
  return digest.startsWith('sha256:') ? digest.slice(7) : digest;
}

export function treeDir(cacheDir: string, digest: string): string {
  return join(treesDir(cacheDir), hexOf(digest));
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** A fresh work directory under `<cacheDir>/tmp`, on the same filesystem as the trees. */
export async function workDir(cacheDir: string, stem: string): Promise<string> {
  const tmp = join(cacheDir, 'tmp');
  await mkdir(tmp, { recursive: true });
  return mkdtemp(join(tmp, `${stem}-`));
}

/**
 * Move a finished tree into the cache: canonical modes, digest (with the safety scan), then an
 * atomic rename to `trees/<hex>`. When that tree is already there, ours is dropped and theirs
 * used. `tree` is consumed either way.
 */
export async function commitTree(cacheDir: string, tree: string, limits: TreeLimits): Promise<{ dir: string; digest: string }> {
  try {
    await normalizeModes(tree, limits);
    const { digest } = await digestTree(tree, limits);
    const dir = treeDir(cacheDir, digest);
    await mkdir(treesDir(cacheDir), { recursive: true });
    if (!(await exists(dir))) {
      try {
        await rename(tree, dir);
      } catch (err) {
        // Another unpack of the same content won the rename: its tree is identical.
        if (!(await exists(dir))) throw err;
      }
    }
    return { dir, digest };
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
}

function refKeyFile(cacheDir: string, key: string): string {
  return join(cacheDir, 'refs', `${createHash('sha256').update(key).digest('hex')}.json`);
}

/** The key under which an immutable reference is remembered, or undefined for moving ones. */
export function immutableKey(resolved: ResolvedSource, extra = ''): string | undefined {
  if (resolved.image !== undefined) return `image\n${resolved.image.digest}`;
  if (resolved.git !== undefined) return `git\n${resolved.git.repository}\n${resolved.git.commit}\n${extra}`;
  if (resolved.http !== undefined) return `http\n${resolved.http.url}\n${resolved.http.sha256}`;
  return undefined;
}

/** A remembered unpack for `key`, when its tree is still in the cache. */
export async function lookupRef(cacheDir: string, key: string): Promise<UnpackedSource | undefined> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(refKeyFile(cacheDir, key), 'utf8'));
  } catch {
    return undefined; // Missing or torn: unpack again.
  }
  if (!isRecord(doc) || doc.key !== key || typeof doc.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(doc.digest)) return undefined;
  const resolved = parseResolved(doc.resolved);
  if (resolved === undefined) return undefined;
  const dir = treeDir(cacheDir, doc.digest);
  if (!(await exists(dir))) return undefined;
  // Used again: the garbage collector keeps what was touched within its grace period.
  const now = new Date();
  await utimes(dir, now, now).catch(() => undefined);
  return { dir, digest: doc.digest, resolved };
}

/** A ResolvedSource read back from disk, or undefined when the record is not one. */
function parseResolved(v: unknown): ResolvedSource | undefined {
  if (!isRecord(v) || typeof v.type !== 'string') return undefined;
  const strings = (o: unknown, keys: readonly string[]): Record<string, string> | undefined => {
    if (!isRecord(o)) return undefined;
    const out: Record<string, string> = {};
    for (const k of keys) {
      const s = o[k];
      if (typeof s !== 'string') return undefined;
      out[k] = s;
    }
    return out;
  };
  const image = strings(v.image, ['ref', 'digest']);
  const git = strings(v.git, ['repository', 'commit']);
  const http = strings(v.http, ['url', 'sha256']);
  if (v.type === 'image' && image !== undefined) return { type: 'image', image: { ref: image.ref ?? '', digest: image.digest ?? '' } };
  if (v.type === 'git' && git !== undefined) return { type: 'git', git: { repository: git.repository ?? '', commit: git.commit ?? '' } };
  if (v.type === 'http' && http !== undefined) return { type: 'http', http: { url: http.url ?? '', sha256: http.sha256 ?? '' } };
  return undefined;
}

export async function rememberRef(cacheDir: string, key: string, unpacked: UnpackedSource): Promise<void> {
  const file = refKeyFile(cacheDir, key);
  await mkdir(join(cacheDir, 'refs'), { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify({ key, digest: unpacked.digest, resolved: unpacked.resolved }));
  await rename(tmp, file);
}

export interface GcSourcesResult {
  removedTrees: number;
  removedRefs: number;
  /** What src/oci's gcCache removed from `oci/`. */
  removedImageTrees: number;
  removedBlobs: number;
}

/** Work directories older than this are left-overs of crashed unpacks. */
const STALE_TMP_MS = 60 * 60 * 1000;

/**
 * Remove trees whose digest is not in `keepDigests`, the refs that pointed at them, stale work
 * directories, and image blobs no kept tree came from.
 */
export async function gcSources(cacheDir: string, keepDigests: readonly string[]): Promise<GcSourcesResult> {
  const keep = new Set(keepDigests.map(hexOf));
  const result: GcSourcesResult = { removedTrees: 0, removedRefs: 0, removedImageTrees: 0, removedBlobs: 0 };
  for (const name of await readdir(treesDir(cacheDir)).catch(() => [] as string[])) {
    if (keep.has(name)) continue;
    await rm(join(treesDir(cacheDir), name), { recursive: true, force: true });
    result.removedTrees++;
  }
  const keepImages: string[] = [];
  const refsDir = join(cacheDir, 'refs');
  for (const name of await readdir(refsDir).catch(() => [] as string[])) {
    const file = join(refsDir, name);
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(file, 'utf8'));
    } catch {
      doc = undefined;
    }
    const digest = isRecord(doc) && typeof doc.digest === 'string' ? doc.digest : '';
    if (!keep.has(hexOf(digest))) {
      await rm(file, { force: true });
      result.removedRefs++;
      continue;
    }
    const image = isRecord(doc) && isRecord(doc.resolved) && isRecord(doc.resolved.image) ? doc.resolved.image.digest : undefined;
    if (typeof image === 'string') keepImages.push(image);
  }
  const tmpDir = join(cacheDir, 'tmp');
  for (const name of await readdir(tmpDir).catch(() => [] as string[])) {
    const st = await stat(join(tmpDir, name)).catch(() => undefined);
    if (st !== undefined && Date.now() - st.mtimeMs > STALE_TMP_MS) await rm(join(tmpDir, name), { recursive: true, force: true });
  }
  if (await exists(ociCacheDir(cacheDir))) {
    const oci = await gcCache(ociCacheDir(cacheDir), keepImages);
    result.removedImageTrees = oci.removedTrees;
    result.removedBlobs = oci.removedBlobs;
  }
  return result;
}
