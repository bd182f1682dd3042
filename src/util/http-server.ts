/**
 * HTTP servers that no client can crash, shared by every server the manager runs (catalog API,
 * metrics and probes). Each request is checked before a handler sees it: a target that is no
 * URL or has a malformed percent-encoding gets 400, a method the server does not serve gets 405
 * with `Allow`. A handler that throws (or whose promise rejects) answers 500 for that request
 * and is logged; the process goes on. Node's own parser answers garbage with 400 and headers over
 * `maxHeaderSize` with 431; half-sent requests (slowloris) are cut off by `headersTimeout` and
 * `requestTimeout`, checked every second rather than Node's default 30; connections left silent
 * (before a request, or a TLS handshake not finished) are closed.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer, Server as TlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { BinnacleError } from './errors.js';
import { nodeHttp } from './node-http.js';
import type { TlsSettings } from './tls-profile.js';

/** A handler that gets the parsed, checked URL. May be async. */
export type SafeHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface SafeHandlerOptions {
  /** For logs: "catalog", "metrics". */
  name: string;
  /** Methods served; others get 405 with `Allow`. Default GET and HEAD. */
  methods?: readonly string[];
  logger?: Logger | undefined;
}

export interface SafeServerOptions extends SafeHandlerOptions {
  /** Time a client has to send all request headers (default 10 s). */
  headersTimeoutMs?: number;
  /** Time a client has to send the whole request (default 60 s). */
  requestTimeoutMs?: number;
  /** Largest request head in bytes (default Node's 16 KiB); larger gets 431. */
  maxHeaderSize?: number;
  /**
   * A connection that sends or receives nothing for this long is closed (default 30 s), and a TLS
   * client has `handshakeTimeoutMs` (default 10 s) to finish its handshake: otherwise connections
   * opened and left silent would fill `maxConnections` (Node times out neither by default) and
   * shut the kubelet's probes out.
   */
  idleTimeoutMs?: number;
  handshakeTimeoutMs?: number;
  /** Connections one client address may hold at once (default: no limit of its own, `maxConnections` only). */
  maxConnectionsPerAddress?: number;
  tls?: ServingTls | undefined;
}

/** Serve HTTPS with this certificate (chain) and key, PEM, under this TLS profile (util/tls-profile; default Node's). */
export interface ServingTls {
  certPem: string;
  keyPem: string;
  profile?: TlsSettings | undefined;
}

/** The profile a TLS server was made with: a renewed certificate keeps it (setSecureContext replaces all). */
const profiles = new WeakMap<Server, TlsSettings>();

function secureOptions(tls: { certPem: string; keyPem: string }, profile: TlsSettings | undefined) {
  const p = profile === undefined ? {} : { minVersion: profile.minVersion, ...(profile.ciphers === undefined ? {} : { ciphers: profile.ciphers }), ...(profile.ecdhCurve === undefined ? {} : { ecdhCurve: profile.ecdhCurve }) };
  return { cert: tls.certPem, key: tls.keyPem, ...p };
}

export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

/** Answers a short plain-text response (no body for HEAD) and never throws. */
export function sendPlain(res: ServerResponse, status: number, text: string, head = false, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(head ? undefined : text);
}

/** The request target as a URL, or why it is not one (bad form, malformed percent-encoding). */
export function parseRequestTarget(target: string): { url: URL } | { problem: string } {
  let url: URL;
  try {
    url = new URL(target, 'http://localhost');
  } catch {
    return { problem: 'the request target is not a URL' };
  }
  try {
    decodeURIComponent(url.pathname);
  } catch {
    return { problem: 'malformed percent-encoding in the path' };
  }
  try {
    // URLSearchParams never throws, so check each raw part the way a handler would decode it.
    for (const part of url.search.slice(1).split('&')) decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return { problem: 'malformed percent-encoding in the query' };
  }
  return { url };
}

/** Wraps `handler` so bad input gets a 4xx and a throw gets a 500, never a crash. */
export function safeHandler(handler: SafeHandler, opts: SafeHandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const methods = opts.methods ?? ['GET', 'HEAD'];
  const allow = methods.join(', ');
  return (req, res) => {
    const head = req.method === 'HEAD';
    const fail = (err: unknown): void => {
      opts.logger?.error({ err, server: opts.name, method: req.method, path: req.url }, 'request handler failed');
      try {
        sendPlain(res, 500, 'internal error\n', head);
      } catch {
        res.destroy();
      }
    };
    try {
      const target = parseRequestTarget(req.url ?? '/');
      if ('problem' in target) {
        sendPlain(res, 400, `bad request: ${target.problem}\n`, head);
        return;
      }
      if (!methods.includes(req.method ?? '')) {
        sendPlain(res, 405, `method ${req.method ?? ''} not allowed; allowed: ${allow}\n`, head, { Allow: allow });
        return;
      }
      const out = handler(req, res, target.url);
      if (out !== undefined) out.catch(fail);
    } catch (err) {
      fail(err);
    }
  };
}

/** Connections from one address beyond `max` are closed at once: one client cannot take every slot. */
function limitPerAddress(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const from = socket.remoteAddress ?? '';
    const n = (open.get(from) ?? 0) + 1;
    if (n > max) {
      socket.destroy();
      return;
    }
    open.set(from, n);
    socket.once('close', () => {
      const left = (open.get(from) ?? 1) - 1;
      if (left <= 0) open.delete(from);
      else open.set(from, left);
    });
  });
}

/** An `http.Server` with `safeHandler` and deadlines for slow clients. */
export function createSafeServer(handler: SafeHandler, opts: SafeServerOptions): Server {
  const options = {
    headersTimeout: opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeout: opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: 1000,
    ...(opts.maxHeaderSize === undefined ? {} : { maxHeaderSize: opts.maxHeaderSize }),
  };
  const server: Server =
    opts.tls === undefined
      ? nodeHttp.createServer(options, safeHandler(handler, opts))
      : createTlsServer({ ...options, handshakeTimeout: opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS, ...secureOptions(opts.tls, opts.tls.profile) }, safeHandler(handler, opts));
  // A silent connection is closed; one whose request is being answered is not (a handler may
  // think for longer: the response's own deadlines are the handler's), and between keep-alive
  // requests Node's keepAliveTimeout closes it first.
  const idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  server.setTimeout(idleMs, (socket) => socket.destroy());
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    req.socket.setTimeout(0);
    res.once('close', () => {
      if (!req.socket.destroyed) req.socket.setTimeout(idleMs);
    });
  });
  if (opts.maxConnectionsPerAddress !== undefined) limitPerAddress(server, opts.maxConnectionsPerAddress);
  if (opts.tls?.profile !== undefined) profiles.set(server, opts.tls.profile);
  // Responses that fail mid-way (the client went away) are the socket's business, not the process's.
  server.on('error', (err) => opts.logger?.error({ err, server: opts.name }, 'server error'));
  return server;
}

/**
 * Serves new connections of a server `createSafeServer` made with `tls` with this certificate and
 * key instead (a renewed certificate; connections already open keep theirs), under the TLS
 * profile the server was made with. Throws when the
 * server is plain HTTP or the pair is not usable (a key that does not match the certificate).
 */
export function useCertificate(server: Server, tls: { certPem: string; keyPem: string }): void {
  if (!(server instanceof TlsServer)) throw new BinnacleError('internal', 'TLS_NOT_SERVED', 'a plain HTTP server has no certificate to replace');
  server.setSecureContext(secureOptions(tls, profiles.get(server)));
}

/** Listens on `host:port` (0: any free port) and answers the base URL (https:// for a TLS server). */
export async function listenOn(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const info = server.address() as AddressInfo;
  const h = info.family === 'IPv6' ? `[${info.address}]` : info.address;
  return `${server instanceof TlsServer ? 'https' : 'http'}://${h}:${info.port}`;
}

/** Closes the server and every connection it holds. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.closeAllConnections();
    server.close((err) => (err === undefined ? resolve() : reject(err)));
  });
}

/** The bearer token of a request, if it sends one; undefined for none, an error for a malformed one. */
export function bearerToken(req: Pick<IncomingMessage, 'headers'>): { token?: string; problem?: string } {
  const h = req.headers.authorization;
  if (h === undefined || h === '') return {};
  const m = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(h.trim());
  if (m === null) return { problem: 'Authorization header: expected "Bearer TOKEN"' };
  return { token: m[1] ?? '' };
}
