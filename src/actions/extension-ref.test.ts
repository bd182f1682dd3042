/**
 * The object `binnacle upgrade | rollback | uninstall NAME` writes: an OLM v1 ClusterExtension's
 * own object when NAME is its twin (the twin is the manager's and would be put back), the
 * binnacle.dev ClusterExtension otherwise; a label alone, without the OLM v1 owner, is not
 * followed. Over the one fake cluster, with rollbackExtension writing through it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_CRDS } from '../api/crds.js';
import { loadOlmv1Crds } from '../api/olmv1/crds.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { API_VERSION } from '../api/types.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { extensionSpecRef } from './extension-ref.js';
import { rollbackExtension } from './release-history.js';

const V1_UID = '11111111-1111-4111-8111-111111111111';
const spec = { namespace: 'ops', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'op', version: '1.0.1' } } };

function v1(name: string): KubeObject {
  return { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name, uid: V1_UID }, spec };
}

/** A binnacle.dev ClusterExtension: the twin of `v1` (its label and controller owner), or one carrying the label only. */
function binnacleCe(name: string, how: 'twin' | 'label only' | 'plain'): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: {
      name,
      ...(how === 'plain' ? {} : { labels: { [LABEL_OLMV1_TWIN_OF]: V1_UID } }),
      ...(how === 'twin' ? { ownerReferences: [{ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name, uid: V1_UID, controller: true }] } : {}),
    },
    spec: { namespace: 'ops', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'op', version: '1.0.1' } } },
    status: { install: { bundle: { name: 'op.v1.0.1', version: '1.0.1' } } },
  };
}

const cluster = (...objects: KubeObject[]): FakeCluster => new FakeCluster({ objects: [...ALL_CRDS, ...loadOlmv1Crds(), ...objects] });

test("an OLM v1 ClusterExtension's twin: its OLM v1 object is the one changed", async () => {
  const c = cluster(v1('op'), binnacleCe('op', 'twin'));
  assert.deepEqual(await extensionSpecRef(c.client(), 'op'), { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'op' });
});

test('a binnacle.dev ClusterExtension, or one with the twin label but no OLM v1 owner, is itself the one changed', async () => {
  for (const how of ['plain', 'label only'] as const) {
    const c = cluster(v1('op'), binnacleCe('op', how));
    assert.deepEqual(await extensionSpecRef(c.client(), 'op'), { apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'op' }, how);
  }
  assert.deepEqual(await extensionSpecRef(cluster().client(), 'none'), { apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'none' }, 'nothing there: the binnacle.dev name, for the caller to report');
});

test("rollback of an OLM v1 ClusterExtension pins the version on the OLM v1 object, in OLM v1's fields, and leaves the twin to the manager", async () => {
  const c = cluster(v1('op'), binnacleCe('op', 'twin'));
  const client = c.client();
  const { from, to } = await rollbackExtension(client, 'op', '1.0.0');
  assert.deepEqual([from, to], ['1.0.1', '1.0.0']);
  const written = await client.get({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'op' });
  assert.deepEqual((written.spec as typeof spec).source.catalog, { packageName: 'op', version: '1.0.0', upgradeConstraintPolicy: 'SelfCertified' });
  const twin = await client.get({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'op' });
  assert.equal((twin.spec as typeof spec).source.catalog.version, '1.0.1', 'the twin is not written');
});
