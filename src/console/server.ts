/**
 * The console's HTTP server, on the safe server every Binnacle server uses: the page, its
 * bundled script and style, and the JSON API. Every response carries the security headers;
 * every changing request must pass the CSRF check before any handler runs.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { UsageError } from '../util/errors.js';
import { closeServer, createSafeServer, listenOn } from '../util/http-server.js';
import { ConsoleApi, type ApiResult } from './api.js';
import type { CatalogLoader } from './catalog-view.js';
import { ensureConsoleAssets } from './assets.js';
import { httpErrorOf } from './errors.js';
import { ConsoleIdentity, type IdentityOptions } from './identity.js';
import { CsrfGuard, setSecurityHeaders } from './security.js';
import { liveSourcesOf, streamWatch, type RelayOptions } from './watch.js';
import { apiParts } from './routes.js';

export interface ConsoleOptions extends IdentityOptions {
  logger: Logger;
  /** Where plans keep pulled bundle images. */
  cacheDir: string;
  /** Built assets; built (when stale) by `ensureConsoleAssets` if not given. */
  assetsDir?: string;
  csrf?: CsrfGuard;
  /** How catalog content is read (default: from each ClusterCatalog's server). */
  catalogLoader?: CatalogLoader;
  /** Retry and heartbeat timing of GET /api/watch (tests shorten them). */
  live?: RelayOptions & { heartbeatMs?: number };
}

export interface RunningConsole {
  url: string;
  server: Server;
  csrfToken: string;
  stop: () => Promise<void>;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];

/** The page: no inline script or style; the CSRF token rides in a meta tag the script reads. */
export function indexHtml(csrfToken: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="binnacle-csrf" content="${csrfToken}">
<title>Binnacle console</title>
<link rel="stylesheet" href="/app.css">
<script type="module" src="/app.js"></script>
</head>
<body>
<header id="top"></header>
<main id="app"><p>Loading…</p></main>
</body>
</html>
`;
}

function sendJson(res: ServerResponse, status: number, body: unknown, head: boolean): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(head ? undefined : text);
}

function sendResult(res: ServerResponse, r: ApiResult, head: boolean): void {
  if ('json' in r) return sendJson(res, r.status, r.json, head);
  res.writeHead(r.status, { 'Content-Type': r.type, 'Content-Length': r.bytes.length });
  res.end(head ? undefined : r.bytes);
}

/** The request handler (the manager mounts the same one behind --console-listen). */
export async function consoleHandler(opts: ConsoleOptions): Promise<{ handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>; csrf: CsrfGuard; close: () => void }> {
  const assets = opts.assetsDir ?? (await ensureConsoleAssets());
  const files = new Map<string, { type: string; body: Buffer }>([
    ['/app.js', { type: 'text/javascript; charset=utf-8', body: await readFile(join(assets, 'app.js')) }],
    ['/app.css', { type: 'text/css; charset=utf-8', body: await readFile(join(assets, 'app.css')) }],
  ]);
  const csrf = opts.csrf ?? new CsrfGuard();
  const page = Buffer.from(indexHtml(csrf.token));
  const identity = new ConsoleIdentity(opts);
  const api = new ConsoleApi({ cacheDir: opts.cacheDir, logger: opts.logger, catalogLoader: opts.catalogLoader });

  const handle = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    setSecurityHeaders(res);
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    const problem = csrf.problem(req);
    if (problem !== undefined) return sendJson(res, 403, { error: `CSRF check failed: ${problem}` }, head);
    const path = url.pathname;
    if (!path.startsWith('/api/')) {
      if (method !== 'GET' && method !== 'HEAD') return sendJson(res, 405, { error: `${method} ${path}: only GET` }, head);
      if (path === '/' || path === '/index.html') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': page.length });
        return void res.end(head ? undefined : page);
      }
      const f = files.get(path);
      if (f === undefined) return sendJson(res, 404, { error: `${path} not found` }, head);
      res.writeHead(200, { 'Content-Type': f.type, 'Content-Length': f.body.length });
      return void res.end(head ? undefined : f.body);
    }
    const parts = apiParts(path) ?? [];
    try {
      const client = await identity.clientFor(req);
      if (parts.length === 1 && parts[0] === 'watch' && method === 'GET') return await streamWatch(req, res, client, liveSourcesOf(url), opts.live);
      const result = await api.route(method === 'HEAD' ? 'GET' : method, parts, { client, req, url });
      if (result === undefined) return sendJson(res, 404, { error: `no API ${method} ${path}` }, head);
      sendResult(res, result, head);
    } catch (err) {
      const mapped = httpErrorOf(err);
      if (mapped === undefined) {
        opts.logger.error({ err, path }, 'console request failed');
        return sendJson(res, 500, { error: `internal error: ${err instanceof Error ? err.message : String(err)}` }, head);
      }
      sendJson(res, mapped.status, mapped.body, head);
    }
  };
  return { handle, csrf, close: () => identity.close() };
}

/** Starts the console on `host:port` (0: any free port). */
export async function startConsole(opts: ConsoleOptions & { host: string; port: number }): Promise<RunningConsole> {
  const h = await consoleHandler(opts);
  const server = createSafeServer(h.handle, { name: 'console', methods: METHODS, logger: opts.logger });
  const url = await listenOn(server, opts.host, opts.port);
  return {
    url,
    server,
    csrfToken: h.csrf.token,
    stop: async () => {
      h.close();
      await closeServer(server);
    },
  };
}

/** `HOST:PORT` of --listen; loopback when the host is left out. */
export function parseListen(flag: string, value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value.trim());
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !Number.isInteger(port) || port > 65535) throw new UsageError(`${flag} ${JSON.stringify(value)}: expected HOST:PORT such as 127.0.0.1:8443`);
  const host = m[1] ?? (m[2] === undefined || m[2] === '' ? '127.0.0.1' : m[2]);
  return { host, port };
}
