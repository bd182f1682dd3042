/** Tests' tar archives, written entry by entry as given (unsafe paths, links and wrong sizes included). */
import { TAR_END, filePadding, ustarHeader } from './tar-writer.js';

export interface RawEntry {
  path: string;
  type?: string; // ustar typeflag
  body?: Buffer | string;
  link?: string;
  size?: number; // declared size, when it should differ from the body
  mode?: number;
}

/** A plain (not gzipped) tar of the entries, in order. */
export function tarOf(entries: readonly RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const type = e.type ?? '0';
    parts.push(ustarHeader(e.path, type, e.mode ?? (type === '5' ? 0o755 : 0o644), e.size ?? body.length, e.link ?? '', 0));
    if (body.length > 0) parts.push(body, filePadding(body.length));
  }
  parts.push(TAR_END);
  return Buffer.concat(parts);
}
