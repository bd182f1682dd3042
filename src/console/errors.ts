/**
 * How a failure reaches the page: always as JSON `{error}` with the status that says whose
 * fault it is. A 403 from the API server stays a 403 and reads "forbidden: VERB RESOURCE"
 * followed by the API server's own message, so the person sees what their RBAC lacks.
 */
import { KubeApiError } from '../kube/errors.js';
import { BinnacleError } from '../util/errors.js';
import { IdentityError } from './identity.js';

/** Bad input from the page: 400 naming the field and the reason. */
export class InputError extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

export interface HttpError {
  status: number;
  /** `fields`: the API server's field errors (422 Invalid), each naming the field as the page's form does. */
  body: { error: string; reason?: string; code?: string; field?: string; fields?: { field: string; message: string }[] };
}

/** "forbidden: create clusterextensions" from the API server's Forbidden message. */
export function forbiddenSummary(message: string): string {
  const m = /cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?/.exec(message);
  if (m === null) return 'forbidden';
  const group = m[3] === undefined || m[3] === '' ? '' : `.${m[3]}`;
  return `forbidden: ${m[1] ?? ''} ${m[2] ?? ''}${group}`;
}

export function httpErrorOf(err: unknown): HttpError | undefined {
  if (err instanceof InputError) return { status: 400, body: { error: err.message, field: err.field } };
  if (err instanceof IdentityError) return { status: 401, body: { error: err.message } };
  if (err instanceof KubeApiError) {
    if (err.statusCode === 403) return { status: 403, body: { error: `${forbiddenSummary(err.message)} — ${err.message}`, reason: 'Forbidden' } };
    const status = [400, 401, 404, 409, 410, 422, 429].includes(err.statusCode) ? err.statusCode : 502;
    const fields = (err.details?.causes ?? []).filter((c) => c.field !== undefined && c.field !== '').map((c) => ({ field: c.field ?? '', message: c.message ?? c.reason ?? '' }));
    return { status, body: { error: err.message, reason: err.reason, ...(fields.length === 0 ? {} : { fields }) } };
  }
  if (err instanceof BinnacleError) {
    // A bug is the server's to log and answer as 500; what may pass is a 503 the page can retry.
    if (err.errorClass === 'internal') return undefined;
    return { status: err.errorClass === 'transient' ? 503 : 422, body: { error: err.message, code: err.code } };
  }
  return undefined;
}
