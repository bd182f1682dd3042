/**
 * A deterministic tar writer for image layers: entries in the order given, uid/gid 0, no user or
 * group names, a fixed mtime, USTAR headers with a PAX record only when a path or size does not fit.
 * Byte-identical output for identical input is the whole point, so nothing from the host leaks in.
 */
export type TarEntry =
  | { type: 'dir'; path: string; mode: number }
  | { type: 'file'; path: string; mode: number; size: number }
  | { type: 'symlink'; path: string; mode: number; target: string };

const BLOCK = 512;
const USTAR_MAX_SIZE = 0o77777777777;

function writeString(buf: Buffer, value: string, offset: number, length: number): void {
  buf.write(value, offset, Math.min(Buffer.byteLength(value), length), 'utf8');
}

function writeOctal(buf: Buffer, value: number, offset: number, length: number): void {
  // length-1 octal digits, then NUL, as GNU tar and Go's archive/tar write them.
  buf.write(value.toString(8).padStart(length - 1, '0'), offset, length - 1, 'ascii');
}

export function ustarHeader(name: string, typeflag: string, mode: number, size: number, linkname: string, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  writeString(h, name, 0, 100);
  writeOctal(h, mode & 0o7777, 100, 8);
  writeOctal(h, 0, 108, 8);
  writeOctal(h, 0, 116, 8);
  writeOctal(h, size, 124, 12);
  writeOctal(h, mtime, 136, 12);
  h.fill(' ', 148, 156);
  h.write(typeflag, 156, 1, 'ascii');
  writeString(h, linkname, 157, 100);
  h.write('ustar\u000000', 257, 8, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'ascii');
  return h;
}

function paxRecord(key: string, value: string): string {
  // The length prefix counts itself, so grow it until it is stable.
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body);
  for (;;) {
    const next = Buffer.byteLength(body) + String(len).length;
    if (next === len) return `${len}${body}`;
    len = next;
  }
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** Header blocks (with a PAX header before them when needed) for one entry. */
export function entryHeader(entry: TarEntry, mtime = 0): Buffer {
  const name = entry.type === 'dir' && !entry.path.endsWith('/') ? `${entry.path}/` : entry.path;
  const linkname = entry.type === 'symlink' ? entry.target : '';
  const size = entry.type === 'file' ? entry.size : 0;
  const typeflag = entry.type === 'dir' ? '5' : entry.type === 'symlink' ? '2' : '0';
  const records: string[] = [];
  if (Buffer.byteLength(name) > 100 || !/^[\x20-\x7e]*$/.test(name)) records.push(paxRecord('path', name));
  if (Buffer.byteLength(linkname) > 100 || !/^[\x20-\x7e]*$/.test(linkname)) records.push(paxRecord('linkpath', linkname));
  if (size > USTAR_MAX_SIZE) records.push(paxRecord('size', String(size)));
  const main = ustarHeader(name.slice(0, 100), typeflag, entry.mode, size > USTAR_MAX_SIZE ? 0 : size, linkname.slice(0, 100), mtime);
  if (records.length === 0) return main;
  const pax = Buffer.from(records.join(''), 'utf8');
  const paxName = `PaxHeaders/${name.replace(/\/$/, '').split('/').pop() ?? 'entry'}`.slice(0, 100);
  return Buffer.concat([ustarHeader(paxName, 'x', 0o644, pax.length, '', mtime), pax, padding(pax.length), main]);
}

export function filePadding(size: number): Buffer {
  return padding(size);
}

/** Two zero blocks end an archive. */
export const TAR_END = Buffer.alloc(BLOCK * 2);
