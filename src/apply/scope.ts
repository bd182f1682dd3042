/**
 * Where a release may put objects. A tenant's release (a Helm operator CR) holds only
 * namespaced objects in its own namespace unless whoever owns the operator allows more, by
 * namespace or by cluster-scoped kind. This is checked before anything is applied, on top of
 * the API server's RBAC for the identity that applies: it keeps a chart's values from reaching
 * out of the namespace even when that identity could.
 */
import { describeRef, parseApiVersion, type KubeObject } from '../kube/types.js';

export interface ReleaseScope {
  /** The release's own namespace: namespaced objects without one land here. */
  namespace: string;
  /** Further namespaces the release may write to. */
  namespaces?: readonly string[];
  /** Cluster-scoped kinds the release may hold: `Kind.group` (`ClusterRole.rbac.authorization.k8s.io`), `Kind` for the core group. */
  clusterScopedKinds?: readonly string[];
}

/** Whether a kind is namespaced; undefined when the cluster does not serve it. */
export type ScopeOf = (apiVersion: string, kind: string) => Promise<boolean | undefined>;

/** `Kind.group`, or `Kind` for the core group: how allow-lists name a kind. */
export function qualifiedKind(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): string {
  const { group } = parseApiVersion(obj.apiVersion);
  return group === '' ? obj.kind : `${obj.kind}.${group}`;
}

/**
 * Every object outside the scope, each named with the rule it breaks; empty when all fit.
 * A kind the cluster does not serve is judged by its namespace field alone: the applier skips
 * it until it is served, and the next reconcile judges it again.
 */
export async function scopeProblems(objects: readonly KubeObject[], scope: ReleaseScope, scopeOf: ScopeOf): Promise<string[]> {
  const problems: string[] = [];
  const namespaces = new Set([scope.namespace, ...(scope.namespaces ?? [])]);
  const kinds = new Set(scope.clusterScopedKinds ?? []);
  for (const obj of objects) {
    const namespaced = await scopeOf(obj.apiVersion, obj.kind);
    const ns = obj.metadata.namespace;
    const what = describeRef({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '', namespace: ns });
    if (namespaced === false) {
      if (!kinds.has(qualifiedKind(obj))) {
        problems.push(`${what} is cluster-scoped, and ${qualifiedKind(obj)} is not among the cluster-scoped kinds this release may hold (allowedObjects.clusterScopedKinds)`);
      }
      continue;
    }
    if (ns !== undefined && ns !== '' && !namespaces.has(ns)) {
      problems.push(`${what} is in namespace ${ns}, outside the release's namespace ${scope.namespace} and the namespaces it may write to (allowedObjects.namespaces)`);
    }
  }
  return problems;
}
