/** The `local` source: a directory on this machine (for development), copied into the cache. */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InputError } from '../util/errors.js';
import { copyTree } from './tree.js';
import type { LocalSource } from './types.js';

export interface FetchedTree {
  /** The finished tree, in a work directory, for commitTree. */
  tree: string;
}

export async function fetchLocal(source: LocalSource, dest: string, maxBytes: number): Promise<FetchedTree> {
  const src = resolve(source.path);
  const st = await stat(src).catch(() => undefined);
  if (st === undefined) throw new InputError('SOURCE_LOCAL_MISSING', 'does not exist', { file: source.path });
  if (!st.isDirectory()) throw new InputError('SOURCE_NOT_DIRECTORY', 'is not a directory', { file: source.path });
  await copyTree(src, dest, { maxBytes, what: source.path });
  return { tree: dest };
}
