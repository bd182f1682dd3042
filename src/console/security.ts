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

  /** Why the request must be refused, or undefined when it may go on. */
  problem(req: Pick<IncomingMessage, 'method' | 'headers'>): string | undefined {
    if (SAFE_METHODS.has(req.method ?? 'GET')) return undefined;
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || sent === '') return `missing ${CSRF_HEADER} header`;
    const a = Buffer.from(sent);
    const b = Buffer.from(this.token);
    if (a.length !== b.length || !timingSafeEqual(a, b)) return `wrong ${CSRF_HEADER} header`;
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== 'null') {
      const host = req.headers.host ?? '';
      let originHost: string;
      try {
        originHost = new URL(origin).host;
      } catch {
        return `Origin ${JSON.stringify(origin)} is not a URL`;
      }
      if (originHost !== host) return `Origin ${origin} is not this console (${host})`;
    } else if (origin === 'null') {
      return 'Origin null is not this console';
    }
    return undefined;
  }
}
