/** What a file is, said in a message: "is a device", "which is a FIFO", … (one wording for every reader of files). */
import type { Stats } from 'node:fs';

export function fileKindOf(st: Stats): string {
  if (st.isFile()) return 'a file';
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'neither a file nor a directory';
}
