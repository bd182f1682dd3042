import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ClusterFactsSource, openShiftVersionOf } from './cluster-facts.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { FakeCluster, faults } from '../kube/fake-cluster.test-helper.js';

const logger = pino({ level: 'silent' });

test('the OpenShift version is the desired one, else the last completed', () => {
  assert.equal(openShiftVersionOf({ status: { desired: { version: '4.14.3' }, history: [{ state: 'Completed', version: '4.13.9' }] } }), '4.14.3');
  assert.equal(openShiftVersionOf({ status: { history: [{ state: 'Partial', version: '4.14.0' }, { state: 'Completed', version: '4.13.9' }] } }), '4.13.9');
  assert.equal(openShiftVersionOf({}), undefined);
});

const CLUSTER_VERSION_CRD = crdOf({ group: 'config.openshift.io', kind: 'ClusterVersion', plural: 'clusterversions' }, {}, { scope: 'Cluster' });

test('facts come from the API server, are kept for a while, and a cluster without ClusterVersion is not OpenShift', async () => {
  const vanilla = new FakeCluster();
  vanilla.version = 'v1.31.2';
  const kube = new ClusterFactsSource(vanilla.client(), logger);
  assert.deepEqual(await kube.get(), { kubeVersion: 'v1.31.2' });
  vanilla.version = 'v1.32.0';
  await kube.get();
  assert.deepEqual(await kube.get(), { kubeVersion: 'v1.31.2' }, 'cached');
  assert.deepEqual(vanilla.requests, ['get ClusterVersion'], 'asked once');
  const openshift = new FakeCluster({ objects: [CLUSTER_VERSION_CRD, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, status: { desired: { version: '4.14.3' } } }] });
  openshift.version = 'v1.27.6+f67aeb3';
  assert.deepEqual(await new ClusterFactsSource(openshift.client(), logger).get(), { kubeVersion: 'v1.27.6+f67aeb3', openShiftVersion: '4.14.3' });
  const down = new FakeCluster({ objects: [CLUSTER_VERSION_CRD] });
  down.inject({ verb: 'discover', error: faults.unavailable, times: Infinity });
  down.inject({ verb: 'get', kind: 'ClusterVersion', error: faults.unavailable, times: Infinity });
  assert.deepEqual(await new ClusterFactsSource(down.client(), logger).get(), {}, 'unknown facts: constraints are reported, not enforced');
});
