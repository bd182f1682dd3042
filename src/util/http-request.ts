/**
 * One HTTP request over node:http(s), sent as fetch() would send it: redirects followed (at most
 * 20, as fetch), credentials (Authorization, Proxy-Authorization, cookies) dropped when a redirect
 * leaves the origin (scheme, host and port), a 303 (or a 301 or 302 of a POST) turned into a GET
 * without its body, a 307 or 308 sent again with a fresh body; the caller's signal (a deadline, an
 * idle timer) covers the answer's body too, which then fails with the signal's reason. Requests
 * go through node:http(s)'s global agents, which src/util/proxy-env.ts replaces with proxying
 * ones when the environment names a proxy.
 *
 * Why not fetch: fetch is undici, which a process loads whole at its first call (750 KB of source,
 * 3 to 5 MiB of RSS), hands a body over as a web stream that callers turn back into a Node stream,
 * and behind a proxy that hangs up on CONNECT reconnects in a loop (nodejs/undici#3897). Every
 * outbound request of Binnacle's (lint refuses fetch in src/ outside the console's page) uses this.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { isTimeout, timeoutReason } from './deadline.js';
import { errorMessage } from './errors.js';
import { nodeHttp } from './node-http.js';
import { proxyFailure } from './proxy-env.js';

/** fetch's limit. */
export const MAX_REDIRECTS = 20;

export interface HttpRequestOptions {
  method?: string;
  /** Header names in any case; sent in lower case. */
  headers?: Readonly<Record<string, string>>;
  /** The body, made anew for each attempt (a 307 or 308 sends it again). */
  body?: () => Buffer | Readable;
  /** Aborts the request and, once answered, its body: every request has a deadline or an idle timer. */
  signal: AbortSignal;
  /**
   * Asks for gzip (unless the caller sets Accept-Encoding) and hands a 2xx body that came gzipped
   * over decoded, without its Content-Length and Content-Encoding, as Go's transport does (and
   * fetch did): for text that compresses well (an index, a catalog), never for archives or blobs,
   * whose bytes are hashed or unpacked as sent. A caller's byte limit then counts decoded bytes.
   */
  gzip?: boolean;
}

export interface HttpAnswer {
  status: number;
  statusText: string;
  /** Where the answer came from, after redirects. */
  url: URL;
  /** A header's value, several joined with ", " as fetch's Headers.get does; null when absent. */
  headers: { get(name: string): string | null };
  /** The body as it arrives (decoded, when asked for gzip): read it, or `discard()` it so that the connection can be used again (a decoded one's is closed instead; a HEAD's, a 204's and a 304's are ended already). */
  body: Readable;
  discard(): void;
}

/** What fetch throws for these, with a code: too many redirects, or one to a scheme that is not http(s). */
export class HttpRedirectError extends Error {
  constructor(
    message: string,
    readonly code: 'ERR_TOO_MANY_REDIRECTS' | 'ERR_REDIRECT_SCHEME',
  ) {
    super(message);
    this.name = 'HttpRedirectError';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function headerGetter(headers: IncomingHttpHeaders, hidden: ReadonlySet<string> = new Set()): HttpAnswer['headers'] {
  return {
    get(name) {
      if (hidden.has(name.toLowerCase())) return null;
      const v = headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** Failed on a kept-alive connection the server had closed meanwhile, before any answer: worth one more try. */
class StaleConnection extends Error {}

/**
 * One exchange, no redirects: resolves with the answer's head, its body still to read. An abort
 * destroys the request or, once answered, the body, with the signal's reason (a deadline's
 * TimeoutError), which is what a caller then sees, as with fetch. A request that failed on a
 * reused connection before any answer rejects with StaleConnection (its cause Node's error).
 */
function exchange(url: URL, method: string, headers: Record<string, string>, body: Buffer | Readable | undefined, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : nodeHttp.request;
    let answered: IncomingMessage | undefined;
    const req = send(url, { method, headers }, (res) => {
      answered = res;
      res.once('close', () => signal.removeEventListener('abort', abort));
      resolve(res);
    });
    const abort = (): void => void (answered ?? req).destroy(signal.reason as Error);
    req.on('error', (err) => {
      signal.removeEventListener('abort', abort);
      // Node's advice for keep-alive: a server may close an idle connection as it is reused.
      reject(req.reusedSocket && answered === undefined && !signal.aborted && (err as { code?: unknown }).code === 'ECONNRESET' ? new StaleConnection(err.message, { cause: err }) : err);
    });
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    if (body === undefined) req.end();
    else if (Buffer.isBuffer(body)) req.end(body);
    // A body that fails destroys the request with its error, which rejects above.
    else pipeline(body, req, () => undefined);
  });
}

/** Requests sent again on a fresh connection when a kept-alive one turned out closed (RFC 9110's idempotent methods). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** exchange, once more on a new connection when the first failed on a stale kept-alive one. */
async function exchangeOnce(attempt: Attempt, signal: AbortSignal): Promise<IncomingMessage> {
  try {
    return await exchange(attempt.url, attempt.method, attempt.headers, attempt.body?.(), signal);
  } catch (err) {
    if (!(err instanceof StaleConnection)) throw err;
    if (!IDEMPOTENT.has(attempt.method)) throw err.cause;
    return exchange(attempt.url, attempt.method, attempt.headers, attempt.body?.(), signal);
  }
}

/** node:http would send a URL's user and password as Basic auth: fetch refuses such a URL, and so does this. */
function withoutUserinfo(url: URL): URL {
  if (url.username !== '' || url.password !== '') throw new TypeError(`${url.protocol}//${url.host}${url.pathname}: a URL with credentials in it is not requested`);
  return url;
}

/** Sent unless the caller gives its own. */
const DEFAULT_HEADERS: Readonly<Record<string, string>> = { 'user-agent': 'binnacle', accept: '*/*' };

/** Not sent to another origin after a redirect, as fetch drops them. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** The headers a request without a body does not send. */
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']);

interface Attempt {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: (() => Buffer | Readable) | undefined;
}

/** The request a redirect answered with `status` asks for, as fetch makes it. */
function redirected(from: Attempt, status: number, location: string): Attempt {
  const url = withoutUserinfo(new URL(location, from.url));
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpRedirectError(`${from.method} ${from.url.origin}${from.url.pathname}: redirected to a ${url.protocol} URL`, 'ERR_REDIRECT_SCHEME');
  const toGet = (status === 303 && from.method !== 'HEAD') || ((status === 301 || status === 302) && from.method === 'POST');
  // Credentials meant for one server are not handed to another (a registry's blob store, say).
  const crossOrigin = url.origin !== from.url.origin;
  const headers = Object.fromEntries(Object.entries(from.headers).filter(([k]) => !(toGet && BODY_HEADERS.has(k)) && !(crossOrigin && CREDENTIAL_HEADERS.has(k))));
  return toGet ? { url, method: 'GET', headers, body: undefined } : { ...from, url, headers };
}

/** `target` requested as the options say, redirects followed; rejects with Node's error when no answer came. */
export async function httpRequest(target: string | URL, o: HttpRequestOptions): Promise<HttpAnswer> {
  let attempt: Attempt = {
    url: withoutUserinfo(new URL(target)),
    method: (o.method ?? 'GET').toUpperCase(),
    // fetch's defaults, which some servers require (GitHub's API refuses a request without a User-Agent).
    headers: { ...DEFAULT_HEADERS, ...(o.gzip === true ? { 'accept-encoding': 'gzip' } : {}), ...Object.fromEntries(Object.entries(o.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])) },
    body: o.body,
  };
  for (let redirects = 0; ; redirects++) {
    const { url, method } = attempt;
    const res = await exchangeOnce(attempt, o.signal);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (!REDIRECTS.has(status) || location === undefined) {
      // No body to read: ended now, so that the connection goes back to the pool and the process can exit.
      if (method === 'HEAD' || status === 204 || status === 304) res.resume();
      else if (o.gzip === true && status >= 200 && status < 300 && res.headers['content-encoding']?.trim().toLowerCase() === 'gzip') return gunzipped(res, url, o.signal);
      return { status, statusText: res.statusMessage ?? '', url, headers: headerGetter(res.headers), body: res, discard: () => void res.resume() };
    }
    // A redirect's body is not read (it may be large, or endless).
    res.destroy();
    if (redirects >= MAX_REDIRECTS) throw new HttpRedirectError(`${method} ${url.origin}${url.pathname}: more than ${MAX_REDIRECTS} redirects`, 'ERR_TOO_MANY_REDIRECTS');
    attempt = redirected(attempt, status, location);
  }
}

/**
 * A gzipped answer, its body decoded: a failed read of the answer fails the decoded body with that
 * error, and so does the signal until the decoded body is done (the answer may have ended with
 * compressed bytes still to decode). Discarding it closes the connection.
 */
function gunzipped(res: IncomingMessage, url: URL, signal: AbortSignal): HttpAnswer {
  const body = createGunzip();
  pipeline(res, body, () => undefined);
  const abort = (): void => void body.destroy(signal.reason as Error);
  signal.addEventListener('abort', abort, { once: true });
  body.once('close', () => signal.removeEventListener('abort', abort));
  return {
    status: res.statusCode ?? 0,
    statusText: res.statusMessage ?? '',
    url,
    headers: headerGetter(res.headers, new Set(['content-length', 'content-encoding'])),
    body,
    discard: () => void body.destroy(),
  };
}

/**
 * Why a request got no answer, in a word where there is one: its code or its cause's
 * (`ECONNREFUSED`, `EPROTO`, `ERR_PROXY_TUNNEL`, fetch's `UND_ERR_…`), else the cause's message,
 * else a deadline's or an abort's name.
 */
export function networkReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const own = (err as { code?: unknown }).code;
  if (typeof own === 'string') return own;
  const cause = err.cause;
  if (typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string') return (cause as { code: string }).code;
  if (cause instanceof Error) return cause.message;
  return err.name === 'TimeoutError' || err.name === 'AbortError' ? `${err.name} (no answer in time)` : err.message;
}

/**
 * Why a request to `url` got no answer, in the one wording every caller uses: a proxy's failure
 * in Go's words (`proxyconnect …`, naming the proxy), the deadline (`no answer from HOST within
 * T`), else the network's reason (networkReason).
 */
export function noAnswerReason(err: unknown, url: string | URL, timeoutMs: number): string {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return networkReason(err); // no URL to name (httpRequest refused it): its own error says why
  }
  return proxyFailure(err, target) ?? (isTimeout(err) ? timeoutReason(target.host, timeoutMs) : networkReason(err));
}

/**
 * Why reading the body of an answer from `url` failed, in the one wording every caller uses: the
 * deadline as noAnswerReason says it, else the body's own error (a gzip that is not, a full disk).
 */
export function bodyFailureReason(err: unknown, url: string | URL, timeoutMs: number): string {
  if (!isTimeout(err)) return errorMessage(err);
  try {
    return timeoutReason(new URL(url).host, timeoutMs);
  } catch {
    return errorMessage(err);
  }
}

/** How readBodyLimited's caller says its two failures, each in its own error class and code. */
export interface BodyReadOptions {
  /** Over the limit: `declared` is the Content-Length that said so before reading, else undefined (counted while reading). */
  tooLarge(declared: number | undefined): Error;
  /** The body stopped coming (the deadline, a reset, a gzip that is not): `reason` as bodyFailureReason says it. */
  failed(reason: string, cause: unknown): Error;
  /** The URL whose host a deadline names, as the caller names it elsewhere (default: where the answer came from, after redirects). */
  url?: string | URL;
}

/** The length an answer's Content-Length declares, when it is a number (a chunked answer declares none). */
export function declaredLength(res: HttpAnswer): number | undefined {
  const header = res.headers.get('content-length');
  const n = header === null ? NaN : Number(header);
  return Number.isFinite(n) ? n : undefined;
}

/** Set apart from the body's own errors while it is read. */
class OverLimit extends Error {}

/**
 * An answer's whole body in memory, at most `limit` bytes: refused before reading when its
 * Content-Length says more, else as soon as the bytes read pass it (a chunked answer declares
 * none). Either way the body is dropped, not read on.
 */
export async function readBodyLimited(res: HttpAnswer, limit: number, timeoutMs: number, how: BodyReadOptions): Promise<Buffer> {
  const declared = declaredLength(res);
  if (declared !== undefined && declared > limit) {
    res.body.destroy();
    throw how.tooLarge(declared);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      const buf = Buffer.isBuffer(chunk) ? chunk : typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
      total += buf.length;
      if (total > limit) throw new OverLimit();
      chunks.push(buf);
    }
  } catch (err) {
    if (err instanceof OverLimit) {
      res.body.destroy(); // the iterator's own return destroys it a tick later
      throw how.tooLarge(undefined);
    }
    throw how.failed(bodyFailureReason(err, how.url ?? res.url, timeoutMs), err);
  }
  return Buffer.concat(chunks);
}
