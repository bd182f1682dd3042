import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { describeOwner, isOwnedBy, stampOwnership, OWNER_NAMESPACE_LABEL } from './ownership.js';

const owner = { kind: 'ClusterExtension', name: 'argocd' };
const release = { name: 'argocd', namespace: 'argocd-system' };

test('stampOwnership adds our labels and helm\'s marks without losing the object\'s own', () => {
  const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { app: 'x' }, annotations: { note: 'y' } }, data: { k: 'v' } };
  const stamped = stampOwnership(obj, owner, release);
  assert.deepEqual(stamped.metadata.labels, { app: 'x', 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'argocd', 'app.kubernetes.io/managed-by': 'Helm' });
  assert.deepEqual(stamped.metadata.annotations, { note: 'y', 'meta.helm.sh/release-name': 'argocd', 'meta.helm.sh/release-namespace': 'argocd-system' });
  assert.deepEqual(stamped.data, { k: 'v' });
  assert.deepEqual(obj.metadata.labels, { app: 'x' }, 'the input is not modified');
  assert.equal(isOwnedBy(stamped, owner, release), true);
  assert.equal(isOwnedBy(stamped, { kind: 'ClusterExtension', name: 'other' }, release), false);
  assert.equal(isOwnedBy(stamped, { kind: 'BundleDeployment', name: 'argocd' }, release), false);
  assert.equal(isOwnedBy(obj, owner, release), false);
});

test('describeOwner names whoever holds an object', () => {
  const meta = (m: KubeObject['metadata']): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: m });
  assert.equal(describeOwner(meta({ labels: { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'a' } })), 'ClusterExtension a');
  assert.equal(describeOwner(meta({ annotations: { 'meta.helm.sh/release-name': 'r', 'meta.helm.sh/release-namespace': 'ns' } })), 'Helm release ns/r');
  assert.equal(describeOwner(meta({ labels: { 'app.kubernetes.io/managed-by': 'olm' } })), 'olm (app.kubernetes.io/managed-by)');
  assert.equal(describeOwner(meta({ ownerReferences: [{ apiVersion: 'v1', kind: 'ClusterServiceVersion', name: 'csv', uid: 'u', controller: true }] })), 'ClusterServiceVersion csv (controller reference)');
  assert.equal(describeOwner(meta({})), 'no Binnacle owner (created outside Binnacle)');
});

test('a namespaced owner holds only what names its namespace: same-named owners in two namespaces never hold each other\'s objects', () => {
  const a = { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' };
  const b = { kind: 'Pushgateway', name: 'pg', namespace: 'team-b' };
  const obj: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'pg' } };
  const ofA = stampOwnership(obj, a, { name: 'pg', namespace: 'team-a' });
  assert.equal(ofA.metadata.labels?.[OWNER_NAMESPACE_LABEL], 'team-a');
  assert.equal(isOwnedBy(ofA, a, { name: 'pg', namespace: 'team-a' }), true);
  assert.equal(isOwnedBy(ofA, b, { name: 'pg', namespace: 'team-b' }), false, 'team-b cannot prune, delete or take over team-a\'s ClusterRole');
  assert.equal(isOwnedBy(ofA, { kind: 'Pushgateway', name: 'pg' }, { name: 'pg', namespace: 'team-a' }), false, 'a cluster-scoped owner of the same kind and name is another owner');
  assert.equal(describeOwner(ofA), 'Pushgateway team-a/pg');
  const ofCluster = stampOwnership(obj, { kind: 'Pushgateway', name: 'pg' }, { name: 'pg', namespace: 'team-a' });
  assert.equal(ofCluster.metadata.labels?.[OWNER_NAMESPACE_LABEL], undefined, 'a cluster-scoped owner stamps no namespace');
});

test('objects stamped before owners had a namespace are judged by Helm\'s release-namespace annotation', () => {
  const a = { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' };
  const legacy: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', labels: { 'binnacle.dev/owner-kind': 'Pushgateway', 'binnacle.dev/owner-name': 'pg' }, annotations: { 'meta.helm.sh/release-name': 'pg', 'meta.helm.sh/release-namespace': 'team-a' } },
  };
  assert.equal(isOwnedBy(legacy, a, { name: 'pg', namespace: 'team-a' }), true);
  assert.equal(isOwnedBy(legacy, { ...a, namespace: 'team-b' }, { name: 'pg', namespace: 'team-b' }), false);
});

test('as Helm, an object marked for another release is not ours, whatever our labels say', () => {
  const stamped = stampOwnership({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, owner, release);
  const forged = { ...stamped, metadata: { ...stamped.metadata, annotations: { 'meta.helm.sh/release-name': 'other', 'meta.helm.sh/release-namespace': 'argocd-system' } } };
  assert.equal(isOwnedBy(forged, owner, release), false);
  const otherNamespace = { ...stamped, metadata: { ...stamped.metadata, annotations: { 'meta.helm.sh/release-name': 'argocd', 'meta.helm.sh/release-namespace': 'elsewhere' } } };
  assert.equal(isOwnedBy(otherNamespace, owner, release), false);
});

test("OLM v1's owner labels are informational: they neither make an object ours nor take it from its Binnacle owner", () => {
  const olm = { 'olm.operatorframework.io/owner-kind': 'ClusterExtension', 'olm.operatorframework.io/owner-name': 'argocd' };
  const foreign: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: olm } };
  assert.equal(isOwnedBy(foreign, owner, release), false, 'OLM v1 labels alone: not ours (no takeover)');
  const bd = { kind: 'BundleDeployment', name: 'argocd-argocd' };
  const stamped = stampOwnership({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { ...olm, 'binnacle.dev/owner-kind': 'Forged', 'binnacle.dev/owner-name': 'x' } } }, bd, release);
  assert.equal(stamped.metadata.labels?.['binnacle.dev/owner-kind'], 'BundleDeployment', "Binnacle's labels win over a rendered object's own");
  assert.equal(stamped.metadata.labels['olm.operatorframework.io/owner-name'], 'argocd', 'the OLM v1 labels are kept as rendered');
  assert.equal(isOwnedBy(stamped, bd, release), true);
  assert.equal(isOwnedBy(stamped, owner, release), false, 'the ClusterExtension the OLM v1 labels name does not own it');
});
