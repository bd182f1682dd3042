/**
 * Calls to the console's API. Every request sends the bearer token the person entered (if
 * any), so the server acts as them; changing requests send the CSRF token from the page's meta tag.
 */
const TOKEN_KEY = 'binnacle-console-token';

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The fields the error names: the API server's 422 causes, or the console's 400 field. */
    readonly fields: FieldError[] = [],
  ) {
    super(message);
  }
}

function fieldsOf(json: object): FieldError[] {
  const out: FieldError[] = [];
  if ('fields' in json && Array.isArray(json.fields)) {
    for (const f of json.fields as unknown[]) if (typeof f === 'object' && f !== null && 'field' in f && typeof f.field === 'string') out.push({ field: f.field, message: 'message' in f && typeof f.message === 'string' ? f.message : '' });
  }
  if ('field' in json && typeof json.field === 'string' && 'error' in json && typeof json.error === 'string') out.push({ field: json.field, message: json.error.replace(`${json.field}: `, '') });
  return out;
}

export function csrfToken(): string {
  return document.querySelector('meta[name="binnacle-csrf"]')?.getAttribute('content') ?? '';
}

export function bearer(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setBearer(token: string): void {
  if (token === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const token = bearer();
  if (token !== '') headers.Authorization = `Bearer ${token}`;
  if (method !== 'GET') headers['X-Binnacle-CSRF'] = csrfToken();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`/api/${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), credentials: 'same-origin' });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(res.status, `${res.status}: ${text.slice(0, 200)}`);
  }
  if (!res.ok) {
    const body = typeof json === 'object' && json !== null ? json : {};
    const msg = 'error' in body ? String(body.error) : `HTTP ${res.status}`;
    throw new ApiError(res.status, msg, fieldsOf(body));
  }
  return json as T;
}

/** Path segments, each encoded (for the page's own #/ routes too; the API's paths are routes.ts's). */
export { seg } from '../contract/routes.js';
