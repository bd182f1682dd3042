import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse } from '../kube/errors.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { missingPermissions } from './preflight-permissions.js';

const sa = { namespace: 'ops', name: 'installer' };
const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op', namespace: 'ops' } };
const widget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ops' } };

/** The one fake cluster (it serves Deployments, not Widgets), with every review allowed unless told. */
function cluster(allowed = true): FakeCluster {
  const fake = new FakeCluster();
  fake.reviewAccess = () => allowed;
  return fake;
}

test('a kind the server does not serve yet is left to the apply; every other discovery failure fails the check', async () => {
  assert.deepEqual(await missingPermissions(cluster().client(), sa, [deployment, widget], 'ops'), []);
  const discoveryDown = cluster();
  discoveryDown.inject({ verb: 'discover', kind: 'Widget', error: () => apiErrorFromResponse(503, '', 'discover example.com/v1') });
  await assert.rejects(missingPermissions(discoveryDown.client(), sa, [deployment, widget], 'ops'), /503|discover example.com\/v1/);
});

test('a permission review that errors fails the check instead of counting as allowed', async () => {
  const failing = cluster();
  failing.inject({ verb: 'create', kind: 'SubjectAccessReview', error: () => apiErrorFromResponse(500, '', 'create SubjectAccessReview') });
  await assert.rejects(missingPermissions(failing.client(), sa, [deployment], 'ops'), /SubjectAccessReview/);
  const denied = await missingPermissions(cluster(false).client(), sa, [deployment], 'ops');
  assert.ok(denied.length > 0, 'a review that does not say allowed counts as missing');
});
