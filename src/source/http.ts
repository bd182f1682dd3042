/**
 * The `http` source: download a tarball (`.tar`, `.tar.gz`, `.tgz`; gzip is detected from the
 * bytes) to a work file with a size limit, hash it, check the expected sha256 before a single
 * entry is unpacked, then unpack it with src/oci's safe tar unpacker.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BinnacleError, InputError, httpStatusClass } from '../util/errors.js';
import { bodyFailureReason, declaredLength, httpRequest, noAnswerReason, type HttpAnswer } from '../util/http-request.js';
import { unpackTarSafely } from '../oci/index.js';
import { redactText, redactUrl, splitUserinfo } from '../util/redact.js';
import type { HttpSource, ProgressEvent } from './types.js';

export interface FetchedHttp {
  tree: string;
  sha256: string;
}

export interface HttpFetchOptions {
  maxBytes: number;
  /** Basic credentials (from the source's Secret); wins over userinfo in the URL. */
  credentials?: { username: string; password: string };
  timeoutMs?: number;
  onProgress?: (p: ProgressEvent) => void;
}

/** The archive may be a little larger than the files in it (headers, padding). */
function downloadLimit(maxBytes: number): number {
  return Math.max(Math.ceil(maxBytes * 1.1), maxBytes + 1024 * 1024);
}

export async function fetchHttp(source: HttpSource, work: string, opts: HttpFetchOptions): Promise<FetchedHttp> {
  // Credentials in the URL's userinfo go out as Basic auth (never in the URL) and
  // never into a message: every error names the URL with its userinfo masked.
  const url = redactUrl(source.url);
  const split = splitUserinfo(source.url);
  const bare = split.url;
  const credentials = opts.credentials ?? split.credentials;
  const timeoutMs = opts.timeoutMs ?? 300_000;
  const why = (err: unknown): string => redactText(noAnswerReason(err, bare, timeoutMs));
  let res: HttpAnswer;
  try {
    const headers: Record<string, string> = credentials === undefined ? {} : { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` };
    res = await httpRequest(bare, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new BinnacleError('transient', 'SOURCE_HTTP_FETCH', `cannot download ${url}: ${why(err)}`, { cause: err });
  }
  if (res.status < 200 || res.status >= 300) {
    res.discard();
    throw new BinnacleError(httpStatusClass(res.status), 'SOURCE_HTTP_STATUS', `downloading ${url} failed: HTTP ${res.status} ${res.statusText}`.trimEnd());
  }
  const limit = downloadLimit(opts.maxBytes);
  const total = declaredLength(res);
  if (total !== undefined && total > limit) {
    res.body.destroy();
    throw new InputError('SOURCE_TOO_LARGE', `the download is ${total} bytes, over the limit of ${limit} bytes`, { file: url });
  }

  const file = join(work, 'download');
  const hash = createHash('sha256');
  let bytes = 0;
  let lastReport = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      if (bytes > limit) {
        cb(new InputError('SOURCE_TOO_LARGE', `the download exceeds the limit of ${limit} bytes`, { file: url }));
        return;
      }
      hash.update(chunk);
      if (opts.onProgress !== undefined && (bytes - lastReport >= 256 * 1024 || bytes === total)) {
        lastReport = bytes;
        opts.onProgress({ phase: 'download', bytes, ...(total === undefined ? {} : { total }) });
      }
      cb(null, chunk);
    },
  });
  try {
    await pipeline(res.body, counter, createWriteStream(file));
  } catch (err) {
    if (err instanceof BinnacleError) throw err;
    throw new BinnacleError('transient', 'SOURCE_HTTP_FETCH', `downloading ${url} failed: ${redactText(bodyFailureReason(err, bare, timeoutMs))}`, { cause: err });
  }
  const sha256 = hash.digest('hex');
  if (source.sha256 !== undefined && source.sha256 !== sha256) {
    throw new InputError('SOURCE_DIGEST_MISMATCH', `sha256 of the download is ${sha256}, expected ${source.sha256}`, { file: url });
  }
  opts.onProgress?.({ phase: 'unpack', bytes });
  const tree = join(work, 'tree');
  // A plain tarball has no layers: `.wh.` names are ordinary files there.
  await unpackTarSafely(createReadStream(file), tree, { maxBytes: opts.maxBytes, source: url, whiteouts: false });
  return { tree, sha256 };
}
