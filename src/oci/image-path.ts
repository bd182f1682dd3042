/**
 * Paths inside an unpacked image tree. The tree's contents are checked as they are unpacked
 * (unpack.ts), but an image also names paths in its config, such as the catalog label
 * `operators.operatorframework.io.index.configs.v1=/configs`: the image author writes them, so
 * they are as untrusted as the layers, and must lead to a directory of this tree and nowhere
 * else (not the host's `/dev/zero`, not another image's tree beside it in the cache).
 */
import { realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { InputError } from '../util/errors.js';
import { fileKindOf } from '../util/file-kind.js';

/** Whether the absolute path `p` is `root` or under it (both already real paths). */
export function isInside(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/** A path for a message: quoted, control characters escaped, cut at 100 characters. */
export const quotedPath = (p: string): string => JSON.stringify(p.length > 100 ? `${p.slice(0, 100)}…` : p);

function errnoOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
}


/**
 * The real path of the directory that the image label `label` (whose value is `value`) names
 * inside the unpacked image tree `root`; throws an InputError naming the label, its value and
 * why otherwise. Codes: OCI_UNSAFE_PATH (a `..` segment, a NUL byte), OCI_UNSAFE_LINK (a symlink
 * on the way leads out of the tree, or loops), OCI_LABEL_PATH_MISSING, OCI_LABEL_PATH_NOT_DIRECTORY.
 *
 * The value is read as a container reads a path: from the image's root, absolute (`/configs`) or
 * not (`configs`). A `..` segment is refused outright rather than stopped at the root, as a
 * container would stop it: no image builder writes one (opm and Binnacle write `/configs`), so
 * it is a mistake or an attempt to leave the image, and saying so is clearer than loading, or
 * failing to find, whatever directory the clamped path happens to name. That check is on the
 * text only; the path is then resolved with realpath and must still be inside the tree and a
 * directory, so no symlink on the way can lead elsewhere either.
 */
export async function imageLabelDir(root: string, label: string, value: string): Promise<string> {
  const refuse = (code: string, why: string): InputError => new InputError(code, `image label ${label}=${quotedPath(value)} ${why}`);
  if (value.includes('\0')) throw refuse('OCI_UNSAFE_PATH', 'contains a NUL byte');
  const parts = value.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw refuse('OCI_UNSAFE_PATH', 'contains ".." and could lead out of the image: it must name a directory inside the image, such as /configs');
  const shown = `/${parts.join('/')}`;
  const realRoot = await realpath(root);
  let real: string;
  try {
    real = await realpath(join(realRoot, ...parts));
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw refuse('OCI_LABEL_PATH_MISSING', `names ${quotedPath(shown)}, which is not in the image`);
    if (code === 'ELOOP') throw refuse('OCI_UNSAFE_LINK', `names ${quotedPath(shown)}, which leads to a loop of symlinks`);
    throw err;
  }
  if (!isInside(realRoot, real)) throw refuse('OCI_UNSAFE_LINK', `names ${quotedPath(shown)}, which leads, through a symlink, out of the image`);
  const st = await stat(real);
  if (!st.isDirectory()) throw refuse('OCI_LABEL_PATH_NOT_DIRECTORY', `names ${quotedPath(shown)}, which is ${fileKindOf(st)} in the image, not a directory`);
  return real;
}
