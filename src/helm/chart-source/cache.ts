/**
 * Where fetched charts live, under the same cache directory as bundle sources (src/source):
 * - `charts/sha256/<hex>.tgz`: packaged charts, named by the sha256 of their bytes (the digest a
 *   repository index and an OCI layer give them); written once by rename, re-hashed when reused;
 * - `charts/pins/<hash>.json`: an immutable OCI reference (manifest digest) → the archive it
 *   holds, so a chart pinned by digest needs no network the second time;
 * - `trees/<hex>/`: chart directories, committed by src/source's commitTree like bundle trees;
 * - `tmp/`: work files in flight (src/source's workDir), renamed into place on success.
 * Nothing is ever written anywhere else. Archives keep their `.tgz` name because Helm's engine
 * takes a chart directory or a `.tgz` path.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { workDir } from '../../source/index.js';
import { BinnacleError, errorMessage } from '../../util/errors.js';
import { ChartSourceError } from './errors.js';
import { isRecord } from '../../util/object.js';

const HEX = /^[0-9a-f]{64}$/;

function hexOf(digest: string): string {
  return digest.startsWith('sha256:') ? digest.slice('sha256:'.length) : digest;
}

export function archivesDir(cacheDir: string): string {
  return join(cacheDir, 'charts', 'sha256');
}

/** `<cacheDir>/charts/sha256/<hex>.tgz` for `sha256:<hex>` (or bare hex). */
export function archivePath(cacheDir: string, digest: string): string {
  return join(archivesDir(cacheDir), `${hexOf(digest)}.tgz`);
}

async function hashFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return `sha256:${h.digest('hex')}`;
}

/**
 * The cached archive for `digest`, re-hashed; undefined when it is not there. A file that no
 * longer hashes to its name is removed (the caller fetches it again).
 */
export async function cachedArchive(cacheDir: string, digest: string): Promise<string | undefined> {
  if (!HEX.test(hexOf(digest))) return undefined;
  const path = archivePath(cacheDir, digest);
  const st = await stat(path).catch(() => undefined);
  if (st === undefined || !st.isFile()) return undefined;
  if ((await hashFile(path)) !== `sha256:${hexOf(digest)}`) {
    await rm(path, { force: true });
    return undefined;
  }
  return path;
}

export interface StoredArchive {
  path: string;
  digest: string;
  bytes: number;
}

export interface StoreOptions {
  /** The reference, for errors. */
  ref: string;
  /** Where the bytes come from, for errors (a URL, a path, a blob digest). */
  from: string;
  maxBytes: number;
  /** `sha256:<hex>` the bytes must hash to. */
  expectedDigest?: string;
  /** How a failure of `source` is said (an HTTP body's deadline, by bodyFailureReason); else its message. */
  failureReason?: (err: unknown) => string;
}

/**
 * Write `source` into the cache as an archive: counted (over `maxBytes` fails at once), hashed,
 * checked against `expectedDigest` before it is renamed into place. When the same archive is
 * already there, ours is dropped. `source` errors (a verifying registry stream) pass through.
 */
export async function storeArchive(cacheDir: string, source: AsyncIterable<unknown>, opts: StoreOptions): Promise<StoredArchive> {
  const work = await workDir(cacheDir, 'chart');
  try {
    const file = join(work, 'chart.tgz');
    const hash = createHash('sha256');
    let bytes = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        if (bytes > opts.maxBytes) {
          cb(new ChartSourceError('HELM_CHART_TOO_LARGE', opts.ref, `${opts.from} is over the limit of ${opts.maxBytes} bytes`));
          return;
        }
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    await pipeline(source, counter, createWriteStream(file, { flags: 'wx' }));
    const digest = `sha256:${hash.digest('hex')}`;
    if (opts.expectedDigest !== undefined && opts.expectedDigest !== digest) {
      throw new ChartSourceError('HELM_CHART_DIGEST_MISMATCH', opts.ref, `${opts.from} has digest ${digest}, but ${opts.expectedDigest} was expected; it is corrupt or was tampered with`);
    }
    const final = archivePath(cacheDir, digest);
    await mkdir(archivesDir(cacheDir), { recursive: true });
    if ((await cachedArchive(cacheDir, digest)) === undefined) await rename(file, final);
    return { path: final, digest, bytes };
  } catch (err) {
    if (err instanceof BinnacleError) throw err;
    throw new ChartSourceError('HELM_CHART_UNREACHABLE', opts.ref, `reading ${opts.from} failed: ${(opts.failureReason ?? errorMessage)(err)}`, { cause: err });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** What an immutable reference was found to hold. */
export interface PinRecord {
  /** The archive's digest. */
  digest: string;
  name: string;
  version: string;
  appVersion?: string;
}

function pinFile(cacheDir: string, key: string): string {
  return join(cacheDir, 'charts', 'pins', `${createHash('sha256').update(key).digest('hex')}.json`);
}

/** A remembered pin whose archive is still cached (and still hashes right). */
export async function lookupPin(cacheDir: string, key: string): Promise<{ record: PinRecord; path: string } | undefined> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(pinFile(cacheDir, key), 'utf8'));
  } catch {
    return undefined; // Missing or torn: fetch again.
  }
  if (!isRecord(doc) || doc.key !== key) return undefined;
  const { digest, name, version, appVersion } = doc;
  if (typeof digest !== 'string' || typeof name !== 'string' || typeof version !== 'string') return undefined;
  const path = await cachedArchive(cacheDir, digest);
  if (path === undefined) return undefined;
  return { record: { digest, name, version, ...(typeof appVersion === 'string' ? { appVersion } : {}) }, path };
}

export async function rememberPin(cacheDir: string, key: string, record: PinRecord): Promise<void> {
  const file = pinFile(cacheDir, key);
  await mkdir(join(cacheDir, 'charts', 'pins'), { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify({ key, ...record }));
  await rename(tmp, file);
}

export interface GcChartsResult {
  removedArchives: number;
  removedPins: number;
}

/**
 * Remove archives whose digest is not in `keepDigests`, and the pins that led to them. Chart
 * directories are trees: src/source's gcSources keeps or removes them with the bundle trees.
 */
export async function gcCharts(cacheDir: string, keepDigests: readonly string[]): Promise<GcChartsResult> {
  const keep = new Set(keepDigests.map(hexOf));
  const result: GcChartsResult = { removedArchives: 0, removedPins: 0 };
  for (const name of await readdir(archivesDir(cacheDir)).catch(() => [] as string[])) {
    const hex = name.replace(/\.tgz$/, '');
    if (keep.has(hex)) continue;
    await rm(join(archivesDir(cacheDir), name), { force: true });
    result.removedArchives++;
  }
  const pins = join(cacheDir, 'charts', 'pins');
  for (const name of await readdir(pins).catch(() => [] as string[])) {
    let doc: unknown;
    try {
      doc = JSON.parse(await readFile(join(pins, name), 'utf8'));
    } catch {
      doc = undefined;
    }
    const digest = isRecord(doc) && typeof doc.digest === 'string' ? doc.digest : '';
    if (keep.has(hexOf(digest))) continue;
    await rm(join(pins, name), { force: true });
    result.removedPins++;
  }
  return result;
}
