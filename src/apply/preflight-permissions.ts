/**
 * Before installing through a ServiceAccount, check that it may do everything the install
 * needs — manage each object, write the release records, and grant every RBAC rule the bundle
 * grants (Kubernetes refuses to let an account grant what it does not hold) — with
 * SubjectAccessReviews, and list what is missing. Nothing is created when anything is missing.
 */
import { isNotFound } from '../kube/errors.js';
import type { ClusterClient, Discovery, Impersonating, ObjectWriter } from '../kube/ports.js';
import { parseApiVersion, type KubeObject } from '../kube/types.js';

export interface ServiceAccountIdentity {
  namespace: string;
  name: string;
}

/**
 * How to act as the ServiceAccount: its user name only. The API server adds the account's
 * groups itself (system:serviceaccounts, system:serviceaccounts:<ns>, system:authenticated),
 * so the manager needs `impersonate` on serviceaccounts and none on groups, which it could
 * otherwise use to claim any group.
 */
export function impersonationFor(sa: ServiceAccountIdentity): { user: string } {
  return { user: `system:serviceaccount:${sa.namespace}:${sa.name}` };
}

/** The groups the API server gives the ServiceAccount: a SubjectAccessReview must name them. */
export function serviceAccountGroups(sa: ServiceAccountIdentity): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'];
}

export interface MissingPermission {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
}

export function describeMissing(m: MissingPermission): string {
  const res = m.group === '' ? m.resource : `${m.resource}.${m.group}`;
  return `${m.verb} ${res}${m.name === undefined ? '' : ` "${m.name}"`}${m.namespace === undefined || m.namespace === '' ? ' (cluster-wide)' : ` in namespace ${m.namespace}`}`;
}

const OBJECT_VERBS = ['get', 'create', 'patch', 'update', 'delete'];
const RELEASE_VERBS = ['get', 'list', 'create', 'update', 'delete'];

interface Check extends MissingPermission {
  key: string;
}

/** What checking an account's permissions takes: the resources that serve the objects, and SubjectAccessReviews. */
export type PermissionsClient = Pick<Discovery, 'resourceFor'> & Pick<ObjectWriter, 'create'>;

function checkKey(c: MissingPermission): string {
  return `${c.verb}|${c.group}|${c.resource}|${c.namespace ?? ''}|${c.name ?? ''}`;
}

async function allowed(client: PermissionsClient, sa: ServiceAccountIdentity, c: MissingPermission): Promise<boolean> {
  const who = impersonationFor(sa);
  const resourceAttributes: Record<string, string> = { verb: c.verb, group: c.group, resource: c.resource };
  if (c.namespace !== undefined && c.namespace !== '') resourceAttributes.namespace = c.namespace;
  if (c.name !== undefined) resourceAttributes.name = c.name;
  const review = await client.create<KubeObject & { status?: { allowed?: boolean } }>({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: { user: who.user, groups: serviceAccountGroups(sa), resourceAttributes },
  });
  return review.status?.allowed === true;
}

/** RBAC rules the objects grant: the account must hold each of them. */
function grantedRules(obj: KubeObject): MissingPermission[] {
  if (obj.kind !== 'Role' && obj.kind !== 'ClusterRole') return [];
  const rules = (obj.rules ?? []) as { apiGroups?: string[]; resources?: string[]; verbs?: string[]; resourceNames?: string[]; nonResourceURLs?: string[] }[];
  const out: MissingPermission[] = [];
  for (const r of rules) {
    if ((r.nonResourceURLs ?? []).length > 0) continue;
    for (const group of r.apiGroups ?? ['']) {
      for (const resource of r.resources ?? []) {
        for (const verb of r.verbs ?? []) {
          const names = r.resourceNames ?? [];
          if (names.length === 0) out.push({ verb, group, resource, ...(obj.kind === 'Role' ? { namespace: obj.metadata.namespace ?? '' } : {}) });
          else for (const name of names) out.push({ verb, group, resource, name, ...(obj.kind === 'Role' ? { namespace: obj.metadata.namespace ?? '' } : {}) });
        }
      }
    }
  }
  return out;
}

/** What `sa` lacks to install `objects` with release records in `releaseNamespace`. */
export async function missingPermissions(client: PermissionsClient, sa: ServiceAccountIdentity, objects: readonly KubeObject[], releaseNamespace: string): Promise<MissingPermission[]> {
  const checks = new Map<string, Check>();
  const add = (c: MissingPermission): void => {
    const key = checkKey(c);
    if (!checks.has(key)) checks.set(key, { ...c, key });
  };
  for (const verb of RELEASE_VERBS) add({ verb, group: '', resource: 'secrets', namespace: releaseNamespace });
  for (const obj of objects) {
    let resource: string;
    let namespaced: boolean;
    try {
      const info = await client.resourceFor(obj.apiVersion, obj.kind);
      resource = info.name;
      namespaced = info.namespaced;
    } catch (err) {
      // A kind the server does not know yet (its CRD is in the bundle): checked by the apply itself.
      // Any other discovery failure fails the check: never proceed as if permitted.
      if (isNotFound(err)) continue;
      throw err;
    }
    const { group } = parseApiVersion(obj.apiVersion);
    for (const verb of OBJECT_VERBS) {
      add({ verb, group, resource, ...(namespaced ? { namespace: obj.metadata.namespace ?? '' } : {}), ...(verb === 'create' ? {} : { name: obj.metadata.name ?? '' }) });
    }
    for (const rule of grantedRules(obj)) add(rule);
  }
  return reviewMissing(client, sa, [...checks.values()]);
}

/**
 * The checks the account fails, asked as few SubjectAccessReviews as RBAC's semantics allow
 * (a manager installing 100 extensions asked thousands): an account allowed every verb on
 * every resource cluster-wide lacks nothing, and a verb allowed on a resource without a name
 * is allowed for every name (a rule without resourceNames); only what those broader reviews
 * deny is asked as named. Broader reviews can only allow more than RBAC grants the narrower
 * ones, never deny what they allow, so the answer is the one the narrow reviews alone give.
 */
async function reviewMissing(client: PermissionsClient, sa: ServiceAccountIdentity, list: readonly Check[]): Promise<MissingPermission[]> {
  if (list.length === 0) return [];
  const [everything] = await reviewAll(client, sa, [{ verb: '*', group: '*', resource: '*' }]);
  if (everything === true) return [];
  const unnamed = new Map<string, MissingPermission>();
  for (const c of list) {
    const { key: _key, name: _name, ...broad } = c;
    unnamed.set(checkKey(broad), broad);
  }
  const broadList = [...unnamed.values()];
  const broadAllowed = new Set<string>();
  (await reviewAll(client, sa, broadList)).forEach((ok, i) => {
    const b = broadList[i];
    if (ok && b !== undefined) broadAllowed.add(checkKey(b));
  });
  const narrow = list.filter((c) => c.name !== undefined && !broadAllowed.has(checkKey({ ...c, name: undefined })));
  const narrowAllowed = await reviewAll(client, sa, narrow);
  const deniedNamed = new Set(narrow.filter((_, i) => narrowAllowed[i] !== true).map((c) => c.key));
  const missing: MissingPermission[] = [];
  for (const c of list) {
    const denied = c.name === undefined ? !broadAllowed.has(c.key) : deniedNamed.has(c.key);
    if (!denied) continue;
    const { key: _key, ...m } = c;
    missing.push(m);
  }
  return missing;
}

/** Each review's verdict, a bounded number at once. */
async function reviewAll(client: PermissionsClient, sa: ServiceAccountIdentity, checks: readonly MissingPermission[]): Promise<boolean[]> {
  const out: boolean[] = [];
  for (let i = 0; i < checks.length; i += 16) out.push(...(await Promise.all(checks.slice(i, i + 16).map((c) => allowed(client, sa, c)))));
  return out;
}

/**
 * A client that acts as the ServiceAccount while it exists, and as Binnacle itself once it is
 * gone (decided once, on first use). Used only to remove what Binnacle's own records say it
 * installed, so a deleted namespace or account never leaves a finalizer stuck.
 */
export class ServiceAccountFallbackClient implements ClusterClient {
  private chosen: Promise<ClusterClient> | undefined;

  constructor(
    private readonly admin: ClusterClient & Impersonating<ClusterClient>,
    private readonly sa: ServiceAccountIdentity,
  ) {}

  private pick(): Promise<ClusterClient> {
    this.chosen ??= this.admin
      .find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: this.sa.namespace, name: this.sa.name })
      .then((found) => (found === undefined ? this.admin : this.admin.impersonate(impersonationFor(this.sa))));
    return this.chosen;
  }

  apply: ClusterClient['apply'] = async (obj, opts) => (await this.pick()).apply(obj, opts);
  get: ClusterClient['get'] = async (ref) => (await this.pick()).get(ref);
  find: ClusterClient['find'] = async (ref) => (await this.pick()).find(ref);
  list: ClusterClient['list'] = async (apiVersion, kind, opts) => (await this.pick()).list(apiVersion, kind, opts);
  create: ClusterClient['create'] = async (obj) => (await this.pick()).create(obj);
  update: ClusterClient['update'] = async (obj) => (await this.pick()).update(obj);
  patch: ClusterClient['patch'] = async (ref, patch, type, opts) => (await this.pick()).patch(ref, patch, type, opts);
  delete: ClusterClient['delete'] = async (ref, opts) => (await this.pick()).delete(ref, opts);
  resourceFor: ClusterClient['resourceFor'] = async (apiVersion, kind) => (await this.pick()).resourceFor(apiVersion, kind);
  invalidateDiscovery: ClusterClient['invalidateDiscovery'] = (apiVersion) => this.admin.invalidateDiscovery(apiVersion);
}
