/**
 * The console's HTTP server, on the safe server every Binnacle server uses: the page, its
 * bundled script and style, and the JSON API. Every response carries the security headers. In
 * order, before any handler runs: a Host not on the allow-list gets 421 (access.ts), a person
 * over their request rate 429, a changing request without the CSRF token or from another origin
 * 403; then the one-time login token is exchanged for a session cookie, and a request with no
 * person (no session, token or trusted proxy's header) gets 401.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { UsageError } from '../util/errors.js';
import { closeServer, createSafeServer, listenOn } from '../util/http-server.js';
import { Authenticator, HostAllowList, LoginSessions, type AccessOptions, type Person, type Who } from './access.js';
import { ConsoleApi, type ApiResult } from './api.js';
import type { CatalogLoader } from './catalog-view.js';
import { httpErrorOf } from './errors.js';
import { ConsoleIdentity, type IdentityOptions } from './identity.js';
import { RateLimiter, StreamSlots, type LimitOptions } from './limits.js';
import { CsrfGuard, setSecurityHeaders } from './security.js';
import { liveSourcesOf, streamWatch, type StreamOptions } from './watch.js';
import { apiParts } from './contract/routes.js';

export interface ConsoleOptions extends IdentityOptions {
  logger: Logger;
  /** Where plans keep pulled bundle images. */
  cacheDir: string;
  /** The page's built assets (`ensureConsoleAssets` builds them where the caller keeps them). */
  assetsDir: string;
  csrf?: CsrfGuard;
  /** How catalog content is read (default: from each ClusterCatalog's server). */
  catalogLoader?: CatalogLoader;
  /** Retry, heartbeat and drain timing of GET /api/watch (tests shorten them). */
  live?: StreamOptions;
  /** Who may use the console (default: the console's identity lent after the login token). */
  access?: AccessOptions;
  /** Request rate and live streams per person. */
  limits?: LimitOptions;
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { certPem: string; keyPem: string } | undefined;
  /** Called with each new login URL (the first at start, the next each time one is used). */
  onLoginUrl?: (url: string) => void;
}

export interface RunningConsole {
  url: string;
  server: Server;
  csrfToken: string;
  /** The login URL not yet used (login-token mode only). */
  loginUrl: () => string | undefined;
  stop: () => Promise<void>;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'];

/** The page: no inline script or style; the CSRF token rides in a meta tag the script reads. */
export function indexHtml(csrfToken: string, lends = true): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="binnacle-csrf" content="${csrfToken}">
<meta name="binnacle-lends-identity" content="${lends ? 'yes' : 'no'}">
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

/** What a browser without a session sees: how to log in. No script, no token. */
export function loginHtml(why: string): string {
  const text = why.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Binnacle console: log in</title></head>
<body>
<h1>Log in to the Binnacle console</h1>
<p>${text}</p>
<p>Open the login URL that <code>binnacle console</code> printed in its terminal (<code>http://127.0.0.1:PORT/?token=…</code>). Each login URL logs in one browser; the console then prints the next one.</p>
</body>
</html>
`;
}

function sendJson(res: ServerResponse, status: number, body: unknown, head: boolean, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(head ? undefined : text);
}

function sendHtml(res: ServerResponse, status: number, html: string | Buffer, head: boolean, headers: Record<string, string> = {}): void {
  const body = typeof html === 'string' ? Buffer.from(html) : html;
  res.writeHead(status, { ...headers, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
  res.end(head ? undefined : body);
}

function sendResult(res: ServerResponse, r: ApiResult, head: boolean): void {
  if ('json' in r) return sendJson(res, r.status, r.json, head);
  res.writeHead(r.status, { 'Content-Type': r.type, 'Content-Length': r.bytes.length });
  res.end(head ? undefined : r.bytes);
}

/** The URL without its `token` parameter: where a login redirects to. */
function withoutToken(url: URL): string {
  const rest = new URLSearchParams(url.searchParams);
  rest.delete('token');
  const q = rest.toString();
  return `${url.pathname}${q === '' ? '' : `?${q}`}`;
}

export interface ConsoleHandler {
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;
  csrf: CsrfGuard;
  /** The unused login token (login-token mode). */
  loginToken: () => string | undefined;
  close: () => void;
}

/** The request handler for a console listening on `listenHost`. */
export async function consoleHandler(opts: ConsoleOptions & { listenHost: string }): Promise<ConsoleHandler> {
  const assets = opts.assetsDir;
  const files = new Map<string, { type: string; body: Buffer }>([
    ['/app.js', { type: 'text/javascript; charset=utf-8', body: await readFile(join(assets, 'app.js')) }],
    ['/app.css', { type: 'text/css; charset=utf-8', body: await readFile(join(assets, 'app.css')) }],
  ]);
  const scheme = opts.tls === undefined ? 'http' : 'https';
  const access: AccessOptions = opts.access ?? { lend: 'login-token' };
  const hosts = new HostAllowList(opts.listenHost, access.publicAddresses ?? [], scheme);
  // A name of its own per process: consoles on other ports of the same host keep their sessions.
  const login = access.lend === 'login-token' ? new LoginSessions(`binnacle-console-${randomBytes(4).toString('hex')}`, scheme === 'https', (t) => opts.onLoginUrl?.(t)) : undefined;
  const auth = new Authenticator(access, login);
  const csrf = opts.csrf ?? new CsrfGuard();
  const page = Buffer.from(indexHtml(csrf.token, auth.lends));
  const identity = new ConsoleIdentity(opts);
  const api = new ConsoleApi({ cacheDir: opts.cacheDir, logger: opts.logger, catalogLoader: opts.catalogLoader });
  const rate = new RateLimiter(opts.limits);
  const streams = new StreamSlots(opts.limits);

  const serveApi = async (req: IncomingMessage, res: ServerResponse, url: URL, person: Person): Promise<void> => {
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    const parts = apiParts(url.pathname) ?? [];
    try {
      const client = await identity.clientOf(person);
      if (parts.length === 1 && parts[0] === 'watch' && method === 'GET') {
        const sources = liveSourcesOf(url);
        const slot = streams.acquire(person.key);
        if ('problem' in slot) return sendJson(res, 429, { error: slot.problem }, head, { 'Retry-After': '10' });
        try {
          return await streamWatch(req, res, client, sources, opts.live);
        } finally {
          slot.release();
        }
      }
      const result = await api.route(head ? 'GET' : method, parts, { client, req, url });
      if (result === undefined) return sendJson(res, 404, { error: `no API ${method} ${url.pathname}` }, head);
      sendResult(res, result, head);
    } catch (err) {
      const mapped = httpErrorOf(err);
      if (mapped === undefined) {
        opts.logger.error({ err, path: url.pathname }, 'console request failed');
        if (res.headersSent) return void res.destroy();
        return sendJson(res, 500, { error: `internal error: ${err instanceof Error ? err.message : String(err)}` }, head);
      }
      if (res.headersSent) return void res.destroy();
      sendJson(res, mapped.status, mapped.body, head);
    }
  };

  /** Page, script and style; the page (with its CSRF token) only to a person when the identity is lent by login. */
  const servePage = (res: ServerResponse, path: string, who: Who, head: boolean): void => {
    const f = files.get(path);
    if (f !== undefined) {
      res.writeHead(200, { 'Content-Type': f.type, 'Content-Length': f.body.length });
      return void res.end(head ? undefined : f.body);
    }
    if (path !== '/' && path !== '/index.html') return sendJson(res, 404, { error: `${path.slice(0, 200)} not found` }, head);
    // Logging in is the way to the page here: a bearer token (not checked until it is used) does not fetch its CSRF token.
    if (auth.pageNeedsPerson && !('person' in who && who.person.kind === 'lent')) return sendHtml(res, 401, loginHtml('problem' in who ? who.problem : 'not logged in'), head);
    sendHtml(res, 200, page, head);
  };

  /** GET …?token=T: the one-time login token for a session cookie, then the same URL without it. */
  const redeem = (res: ServerResponse, url: URL, who: Who, head: boolean): void => {
    const token = url.searchParams.get('token') ?? '';
    if ('person' in who && who.person.kind === 'lent') return sendHtml(res, 303, '', head, { Location: withoutToken(url) });
    const cookie = head ? undefined : login?.redeem(token);
    if (cookie === undefined) return sendHtml(res, 401, loginHtml('This login URL was used already or is wrong: each one logs in one browser.'), head);
    sendHtml(res, 303, '', head, { Location: withoutToken(url), 'Set-Cookie': cookie });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    setSecurityHeaders(res);
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    const misdirected = hosts.problem(req.headers.host);
    if (misdirected !== undefined) return sendJson(res, 421, { error: `misdirected request: ${misdirected}` }, head);
    const who = auth.who(req);
    const wait = rate.take(who.key);
    if (wait !== undefined) return sendJson(res, 429, { error: `too many requests: at most ${opts.limits?.ratePerSecond ?? 20} a second` }, head, { 'Retry-After': String(wait) });
    const problem = csrf.problem(req, scheme);
    if (problem !== undefined) return sendJson(res, 403, { error: `CSRF check failed: ${problem}` }, head);
    const path = url.pathname;
    if (!path.startsWith('/api/')) {
      if (method !== 'GET' && method !== 'HEAD') return sendJson(res, 405, { error: `${method} ${path.slice(0, 200)}: only GET` }, head);
      if (login !== undefined && url.searchParams.has('token')) return redeem(res, url, who, head);
      return servePage(res, path, who, head);
    }
    if ('problem' in who) return sendJson(res, 401, { error: who.problem }, head);
    return serveApi(req, res, url, who.person);
  };
  return { handle, csrf, loginToken: () => login?.current, close: () => identity.close() };
}

/** Starts the console on `host:port` (0: any free port). */
export async function startConsole(opts: ConsoleOptions & { host: string; port: number }): Promise<RunningConsole> {
  let base = '';
  const h = await consoleHandler({ ...opts, listenHost: opts.host, onLoginUrl: (t) => opts.onLoginUrl?.(`${base}/?token=${t}`) });
  const server = createSafeServer(h.handle, { name: 'console', methods: METHODS, logger: opts.logger, tls: opts.tls });
  const url = await listenOn(server, opts.host, opts.port);
  base = url;
  const loginUrl = (): string | undefined => {
    const t = h.loginToken();
    return t === undefined ? undefined : `${url}/?token=${t}`;
  };
  const first = loginUrl();
  if (first !== undefined) opts.onLoginUrl?.(first);
  return {
    url,
    server,
    csrfToken: h.csrf.token,
    loginUrl,
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
