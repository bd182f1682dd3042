/**
 * The RBAC a Helm operator needs, derived from what its charts render rather than asked of
 * the user:
 * - every kind the charts render, with the verbs the applier uses (create, get, list, watch,
 *   patch, update, delete): namespaced kinds in the release namespace as `permissions`,
 *   cluster-scoped kinds (and namespaced objects a template pins to another namespace) as
 *   `clusterPermissions`;
 * - the rules of every Role and ClusterRole the charts render, since Kubernetes lets nobody
 *   grant what they do not hold, and `bind` on each role a rendered binding refers to but the
 *   charts do not define (`system:image-puller`, `view`, …);
 * - the chart's own CRDs (crds/), which Helm creates before the release;
 * - what the operator needs for itself: its own kinds (with /status and /finalizers), Secrets
 *   (Helm release records), ConfigMaps (values from ConfigMaps), Events, EndpointSlices (health
 *   of webhook Services), and Leases for leader election. The Lease lives in the operator's own
 *   namespace, which need not be one it watches (SingleNamespace, MultiNamespace), so that one
 *   rule is a cluster permission.
 * Rules come out merged and sorted, so the same charts give the same CSV.
 */
import type { KubeObject } from '../../kube/types.js';
import { gvkOf } from '../../kube/types.js';
import { groupKindOf, type RenderedObject } from './render.js';
import { resourceFor, type CrdKind } from './resources.js';

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

export interface OperatorRbac {
  /** Rules in the namespaces the operator watches. */
  permissions: PolicyRule[];
  /** Rules across the cluster. */
  clusterPermissions: PolicyRule[];
  /** Custom kinds whose resource name and scope were guessed (not built in, no CRD in the chart). */
  guessed: string[];
}

export interface RbacInput {
  objects: readonly RenderedObject[];
  /** The namespace the charts were rendered into (objects there, or without one, are namespace-local). */
  namespace: string;
  chartCrds: readonly CrdKind[];
  /** The operator's own kinds. */
  own: readonly { group: string; plural: string }[];
}

/** What the applier does to objects it owns: server-side apply, reads, prune. */
export const APPLY_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const READ_VERBS = ['get', 'list', 'watch'];
const RBAC = 'rbac.authorization.k8s.io';

/** The operator's own needs, whatever the chart (see the file comment). */
function ownRules(own: RbacInput['own']): { permissions: PolicyRule[]; clusterPermissions: PolicyRule[] } {
  const groups = [...new Set(own.map((o) => o.group))].sort();
  const permissions: PolicyRule[] = [];
  for (const g of groups) {
    const plurals = own.filter((o) => o.group === g).map((o) => o.plural).sort();
    permissions.push(
      { apiGroups: [g], resources: plurals, verbs: APPLY_VERBS },
      { apiGroups: [g], resources: plurals.map((p) => `${p}/status`), verbs: ['get', 'patch', 'update'] },
      { apiGroups: [g], resources: plurals.map((p) => `${p}/finalizers`), verbs: ['update'] },
    );
  }
  permissions.push(
    { apiGroups: [''], resources: ['secrets'], verbs: APPLY_VERBS },
    { apiGroups: [''], resources: ['configmaps'], verbs: READ_VERBS },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ_VERBS },
  );
  return { permissions, clusterPermissions: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: APPLY_VERBS }] };
}

function rulesOf(o: KubeObject): PolicyRule[] {
  const rules = Array.isArray(o.rules) ? o.rules : [];
  const out: PolicyRule[] = [];
  for (const r of rules) {
    if (typeof r !== 'object' || r === null) continue;
    const rec = r as Record<string, unknown>;
    const list = (k: string): string[] | undefined => (Array.isArray(rec[k]) ? rec[k].filter((x): x is string => typeof x === 'string') : undefined);
    const verbs = list('verbs') ?? [];
    if (verbs.length === 0) continue;
    const rule: PolicyRule = { verbs };
    for (const k of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const v = list(k);
      if (v !== undefined && v.length > 0) rule[k] = v;
    }
    out.push(rule);
  }
  return out;
}

/** Roles named by rendered bindings; those the charts do not define need `bind`. */
function bindRules(objects: readonly KubeObject[], isLocal: (o: KubeObject) => boolean): { permissions: PolicyRule[]; clusterPermissions: PolicyRule[] } {
  const defined = new Set(objects.filter((o) => gvkOf(o).group === RBAC && (o.kind === 'Role' || o.kind === 'ClusterRole')).map((o) => `${o.kind}/${o.metadata.name ?? ''}`));
  const local = new Map<string, Set<string>>();
  const cluster = new Map<string, Set<string>>();
  for (const b of objects) {
    if (gvkOf(b).group !== RBAC || (b.kind !== 'RoleBinding' && b.kind !== 'ClusterRoleBinding')) continue;
    const ref = typeof b.roleRef === 'object' && b.roleRef !== null ? (b.roleRef as Record<string, unknown>) : {};
    const kind = ref.kind === 'Role' ? 'Role' : 'ClusterRole';
    const name = typeof ref.name === 'string' ? ref.name : '';
    if (name === '' || defined.has(`${kind}/${name}`)) continue;
    const target = b.kind === 'RoleBinding' && isLocal(b) ? local : cluster;
    const resource = kind === 'Role' ? 'roles' : 'clusterroles';
    target.set(resource, (target.get(resource) ?? new Set()).add(name));
  }
  const toRules = (m: Map<string, Set<string>>): PolicyRule[] => [...m].map(([resource, names]) => ({ apiGroups: [RBAC], resources: [resource], resourceNames: [...names].sort(), verbs: ['bind'] }));
  return { permissions: toRules(local), clusterPermissions: toRules(cluster) };
}

export function operatorRbac(input: RbacInput): OperatorRbac {
  const crds = new Map(input.chartCrds.map((c) => [`${c.group}/${c.kind}`, c]));
  const objects = input.objects.map((r) => r.object);
  const isLocal = (o: KubeObject): boolean => o.metadata.namespace === undefined || o.metadata.namespace === '' || o.metadata.namespace === input.namespace;
  const own = ownRules(input.own);
  const permissions: PolicyRule[] = [...own.permissions];
  const clusterPermissions: PolicyRule[] = [...own.clusterPermissions];
  const guessed = new Set<string>();

  for (const o of objects) {
    const { group, kind } = gvkOf(o);
    const info = resourceFor(group, kind, crds);
    if (info.source === 'guessed') guessed.add(groupKindOf(o));
    const rule: PolicyRule = { apiGroups: [group], resources: [info.resource], verbs: APPLY_VERBS };
    (info.namespaced && isLocal(o) ? permissions : clusterPermissions).push(rule);
    if (group === RBAC && kind === 'Role') (isLocal(o) ? permissions : clusterPermissions).push(...rulesOf(o));
    if (group === RBAC && kind === 'ClusterRole') clusterPermissions.push(...rulesOf(o));
  }
  if (input.chartCrds.length > 0) {
    // Helm creates (and under CreateReplace, replaces) a chart's crds/ before the release; it never deletes them.
    clusterPermissions.push({ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['create', 'get', 'list', 'patch', 'update', 'watch'] });
  }
  const binds = bindRules(objects, isLocal);
  permissions.push(...binds.permissions);
  clusterPermissions.push(...binds.clusterPermissions);
  return { permissions: mergeRules(permissions), clusterPermissions: mergeRules(clusterPermissions), guessed: [...guessed].sort() };
}

const key = (xs: readonly string[] | undefined): string => JSON.stringify([...(xs ?? [])].sort());

/**
 * Rules that differ only in their resources become one; duplicates go; the order is fixed
 * (by API group, then resources). A rule with resource names or non-resource URLs is kept as it is.
 */
export function mergeRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, PolicyRule>();
  for (const r of rules) {
    const verbs = [...new Set(r.verbs)].sort();
    const simple = r.resourceNames === undefined && r.nonResourceURLs === undefined && r.apiGroups !== undefined && r.apiGroups.length === 1;
    const k = simple ? `g:${key(r.apiGroups)}|v:${key(verbs)}` : `r:${key(r.apiGroups)}|${key(r.resources)}|${key(r.resourceNames)}|${key(r.nonResourceURLs)}|${key(verbs)}`;
    const prev = merged.get(k);
    if (prev === undefined) {
      merged.set(k, normalise({ ...r, verbs }));
      continue;
    }
    prev.resources = [...new Set([...(prev.resources ?? []), ...(r.resources ?? [])])].sort();
  }
  return [...merged.values()].sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
}

function normalise(r: PolicyRule): PolicyRule {
  const out: PolicyRule = { verbs: r.verbs };
  if (r.apiGroups !== undefined) out.apiGroups = [...new Set(r.apiGroups)].sort();
  if (r.resources !== undefined) out.resources = [...new Set(r.resources)].sort();
  if (r.resourceNames !== undefined) out.resourceNames = [...new Set(r.resourceNames)].sort();
  if (r.nonResourceURLs !== undefined) out.nonResourceURLs = [...new Set(r.nonResourceURLs)].sort();
  // verbs last, as kubectl prints rules
  const { verbs, ...rest } = out;
  return { ...rest, verbs };
}

function sortKey(r: PolicyRule): string {
  return `${(r.apiGroups ?? []).join(',')}\u0000${r.nonResourceURLs === undefined ? '0' : '1'}${(r.resources ?? r.nonResourceURLs ?? []).join(',')}\u0000${(r.resourceNames ?? []).join(',')}\u0000${r.verbs.join(',')}`;
}

/** Whether `rules` allow `verb` on `group`/`resource` (for tests and checks). */
export function allows(rules: readonly PolicyRule[], group: string, resource: string, verb: string, name?: string): boolean {
  return rules.some((r) => {
    const groupOk = (r.apiGroups ?? []).some((g) => g === '*' || g === group);
    const resOk = (r.resources ?? []).some((x) => x === '*' || x === resource);
    const verbOk = r.verbs.some((v) => v === '*' || v === verb);
    const nameOk = r.resourceNames === undefined || r.resourceNames.length === 0 || (name !== undefined && r.resourceNames.includes(name));
    return groupOk && resOk && verbOk && nameOk;
  });
}
