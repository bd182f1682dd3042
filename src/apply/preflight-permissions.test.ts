import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCluster, type AccessReview, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { missingPermissions, type MissingPermission } from './preflight-permissions.js';

const sa = { namespace: 'ops', name: 'installer' };

interface Rule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  /** Undefined: a ClusterRoleBinding's rule (every namespace and cluster-wide); else a RoleBinding's. */
  namespace?: string;
}

/** RBAC's rule matching (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac), as the API server answers a SubjectAccessReview. */
function rbacAllows(rules: readonly Rule[], a: MissingPermission): boolean {
  const has = (list: readonly string[], v: string): boolean => list.includes('*') || list.includes(v);
  return rules.some(
    (r) =>
      (r.namespace === undefined || (a.namespace !== undefined && a.namespace === r.namespace)) &&
      has(r.verbs, a.verb) &&
      has(r.apiGroups, a.group) &&
      has(r.resources, a.resource) &&
      (r.resourceNames === undefined || r.resourceNames.length === 0 || (a.name !== undefined && r.resourceNames.includes(a.name))),
  );
}

/** The one fake cluster answering SubjectAccessReviews by `rules` for the account; the reviews it is asked (name '' when none). */
function cluster(rules: Rule[]): { client: FakeClient; reviews: readonly AccessReview[] } {
  const fake = new FakeCluster();
  fake.reviewAccess = (r) => r.user === 'system:serviceaccount:ops:installer' && rbacAllows(rules, { verb: r.verb, group: r.group, resource: r.resource, ...(r.namespace === '' ? {} : { namespace: r.namespace }), ...(r.name === '' ? {} : { name: r.name }) });
  return { client: fake.client(), reviews: fake.reviews };
}

const objects: KubeObject[] = [
  ...['a', 'b', 'c'].map((n): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: n, namespace: 'ops' } })),
  ...['x', 'y'].map((n): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, namespace: 'ops' } })),
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'op-role' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] },
];

/** Every check asked one by one: what the broader reviews must agree with. */
function naive(rules: Rule[]): string[] {
  const checks: MissingPermission[] = [];
  for (const verb of ['get', 'list', 'create', 'update', 'delete']) checks.push({ verb, group: '', resource: 'secrets', namespace: 'ops' });
  for (const o of objects) {
    const r = o.kind === 'Deployment' ? { group: 'apps', resource: 'deployments', ns: 'ops' } : o.kind === 'ConfigMap' ? { group: '', resource: 'configmaps', ns: 'ops' } : { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', ns: undefined };
    for (const verb of ['get', 'create', 'patch', 'update', 'delete']) checks.push({ verb, group: r.group, resource: r.resource, ...(r.ns === undefined ? {} : { namespace: r.ns }), ...(verb === 'create' ? {} : { name: o.metadata.name ?? '' }) });
  }
  checks.push({ verb: 'get', group: '', resource: 'pods' }, { verb: 'list', group: '', resource: 'pods' });
  return [...new Set(checks.filter((c) => !rbacAllows(rules, c)).map((c) => JSON.stringify(c)))].sort();
}

const key = (m: MissingPermission): string => JSON.stringify({ verb: m.verb, group: m.group, resource: m.resource, ...(m.namespace === undefined ? {} : { namespace: m.namespace }), ...(m.name === undefined ? {} : { name: m.name }) });

test('a cluster-admin account is answered with one review', async () => {
  const rules: Rule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
  const { client, reviews } = cluster(rules);
  assert.deepEqual(await missingPermissions(client, sa, objects, 'ops'), []);
  assert.equal(reviews.length, 1);
});

test('verbs granted without resource names are asked once per verb and resource, never per object', async () => {
  // The admin ClusterRole bound in the namespace, plus what the bundle's ClusterRole grants, cluster-wide.
  const rules: Rule[] = [
    { verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'], apiGroups: ['', 'apps'], resources: ['secrets', 'deployments', 'configmaps'], namespace: 'ops' },
    { verbs: ['get', 'create', 'patch', 'update', 'delete'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'] },
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
  ];
  const { client, reviews } = cluster(rules);
  assert.deepEqual(await missingPermissions(client, sa, objects, 'ops'), []);
  assert.ok(reviews.every((r) => r.name === ''), 'no per-object review');
  // 1 (everything) + 5 secrets verbs + 5 per Deployment, ConfigMap and ClusterRole verbs + 2 pods rules
  assert.equal(reviews.length, 1 + 5 + 15 + 2);
});

test('what broader reviews deny is asked by name, and the answer is what one review per check would give', async () => {
  const cases: Rule[][] = [
    [],
    // Only some names, as a Role with resourceNames grants.
    [
      { verbs: ['get', 'patch', 'update', 'delete'], apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['a', 'c'], namespace: 'ops' },
      { verbs: ['create'], apiGroups: ['apps'], resources: ['deployments'], namespace: 'ops' },
      { verbs: ['*'], apiGroups: [''], resources: ['secrets'], namespace: 'ops' },
    ],
    // Granted in another namespace only: nothing here.
    [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespace: 'elsewhere' }],
    // Everything in the namespace, nothing cluster-wide.
    [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespace: 'ops' }],
  ];
  for (const rules of cases) {
    const { client } = cluster(rules);
    const got = (await missingPermissions(client, sa, objects, 'ops')).map(key).sort();
    assert.deepEqual(got, naive(rules), JSON.stringify(rules));
  }
});
