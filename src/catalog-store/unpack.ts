/**
 * Unpacking a catalog into the store without holding it: the ClusterCatalog controller's load.
 * A first pass reads every record of the FBC directory, writes its store line (compact JSON, as
 * `storeCatalog` writes it) to a spill file beside the store, and keeps only what the rest needs:
 * its place in opm's write order, the record as validation reads it (bundles' objects and CSV
 * metadata checked as they are read, then dropped: `withCheckOnlyPropertiesChecked`) and as
 * resolution reads it (`resolution-view.ts`). Validation runs on that; a catalog accepted is
 * written in opm's order by copying the spilled lines. The store file and its index are byte for
 * byte what `storeCatalog(loadFbcDir(...).config)` writes.
 *
 * Why: holding the parsed catalog whole while it was validated and stored was the manager's peak
 * (a 68 MB catalog parses into about 55 MB of heap; the resolution view is a fifth of that), and
 * catalogd, which streams to disk, peaks at a quarter of it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ValidationResult } from '../util/errors.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import type { Decoded } from '../catalog/decode.js';
import { configSink, scanFbcDir, type LoadOptions } from '../catalog/load.js';
import { withCheckOnlyPropertiesChecked } from '../catalog/model.js';
import { resolutionBundle, resolutionPackage } from '../catalog/resolution-view.js';
import { validateConfig } from '../catalog/validate.js';
import { inWriteOrder, writtenRecord, type WriteOrderKey } from '../catalog/write.js';
import { CATALOG_FILE, type IndexedMeta, type StoredCatalog } from './store.js';

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

/** A spilled record: its place in the write order and its line in the spill file. */
interface SpilledRecord extends WriteOrderKey {
  start: number;
  length: number;
}

const SPILL_PREFIX = '.unpack-';
/** Lines gathered before a write to the spill file, and the store file's write size. */
const WRITE_CHUNK = 1024 * 1024;

/** Appends lines to a file through one buffer, synchronously: the loader's sink is synchronous. */
class SpillWriter {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(WRITE_CHUNK);
  private used = 0;
  private open = true;
  size = 0;

  constructor(readonly file: string) {
    this.fd = openSync(file, 'wx', 0o600);
  }

  /** Appends `line`; returns its offset. */
  append(line: string): { start: number; length: number } {
    const length = Buffer.byteLength(line);
    if (this.used + length > this.buf.length) this.flush();
    if (length > this.buf.length) {
      writeSync(this.fd, line);
    } else {
      this.buf.write(line, this.used);
      this.used += length;
    }
    const start = this.size;
    this.size += length;
    return { start, length };
  }

  flush(): void {
    let at = 0;
    while (at < this.used) at += writeSync(this.fd, this.buf, at, this.used - at);
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
 * `accept` takes its validation, stores it as `<dir>/catalog.jsonl`. Never throws for bad content
 * (read `result` and `validation`); throws for I/O failures of the store. Spill files an earlier
 * unpack into the same parent left (a crash) are removed first: one catalog's unpacks never run
 * at once (the controller works on one ClusterCatalog name at a time).
 */
export async function unpackCatalog(root: string, dir: string, accept: (validation: ValidationResult) => boolean, opts: LoadOptions = {}): Promise<UnpackedCatalog> {
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true });
  await removeSpills(parent);
  const spill = new SpillWriter(path.join(parent, `${SPILL_PREFIX}${path.basename(dir)}-${randomBytes(6).toString('hex')}`));
  try {
    const checked = emptyDeclarativeConfig();
    const view = emptyDeclarativeConfig();
    const addChecked = configSink(checked);
    const addView = configSink(view);
    const records: SpilledRecord[] = [];
    const sink = (d: Decoded, file: string): void => {
      const { blob, ...key } = writtenRecord(d);
      records.push({ ...key, ...spill.append(`${JSON.stringify(blob)}\n`) });
      if (d.kind === 'bundle') {
        addChecked({ kind: 'bundle', value: withCheckOnlyPropertiesChecked(d.value) }, file, undefined);
        addView({ kind: 'bundle', value: resolutionBundle(d.value) }, file, undefined);
      } else if (d.kind === 'package') {
        addChecked(d, file, undefined);
        addView({ kind: 'package', value: resolutionPackage(d.value) }, file, undefined);
      } else {
        addChecked(d, file, undefined);
        addView(d, file, undefined);
      }
    };
    const { result } = await scanFbcDir(root, sink, opts);
    spill.finish();
    if (!result.ok) return { result, view };
    const validation = validateConfig(checked).result;
    if (!accept(validation)) return { result, validation, view };
    const stored = await writeInOrder(spill.file, records, dir);
    return { result, validation, view, stored };
  } finally {
    spill.close();
    await rm(spill.file, { force: true });
  }
}

async function removeSpills(parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => []);
  await Promise.all(names.filter((n) => n.startsWith(SPILL_PREFIX)).map((n) => rm(path.join(parent, n), { force: true })));
}

/** Copies the spilled lines into `<dir>/catalog.jsonl` in opm's order, hashing and indexing them. */
async function writeInOrder(spillFile: string, records: readonly SpilledRecord[], dir: string): Promise<StoredCatalog> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, CATALOG_FILE);
  const hash = createHash('sha256');
  const metas: IndexedMeta[] = [];
  const input = openSync(spillFile, 'r');
  const out = await open(file, 'w');
  try {
    let buf = Buffer.allocUnsafe(WRITE_CHUNK);
    let used = 0;
    const flush = async (): Promise<void> => {
      const chunk = buf.subarray(0, used);
      hash.update(chunk);
      let at = 0;
      while (at < chunk.length) at += (await out.write(chunk, at, chunk.length - at)).bytesWritten;
      used = 0;
    };
    let offset = 0;
    for (const r of inWriteOrder(records)) {
      // As catalogd: `package` is the record's own package field, so olm.package records have none.
      metas.push({ schema: r.schema, package: r.schema === 'olm.package' ? '' : r.package, name: r.name, start: offset, length: r.length });
      offset += r.length;
      if (used + r.length > buf.length) await flush();
      if (r.length > buf.length) buf = Buffer.allocUnsafe(r.length);
      let at = 0;
      while (at < r.length) {
        const got = readSync(input, buf, used + at, r.length - at, r.start + at);
        if (got === 0) throw new Error(`${spillFile}: ends before byte ${r.start + r.length}`);
        at += got;
      }
      used += r.length;
    }
    await flush();
    return { file, size: offset, sha256: hash.digest('hex'), lastModified: new Date(), metas };
  } finally {
    closeSync(input);
    await out.close();
  }
}
