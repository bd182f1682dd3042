/**
 * `lookup` is a read. A chart's templates are written by whoever wrote the chart and fed by
 * whoever wrote the values (a tenant's custom resource); the host transport behind `lookup`
 * carries the manager's (or an impersonated) identity. So the bridge passes on only what
 * Helm's `lookup` itself sends: GET of API discovery, a resource list, or one named object.
 * Any other method, and any deeper path (a subresource such as `proxy`, `exec`, `log`, or
 * `status`), is answered with a Kubernetes Status error that the template sees, and nothing is
 * sent to the API server.
 */
/** One HTTP exchange with the API server, on behalf of a template's `lookup`. */
export type LookupTransport = (method: string, path: string, body: string) => Promise<{ status: number; body: string }>;

function status(code: number, reason: string, message: string): { status: number; body: string } {
  return { status: code, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message }) };
}

/** Segments after the group-version prefix that name a list or one object. */
function isResourcePath(rest: string[]): boolean {
  if (rest[0] === 'namespaces' && rest.length >= 3) return rest.length <= 4;
  return rest.length <= 2;
}

/** Discovery (`/api`, `/api/v1`, `/apis`, `/apis/g`, `/apis/g/v`), or a list or object read below it. */
export function isLookupPath(path: string): boolean {
  const bare = path.split('?')[0] ?? '';
  if (!bare.startsWith('/')) return false;
  const segs = bare.slice(1).split('/');
  if (segs.some((s) => s === '' || s === '.' || s === '..' || s.includes('%'))) return false;
  if (segs[0] === 'api') return segs.length <= 2 || isResourcePath(segs.slice(2));
  if (segs[0] === 'apis') return segs.length <= 3 || isResourcePath(segs.slice(3));
  return false;
}

/** `transport` behind a gate that lets through only the reads `lookup` makes. */
export function readOnlyLookup(transport: LookupTransport): LookupTransport {
  return (method, path, body) => {
    if (method !== 'GET') return Promise.resolve(status(405, 'MethodNotAllowed', `lookup is read-only: ${method} ${path.split('?')[0] ?? ''} was refused`));
    if (!isLookupPath(path)) return Promise.resolve(status(403, 'Forbidden', `lookup reads resources only: GET ${path.split('?')[0] ?? ''} was refused`));
    return transport(method, path, body);
  };
}
