import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ClusterFactsSource, openShiftVersionOf } from './cluster-facts.js';
import type { KubeObject } from '../kube/types.js';

const logger = pino({ level: 'silent' });

test('the OpenShift version is the desired one, else the last completed', () => {
  assert.equal(openShiftVersionOf({ status: { desired: { version: '4.14.3' }, history: [{ state: 'Completed', version: '4.13.9' }] } }), '4.14.3');
  assert.equal(openShiftVersionOf({ status: { history: [{ state: 'Partial', version: '4.14.0' }, { state: 'Completed', version: '4.13.9' }] } }), '4.13.9');
  assert.equal(openShiftVersionOf({}), undefined);
});

test('facts come from the API server, are kept for a while, and a cluster without ClusterVersion is not OpenShift', async () => {
  let calls = 0;
  const kube = new ClusterFactsSource(
    {
      serverVersion: () => {
        calls++;
        return Promise.resolve('v1.31.2');
      },
      find: () => Promise.resolve(undefined),
    },
    logger,
  );
  assert.deepEqual(await kube.get(), { kubeVersion: 'v1.31.2' });
  await kube.get();
  assert.equal(calls, 1, 'cached');
  const ocp = new ClusterFactsSource(
    { serverVersion: () => Promise.resolve('v1.27.6+f67aeb3'), find: <T extends KubeObject>() => Promise.resolve({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, status: { desired: { version: '4.14.3' } } } as unknown as T) },
    logger,
  );
  assert.deepEqual(await ocp.get(), { kubeVersion: 'v1.27.6+f67aeb3', openShiftVersion: '4.14.3' });
  const broken = new ClusterFactsSource({ serverVersion: () => Promise.reject(new Error('down')), find: () => Promise.reject(new Error('down')) }, logger);
  assert.deepEqual(await broken.get(), {}, 'unknown facts: constraints are reported, not enforced');
});
