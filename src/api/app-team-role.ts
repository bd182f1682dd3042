/**
 * The role for app teams, and the check that keeps it (and every role aggregated into it) from
 * granting more than an app team may have.
 *
 * App teams create custom resources of Helm operator kinds in their own namespace (DESIGN.md's
 * trust model). A namespace admin grants that by binding the `binnacle-app-team` ClusterRole
 * with a RoleBinding. The role aggregates every ClusterRole labelled
 * `binnacle.dev/aggregate-to-app-team: "true"`: Binnacle's base rules (reading HelmOperators,
 * ClusterCatalogs and ClusterExtensions) and, per HelmOperator, the rules for its kinds, which
 * appear and go with the HelmOperator.
 *
 * `escalationProblems` is the check: a role that passes cannot be used to gain power beyond its
 * own rules (no RBAC or impersonation verbs, no wildcards, no writes to cluster-wide admin APIs,
 * no Secrets, no tokens, an aggregation that selects only app-team roles).
 */
import { OLMV1_GROUP } from './olmv1/types.js';
import { GROUP } from './types.js';

export const APP_TEAM_ROLE = 'binnacle-app-team';
/** The base rules every app team gets, aggregated into APP_TEAM_ROLE. */
export const APP_TEAM_BASE_ROLE = 'binnacle-app-team-base';
/** The label that aggregates a ClusterRole into APP_TEAM_ROLE (a HelmOperator's kinds carry it). */
export const AGGREGATE_TO_APP_TEAM = `${GROUP}/aggregate-to-app-team`;
/** The manager's rights over the custom resources of Helm operator kinds (made at run time) aggregate into this role. */
export const MANAGER_HELM_KINDS_ROLE = 'binnacle-manager-helm-kinds';
export const AGGREGATE_TO_MANAGER = `${GROUP}/aggregate-to-manager`;

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface RoleLike {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] }[] };
}

/** Verbs that let a holder gain power beyond the role's rules (RBAC, impersonation, CSR signing). */
const ESCALATING_VERBS = ['escalate', 'bind', 'impersonate', 'approve', 'sign'];
const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection'];
/** API groups whose objects change who may do what, or what the API server accepts, for the whole cluster. */
const ADMIN_GROUPS = ['rbac.authorization.k8s.io', 'apiextensions.k8s.io', 'admissionregistration.k8s.io', 'apiregistration.k8s.io', 'certificates.k8s.io'];
/** Binnacle's cluster-scoped admin APIs: each installs software with a ServiceAccount's power. */
const BINNACLE_ADMIN_RESOURCES = ['clusterextensions', 'bundledeployments', 'clustercatalogs', 'helmoperators', 'platformoperators'];

/** OLM v1's cluster-scoped admin APIs: an OLM v1 ClusterExtension installs as its ServiceAccount or the manager's default installer. */
const OLMV1_ADMIN_RESOURCES = ['clusterextensions', 'clustercatalogs'];

/** Writes to OLM v1's ClusterExtension and ClusterCatalog (served through Binnacle's engine, docs/from-olm-v1.md): the same power as Binnacle's own. */
function olmv1Writes(groups: readonly string[], resources: readonly string[], writes: readonly string[], where: string): string[] {
  if (!groups.includes(OLMV1_GROUP) || writes.length === 0) return [];
  return resources.filter((x) => OLMV1_ADMIN_RESOURCES.includes(baseResource(x)) || x === '*').map((r) => `${where}: writes (${writes.join(', ')}) to ${r}.${OLMV1_GROUP}, a cluster admin's API`);
}

/** `resource` without its subresource: `helmoperators/status` → `helmoperators`. */
function baseResource(resource: string): string {
  return resource.split('/')[0] ?? resource;
}

function ruleProblems(rule: PolicyRule, where: string): string[] {
  const out: string[] = [];
  const groups = rule.apiGroups ?? [];
  const resources = rule.resources ?? [];
  const verbs = rule.verbs ?? [];
  if (verbs.includes('*')) out.push(`${where}: verb "*"`);
  for (const v of verbs.filter((x) => ESCALATING_VERBS.includes(x))) out.push(`${where}: verb "${v}" lets the holder gain power the role does not list`);
  if (groups.includes('*')) out.push(`${where}: apiGroup "*"`);
  if (resources.some((r) => r === '*' || r.startsWith('*/') || r.endsWith('/*'))) out.push(`${where}: resource wildcard`);
  if ((rule.nonResourceURLs ?? []).length > 0) out.push(`${where}: nonResourceURLs (an app team needs none)`);
  const writes = verbs.filter((v) => WRITE_VERBS.includes(v) || v === '*');
  out.push(...adminGroupWrites(groups, writes, where));
  out.push(...binnacleWrites(groups, resources, writes, where));
  out.push(...olmv1Writes(groups, resources, writes, where));
  out.push(...coreProblems(groups, resources, verbs, where));
  return out;
}

/** Writes to the cluster's admin API groups (RBAC, admission, CRDs, …). */
function adminGroupWrites(groups: readonly string[], writes: readonly string[], where: string): string[] {
  if (writes.length === 0) return [];
  return groups.filter((x) => ADMIN_GROUPS.includes(x)).map((g) => `${where}: writes (${writes.join(', ')}) to ${g}`);
}

/** Writes to Binnacle's own cluster-admin resources. */
function binnacleWrites(groups: readonly string[], resources: readonly string[], writes: readonly string[], where: string): string[] {
  if (!(groups.includes(GROUP) || groups.includes('*')) || writes.length === 0) return [];
  return resources.filter((x) => BINNACLE_ADMIN_RESOURCES.includes(baseResource(x)) || x === '*').map((r) => `${where}: writes (${writes.join(', ')}) to ${r}.${GROUP}, a cluster admin's API`);
}

/** In the core group: any access to Secrets, and minting tokens. */
function coreProblems(groups: readonly string[], resources: readonly string[], verbs: readonly string[], where: string): string[] {
  if (!(groups.includes('') || groups.includes('*')) || verbs.length === 0) return [];
  const out: string[] = [];
  for (const r of resources) {
    if (baseResource(r) === 'secrets') out.push(`${where}: secrets (${verbs.join(', ')}): an app team's releases read Secrets as their ServiceAccount, the team needs none`);
    if (r === 'serviceaccounts/token') out.push(`${where}: serviceaccounts/token mints tokens of other identities`);
  }
  return out;
}

function selectorProblems(role: RoleLike, name: string): string[] {
  const selectors = role.aggregationRule?.clusterRoleSelectors;
  if (selectors === undefined) return [];
  if (selectors.length === 0) return [];
  const out: string[] = [];
  selectors.forEach((sel, i) => {
    const labels = sel.matchLabels ?? {};
    const keys = Object.keys(labels);
    const only = keys.length === 1 && labels[AGGREGATE_TO_APP_TEAM] === 'true' && (sel.matchExpressions ?? []).length === 0;
    if (!only) out.push(`${name}: aggregationRule.clusterRoleSelectors[${i}] must select exactly ${AGGREGATE_TO_APP_TEAM}: "true" (any other selector can pull in roles not checked here)`);
  });
  return out;
}

/**
 * Why `role` could be used to escalate, one line each; empty when it cannot by construction.
 * Applies to the aggregating role (its selectors) and to each aggregated role (its rules).
 */
export function escalationProblems(role: RoleLike): string[] {
  const name = role.metadata?.name ?? 'role';
  const out = selectorProblems(role, name);
  (role.rules ?? []).forEach((rule, i) => out.push(...ruleProblems(rule, `${name}: rules[${i}]`)));
  return out;
}

const READ = ['get', 'list', 'watch'];

/**
 * The app-team role and its base rules, as install-self applies them. A namespace admin binds
 * APP_TEAM_ROLE with a RoleBinding in the team's namespace; cluster-scoped reads (HelmOperators,
 * ClusterCatalogs, ClusterExtensions) then need a ClusterRoleBinding to APP_TEAM_BASE_ROLE, which
 * a cluster admin may give every team (they reveal what is offered, nothing secret).
 */
export function appTeamRoles(labels: Record<string, string> = {}): RoleLike[] {
  const rbac = 'rbac.authorization.k8s.io/v1';
  return [
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: APP_TEAM_ROLE, labels: { ...labels } },
      // No `rules`: the API server's aggregation controller owns them; setting them would fight it.
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO_APP_TEAM]: 'true' } }] },
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: APP_TEAM_BASE_ROLE, labels: { ...labels, [AGGREGATE_TO_APP_TEAM]: 'true' } },
      rules: [
        // Which kinds exist and what their HelmOperator says about them (chart, values schema).
        { apiGroups: [GROUP], resources: ['helmoperators', 'helmoperators/status'], verbs: READ },
        // What is offered and installed, to know what a kind depends on.
        { apiGroups: [GROUP], resources: ['clustercatalogs', 'clustercatalogs/status', 'clusterextensions', 'clusterextensions/status'], verbs: READ },
        // The CRDs of the Helm operator kinds (printer columns, schemas for `kubectl explain`).
        { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: READ },
      ],
    },
  ];
}

/** A ClusterRole over some Helm operator kinds: `verbs` on the resources, `statusVerbs` on their status. */
function helmKindsRole(name: string, kinds: { group: string; plural: string }[], labels: Record<string, string>, verbs: string[], statusVerbs: string[]): RoleLike {
  const byGroup = new Map<string, string[]>();
  for (const k of kinds) byGroup.set(k.group, [...(byGroup.get(k.group) ?? []), k.plural]);
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels },
    rules: [...byGroup].flatMap(([group, plurals]) => [
      { apiGroups: [group], resources: plurals, verbs },
      { apiGroups: [group], resources: plurals.map((p) => `${p}/status`), verbs: statusVerbs },
    ]),
  };
}

/**
 * The ClusterRole a HelmOperator's kinds come with: create and edit CRs of those kinds,
 * aggregated into APP_TEAM_ROLE. Passes escalationProblems. Status is read-only: the manager's
 * to write, and a team that could write it could fake a release's state.
 */
export function helmKindsAppTeamRole(name: string, kinds: { group: string; plural: string }[], labels: Record<string, string> = {}): RoleLike {
  return helmKindsRole(name, kinds, { ...labels, [AGGREGATE_TO_APP_TEAM]: 'true' }, [...READ, 'create', 'update', 'patch', 'delete'], READ);
}

/**
 * What the manager needs over a HelmOperator's kinds: read and watch the custom resources, keep
 * its finalizer, delete them when the HelmOperator goes, and write their status. Aggregated into
 * the manager's own role, so a kind made at run time needs no new binding.
 */
export function helmKindsManagerRole(name: string, kinds: { group: string; plural: string }[], labels: Record<string, string> = {}): RoleLike {
  return helmKindsRole(name, kinds, { ...labels, [AGGREGATE_TO_MANAGER]: 'true' }, [...READ, 'update', 'patch', 'delete'], [...READ, 'update', 'patch']);
}
