/**
 * The catalog HTTP API (catalogd's layout): `GET|HEAD /api/v1/all` streams every record as JSON
 * Lines; `/api/v1/metas?schema=&package=&name=` filters. Responses carry `ETag` and
 * `Last-Modified` (304 on `If-None-Match` / `If-Modified-Since`) and are gzipped when the
 * client accepts it. Bodies are streamed from the store file, never built in memory.
 * Several catalogs are served as `/catalogs/<name>/api/v1/...`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Logger } from 'pino';
import { closeServer, createSafeServer, listenOn, safeHandler, sendPlain, type SafeHandler, type ServingTls } from '../util/http-server.js';
import { byteRanges, filterMetas, readRanges, sendRanges, type MetaFilter, type StoredCatalog } from './store.js';

/** Where the handler finds catalogs; a function so the controller can swap catalogs live. */
export type CatalogLookup = ReadonlyMap<string, StoredCatalog> | ((name: string) => StoredCatalog | undefined);

export interface CatalogHandlerOptions {
  /** Catalogs served under `/catalogs/<name>/api/v1/...`. */
  catalogs?: CatalogLookup;
  /** A catalog served at the root, `/api/v1/...`. */
  root?: StoredCatalog;
  /** How long an answer may hand its connection nothing before it is cut off (default 5 minutes). */
  stallMs?: number;
  logger?: Logger;
}

const META_PARAMS = new Set(['schema', 'package', 'name']);
/** Answers sent with 1 MiB buffers (2 each, catalog-store/store.ts) at once; the others at the same time get 64 KiB ones, never a wait. */
const MAX_LARGE_SENDS = 8;
const LARGE_CHUNK = 1024 * 1024;
const SMALL_CHUNK = 64 * 1024;
/**
 * An answer that hands the connection nothing more for this long (the client stopped reading) is
 * cut off: otherwise it holds its connection, file and buffers for good, the request's idle timeout
 * being off while it is answered. Progress is any byte handed on; the kernel wakes a writer only
 * once much of its buffer has drained, so this is long: a client reading at a few KiB/s keeps going.
 */
const DEFAULT_STALL_MS = 5 * 60_000;
/** Connections the catalog server holds at once, and from one client address. */
const MAX_CONNECTIONS = 512;
const MAX_CONNECTIONS_PER_ADDRESS = 32;

/**
 * Destroys `res` once its connection has taken no byte of it for a whole `stallMs`, until it
 * finishes or closes: the last chunks an answer ended with can still wait on a client that stopped
 * reading. A response without its socket (not yet given one, or done with it) is left alone.
 */
function cutOffWhenStalled(res: ServerResponse, stallMs: number): void {
  let last = -1;
  const stop = (): void => clearInterval(timer);
  const timer = setInterval(() => {
    const sent = res.socket?.bytesWritten;
    if (sent !== undefined && sent === last) {
      stop();
      res.destroy();
    }
    last = sent ?? -1;
  }, stallMs);
  timer.unref();
  res.once('finish', stop);
  res.once('close', stop);
}

/** Resolves once `res` has its connection (a pipelined request's answer waits for the one before it), false when it closed first. */
function hasSocket(res: ServerResponse): Promise<boolean> {
  if (res.socket !== null) return Promise.resolve(true);
  if (res.destroyed) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onSocket = (): void => {
      res.off('close', onClose);
      resolve(true);
    };
    const onClose = (): void => {
      res.off('socket', onSocket);
      resolve(false);
    };
    res.once('socket', onSocket);
    res.once('close', onClose);
  });
}

function lookup(catalogs: CatalogLookup | undefined, name: string): StoredCatalog | undefined {
  if (catalogs === undefined) return undefined;
  return typeof catalogs === 'function' ? catalogs(name) : catalogs.get(name);
}

function sendText(res: ServerResponse, status: number, text: string, head: boolean): void {
  sendPlain(res, status, text, head);
}

function notModified(req: IncomingMessage, etag: string, lastModified: Date): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) return inm.split(',').some((t) => t.trim() === etag || t.trim() === '*' || t.trim() === `W/${etag}`);
  const ims = req.headers['if-modified-since'];
  if (ims !== undefined) {
    const since = Date.parse(ims);
    // HTTP dates have one-second precision.
    return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
  }
  return false;
}

function acceptsGzip(req: IncomingMessage): boolean {
  const ae = req.headers['accept-encoding'];
  if (ae === undefined) return false;
  return ae.split(',').some((part) => {
    const [coding, ...params] = part.trim().split(';');
    if (coding?.trim().toLowerCase() !== 'gzip') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

async function serveCatalog(req: IncomingMessage, res: ServerResponse, store: StoredCatalog, rest: string, url: URL, large: { sending: number }, stallMs: number): Promise<void> {
  const head = req.method === 'HEAD';
  let filter: MetaFilter = {};
  if (rest === '/api/v1/all') {
    filter = {};
  } else if (rest === '/api/v1/metas') {
    for (const key of url.searchParams.keys()) {
      if (!META_PARAMS.has(key)) {
        sendText(res, 400, `unknown query parameter "${key}"; expected schema, package or name\n`, head);
        return;
      }
    }
    const schema = url.searchParams.get('schema');
    const pkg = url.searchParams.get('package');
    const name = url.searchParams.get('name');
    if (schema !== null) filter.schema = schema;
    if (pkg !== null) filter.package = pkg;
    if (name !== null) filter.name = name;
  } else {
    sendText(res, 404, `not found: ${url.pathname}\n`, head);
    return;
  }
  const metas = filterMetas(store, filter);
  const ranges = byteRanges(metas);
  const length = ranges.reduce((n, r) => n + r.end - r.start, 0);
  // The same content always gets the same tag: catalog digest plus the query that cut it.
  const queryTag = rest === '/api/v1/all' ? '' : `-${createHash('sha256').update(JSON.stringify([filter.schema, filter.package, filter.name])).digest('hex').slice(0, 16)}`;
  const etag = `"${store.sha256}${queryTag}"`;
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/jsonl',
    ETag: etag,
    'Last-Modified': store.lastModified.toUTCString(),
    Vary: 'Accept-Encoding',
  };
  if (notModified(req, etag, store.lastModified)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const gzip = acceptsGzip(req);
  if (gzip) headers['Content-Encoding'] = 'gzip';
  else headers['Content-Length'] = length;
  res.writeHead(200, headers);
  if (head) {
    res.end();
    return;
  }
  // Nothing is opened or allocated for an answer until it can be sent: a pipelined request's waits for the one before.
  if (!(await hasSocket(res))) return;
  cutOffWhenStalled(res, stallMs);
  if (gzip) {
    await pipeline(Readable.from(readRanges(store, ranges)), createGzip(), res);
    return;
  }
  // Large buffers are the fast path of a few answers at once; many clients at once (or ones that
  // stop reading) get small ones, so memory stays bounded and no answer ever waits for another.
  const isLarge = large.sending < MAX_LARGE_SENDS;
  if (isLarge) large.sending++;
  try {
    await sendRanges(store, ranges, res, { chunk: isLarge ? LARGE_CHUNK : SMALL_CHUNK });
  } finally {
    if (isLarge) large.sending--;
  }
}

function catalogRoutes(opts: CatalogHandlerOptions): SafeHandler {
  const large = { sending: 0 };
  const stallMs = opts.stallMs ?? DEFAULT_STALL_MS;
  return async (req, res, url) => {
    const head = req.method === 'HEAD';
    let store: StoredCatalog | undefined;
    let rest = url.pathname;
    const m = /^\/catalogs\/([^/]+)(\/.*)$/.exec(url.pathname);
    if (m !== null) {
      // The target was checked for malformed percent-encodings before it got here.
      const name = decodeURIComponent(m[1] ?? '');
      store = lookup(opts.catalogs, name);
      rest = m[2] ?? '';
      if (store === undefined) {
        sendText(res, 404, `catalog ${JSON.stringify(name)} not found\n`, head);
        return;
      }
    } else store = opts.root;
    if (store === undefined) {
      sendText(res, 404, `not found: ${url.pathname}\n`, head);
      return;
    }
    try {
      await serveCatalog(req, res, store, rest, url, large, stallMs);
    } catch (err) {
      opts.logger?.warn({ err, path: url.pathname }, 'catalog response failed');
      if (!res.headersSent) sendText(res, 500, 'internal error\n', head);
      else res.destroy();
    }
  };
}

/**
 * An HTTP request handler for the catalog API; mount it in any `http.Server`. Bad input (a
 * malformed path, another method) gets a 4xx, a failure a 500: never a crash.
 */
export function createCatalogHandler(opts: CatalogHandlerOptions): RequestListener {
  return safeHandler(catalogRoutes(opts), { name: 'catalog', methods: ['GET', 'HEAD'], logger: opts.logger });
}

export interface CatalogServer {
  server: Server;
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  close: () => Promise<void>;
}

export interface StartCatalogServerOptions extends CatalogHandlerOptions {
  port: number;
  address?: string;
  /** Serve HTTPS with this certificate and key (PEM), as catalogd does with --tls-cert/--tls-key, under its --tls-profile. */
  tls?: ServingTls | undefined;
}

/** Starts the catalog API on `address:port` (port 0 picks a free one). */
export async function startCatalogServer(opts: StartCatalogServerOptions): Promise<CatalogServer> {
  const server = createSafeServer(catalogRoutes(opts), { name: 'catalog', methods: ['GET', 'HEAD'], logger: opts.logger, tls: opts.tls, maxConnectionsPerAddress: MAX_CONNECTIONS_PER_ADDRESS });
  server.maxConnections = MAX_CONNECTIONS;
  const url = await listenOn(server, opts.address ?? '127.0.0.1', opts.port);
  return { server, url, close: () => closeServer(server) };
}
