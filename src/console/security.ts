/**
 * What every console response carries and what every changing request must prove. The page
 * loads only its own script and style (a strict Content-Security-Policy, no inline script, no
 * framing), and a write must carry the per-process CSRF token the page read from its `<meta>`
 * tag, from the page's own origin: a form or script on another site can send neither.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

export const CSRF_HEADER = 'x-binnacle-csrf';

/** Sets the security headers; called before anything else is written. */
export function setSecurityHeaders(res: ServerResponse): void {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
}

/** Methods that change nothing and so need no token (as the Fetch standard's "safe" methods). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class CsrfGuard {
  readonly token: string;

  constructor(token = randomBytes(32).toString('base64url')) {
    this.token = token;
  }

  /**
   * Why the request must be refused, or undefined when it may go on. A changing request needs the
   * token, and when it says where it comes from (browsers always do), its Origin must be the
   * console's own: `scheme://Host` of the request, whose Host the allow-list has already checked.
   */
  problem(req: Pick<IncomingMessage, 'method' | 'headers'>, scheme: 'http' | 'https' = 'http'): string | undefined {
    if (SAFE_METHODS.has(req.method ?? 'GET')) return undefined;
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || sent === '') return `missing ${CSRF_HEADER} header`;
    const a = Buffer.from(sent);
    const b = Buffer.from(this.token);
    if (a.length !== b.length || !timingSafeEqual(a, b)) return `wrong ${CSRF_HEADER} header`;
    return originProblem(req.headers.origin, req.headers.host ?? '', scheme);
  }
}

/** Why `origin` is not `scheme://host` (default ports aside); no Origin at all is no browser's cross-site request. */
export function originProblem(origin: string | undefined, host: string, scheme: 'http' | 'https'): string | undefined {
  if (origin === undefined) return undefined;
  if (origin === 'null') return 'Origin null is not this console';
  let theirs: string;
  let ours: string;
  try {
    theirs = new URL(origin).origin;
  } catch {
    return `Origin ${JSON.stringify(origin.slice(0, 100))} is not a URL`;
  }
  try {
    ours = new URL(`${scheme}://${host}`).origin;
  } catch {
    return `Host ${JSON.stringify(host.slice(0, 100))} is not a host`;
  }
  return theirs === ours && ours !== 'null' ? undefined : `Origin ${origin.slice(0, 100)} is not this console (${ours})`;
}
