import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeClient, ResourceInfo } from '../kube/client.js';
import { apiErrorFromResponse, KubeApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { missingPermissions } from './preflight-permissions.js';

const sa = { namespace: 'ops', name: 'installer' };
const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op', namespace: 'ops' } };
const widget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ops' } };

function client(o: { discovery?: (kind: string) => ResourceInfo | Error; review?: () => boolean | Error }): KubeClient {
  const fake = {
    resourceFor: (_apiVersion: string, kind: string): Promise<ResourceInfo> => {
      const r = o.discovery?.(kind) ?? { name: `${kind.toLowerCase()}s`, namespaced: true, kind, verbs: [] };
      return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
    },
    create: (obj: KubeObject): Promise<KubeObject> => {
      const r = o.review?.() ?? true;
      return r instanceof Error ? Promise.reject(r) : Promise.resolve({ ...obj, status: { allowed: r } });
    },
  };
  return fake as unknown as KubeClient;
}

test('a kind the server does not serve yet is left to the apply; every other discovery failure fails the check', async () => {
  const unknownKind = client({ discovery: (kind) => (kind === 'Widget' ? new KubeApiError(404, 'NotFound', 'no Widget') : { name: 'deployments', namespaced: true, kind, verbs: [] }) });
  assert.deepEqual(await missingPermissions(unknownKind, sa, [deployment, widget], 'ops'), []);
  const discoveryDown = client({ discovery: (kind) => (kind === 'Widget' ? apiErrorFromResponse(503, '', 'discover example.com/v1') : { name: 'deployments', namespaced: true, kind, verbs: [] }) });
  await assert.rejects(missingPermissions(discoveryDown, sa, [deployment, widget], 'ops'), /503|discover example.com\/v1/);
});

test('a permission review that errors fails the check instead of counting as allowed', async () => {
  await assert.rejects(missingPermissions(client({ review: () => apiErrorFromResponse(500, '', 'create SubjectAccessReview') }), sa, [deployment], 'ops'), /SubjectAccessReview/);
  const denied = await missingPermissions(client({ review: () => false }), sa, [deployment], 'ops');
  assert.ok(denied.length > 0, 'a review that does not say allowed counts as missing');
});
