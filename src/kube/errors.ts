/** Errors the API server returns, as a class with the Status reason and HTTP code. */
import { BinnacleError, type ErrorClass } from '../util/errors.js';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message?: string; field?: string }[];
}

/**
 * An API server's answer, classified by its status (`isTransient` reads it): a 5xx, a 429, a
 * 408 timeout, a 409 conflict (someone wrote first) or a 410 (a watch's resourceVersion expired)
 * may pass on retry; 405 and 415 mean Binnacle asked wrongly; every other answer (400, 401,
 * 403, 404, 422, AlreadyExists) is a verdict on what was asked, to be fixed in the input.
 */
export function kubeStatusClass(statusCode: number, reason: string): ErrorClass {
  if (statusCode >= 500 || statusCode === 429 || statusCode === 408 || statusCode === 410 || (statusCode === 409 && reason !== 'AlreadyExists')) return 'transient';
  if (statusCode === 405 || statusCode === 415) return 'internal';
  return 'input';
}

export class KubeApiError extends BinnacleError {
  readonly statusCode: number;
  /** The Status `reason`: NotFound, AlreadyExists, Conflict, Forbidden, Invalid, Gone, … */
  readonly reason: string;
  readonly details: StatusDetails | undefined;

  constructor(statusCode: number, reason: string, message: string, details?: StatusDetails) {
    super(kubeStatusClass(statusCode, reason), `KUBE_${reason.toUpperCase() || statusCode}`, message);
    this.statusCode = statusCode;
    this.reason = reason;
    this.details = details;
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 404;
}

export function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 409 && err.reason !== 'AlreadyExists';
}

/**
 * Server-side apply refused a field another field manager holds (409, cause
 * FieldManagerConflict): a verdict until someone changes hands, not a race to retry.
 */
export function isFieldManagerConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 409 && (err.details?.causes ?? []).some((c) => c.reason === 'FieldManagerConflict');
}

export function isAlreadyExists(err: unknown): boolean {
  return err instanceof KubeApiError && err.reason === 'AlreadyExists';
}

/** 401: the credential was refused (a refreshed one may not be). */
export function isUnauthorized(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 401;
}

/** The API server refused what was sent as content (400, 413 too large, 422 invalid): sending it again gets the same. */
export function isContentRefused(err: unknown): boolean {
  return err instanceof KubeApiError && (err.statusCode === 400 || err.statusCode === 413 || err.statusCode === 422);
}

export function isForbidden(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 403;
}

export function isGone(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 410;
}

export function isInvalid(err: unknown): boolean {
  return err instanceof KubeApiError && err.statusCode === 422;
}

/** Builds the error from a response body that may or may not be a Status object. */
export function apiErrorFromResponse(statusCode: number, body: string, what: string): KubeApiError {
  let reason = '';
  let message = body.trim();
  let details: StatusDetails | undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null) {
      const s = parsed as { reason?: unknown; message?: unknown; details?: unknown };
      if (typeof s.reason === 'string') reason = s.reason;
      if (typeof s.message === 'string') message = s.message;
      if (typeof s.details === 'object' && s.details !== null) details = s.details;
    }
  } catch {
    // not a Status object: keep the raw body as the message
  }
  if (reason === '') reason = defaultReason(statusCode);
  return new KubeApiError(statusCode, reason, `${what}: ${message || `HTTP ${statusCode}`}`, details);
}

function defaultReason(code: number): string {
  switch (code) {
    case 400: return 'BadRequest';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 405: return 'MethodNotAllowed';
    case 409: return 'Conflict';
    case 410: return 'Gone';
    case 422: return 'Invalid';
    case 429: return 'TooManyRequests';
    case 500: return 'InternalError';
    case 503: return 'ServiceUnavailable';
    case 504: return 'Timeout';
    default: return '';
  }
}

/** Node's codes for a connection that failed or dropped: the request may well work next time. */
const TRANSIENT_NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'ABORT_ERR']);

/**
 * Whether the API server or the connection to it failed, so that the failure says nothing of
 * the objects sent and is worth retrying with backoff, as controller-runtime requeues it: a
 * KubeApiError of class `transient` (a 5xx, a 429, a 408 or 504 timeout, a 409 conflict, a 410),
 * the server unreachable, a CRD its own naming controller has not Established yet, or a request
 * that timed out or was aborted. Narrower than the class:
 * the applier fails a revision on any other error, even one that may pass (a replaced object
 * held by a finalizer). Follows `cause` chains, so a wrapped API error counts too. Judged on the
 * class, status and code, never the message.
 */
export function isTransient(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (e instanceof KubeApiError) return e.errorClass === 'transient';
    if (e instanceof BinnacleError && (e.code === 'KUBE_UNREACHABLE' || e.code === 'KUBE_TIMEOUT' || e.code === 'LEADERSHIP_LOST' || e.code === 'CRD_NOT_ESTABLISHED')) return true;
    if (e instanceof Error) {
      if (e.name === 'AbortError' || e.name === 'TimeoutError') return true;
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string' && TRANSIENT_NETWORK_CODES.has(code)) return true;
      e = e.cause;
      continue;
    }
    return false;
  }
  return false;
}
