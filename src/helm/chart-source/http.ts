/**
 * HTTP for chart repositories: GET with a timeout, Basic credentials sent only to the
 * repository's own origin (as Helm does unless told to pass them on), and every failure turned
 * into a ChartSourceError that names the reference, the URL and the reason.
 */
import type { Readable } from 'node:stream';
import { basicAuthHeader, type Credentials } from '../../oci/index.js';
import { declaredLength, httpRequest, noAnswerReason, readBodyLimited, type HttpAnswer } from '../../util/http-request.js';
import { ChartSourceError } from './errors.js';

export interface HttpGetOptions {
  /** The chart reference, for errors. */
  ref: string;
  timeoutMs: number;
  /** Basic credentials, sent only when the URL has this origin. */
  credentials?: { origin: string; credentials: Credentials };
}

/** A 200 response whose body the caller reads, or a ChartSourceError. */
export async function httpGet(url: string, what: string, opts: HttpGetOptions): Promise<HttpAnswer> {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ChartSourceError('HELM_CHART_REF', opts.ref, `${what} ${url}: scheme ${parsed.protocol} is not supported (only http and https)`);
  }
  const headers: Record<string, string> = {};
  const creds = opts.credentials;
  if (creds !== undefined && parsed.origin === creds.origin && 'username' in creds.credentials) headers.authorization = basicAuthHeader(creds.credentials);
  let res: HttpAnswer;
  try {
    // Not asked gzipped, index or archive: Helm's getter turns compression off, and a repository that labels a plain index gzip works there.
    res = await httpRequest(url, { headers, signal: AbortSignal.timeout(opts.timeoutMs) });
  } catch (err) {
    throw new ChartSourceError('HELM_CHART_UNREACHABLE', opts.ref, `cannot reach ${parsed.host} for the ${what} ${url}: ${noAnswerReason(err, parsed, opts.timeoutMs)}`, { cause: err });
  }
  // 200 alone, as Helm's getter: a 204's empty body (or a 206's part) is no index and no archive.
  if (res.status === 200) return res;
  res.discard();
  const status = `HTTP ${res.status}${res.statusText === '' ? '' : ` ${res.statusText}`}`;
  if (res.status === 404 || res.status === 410) throw new ChartSourceError('HELM_CHART_NOT_FOUND', opts.ref, `the ${what} ${url} does not exist (${status})`);
  if (res.status === 401 || res.status === 403) throw new ChartSourceError('HELM_CHART_DENIED', opts.ref, `the ${what} ${url} was refused (${status}); check the repository credentials`);
  throw new ChartSourceError('HELM_CHART_HTTP', opts.ref, `the ${what} ${url} could not be fetched (${status})`);
}

/** The body as a stream; a declared length over `maxBytes` fails before reading. */
export function responseBody(res: HttpAnswer, url: string, maxBytes: number, ref: string): Readable {
  const declared = declaredLength(res);
  if (declared !== undefined && declared > maxBytes) {
    res.body.destroy();
    throw new ChartSourceError('HELM_CHART_TOO_LARGE', ref, `${url} is ${declared} bytes, over the limit of ${maxBytes}`);
  }
  return res.body;
}

/** The whole body in memory, at most `maxBytes`. */
export function readResponse(res: HttpAnswer, url: string, maxBytes: number, opts: HttpGetOptions): Promise<Buffer> {
  const { ref } = opts;
  return readBodyLimited(res, maxBytes, opts.timeoutMs, {
    tooLarge: (declared) => new ChartSourceError('HELM_CHART_TOO_LARGE', ref, declared === undefined ? `${url} is over the limit of ${maxBytes} bytes` : `${url} is ${declared} bytes, over the limit of ${maxBytes}`),
    failed: (reason, cause) => new ChartSourceError('HELM_CHART_UNREACHABLE', ref, `reading ${url} failed: ${reason}`, { cause }),
    url, // the host the archive's and the request's own failures name
  });
}
