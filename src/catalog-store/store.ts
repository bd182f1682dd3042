/**
 * The catalog store: a catalog kept once on disk as one JSON Lines file (opm order) plus an
 * in-memory index of byte ranges per record (schema, package, name). The raw text is never
 * held in memory; the server streams ranges straight from the file.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { mkdir, open, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { InputError } from '../util/errors.js';
import type { DeclarativeConfig } from '../declcfg/index.js';
import { isRecord } from '../util/object.js';
import { orderedMetas } from '../catalog/write.js';

export interface IndexedMeta {
  schema: string;
  package: string;
  name: string;
  /** Byte offset of the line in the file, and its length including the newline. */
  start: number;
  length: number;
}

/** One record's index entry. As catalogd: `package` is the record's own package field, so olm.package records have none. */
export function indexedMeta(r: { schema: string; package: string; name: string }, start: number, length: number): IndexedMeta {
  return { schema: r.schema, package: r.schema === 'olm.package' ? '' : r.package, name: r.name, start, length };
}

export interface StoredCatalog {
  file: string;
  size: number;
  /** Hex sha256 of the file: the content's identity, used as ETag. */
  sha256: string;
  lastModified: Date;
  metas: IndexedMeta[];
}

export interface MetaFilter {
  schema?: string;
  package?: string;
  name?: string;
}

export const CATALOG_FILE = 'catalog.jsonl';

/** Writes `cfg` as `<dir>/catalog.jsonl` and returns its index. */
export async function storeCatalog(cfg: DeclarativeConfig, dir: string): Promise<StoredCatalog> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, CATALOG_FILE);
  const out = createWriteStream(file);
  const hash = createHash('sha256');
  const metas: IndexedMeta[] = [];
  let offset = 0;
  for (const m of orderedMetas(cfg)) {
    const line = Buffer.from(`${JSON.stringify(m.blob)}\n`);
    metas.push(indexedMeta(m, offset, line.length));
    offset += line.length;
    hash.update(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { file, size: offset, sha256: hash.digest('hex'), lastModified: new Date(), metas };
}

/** Re-indexes a stored `catalog.jsonl` (e.g. after a restart) by streaming it line by line. */
export async function openStoredCatalog(file: string): Promise<StoredCatalog> {
  const st = await stat(file);
  const hash = createHash('sha256');
  const metas: IndexedMeta[] = [];
  let offset = 0;
  let lineNo = 0;
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) {
    lineNo++;
    const length = Buffer.byteLength(line) + 1;
    hash.update(`${line}\n`);
    let blob: unknown;
    try {
      blob = JSON.parse(line);
    } catch {
      throw new InputError('CATALOG_STORE_CORRUPT', `line ${lineNo} is not JSON`, { file });
    }
    if (!isRecord(blob) || typeof blob.schema !== 'string') throw new InputError('CATALOG_STORE_CORRUPT', `line ${lineNo} has no schema`, { file });
    const pkg = blob.package;
    metas.push({
      schema: blob.schema,
      package: typeof pkg === 'string' ? pkg : '',
      name: typeof blob.name === 'string' ? blob.name : '',
      start: offset,
      length,
    });
    offset += length;
  }
  return { file, size: st.size, sha256: hash.digest('hex'), lastModified: st.mtime, metas };
}

export function filterMetas(store: StoredCatalog, f: MetaFilter): IndexedMeta[] {
  return store.metas.filter(
    (m) => (f.schema === undefined || m.schema === f.schema) && (f.package === undefined || m.package === f.package) && (f.name === undefined || m.name === f.name),
  );
}

/** Adjacent records merged into contiguous byte ranges, so a query is a few file reads. */
export function byteRanges(metas: readonly IndexedMeta[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const m of metas) {
    const last = out.at(-1);
    if (last !== undefined && last.end === m.start) last.end = m.start + m.length;
    else out.push({ start: m.start, end: m.start + m.length });
  }
  return out;
}

/** The size of one chunk of a sent answer: Node's TLS sends large writes at several times the rate of 64 KiB ones. */
const SEND_CHUNK = 1024 * 1024;
/** The size of one chunk `readRanges` yields: its consumer (gzip) holds several at once. */
const YIELD_CHUNK = 64 * 1024;
/** Pieces smaller than this are read synchronously: a page-cache read of a few KiB costs less than a trip through the thread pool. */
const SYNC_READ_MAX = 64 * 1024;

/**
 * Reads the given ranges of the store file, in order, into the buffers it is handed. A query such
 * as `schema=olm.package` is hundreds of scattered records of a few KiB: each read through the
 * thread pool cost over 0.1 ms of round trip (a diagnostic run, not a stored bench result: 76 ms
 * at p50 for 552 packages, 39 ms read synchronously), so small pieces are read synchronously (at most one chunk between two turns of the
 * event loop), large ones asynchronously.
 */
class RangeReader {
  private next = 0;
  private offset = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly file: string,
    private readonly ranges: readonly { start: number; end: number }[],
  ) {}

  /** Fills `buf` from where the last fill stopped; returns how many bytes it filled (0: the ranges are done). */
  async fill(buf: Buffer): Promise<number> {
    let at = 0;
    while (at < buf.length && this.next < this.ranges.length) {
      const r = this.ranges[this.next] as { start: number; end: number };
      const pos = r.start + this.offset;
      const want = Math.min(buf.length - at, r.end - pos);
      if (want <= 0) {
        this.next++;
        this.offset = 0;
        continue;
      }
      const got = want < SYNC_READ_MAX ? readSync(this.fh.fd, buf, at, want, pos) : (await this.fh.read(buf, at, want, pos)).bytesRead;
      if (got === 0) throw new InputError('CATALOG_STORE_CORRUPT', `the file ends at byte ${pos}, before the ${r.end} its index names`, { file: this.file });
      at += got;
      this.offset += got;
    }
    return at;
  }
}

function totalLength(ranges: readonly { start: number; end: number }[]): number {
  return ranges.reduce((n, r) => n + Math.max(0, r.end - r.start), 0);
}

/** Streams the bytes of the given ranges from the store file, in order, a fresh 64 KiB buffer a chunk (for a consumer that keeps them, such as gzip). */
export async function* readRanges(store: StoredCatalog, ranges: readonly { start: number; end: number }[]): AsyncGenerator<Buffer> {
  const fh = await open(store.file, 'r');
  try {
    const reader = new RangeReader(fh, store.file, ranges);
    let left = totalLength(ranges);
    while (left > 0) {
      const buf = Buffer.allocUnsafe(Math.min(YIELD_CHUNK, left));
      const n = await reader.fill(buf);
      if (n === 0) return;
      left -= n;
      yield n === buf.length ? buf : buf.subarray(0, n);
    }
  } finally {
    await fh.close();
  }
}

/**
 * Send buffers kept between answers, a few of each size. A fresh 1 MiB buffer for each answer is
 * external memory V8 counts toward its next collection: at a few answers a second (the
 * all-packages metas query, 15 MB) that set off a full, memory-reducing collection every 200 ms
 * (`--trace-gc`; the manager runs with `--optimize-for-size`), 30–50 ms each, which made the p99.
 * Only a buffer whose writes have all called back comes back: one a closed stream may still hold
 * is left to the collector.
 */
class SendBufferPool {
  private readonly free = new Map<number, Buffer[]>();

  constructor(private readonly keepEach: number) {}

  /** A kept buffer of `size` bytes, if there is one. */
  take(size: number): Buffer | undefined {
    return this.free.get(size)?.pop();
  }

  /** Keeps `buf` for another answer (up to `keepEach` of its size); only whole chunks come here. */
  give(buf: Buffer): void {
    const list = this.free.get(buf.length) ?? [];
    if (list.length >= this.keepEach) return;
    list.push(buf);
    this.free.set(buf.length, list);
  }

  /** Buffers kept of `size` bytes (for tests). */
  kept(size: number): number {
    return this.free.get(size)?.length ?? 0;
  }
}

/** Four of each size: two answers sending at once reuse theirs; more allocate and let go. */
export const sendBuffers = new SendBufferPool(4);

/**
 * Writes the bytes of the given ranges to `out`, in order, then ends it. Two buffers of one chunk
 * each (`chunk`, 1 MiB by default; one buffer when the answer fits in one), reused once `out` has
 * sent them, whole chunks taken from and given back to `sendBuffers`: an answer allocates nothing per chunk,
 * and most answers nothing at all, so a 68 MB `/api/v1/all` beside the manager's heap adds no
 * external memory and no full collections. The event loop gets a turn before each chunk is read
 * (a write the kernel takes at once calls back in the same turn). Returns early, ending nothing,
 * when `out` is closed first (the client went away, or the server cut off a client that stopped
 * reading: catalog-store/server.ts).
 */
export async function sendRanges(store: StoredCatalog, ranges: readonly { start: number; end: number }[], out: Writable, opts: { chunk?: number } = {}): Promise<void> {
  const total = totalLength(ranges);
  const chunk = opts.chunk ?? SEND_CHUNK;
  // A kept chunk, else one of the answer's size when it is smaller (such a buffer is not kept: its size is the answer's).
  const bufferFor = (): Buffer => sendBuffers.take(chunk) ?? Buffer.allocUnsafe(Math.min(chunk, total));
  const fh = await open(store.file, 'r');
  let closed = out.destroyed;
  // Writes not yet sent; a stream closed under them may never call back, so close releases them.
  const pending = new Set<() => void>();
  const onClose = (): void => {
    closed = true;
    for (const release of pending) release();
  };
  out.once('close', onClose);
  const buffers: Buffer[] = [];
  // Whether each buffer's last write called back: only then may another answer reuse it. A write
  // that calls back after the answer is done gives its buffer back itself.
  const written = [true, true];
  let done = false;
  try {
    const reader = new RangeReader(fh, store.file, ranges);
    const sent: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
    let left = total;
    for (let i = 0; !closed && left > 0; i = (i + 1) % 2) {
      await sent[i];
      if (closed) break;
      await setImmediate();
      if (closed) break;
      // The second buffer only when the answer needs it.
      const buf = buffers[i] ?? (buffers[i] = bufferFor());
      const n = await reader.fill(buf);
      if (n === 0) break;
      left -= n;
      written[i] = false;
      sent[i] = new Promise<void>((resolve) => {
        const release = (): void => {
          pending.delete(release);
          resolve();
        };
        pending.add(release);
        out.write(buf.subarray(0, n), () => {
          written[i] = true;
          release();
          if (done && buf.length === chunk) sendBuffers.give(buf);
        });
      });
    }
    if (!closed) out.end();
  } finally {
    out.off('close', onClose);
    await fh.close();
    done = true;
    buffers.forEach((buf, i) => {
      if (written[i] === true && buf.length === chunk) sendBuffers.give(buf);
    });
  }
}
