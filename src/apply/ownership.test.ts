import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { describeOwner, isOwnedBy, stampOwnership } from './ownership.js';

const owner = { kind: 'ClusterExtension', name: 'argocd' };
const release = { name: 'argocd', namespace: 'argocd-system' };

test('stampOwnership adds our labels and helm\'s marks without losing the object\'s own', () => {
  const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { app: 'x' }, annotations: { note: 'y' } }, data: { k: 'v' } };
  const stamped = stampOwnership(obj, owner, release);
  assert.deepEqual(stamped.metadata.labels, { app: 'x', 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'argocd', 'app.kubernetes.io/managed-by': 'Helm' });
  assert.deepEqual(stamped.metadata.annotations, { note: 'y', 'meta.helm.sh/release-name': 'argocd', 'meta.helm.sh/release-namespace': 'argocd-system' });
  assert.deepEqual(stamped.data, { k: 'v' });
  assert.deepEqual(obj.metadata.labels, { app: 'x' }, 'the input is not modified');
  assert.equal(isOwnedBy(stamped, owner), true);
  assert.equal(isOwnedBy(stamped, { kind: 'ClusterExtension', name: 'other' }), false);
  assert.equal(isOwnedBy(stamped, { kind: 'BundleDeployment', name: 'argocd' }), false);
  assert.equal(isOwnedBy(obj, owner), false);
});

test('describeOwner names whoever holds an object', () => {
  const meta = (m: KubeObject['metadata']): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: m });
  assert.equal(describeOwner(meta({ labels: { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'a' } })), 'ClusterExtension a');
  assert.equal(describeOwner(meta({ annotations: { 'meta.helm.sh/release-name': 'r', 'meta.helm.sh/release-namespace': 'ns' } })), 'Helm release ns/r');
  assert.equal(describeOwner(meta({ labels: { 'app.kubernetes.io/managed-by': 'olm' } })), 'olm (app.kubernetes.io/managed-by)');
  assert.equal(describeOwner(meta({ ownerReferences: [{ apiVersion: 'v1', kind: 'ClusterServiceVersion', name: 'csv', uid: 'u', controller: true }] })), 'ClusterServiceVersion csv (controller reference)');
  assert.equal(describeOwner(meta({})), 'no Binnacle owner (created outside Binnacle)');
});
