import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PlatformOperator } from '../api/types.js';
import type { ApplyOptions, KubeClient } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
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
    const calls: { obj: KubeObject; opts: ApplyOptions }[] = [];
    const client = {
      resourceFor: (_a: string, kind: string) => Promise.resolve({ name: 'clusteroperators', namespaced: false, kind, verbs: [] }),
      apply: (obj: KubeObject, opts: ApplyOptions = {}) => {
        calls.push({ obj, opts });
        return Promise.resolve(obj);
      },
    } as unknown as Pick<KubeClient, 'resourceFor' | 'apply'>;
    assert.equal(await writeClusterOperator(client, po, clusterOperatorStatus(po, conditions, packages, ['ops'])), true);
    assert.equal(calls.length, 2);
    assert.equal(calls[0]?.obj.metadata.name, clusterOperatorName('core'));
    assert.deepEqual(calls[0]?.obj.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid]), [['PlatformOperator', 'core', 'u-1']]);
    assert.equal(calls[1]?.opts.subresource, 'status');
    assert.ok(calls[1]?.obj.status !== undefined);
  });

  it('writes nothing where config.openshift.io is not served', async () => {
    const client = {
      resourceFor: () => Promise.reject(new KubeApiError(404, 'NotFound', 'no ClusterOperator')),
      apply: () => Promise.reject(new Error('must not apply')),
    } as unknown as Pick<KubeClient, 'resourceFor' | 'apply'>;
    assert.equal(await writeClusterOperator(client, po, clusterOperatorStatus(po, conditions, packages, [])), false);
  });
});
