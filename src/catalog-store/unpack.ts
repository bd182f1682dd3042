/**
 * Unpacking a catalog into the store without holding it: the ClusterCatalog controller's load.
 * A first pass reads every record of the FBC directory, writes its store line (compact JSON, as
 * `storeCatalog` writes it) to a spill file beside the store, and keeps only what the rest needs:
 * its place in opm's write order, the record as validation reads it (what is checked as it is
 * read, then dropped: `recordForValidation`) and as resolution reads it (`resolutionRecords`:
 * its strings interned, equal properties one object). Validation runs on that; a catalog accepted is
 * written in opm's order by copying the spilled lines. The store file and its index are byte for
 * byte what `storeCatalog(loadFbcDir(...).config)` writes.
 *
 * Why: holding the parsed catalog whole while it was validated and stored was the manager's peak
 * (a 68 MB catalog parses into about 55 MB of heap; the resolution view is a fifth of that), and
 * catalogd, which streams to disk, peaks at a quarter of it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { BinnacleError, errorMessage, InputError, type ValidationResult } from '../util/errors.js';
import { KeyedSerial } from '../util/keyed-serial.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import type { Decoded } from '../catalog/decode.js';
import { configSink, DEFAULT_MAX_CATALOG_BYTES, scanFbcDir, type LoadOptions } from '../catalog/load.js';
import { resolutionRecords } from '../catalog/resolution-view.js';
import { recordForValidation, validateConfig } from '../catalog/validate.js';
import { inWriteOrder, writtenRecord, type WriteOrderKey } from '../catalog/write.js';
import { CATALOG_FILE, indexedMeta, type IndexedMeta, type StoredCatalog } from './store.js';

export interface UnpackedCatalog {
  /** The loader's problems: when not ok, nothing was validated or stored. */
  result: ValidationResult;
  /** `opm validate`'s rules on the catalog; absent when it could not be read. */
  validation?: ValidationResult;
  /** The catalog as resolution reads it (`resolutionView` of it, built record by record). */
  view: DeclarativeConfig;
  /** Stored, when the catalog was read and `accept` took its validation. */
  stored?: StoredCatalog;
}

export interface UnpackOptions extends LoadOptions {
  /**
   * Most bytes the stored file may hold (default: the loader's bound on a catalog's files). The
   * loader bounds what it reads; this bounds what that expands to on disk (YAML aliases, escapes).
   */
  maxStoreBytes?: number;
}

/** A spilled record: its place in the write order and its line in the spill file. */
interface SpilledRecord extends WriteOrderKey {
  start: number;
  length: number;
}

const SPILL_PREFIX = '.unpack-';
/** Unpacks running or queued, by the parent directory they spill into. */
const unpacksByParent = new KeyedSerial();
/** Lines gathered before a write to the spill file, and the store file's write size. */
const WRITE_CHUNK = 1024 * 1024;

/** A failure of the store's own files (a full disk), named by its file: the manager's fault or the node's, not the catalog's. */
function storeFailure(file: string, err: unknown): BinnacleError {
  return new BinnacleError('transient', 'CATALOG_STORE_WRITE', `${file}: ${errorMessage(err)}`, { cause: err });
}

/** Writes all of `buf` at the file's current position. */
function writeAll(fd: number, buf: Buffer, file: string): void {
  let at = 0;
  try {
    while (at < buf.length) at += writeSync(fd, buf, at, Math.min(WRITE_CHUNK, buf.length - at));
  } catch (err) {
    throw storeFailure(file, err);
  }
}

/** Appends lines to a file through one buffer, synchronously: the loader's sink is synchronous. */
class SpillWriter {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(WRITE_CHUNK);
  private used = 0;
  private open = true;
  size = 0;

  constructor(readonly file: string) {
    try {
      this.fd = openSync(file, 'wx', 0o600);
    } catch (err) {
      throw storeFailure(file, err);
    }
  }

  /** Appends `line`; returns its offset. */
  append(line: string): { start: number; length: number } {
    const length = Buffer.byteLength(line);
    if (this.used + length > this.buf.length) this.flush();
    if (length > this.buf.length) writeAll(this.fd, Buffer.from(line), this.file);
    else {
      this.buf.write(line, this.used);
      this.used += length;
    }
    const start = this.size;
    this.size += length;
    return { start, length };
  }

  flush(): void {
    writeAll(this.fd, this.buf.subarray(0, this.used), this.file);
    this.used = 0;
  }

  /** Flushes and closes: the file is read back through a descriptor of its own. */
  finish(): void {
    this.flush();
    this.close();
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    closeSync(this.fd);
  }
}

/**
 * Reads the catalog at `root` (a directory or file) and, when it reads without problems and
 * `accept` takes its validation, stores it as `<dir>/catalog.jsonl` (written under another name,
 * then renamed: an answer being sent from the file it replaces goes on reading that). Never throws
 * for bad content that the loader reports (read `result` and `validation`); throws an InputError
 * for a catalog whose records come to more than `maxStoreBytes` or one too large to store, and a
 * transient BinnacleError naming the file for I/O failures of the store. Spill files an earlier
 * unpack into the same parent left (a crash) are removed first: one catalog's unpacks never run
 * at once (one at a time for a parent within this process; the controller works on one
 * ClusterCatalog name at a time, and the store is the process's own).
 */
export function unpackCatalog(root: string, dir: string, accept: (validation: ValidationResult) => boolean, opts: UnpackOptions = {}): Promise<UnpackedCatalog> {
  // One unpack into a parent at a time in this process: a new leader's and its own follower's
  // (catalog-follower.ts) may overlap at a handover, and each removes the spills it finds.
  return unpacksByParent.run(path.resolve(path.dirname(dir)), () => unpackAlone(root, dir, accept, opts));
}

async function unpackAlone(root: string, dir: string, accept: (validation: ValidationResult) => boolean, opts: UnpackOptions): Promise<UnpackedCatalog> {
  const maxStoreBytes = opts.maxStoreBytes ?? Math.max(opts.maxCatalogBytes ?? DEFAULT_MAX_CATALOG_BYTES, opts.maxFileBytes ?? 0);
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true }).catch((err: unknown) => {
    throw storeFailure(parent, err);
  });
  await removeSpills(parent);
  const spill = new SpillWriter(path.join(parent, `${SPILL_PREFIX}${path.basename(dir)}-${randomBytes(6).toString('hex')}`));
  try {
    const checked = emptyDeclarativeConfig();
    const view = emptyDeclarativeConfig();
    const addChecked = configSink(checked);
    const addView = configSink(view);
    const viewOf = resolutionRecords();
    const records: SpilledRecord[] = [];
    const sink = (d: Decoded, file: string): void => {
      const { blob, ...key } = writtenRecord(d);
      let line: string;
      try {
        line = `${JSON.stringify(blob)}\n`;
      } catch (err) {
        // A string longer than V8 allows: only a record expanded past any real one (YAML aliases) gets there.
        if (!(err instanceof RangeError)) throw err;
        throw new InputError('CATALOG_RECORD_TOO_LARGE', `${key.schema} "${key.name}" of package "${key.package}" is too large to store (${errorMessage(err)})`, { file });
      }
      if (spill.size + Buffer.byteLength(line) > maxStoreBytes) {
        throw new InputError(
          'CATALOG_STORE_TOO_LARGE',
          `the catalog's records come to more than ${maxStoreBytes} bytes as stored (one line of compact JSON each), over the limit for one catalog; this file's records from ${key.schema} "${key.name}" of package "${key.package}" on were not stored: split the catalog into smaller catalogs`,
          { file },
        );
      }
      records.push({ ...key, ...spill.append(line) });
      addChecked(recordForValidation(d), file, undefined);
      if (d.kind === 'bundle') addView({ kind: 'bundle', value: viewOf.bundle(d.value) }, file, undefined);
      else if (d.kind === 'package') addView({ kind: 'package', value: viewOf.package(d.value) }, file, undefined);
      else addView(viewOf.other(d), file, undefined);
    };
    const { result } = await scanFbcDir(root, sink, opts);
    spill.finish();
    if (!result.ok) return { result, view };
    const validation = validateConfig(checked).result;
    if (!accept(validation)) return { result, validation, view };
    const stored = await writeInOrder(spill.file, records, dir);
    return { result, validation, view, stored };
  } finally {
    try {
      spill.close();
    } catch {
      // nothing left to do with it
    }
    await rm(spill.file, { force: true }).catch(() => undefined);
  }
}

async function removeSpills(parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => []);
  await Promise.all(
    names
      .filter((n) => n.startsWith(SPILL_PREFIX))
      .map((n) =>
        rm(path.join(parent, n), { recursive: true, force: true }).catch((err: unknown) => {
          throw storeFailure(path.join(parent, n), err);
        }),
      ),
  );
}

/**
 * Copies the spilled lines into `<dir>/catalog.jsonl` in opm's order, hashing and indexing them:
 * written as a spill-named file beside it (removed if this fails, and by the next unpack into that
 * directory if the process died) and renamed over it.
 */
async function writeInOrder(spillFile: string, records: readonly SpilledRecord[], dir: string): Promise<StoredCatalog> {
  const file = path.join(dir, CATALOG_FILE);
  const partial = path.join(dir, `${SPILL_PREFIX}${CATALOG_FILE}-${randomBytes(6).toString('hex')}`);
  const hash = createHash('sha256');
  const metas: IndexedMeta[] = [];
  let input: number | undefined;
  let out: FileHandle | undefined;
  let done = false;
  // The file an I/O failure is named by.
  let at = dir;
  try {
    await mkdir(dir, { recursive: true });
    await removeSpills(dir);
    at = spillFile;
    input = openSync(spillFile, 'r');
    at = partial;
    out = await open(partial, 'wx', 0o644);
    let buf = Buffer.allocUnsafe(WRITE_CHUNK);
    let used = 0;
    const flush = async (): Promise<void> => {
      const chunk = buf.subarray(0, used);
      hash.update(chunk);
      let written = 0;
      while (written < chunk.length) written += (await (out as FileHandle).write(chunk, written, chunk.length - written)).bytesWritten;
      used = 0;
    };
    let offset = 0;
    for (const r of inWriteOrder(records)) {
      metas.push(indexedMeta(r, offset, r.length));
      offset += r.length;
      if (used + r.length > buf.length) await flush();
      if (r.length > buf.length) buf = Buffer.allocUnsafe(r.length);
      let read = 0;
      while (read < r.length) {
        const got = readSync(input, buf, used + read, r.length - read, r.start + read);
        if (got === 0) throw storeFailure(spillFile, `ends at byte ${r.start + read}, before the ${r.start + r.length} its index names`);
        read += got;
      }
      used += r.length;
    }
    await flush();
    await out.close();
    out = undefined;
    at = file;
    await rename(partial, file);
    done = true;
    return { file, size: offset, sha256: hash.digest('hex'), lastModified: new Date(), metas };
  } catch (err) {
    throw err instanceof BinnacleError ? err : storeFailure(at, err);
  } finally {
    // Each step on its own: a failure here must neither hide the error above nor skip the rest.
    try {
      if (input !== undefined) closeSync(input);
    } catch {
      // nothing left to do with it
    }
    await out?.close().catch(() => undefined);
    if (!done) await rm(partial, { force: true }).catch(() => undefined);
  }
}
