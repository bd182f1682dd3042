/**
 * File trees as content: a digest over a tree (sorted paths, entry types, modes, contents), a
 * safety scan (no devices, no links out of the root, a byte limit), and a safe copy of a
 * directory. Everything walks with lstat and never follows a symlink.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, constants, copyFile, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Stats } from 'node:fs';
import { UnsafeEntryError, type UnsafeReason } from '../oci/unsafe-entry.js';
import { InputError } from '../util/errors.js';

export const DEFAULT_MAX_TREE_BYTES = 1024 * 1024 * 1024;

export type TreeEntryReason = UnsafeReason;

/** An entry of a tree Binnacle refuses: the archive's error, with SOURCE_ codes, naming the tree and the entry. */
function unsafeEntry(reason: TreeEntryReason, tree: string, entry: string, message: string): UnsafeEntryError {
  return new UnsafeEntryError(reason, tree, entry, message, 'SOURCE');
}

export interface TreeLimits {
  /** Most bytes of file content in the tree (default 1 GiB). */
  maxBytes?: number;
  /** What the tree is, for error messages (default: its path). */
  what?: string;
}

/**
 * Why a symlink at `rel` (posix, relative to the root) with target `target` could leave the root,
 * or undefined when it stays inside. Judged on the text alone, so a dangling link is judged too:
 * only leading ".." are allowed (a ".." after a name would be resolved through that name, which
 * might itself be a link), and no more of them than the link's depth.
 */
export function symlinkEscape(rel: string, target: string): string | undefined {
  if (target === '') return 'symlink has an empty target';
  if (target.startsWith('/')) return `symlink target "${target}" is absolute`;
  const parts = target.split('/').filter((p) => p !== '' && p !== '.');
  const firstName = parts.findIndex((p) => p !== '..');
  const ups = firstName < 0 ? parts.length : firstName;
  if (parts.slice(ups).includes('..')) return `symlink target "${target}" has ".." after a path component`;
  const depth = posix.dirname(rel) === '.' ? 0 : posix.dirname(rel).split('/').length;
  if (ups > depth) return `symlink target "${target}" points outside the tree`;
  return undefined;
}

type Kind = 'file' | 'dir' | 'symlink';

function kindOf(st: Stats): Kind | undefined {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  if (st.isSymbolicLink()) return 'symlink';
  return undefined;
}

function typeName(st: Stats): string {
  if (st.isBlockDevice()) return 'a block device';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'an unsupported file type';
}

interface Visit {
  rel: string;
  abs: string;
  kind: Kind;
  st: Stats;
  linkTarget?: string;
}

/**
 * Walk `root` depth first (names sorted), checking each entry before `visit` sees it. The root
 * itself is not visited. Throws UnsafeEntryError (SOURCE_ codes) for devices, escaping links and size.
 */
async function walk(root: string, limits: TreeLimits, visit: (v: Visit) => Promise<void>): Promise<{ bytes: number; entries: number }> {
  const what = limits.what ?? root;
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_TREE_BYTES;
  const rootSt = await lstat(root);
  if (!rootSt.isDirectory()) throw new InputError('SOURCE_NOT_DIRECTORY', 'is not a directory', { file: what });
  let bytes = 0;
  let entries = 0;
  const go = async (relDir: string): Promise<void> => {
    const names = (await readdir(join(root, relDir))).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const name of names) {
      const rel = relDir === '' ? name : `${relDir}/${name}`;
      const abs = join(root, rel);
      const st = await lstat(abs);
      const kind = kindOf(st);
      if (kind === undefined) throw unsafeEntry('type', what, rel, `is ${typeName(st)}, which a bundle may not contain`);
      entries++;
      let linkTarget: string | undefined;
      if (kind === 'symlink') {
        linkTarget = await readlink(abs);
        const escape = symlinkEscape(rel, linkTarget);
        if (escape !== undefined) throw unsafeEntry('link', what, rel, escape);
      } else if (kind === 'file') {
        bytes += st.size;
        if (bytes > maxBytes) throw unsafeEntry('size', what, rel, `the tree exceeds the limit of ${maxBytes} bytes at this file (${st.size} bytes)`);
      }
      await visit({ rel, abs, kind, st, ...(linkTarget === undefined ? {} : { linkTarget }) });
      if (kind === 'dir') await go(rel);
    }
  };
  await go('');
  return { bytes, entries };
}

async function hashFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export interface TreeDigest {
  digest: string;
  bytes: number;
  entries: number;
}

/**
 * `sha256:<hex>` of a tree: one JSON line `[path, type, mode, content]` per entry, sorted by
 * path bytes, where content is the file's sha256, the link's target, or '' for a directory.
 * Modes are the permission bits (links have none). Also a safety scan: see TreeLimits.
 */
export async function digestTree(root: string, limits: TreeLimits = {}): Promise<TreeDigest> {
  const lines: { path: string; line: string }[] = [];
  const counts = await walk(root, limits, async (v) => {
    const mode = v.kind === 'symlink' ? 0 : v.st.mode & 0o7777;
    const content = v.kind === 'file' ? await hashFile(v.abs) : v.kind === 'symlink' ? (v.linkTarget ?? '') : '';
    lines.push({ path: v.rel, line: JSON.stringify([v.rel, v.kind, mode.toString(8), content]) });
  });
  lines.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const h = createHash('sha256');
  for (const l of lines) h.update(`${l.line}\n`);
  return { digest: `sha256:${h.digest('hex')}`, ...counts };
}

/**
 * Give every entry a canonical mode (directories 0755; files 0755 when any execute bit is set,
 * else 0644) so that the same content has the same digest whatever umask or archive made it.
 */
export async function normalizeModes(root: string, limits: TreeLimits = {}): Promise<void> {
  await chmod(root, 0o755);
  await walk(root, limits, async (v) => {
    if (v.kind === 'dir') await chmod(v.abs, 0o755);
    else if (v.kind === 'file') await chmod(v.abs, (v.st.mode & 0o111) !== 0 ? 0o755 : 0o644);
  });
}

/**
 * Copy the directory `src` to `dest` (created) without following links: files are copied,
 * directories made, symlinks recreated, after the same checks as digestTree. Hard-linked files
 * become independent copies.
 */
export async function copyTree(src: string, dest: string, limits: TreeLimits = {}): Promise<{ bytes: number; entries: number }> {
  await mkdir(dest, { recursive: true });
  return walk(src, limits, async (v) => {
    const to = join(dest, v.rel);
    if (v.kind === 'dir') await mkdir(to, { mode: 0o755 });
    else if (v.kind === 'symlink') await symlink(v.linkTarget ?? '', to);
    else {
      // EXCL: never write through something already at the destination.
      await copyFile(v.abs, to, constants.COPYFILE_EXCL);
      await chmod(to, (v.st.mode & 0o777) | 0o600);
    }
  });
}
