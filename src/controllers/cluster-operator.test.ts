import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PlatformOperator } from '../api/types.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';

const CLUSTER_OPERATOR_CRD = crdOf({ group: 'config.openshift.io', kind: 'ClusterOperator', plural: 'clusteroperators' }, {}, { scope: 'Cluster' });
import { clusterOperatorName, clusterOperatorStatus, writeClusterOperator } from './cluster-operator.js';

const T = '2024-01-01T00:00:00Z';
const po: PlatformOperator = { apiVersion: 'binnacle.dev/v1alpha1', kind: 'PlatformOperator', metadata: { name: 'core', uid: 'u-1' }, spec: { packages: [{ name: 'a' }] } };
const conditions = [
  { type: 'Available', status: 'True' as const, reason: 'AllHealthy', message: '1 package installed and healthy', lastTransitionTime: T, observedGeneration: 3 },
  { type: 'Degraded', status: 'False' as const, reason: 'AsExpected', message: '', lastTransitionTime: T, observedGeneration: 3 },
  { type: 'Other', status: 'True' as const, reason: 'X', message: '', lastTransitionTime: T },
];
const packages = [
  { name: 'a', extension: 'core-a', installed: true, healthy: true, version: '1.2.0', reason: 'Healthy' as const },
  { name: 'gone', extension: 'core-gone', installed: false, healthy: false, reason: 'Removed' as const },
];

describe('clusterOperatorStatus', () => {
  it('carries the OpenShift conditions, the related objects to inspect and the versions', () => {
    const st = clusterOperatorStatus(po, conditions, packages, ['ops', 'ops']);
    assert.deepEqual(st.conditions, [
      { type: 'Available', status: 'True', lastTransitionTime: T, reason: 'AllHealthy', message: '1 package installed and healthy' },
      { type: 'Degraded', status: 'False', lastTransitionTime: T, reason: 'AsExpected', message: '' },
    ]);
    assert.deepEqual(st.relatedObjects, [
      { group: 'binnacle.dev', resource: 'platformoperators', name: 'core' },
      { group: 'binnacle.dev', resource: 'clusterextensions', name: 'core-a' },
      { group: '', resource: 'namespaces', name: 'ops' },
    ]);
    assert.deepEqual(st.versions.map((v) => v.name), ['operator', 'a']);
    assert.equal(st.versions[1]?.version, '1.2.0');
  });
});

describe('writeClusterOperator', () => {
  it('writes the object owned by the PlatformOperator, then its status through the subresource', async () => {
    const cluster = new FakeCluster({ objects: [CLUSTER_OPERATOR_CRD] });
    assert.equal(await writeClusterOperator(cluster.client(), po, clusterOperatorStatus(po, conditions, packages, ['ops'])), true);
    assert.deepEqual(cluster.log.map((r) => `${r.verb} ${r.kind} ${r.name}`), [`apply ClusterOperator ${clusterOperatorName('core')}`, `status ClusterOperator ${clusterOperatorName('core')}`]);
    const obj = cluster.applied[0]?.obj;
    assert.equal(obj?.metadata.name, clusterOperatorName('core'));
    assert.deepEqual(obj?.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid]), [['PlatformOperator', 'core', 'u-1']]);
    assert.ok(cluster.statusApplied[0]?.obj.status !== undefined);
    assert.deepEqual(cluster.get({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', name: clusterOperatorName('core') })?.status, cluster.statusApplied[0]?.obj.status, 'the status as written');
  });

  it('writes nothing where config.openshift.io is not served', async () => {
    const cluster = new FakeCluster();
    assert.equal(await writeClusterOperator(cluster.client(), po, clusterOperatorStatus(po, conditions, packages, [])), false);
    assert.deepEqual(cluster.log, [], 'nothing asked, nothing written');
  });
});
