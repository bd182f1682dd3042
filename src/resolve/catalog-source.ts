/**
 * Loading catalogs for resolution (the only part of `src/resolve` that does I/O): a file or
 * directory is rendered by `src/catalog` (FBC, package-manifest or bundle layouts), and an
 * `http(s)://` URL is read as a catalog server's `/api/v1/all` JSON Lines stream.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { loadFbcStream, render } from '../catalog/index.js';
import { BinnacleError, errorMessage } from '../util/errors.js';
import type { CatalogInput } from './catalog-index.js';

export interface LoadedCatalog {
  catalog: CatalogInput;
  /** Problems that left parts of the catalog out (each names its file or package). */
  problems: string[];
}

/** Refuse catalog responses larger than this; far above any real catalog. */
const MAX_BYTES = 512 * 1024 * 1024;

async function loadUrl(url: string, name: string, priority: number): Promise<LoadedCatalog> {
  const target = /\/api\/v1\/all\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/api/v1/all`;
  let text: string;
  try {
    const res = await fetch(target, { signal: AbortSignal.timeout(60_000) });
    if (!res.ok) throw new BinnacleError('CATALOG_FETCH_FAILED', `${target}: the catalog server answered ${res.status} ${res.statusText}`);
    const len = Number(res.headers.get('content-length') ?? '0');
    if (len > MAX_BYTES) throw new BinnacleError('CATALOG_TOO_LARGE', `${target}: ${len} bytes is over the ${MAX_BYTES}-byte limit`);
    text = await res.text();
  } catch (err) {
    if (err instanceof BinnacleError) throw err;
    throw new BinnacleError('CATALOG_FETCH_FAILED', `${target}: cannot fetch the catalog: ${errorMessage(err)}`, { cause: err });
  }
  const loaded = await loadFbcStream(Readable.from([text]), target, { maxFileBytes: MAX_BYTES });
  const problems = loaded.result.errors().map((p) => [p.file ?? target, p.field, p.message].filter((x) => x !== undefined && x !== '').join(': '));
  return { catalog: { name, priority, config: loaded.config }, problems };
}

/** Loads one catalog; throws `BinnacleError` when the source cannot be read at all. */
export async function loadCatalog(source: string, opts: { name?: string; priority?: number } = {}): Promise<LoadedCatalog> {
  const priority = opts.priority ?? 0;
  if (/^https?:\/\//.test(source)) return loadUrl(source, opts.name ?? new URL(source).host, priority);
  try {
    await stat(source);
  } catch {
    throw new BinnacleError('CATALOG_NOT_FOUND', `${source}: no such file or directory (give a catalog directory, file or http(s) URL)`);
  }
  const name = opts.name ?? path.basename(path.resolve(source));
  const out = await render([source]);
  return { catalog: { name, priority, config: out.config }, problems: out.failures.map((f) => f.message) };
}
