/**
 * Loading catalogs for resolution (the only part of `src/resolve` that does I/O): a file or
 * directory is rendered by `src/catalog` (FBC, package-manifest or bundle layouts), and an
 * `http(s)://` URL is read as a catalog server's `/api/v1/all` JSON Lines stream.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { bodyFailureReason, declaredLength, httpRequest, noAnswerReason } from '../util/http-request.js';
import { DEFAULT_MAX_CATALOG_BYTES, loadFbcStream } from '../catalog/index.js';
import { render } from '../catalog-render/index.js';
import { BinnacleError, httpStatusClass } from '../util/errors.js';
import { redactText, redactUrl, splitUserinfo } from '../util/redact.js';
import type { CatalogInput } from './catalog-index.js';

export interface LoadedCatalog {
  catalog: CatalogInput;
  /** Problems that left parts of the catalog out (each names its file or package). */
  problems: string[];
}

/** How long a catalog server has to send the whole catalog. */
export const DEFAULT_CATALOG_TIMEOUT_MS = 60_000;

export interface LoadCatalogOptions {
  name?: string;
  priority?: number;
  /** Largest catalog response accepted, in bytes as decoded (gzipped or not), counted as it arrives (chunked or not). */
  maxBytes?: number;
  /** Deadline for the whole response. */
  timeoutMs?: number;
}

/** The body's chunks, failing as soon as more than `limit` bytes came (the rest is never read). */
async function* capped(body: Readable, target: string, limit: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (total > limit) throw new BinnacleError('input', 'CATALOG_TOO_LARGE', `${target}: the catalog response is over the ${limit}-byte limit (stopped reading at ${total} bytes)`);
    yield buf;
  }
}

async function loadUrl(url: string, name: string, priority: number, opts: LoadCatalogOptions): Promise<LoadedCatalog> {
  const target = /\/api\/v1\/all\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/api/v1/all`;
  const limit = opts.maxBytes ?? DEFAULT_MAX_CATALOG_BYTES;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CATALOG_TIMEOUT_MS;
  const shown = redactUrl(target);
  let loaded: Awaited<ReturnType<typeof loadFbcStream>>;
  try {
    // Userinfo is sent as Basic auth (never in the URL), and never shown.
    const { url: bare, credentials } = splitUserinfo(target);
    const headers: Record<string, string> = credentials === undefined ? {} : { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` };
    // Asked for gzipped (catalogd and Binnacle's catalog server compress when asked); the cap below counts decoded bytes.
    const res = await httpRequest(bare, { headers, gzip: true, signal: AbortSignal.timeout(timeoutMs) }).catch((err: unknown) => {
      throw new BinnacleError('transient', 'CATALOG_FETCH_FAILED', `${shown}: cannot fetch the catalog: ${redactText(noAnswerReason(err, target, timeoutMs))}`, { cause: err });
    });
    if (res.status < 200 || res.status >= 300) {
      res.discard();
      throw new BinnacleError(httpStatusClass(res.status), 'CATALOG_FETCH_FAILED', `${shown}: the catalog server answered ${res.status} ${res.statusText}`);
    }
    const len = declaredLength(res);
    if (len !== undefined && len > limit) {
      res.body.destroy();
      throw new BinnacleError('input', 'CATALOG_TOO_LARGE', `${shown}: ${len} bytes is over the ${limit}-byte limit`);
    }
    // The cap is enforced while reading: a chunked response has no length to check first.
    const body = Readable.from(capped(res.body, shown, limit));
    loaded = await loadFbcStream(body, shown, { maxFileBytes: limit });
  } catch (err) {
    if (err instanceof BinnacleError) throw err;
    // Failed while the answer was read: the deadline, or the body's own error (a gzip that is not).
    throw new BinnacleError('transient', 'CATALOG_FETCH_FAILED', `${shown}: reading the catalog failed: ${redactText(bodyFailureReason(err, target, timeoutMs))}`, { cause: err });
  }
  const problems = loaded.result.errors().map((p) => [p.file ?? shown, p.field, p.message].filter((x) => x !== undefined && x !== '').join(': '));
  return { catalog: { name, priority, config: loaded.config }, problems };
}

/** Loads one catalog; throws `BinnacleError` when the source cannot be read at all. */
export async function loadCatalog(source: string, opts: LoadCatalogOptions = {}): Promise<LoadedCatalog> {
  const priority = opts.priority ?? 0;
  if (/^https?:\/\//.test(source)) return loadUrl(source, opts.name ?? new URL(source).host, priority, opts);
  try {
    await stat(source);
  } catch {
    throw new BinnacleError('input', 'CATALOG_NOT_FOUND', `${source}: no such file or directory (give a catalog directory, file or http(s) URL)`);
  }
  const name = opts.name ?? path.basename(path.resolve(source));
  const out = await render([source]);
  return { catalog: { name, priority, config: out.config }, problems: out.failures.map((f) => f.message) };
}
