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

/**
 * `transport` with reads of namespaced resources confined to `namespaces`: for a release whose
 * identity is not its tenant's own (a HelmOperator's one fixed ServiceAccount for every CR), so a
 * CR's templates cannot read another tenant's Secrets with what that account may read elsewhere.
 * A namespaced path outside them, and a list across all namespaces of a namespaced resource (its
 * scope asked of discovery, through the same transport), get 403; discovery, cluster-scoped
 * resources and Namespace objects themselves pass (charts read `kube-system`'s uid as a cluster id).
 */
export function confinedLookup(transport: LookupTransport, namespaces: ReadonlySet<string>): LookupTransport {
  const refuse = (path: string, why: string): { status: number; body: string } => status(403, 'Forbidden', `lookup of ${path} was refused: ${why}`);
  const allowed = [...namespaces].sort().join(', ');
  // One render's gate: a group's discovery is asked once, however many lists the templates make.
  const discovered = new Map<string, Promise<{ name?: string; namespaced?: boolean }[] | undefined>>();
  const resourcesIn = (groupVersion: string): Promise<{ name?: string; namespaced?: boolean }[] | undefined> => {
    let found = discovered.get(groupVersion);
    if (found === undefined) {
      found = transport('GET', groupVersion, '').then((d) => (d.status === 200 ? resourcesOf(d.body) : undefined));
      discovered.set(groupVersion, found);
    }
    return found;
  };
  return async (method, path, body) => {
    const bare = path.split('?')[0] ?? '';
    if (method !== 'GET' || !isLookupPath(bare)) return transport(method, path, body);
    const segs = bare.slice(1).split('/');
    const prefix = segs[0] === 'api' ? 2 : 3;
    const rest = segs.slice(prefix);
    if (rest.length === 0) return transport(method, path, body); // discovery
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      return namespaces.has(rest[1] ?? '') ? transport(method, path, body) : refuse(bare, `this release reads namespaced resources in ${allowed} only`);
    }
    // The core group's Namespace list passes (cluster-scoped); another group's `namespaces` is asked of discovery like any list.
    if (rest.length === 1 && !(segs[0] === 'api' && rest[0] === 'namespaces')) {
      // A list at cluster level: across every namespace when the resource is namespaced.
      const resources = await resourcesIn(`/${segs.slice(0, prefix).join('/')}`);
      const namespaced = resources?.find((r) => r.name === rest[0])?.namespaced;
      if (namespaced !== false) return refuse(bare, `a list across namespaces; this release reads namespaced resources in ${allowed} only`);
    }
    return transport(method, path, body);
  };
}

function resourcesOf(body: string): { name?: string; namespaced?: boolean }[] | undefined {
  try {
    const list = JSON.parse(body) as { resources?: unknown };
    return Array.isArray(list.resources) ? (list.resources as { name?: string; namespaced?: boolean }[]) : undefined;
  } catch {
    return undefined;
  }
}
