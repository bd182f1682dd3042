/**
 * Unpacking untrusted tar streams (image layers, git/HTTP tarballs) into a directory without ever
 * writing outside it. node-tar only parses; every write is ours, after these checks:
 * - entry paths that are absolute or contain `..` are refused;
 * - symlinks must resolve inside the root, judged from the link's real parent directory (so a
 *   chain of links cannot climb out); absolute targets are re-rooted, as they would be in a container;
 * - hardlinks must name an existing regular file inside the root (not a symlink: link(2) would
 *   copy the link itself to another directory, where its relative target can reach outside);
 * - devices, FIFOs and unknown entry types are refused;
 * - the sum of file sizes may not exceed `maxBytes` (checked from headers, before writing);
 * - files are created with O_EXCL after removing what was there, so a write never follows a link.
 * OCI whiteouts (`.wh.NAME`, `.wh..wh..opq`) delete what lower layers left.
 */
import { once } from 'node:events';
import { chmod, link, lstat, mkdir, open, readdir, readlink, realpath, rm, symlink } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { Parser, type ReadEntry } from 'tar';
import { BinnacleError, InputError, errorMessage } from '../util/errors.js';
import { isInside, quotedPath } from './image-path.js';
import { UnsafeEntryError, type UnsafeReason } from './unsafe-entry.js';

export const DEFAULT_MAX_BYTES = 1024 * 1024 * 1024;

export interface UnpackLimits {
  /** Most uncompressed file bytes in total (default 1 GiB). Pass `budget` to share it across layers. */
  maxBytes?: number;
  /** Most entries (default 1,000,000). */
  maxEntries?: number;
  /** A running total shared by several calls, e.g. all layers of one image. */
  budget?: { bytes: number; entries: number };
  /** What the stream is, for error messages (e.g. `layer sha256:…`). */
  source?: string;
  /** Apply OCI whiteouts (default true); plain tarballs may want them as ordinary files. */
  whiteouts?: boolean;
}

export interface UnpackResult {
  entries: number;
  bytes: number;
}

export { UnsafeEntryError, type UnsafeReason } from './unsafe-entry.js';

const WHITEOUT_PREFIX = '.wh.';
const OPAQUE = '.wh..wh..opq';

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === code;
}

class Unpacker {
  private readonly maxBytes: number;
  private readonly maxEntries: number;
  private readonly budget: { bytes: number; entries: number };
  private readonly source: string;
  private readonly whiteouts: boolean;
  /** Paths this stream wrote, so an opaque whiteout spares them. */
  private readonly written = new Set<string>();
  private bytes = 0;
  private entries = 0;

  constructor(
    private readonly root: string,
    limits: UnpackLimits,
    /** Aborted when the archive fails, so an entry whose body will never end stops waiting. */
    private readonly abort?: AbortSignal,
  ) {
    this.maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxEntries = limits.maxEntries ?? 1_000_000;
    this.budget = limits.budget ?? { bytes: 0, entries: 0 };
    this.source = limits.source ?? 'archive';
    this.whiteouts = limits.whiteouts ?? true;
  }

  result(): UnpackResult {
    return { entries: this.entries, bytes: this.bytes };
  }

  private unsafe(reason: UnsafeReason, entry: string, message: string): UnsafeEntryError {
    return new UnsafeEntryError(reason, this.source, entry, message);
  }

  /** The archive path as a clean relative path, or a refusal. '' is the root itself. */
  private cleanPath(raw: string, what = 'path'): string {
    if (raw.includes('\0')) throw this.unsafe('path', raw, `${what} contains a NUL byte`);
    if (raw.startsWith('/') || /^[A-Za-z]:[\\/]/.test(raw) || raw.startsWith('\\')) throw this.unsafe('path', raw, `${what} is absolute`);
    const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
    if (parts.includes('..')) throw this.unsafe('path', raw, `${what} contains ".." and could escape the destination`);
    return parts.join('/');
  }

  /**
   * Directories already proven to be real and inside the root, by relative path. Forgotten whenever
   * a symlink appears or anything is removed, since either can change what a path resolves to.
   */
  private readonly safeDirs = new Map<string, string>();

  /** Real path of the entry's parent directory, created if needed, and proven inside the root. */
  private async parentDir(entry: string, rel: string, create: boolean): Promise<string | undefined> {
    const known = this.safeDirs.get(posix.dirname(rel));
    if (known !== undefined) return known;
    const parent = join(this.root, posix.dirname(rel));
    if (create) {
      try {
        await mkdir(parent, { recursive: true });
      } catch (err) {
        if (isErrno(err, 'ENOTDIR') || isErrno(err, 'EEXIST')) throw this.unsafe('path', entry, 'a parent of this entry is a file, not a directory');
        if (isErrno(err, 'ENOENT') || isErrno(err, 'ELOOP')) throw await this.brokenParent(entry, rel);
        throw err;
      }
    }
    let real: string;
    try {
      real = await realpath(parent);
    } catch (err) {
      if (!create && (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR'))) return undefined;
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ELOOP')) throw await this.brokenParent(entry, rel);
      throw err;
    }
    if (!isInside(this.root, real)) throw this.unsafe('link', entry, 'its parent directory resolves, through a symlink, outside the destination');
    this.safeDirs.set(posix.dirname(rel), real);
    return real;
  }

  /**
   * Why the parent of `rel` cannot be made: an earlier entry left a symlink on the way whose
   * target does not exist (mkdir would have to create the directory through it) or that leads
   * to a loop of symlinks. Names the first such link and its target.
   */
  private async brokenParent(entry: string, rel: string): Promise<UnsafeEntryError> {
    const parts = posix.dirname(rel).split('/');
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join('/');
      const abs = join(this.root, at);
      const st = await lstat(abs).catch(() => undefined);
      if (st === undefined) break;
      if (!st.isSymbolicLink()) continue;
      const why = await realpath(abs).then(
        () => undefined,
        (err: unknown) => (isErrno(err, 'ELOOP') ? 'which leads to a loop of symlinks' : 'which does not exist'),
      );
      if (why !== undefined) return this.unsafe('link', entry, `its parent "${at}" is a symlink to "${await readlink(abs).catch(() => '?')}", ${why}`);
    }
    return this.unsafe('link', entry, 'a parent of this entry is a symlink to nothing or a loop of symlinks');
  }

  /** Remove whatever is at `path` (a file, link or directory from an earlier entry or layer). */
  private async clear(path: string, keepDir: boolean): Promise<void> {
    try {
      const st = await lstat(path);
      if (keepDir && st.isDirectory()) return;
      this.safeDirs.clear();
      await rm(path, { recursive: true, force: true });
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
    }
  }

  async handle(e: ReadEntry): Promise<void> {
    const raw = e.path;
    this.entries++;
    this.budget.entries++;
    if (this.budget.entries > this.maxEntries) throw this.unsafe('size', raw, `more than ${this.maxEntries} entries`);
    const rel = this.cleanPath(raw);
    if (rel === '') {
      e.resume();
      return;
    }
    const base = posix.basename(rel);
    if (this.whiteouts && base.startsWith(WHITEOUT_PREFIX)) {
      e.resume();
      await this.whiteout(raw, rel, base);
      return;
    }
    switch (e.type) {
      case 'File':
      case 'OldFile':
      case 'ContiguousFile':
        await this.file(e, raw, rel);
        break;
      case 'Directory':
        e.resume();
        await this.directory(raw, rel, e.mode ?? 0o755);
        break;
      case 'SymbolicLink':
        e.resume();
        await this.symlink(raw, rel, e.linkpath ?? '');
        break;
      case 'Link':
        e.resume();
        await this.hardlink(raw, rel, e.linkpath ?? '');
        break;
      case 'CharacterDevice':
      case 'BlockDevice':
      case 'FIFO':
        throw this.unsafe('type', raw, `${e.type} entries are not allowed`);
      default:
        throw this.unsafe('type', raw, `unsupported entry type ${e.type}`);
    }
    this.written.add(rel);
  }

  private async file(e: ReadEntry, raw: string, rel: string): Promise<void> {
    this.bytes += e.size;
    this.budget.bytes += e.size;
    if (this.budget.bytes > this.maxBytes) {
      throw this.unsafe('size', raw, `unpacking it would exceed the limit of ${this.maxBytes} bytes (declared size ${e.size})`);
    }
    const parent = await this.parentDir(raw, rel, true);
    if (parent === undefined) return;
    const target = join(parent, posix.basename(rel));
    // 'wx' = O_CREAT|O_EXCL: never follows anything at the path; if something is there, remove it first.
    let handle = await open(target, 'wx', 0o600).catch((err: unknown) => {
      if (isErrno(err, 'EEXIST')) return undefined;
      throw err;
    });
    if (handle === undefined) {
      await this.clear(target, false);
      handle = await open(target, 'wx', 0o600);
    }
    const out = handle.createWriteStream();
    const aborted = this.abort;
    await new Promise<void>((resolve, reject) => {
      // The archive failed under this entry (a cut-off stream): its body will never end, so
      // stop waiting and close the file rather than hang with it open.
      const onAbort = (): void => {
        out.destroy();
        reject(aborted?.reason instanceof Error ? aborted.reason : new Error('archive failed'));
      };
      if (aborted?.aborted === true) return onAbort();
      aborted?.addEventListener('abort', onAbort, { once: true });
      out.on('close', () => {
        aborted?.removeEventListener('abort', onAbort);
        resolve();
      });
      out.on('error', reject);
      e.on('error', reject);
      e.pipe(out);
    });
    await chmod(target, ((e.mode ?? 0o644) & 0o777) | 0o600);
  }

  private async directory(raw: string, rel: string, mode: number): Promise<void> {
    const parent = await this.parentDir(raw, rel, true);
    if (parent === undefined) return;
    const target = join(parent, posix.basename(rel));
    await this.clear(target, true);
    await mkdir(target, { recursive: true });
    // Keep the owner able to write and list, or later entries and cache GC could not proceed.
    await chmod(target, (mode & 0o777) | 0o700);
    // Just made (or found) as a real directory under a proven parent: its children need no realpath.
    this.safeDirs.set(rel, target);
  }

  private async symlink(raw: string, rel: string, linkpath: string): Promise<void> {
    if (linkpath === '') throw this.unsafe('link', raw, 'symlink has an empty target');
    const parent = await this.parentDir(raw, rel, true);
    if (parent === undefined) return;
    const parentRel = relative(this.root, parent).split(sep).filter((p) => p !== '');
    let target: string;
    if (linkpath.startsWith('/')) {
      // Inside an image, "/x" means the image's own /x: point at it relatively instead.
      const parts = linkpath.split('/').filter((p) => p !== '' && p !== '.');
      if (parts.includes('..')) throw this.unsafe('link', raw, `symlink target "${linkpath}" contains ".."`);
      target = posix.relative(parentRel.join('/'), parts.join('/')) || '.';
    } else {
      const parts = linkpath.split('/').filter((p) => p !== '' && p !== '.');
      const ups = parts.findIndex((p) => p !== '..');
      const leading = ups < 0 ? parts.length : ups;
      // ".." after a name is judged by the OS through whatever that name is (maybe a link), so refuse it.
      if (parts.slice(leading).includes('..')) throw this.unsafe('link', raw, `symlink target "${linkpath}" has ".." after a path component`);
      if (leading > parentRel.length) throw this.unsafe('link', raw, `symlink target "${linkpath}" points outside the destination`);
      target = linkpath;
    }
    const at = join(parent, posix.basename(rel));
    await this.clear(at, false);
    await symlink(target, at);
    this.safeDirs.clear();
  }

  private async hardlink(raw: string, rel: string, linkpath: string): Promise<void> {
    let srcRel: string;
    try {
      srcRel = this.cleanPath(linkpath, 'hardlink target');
    } catch {
      throw this.unsafe('link', raw, `hardlink target "${linkpath}" points outside the destination`);
    }
    if (srcRel === '') throw this.unsafe('link', raw, 'hardlink to the root directory');
    const srcParent = await this.parentDir(raw, srcRel, false);
    const src = srcParent === undefined ? undefined : join(srcParent, posix.basename(srcRel));
    const st = src === undefined ? undefined : await lstat(src).catch(() => undefined);
    if (src === undefined || st === undefined) throw this.unsafe('link', raw, `hardlink target "${linkpath}" does not exist in the archive`);
    if (st.isDirectory()) throw this.unsafe('link', raw, `hardlink target "${linkpath}" is a directory`);
    // link(2) does not follow a symlink: it would copy the link itself to another directory, where
    // a relative target that stayed inside from its own directory can point outside the root.
    if (st.isSymbolicLink()) throw this.unsafe('link', raw, `hardlink target "${linkpath}" is a symlink`);
    if (!st.isFile()) throw this.unsafe('link', raw, `hardlink target "${linkpath}" is not a regular file`);
    const parent = await this.parentDir(raw, rel, true);
    if (parent === undefined) return;
    const at = join(parent, posix.basename(rel));
    await this.clear(at, false);
    await link(src, at);
  }

  private async whiteout(raw: string, rel: string, base: string): Promise<void> {
    this.safeDirs.clear();
    const parent = await this.parentDir(raw, rel, false);
    if (parent === undefined) return;
    const dirRel = posix.dirname(rel) === '.' ? '' : posix.dirname(rel);
    if (base === OPAQUE) {
      // Hide what lower layers put in this directory, but keep what this layer wrote.
      for (const name of await readdir(parent)) {
        const childRel = dirRel === '' ? name : `${dirRel}/${name}`;
        if (!this.written.has(childRel)) await rm(join(parent, name), { recursive: true, force: true });
      }
      return;
    }
    const victim = base.slice(WHITEOUT_PREFIX.length);
    if (victim === '' || victim === '.' || victim === '..') throw this.unsafe('path', raw, 'malformed whiteout');
    await rm(join(parent, victim), { recursive: true, force: true });
  }
}


/**
 * An entry that could not be written for a reason of the file system, not of the archive's
 * checks: a name too long for it is the archive's (OCI_UNSAFE_PATH), the rest (no space, no
 * permission) OCI_UNPACK naming the entry and the system's reason.
 */
function writeFailure(source: string, entry: string, err: unknown): BinnacleError {
  if (isErrno(err, 'ENAMETOOLONG')) return new UnsafeEntryError('path', source, entry, 'its path is too long for the file system (ENAMETOOLONG)');
  return new InputError('OCI_UNPACK', `entry ${quotedPath(entry)}: cannot write it: ${errorMessage(err)}`, { file: source, cause: err });
}

/** What node-tar attaches to the errors it emits. */
interface TarError extends Error {
  tarCode?: string;
  code?: string;
  header?: { path?: string; type?: string; size?: number };
  entry?: { path?: string; type?: string; size?: number; blockRemain?: number };
}

/**
 * Why node-tar (or the decompressor under it) refused the archive, in words that name the class
 * of damage and, where the parser knows it, the entry: a bad header checksum, a header without a
 * path or with a link target where none belongs, an unreadable number field, a truncated archive
 * or gzip stream, corrupt gzip data, no tar at all.
 */
export function archiveProblem(err: unknown, bytesRead: number): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as TarError;
  const msg = e.message.replace(/^TAR_[A-Z_]+: /, '');
  if (e.tarCode === 'TAR_ENTRY_INVALID') return headerProblem(e, msg);
  if (e.tarCode === 'TAR_BAD_ARCHIVE') {
    const truncated = /^Truncated input \(needed (\d+) more bytes, only (\d+) available\)/.exec(msg);
    if (truncated !== null) {
      const path = e.entry?.path;
      const short = Number(truncated[1]) - Number(truncated[2]);
      return `truncated archive: it ends inside ${path === undefined || path === '' ? 'an entry' : `entry ${quotedPath(path)}`}${e.entry?.size === undefined ? '' : ` (declared size ${e.entry.size} bytes)`}, ${short} bytes short`;
    }
    if (msg === 'Unrecognized archive format') return bytesRead === 0 ? 'the archive is empty' : 'no tar entry found: this is not a tar archive, nor a gzip or zstd of one';
  }
  if (e.message.startsWith('zlib: ')) {
    const what = e.message.slice('zlib: '.length);
    return e.code === 'Z_BUF_ERROR' ? `truncated gzip stream: ${what}` : `bad gzip data: ${what}`;
  }
  if (/Compression method not supported: Zstd/.test(e.message)) return `zstd-compressed, which this Node.js ${process.version} cannot decompress (zstd needs Node.js 22.15 or later)`;
  return msg;
}

/** A header node-tar refused (TAR_ENTRY_INVALID); `msg` is its message without the code. */
function headerProblem(e: TarError, msg: string): string {
  const header = e.header;
  // Without a header, the Header constructor threw: a number field it could not decode.
  if (header === undefined) return `bad header: a number field (size, mode, owner or time) cannot be read: ${msg}`;
  const named = header.path !== undefined && header.path !== '' ? `entry ${quotedPath(header.path)}` : 'an entry';
  switch (msg) {
    case 'checksum failure':
      return `bad header checksum at ${named}: the header is damaged, or this is not a tar archive`;
    case 'path is required':
      return 'bad header: an entry has no path';
    case 'linkpath required':
      return `bad header: ${named} is a ${header.type ?? 'link'} without a link target`;
    case 'linkpath forbidden':
      return `bad header: ${named} is a ${header.type ?? 'file'} but has a link target, which only links have`;
    default:
      return `bad header at ${named}: ${msg}`;
  }
}

/**
 * Unpack a tar stream (plain, gzip or zstd: node-tar detects it) into `destDir`, which is created.
 * Rejects unsafe entries with UnsafeEntryError naming the entry. On failure `destDir` holds a
 * partial tree: callers unpack into a temporary directory and rename on success.
 */
export async function unpackTarSafely(stream: Readable | AsyncIterable<Uint8Array>, destDir: string, limits: UnpackLimits = {}): Promise<UnpackResult> {
  await mkdir(destDir, { recursive: true });
  const root = await realpath(destDir);
  const abort = new AbortController();
  const unpacker = new Unpacker(root, limits, abort.signal);
  const source = limits.source ?? 'archive';
  const parser = new Parser({ strict: true });

  let failure: unknown;
  let signalFailure: () => void = () => undefined;
  const failed = new Promise<void>((resolve) => {
    signalFailure = resolve;
  });
  const fail = (err: unknown): void => {
    if (failure === undefined) {
      failure = err;
      signalFailure();
      abort.abort(err);
    }
  };

  let chain = Promise.resolve();
  parser.on('entry', (entry: ReadEntry) => {
    chain = chain.then(async () => {
      if (failure !== undefined) {
        entry.resume();
        return;
      }
      try {
        await unpacker.handle(entry);
      } catch (err) {
        entry.resume();
        fail(err instanceof BinnacleError ? err : writeFailure(source, entry.path, err));
      }
    });
  });
  let bytesRead = 0;
  const badArchive = (err: unknown): InputError => new InputError('OCI_BAD_ARCHIVE', `not a valid tar archive: ${archiveProblem(err, bytesRead)}`, { file: source, cause: err });
  parser.on('error', (err: unknown) => fail(badArchive(err)));
  const ended = new Promise<void>((resolve) => parser.on('end', () => resolve()));
  /** Feeds the parser; false when it wants a drain. It throws for what it cannot even start on (zstd without zlib support). */
  const feed = (chunk?: Buffer): boolean => {
    try {
      if (chunk === undefined) {
        parser.end();
        return true;
      }
      bytesRead += chunk.length;
      return parser.write(chunk);
    } catch (err) {
      fail(badArchive(err));
      return true;
    }
  };

  try {
    for await (const chunk of stream) {
      if (failure !== undefined) break;
      if (!feed(Buffer.from(chunk as Uint8Array))) await Promise.race([once(parser, 'drain'), failed]);
    }
  } catch (err) {
    // The source failed (e.g. a digest mismatch at the end of a blob): that is the error to report.
    fail(err);
  }
  if (failure === undefined) {
    feed();
    await Promise.race([ended, failed]);
  }
  await chain;
  if (stream instanceof Readable) stream.destroy();
  if (failure !== undefined) {
    if (failure instanceof BinnacleError) throw failure;
    // Only the source stream's own failures are left (entries' and the parser's are named above).
    throw new InputError('OCI_UNPACK', `reading the archive failed: ${errorMessage(failure)}`, { file: source, cause: failure });
  }
  return unpacker.result();
}
