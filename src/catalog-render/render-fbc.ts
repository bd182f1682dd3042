/**
 * `catalog render -o json` of sources that are all file-based catalogs, without holding the
 * catalog. A first pass reads every record, checks it, and keeps only its place in the write
 * order; a record whose JSON text in its file is already exactly what render writes (true of
 * catalogs that opm or Binnacle wrote, the usual input) keeps just its byte range there, any
 * other keeps its output text. The second pass writes them in order, copying the ranges from the
 * files. Output is byte for byte what `render` and `fbcChunks` write; memory is the order index,
 * not the catalog (on the 185-package corpus catalog, the model the other path holds is about
 * 20 MB of heap, and holding it made V8 grow its young generation to its limit).
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { BinnacleError, type ValidationResult } from '../util/errors.js';
import type { Decoded } from '../catalog/decode.js';
import { scanFbcDir, type LoadOptions, type RawJson } from '../catalog/load.js';
import type { ConversionFailure } from './conversion-failure.js';
import { PROP_BUNDLE_OBJECT, PROP_CSV_METADATA, type Bundle } from '../declcfg/index.js';
import { detectSourceKind } from './source-kind.js';
import { fbcJsonRecord, inWriteOrder, writtenRecord, type WriteOrderKey } from '../catalog/write.js';

/**
 * What opm's render does to every reference: bundle objects and CSV metadata go to the end of
 * the properties (order otherwise kept), related images are sorted by image.
 */
export function normalizeBundle(b: Bundle): void {
  const isObject = (t: string): boolean => t === PROP_BUNDLE_OBJECT || t === PROP_CSV_METADATA;
  b.properties = [...b.properties.filter((p) => !isObject(p.type)), ...b.properties.filter((p) => isObject(p.type))];
  if (b.relatedImages !== undefined) b.relatedImages = [...b.relatedImages].sort((x, y) => (x.image < y.image ? -1 : x.image > y.image ? 1 : 0));
}

export function failuresFromResult(source: string, pkg: string | undefined, result: ValidationResult): ConversionFailure[] {
  return result.errors().map((p) => ({
    source,
    package: pkg,
    reason: p.rule,
    message: [p.file, p.field, p.message].filter((x) => x !== undefined && x !== '').join(': '),
  }));
}

/** A record's place in the write order and where its output text is. */
interface IndexedRecord extends WriteOrderKey {
  /** The output text, when it is not a range of a source file. */
  text?: string;
  copy?: { file: string; start: number; end: number };
}

export interface ToFbcResult {
  failures: ConversionFailure[];
  records: number;
  /** Records copied from their files rather than held. */
  copied: number;
  /** Whether anything rendered: a package or a bundle. */
  rendered: boolean;
}

/** Whether every source is an FBC directory or file on disk (not `-`, an image, or bundles). */
export async function allFbcSources(sources: readonly string[]): Promise<boolean> {
  for (const s of sources) {
    if (s === '-') return false;
    const kind = await detectSourceKind(s).catch(() => undefined);
    if (kind !== 'fbc') return false;
  }
  return sources.length > 0;
}

interface FileState {
  size: number;
  mtimeMs: number;
}

/**
 * Reads ranges of files in turn, with one file open at a time, refusing a file that changed
 * since it was read. Synchronous: the ranges are read one after another anyway, and a thread-pool
 * round trip for each of thousands of records cost more than the reads.
 */
class RangeReader {
  private current: { file: string; fd: number } | undefined;
  private scratch = Buffer.alloc(64 * 1024);

  constructor(private readonly seen: ReadonlyMap<string, FileState>) {}

  /** The range's text with a newline after it. */
  text(file: string, start: number, end: number): string {
    const fd = this.fd(file);
    const len = end - start;
    if (this.scratch.length < len + 1) this.scratch = Buffer.alloc(Math.max(len + 1, this.scratch.length * 2));
    if (orChanged(file, () => readSync(fd, this.scratch, 0, len, start)) !== len) throw changed(file);
    this.scratch[len] = 10;
    return this.scratch.toString('utf8', 0, len + 1);
  }

  private fd(file: string): number {
    if (this.current?.file === file) return this.current.fd;
    this.close();
    const fd = orChanged(file, () => openSync(file, 'r'));
    this.current = { file, fd };
    const st = fstatSync(fd);
    const before = this.seen.get(file);
    if (before === undefined || st.size !== before.size || st.mtimeMs !== before.mtimeMs) throw changed(file);
    return fd;
  }

  close(): void {
    const c = this.current;
    this.current = undefined;
    if (c !== undefined) closeSync(c.fd);
  }
}

function changed(file: string, detail?: string): BinnacleError {
  return new BinnacleError('transient', 'RENDER_SOURCE_CHANGED', `${file}: the file changed while it was being rendered${detail === undefined ? '' : ` (${detail})`}; render again`);
}

/** `read()`, with a file that vanished or can no longer be read between the passes reported as changed. */
function orChanged<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw changed(file, err instanceof Error ? err.message : String(err));
  }
}

/**
 * Renders FBC sources as opm-style JSON to `write`, record by record. A source with any load
 * problem is reported in `failures` and left out, as `render` does; nothing is written until
 * every source has been read.
 */
export async function toFbc(sources: readonly string[], opts: LoadOptions, write: (text: string) => void): Promise<ToFbcResult> {
  const failures: ConversionFailure[] = [];
  const kept: IndexedRecord[] = [];
  const seen = new Map<string, FileState>();
  for (const source of sources) {
    const records: IndexedRecord[] = [];
    const sink = (d: Decoded, file: string, raw: RawJson | undefined): void => {
      if (d.kind === 'bundle') normalizeBundle(d.value);
      const { blob, ...key } = writtenRecord(d);
      const text = fbcJsonRecord(blob);
      if (raw === undefined || raw.text !== text) {
        records.push({ ...key, text: `${text}\n` });
        return;
      }
      if (!seen.has(file)) {
        const st = orChanged(file, () => statSync(file));
        seen.set(file, { size: st.size, mtimeMs: st.mtimeMs });
      }
      records.push({ ...key, copy: { file, start: raw.start, end: raw.end } });
    };
    const { result } = await scanFbcDir(source, sink, opts).catch((err: unknown) => {
      if (!(err instanceof BinnacleError)) throw err;
      failures.push({ source, package: undefined, reason: err.code, message: err.message });
      return { result: undefined };
    });
    if (result === undefined) continue;
    if (!result.ok) failures.push(...failuresFromResult(source, undefined, result));
    else kept.push(...records);
  }
  const rendered = kept.some((r) => r.kind === 'package' || r.kind === 'bundle');
  if (!rendered && failures.length > 0) return { failures, records: 0, copied: 0, rendered };
  const reader = new RangeReader(seen);
  let copied = 0;
  try {
    for (const r of inWriteOrder(kept)) {
      if (r.copy === undefined) write(r.text ?? '');
      else {
        write(reader.text(r.copy.file, r.copy.start, r.copy.end));
        copied++;
      }
    }
  } finally {
    reader.close();
  }
  return { failures, records: kept.length, copied, rendered };
}
