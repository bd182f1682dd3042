import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { qualifiedKind, scopeProblems, type ScopeOf } from './scope.js';

const CLUSTER = new Set(['ClusterRoleBinding', 'ClusterRole', 'Namespace', 'CustomResourceDefinition']);
const scopeOf: ScopeOf = (_apiVersion, kind) => Promise.resolve(kind === 'Unserved' ? undefined : !CLUSTER.has(kind));
const obj = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({ apiVersion, kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }) } });

test('by default a release holds only namespaced objects in its own namespace', async () => {
  const problems = await scopeProblems(
    [
      obj('v1', 'ConfigMap', 'ok'),
      obj('apps/v1', 'Deployment', 'ok', 'team-a'),
      obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'me-admin'),
      obj('v1', 'Secret', 'steal', 'kube-system'),
      obj('v1', 'Namespace', 'new'),
    ],
    { namespace: 'team-a' },
    scopeOf,
  );
  assert.deepEqual(problems, [
    'ClusterRoleBinding me-admin is cluster-scoped, and ClusterRoleBinding.rbac.authorization.k8s.io is not among the cluster-scoped kinds this release may hold (allowedObjects.clusterScopedKinds)',
    'Secret kube-system/steal is in namespace kube-system, outside the release\'s namespace team-a and the namespaces it may write to (allowedObjects.namespaces)',
    'Namespace new is cluster-scoped, and Namespace is not among the cluster-scoped kinds this release may hold (allowedObjects.clusterScopedKinds)',
  ]);
});

test('the operator owner\'s allow-list lets named namespaces and cluster-scoped kinds through, and nothing else', async () => {
  const scope = { namespace: 'team-a', namespaces: ['monitoring'], clusterScopedKinds: ['ClusterRole.rbac.authorization.k8s.io'] };
  assert.deepEqual(await scopeProblems([obj('v1', 'ConfigMap', 'c', 'monitoring'), obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'r')], scope, scopeOf), []);
  const refused = await scopeProblems([obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'b'), obj('v1', 'ConfigMap', 'c', 'team-b')], scope, scopeOf);
  assert.equal(refused.length, 2);
  assert.match(refused[0] ?? '', /ClusterRoleBinding b is cluster-scoped/);
  assert.match(refused[1] ?? '', /ConfigMap team-b\/c is in namespace team-b/);
});

test('a kind the cluster does not serve is judged by its namespace field', async () => {
  assert.deepEqual(await scopeProblems([obj('x.example/v1', 'Unserved', 'a')], { namespace: 'team-a' }, scopeOf), []);
  assert.equal((await scopeProblems([obj('x.example/v1', 'Unserved', 'a', 'elsewhere')], { namespace: 'team-a' }, scopeOf)).length, 1);
});

test('qualifiedKind names core kinds bare and others with their group', () => {
  assert.equal(qualifiedKind({ apiVersion: 'v1', kind: 'Namespace' }), 'Namespace');
  assert.equal(qualifiedKind({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }), 'CustomResourceDefinition.apiextensions.k8s.io');
});
