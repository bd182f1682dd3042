/**
 * sha256 digests: computing them, and checking that bytes streamed from a registry or read
 * from a cache are exactly the ones a descriptor promised.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { BinnacleError } from '../util/errors.js';

export function sha256Digest(data: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** `sha256:abc…` → `abc…`; callers have already checked the digest with isSha256Digest. */
export function digestHex(digest: string): string {
  return digest.slice(digest.indexOf(':') + 1);
}

/** Bytes did not hash to the digest they were fetched by: a corrupt or tampered blob. */
export class DigestMismatchError extends BinnacleError {
  readonly expected: string;
  readonly actual: string;
  constructor(what: string, expected: string, actual: string) {
    super('terminal', 'OCI_DIGEST_MISMATCH', `${what}: content digest ${actual} does not match the expected ${expected}; the content is corrupt or was tampered with`);
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * The bytes of `source`, failing at the end unless they hash to `expected`, and as soon as more
 * than `expectedSize` bytes arrive (when the size is known). Lazy: nothing is read until the result
 * is consumed, so an error can never fire before the consumer is listening.
 */
export function verifyStream(source: AsyncIterable<unknown>, what: string, expected: string, expectedSize?: number): Readable {
  async function* check(): AsyncGenerator<Buffer> {
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of source) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      bytes += buf.length;
      if (expectedSize !== undefined && bytes > expectedSize) {
        throw new BinnacleError('terminal', 'OCI_SIZE_MISMATCH', `${what}: more than the ${expectedSize} bytes its descriptor declares`);
      }
      hash.update(buf);
      yield buf;
    }
    if (expectedSize !== undefined && bytes !== expectedSize) {
      throw new BinnacleError('terminal', 'OCI_SIZE_MISMATCH', `${what}: ${bytes} bytes, but its descriptor declares ${expectedSize}`);
    }
    const actual = `sha256:${hash.digest('hex')}`;
    if (actual !== expected) throw new DigestMismatchError(what, expected, actual);
  }
  return Readable.from(check(), { objectMode: false });
}
