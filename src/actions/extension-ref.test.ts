/**
 * The object `binnacle upgrade | rollback | uninstall | approve NAME` (and the console's same
 * actions) writes: an OLM v1 ClusterExtension's own object when NAME is its twin (the twin is the
 * manager's and would be put back), the binnacle.dev ClusterExtension otherwise; part of a twin
 * (a label alone, an owner alone) is not followed. Over the one fake cluster, with
 * rollbackExtension and approvePlan writing through it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALL_CRDS } from '../api/crds.js';
import { loadOlmv1Crds } from '../api/olmv1/crds.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from '../api/olmv1/types.js';
import { API_VERSION } from '../api/types.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { ANNOTATION_APPROVED_PLAN, type PendingPlan } from '../api/approval.js';
import { olmv1TwinOf } from '../api/olmv1/twin.js';
import { approvePlan } from './approve.js';
import { extensionSpecRef } from './extension-ref.js';
import { rollbackExtension } from './release-history.js';

const V1_UID = '11111111-1111-4111-8111-111111111111';
const spec = { namespace: 'ops', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'op', version: '1.0.1' } } };

function v1(name: string): KubeObject {
  return { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name, uid: V1_UID }, spec };
}

type How = 'twin' | 'label only' | 'owner only' | 'owner not controller' | 'owner of another uid' | 'plain';
const OTHER_UID = '22222222-2222-4222-8222-222222222222';

/** A binnacle.dev ClusterExtension: the twin of `v1` (its label and controller owner), or one carrying part of that (a forgery). */
function binnacleCe(name: string, how: How, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  const owner = { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name, uid: how === 'owner of another uid' ? OTHER_UID : V1_UID, controller: how !== 'owner not controller' };
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: {
      name,
      ...(how === 'plain' || how === 'owner only' ? {} : { labels: { [LABEL_OLMV1_TWIN_OF]: V1_UID } }),
      ...(how === 'twin' || how.startsWith('owner') ? { ownerReferences: [owner] } : {}),
      ...extra,
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

test('a binnacle.dev ClusterExtension, or one with only part of a twin (label, owner, an owner not the controller or of another UID), is itself the one changed', async () => {
  for (const how of ['plain', 'label only', 'owner only', 'owner not controller', 'owner of another uid'] as const) {
    assert.equal(olmv1TwinOf(binnacleCe('op', how)), undefined, how);
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

test("a PlatformOperator's extension is refused before anything is written", async () => {
  const owned = { labels: { 'binnacle.dev/owner-kind': 'PlatformOperator', 'binnacle.dev/owner-name': 'core' } };
  const c = cluster(binnacleCe('op', 'plain', owned));
  await assert.rejects(extensionSpecRef(c.client(), 'op'), /installed by PlatformOperator core, which keeps it on the cluster/);
  await assert.rejects(rollbackExtension(c.client(), 'op', '1.0.0'), /installed by PlatformOperator core/);
  assert.deepEqual(c.writes, []);
});

const D = `sha256:${'2'.repeat(64)}`;
const pending: PendingPlan = { digest: D, changes: [{ name: 'op.v1.0.2', package: 'op', from: '1.0.1', to: '1.0.2' }], since: '2026-12-06T12:00:00Z', message: '' };

test("approving an OLM v1 ClusterExtension's plan writes the approval on the OLM v1 object, pinned to its UID; a forged twin's is written on itself", async () => {
  const withPlan = (ce: KubeObject): KubeObject => ({ ...ce, status: { ...(ce.status ?? {}), pendingPlan: pending } });
  const c = cluster(v1('op'), withPlan(binnacleCe('op', 'twin')));
  await approvePlan(c.client(), { kind: 'ClusterExtension', name: 'op', digest: D });
  assert.deepEqual(c.patched.map((p) => [p.ref.apiVersion, p.patch]), [[OLMV1_API_VERSION, { metadata: { uid: V1_UID, annotations: { [ANNOTATION_APPROVED_PLAN]: D } } }]]);
  assert.equal((await c.client().get({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'op' })).metadata.annotations?.[ANNOTATION_APPROVED_PLAN], D);

  // An OLM v1 object of the name made again since (another UID): the approval is refused, not given to it.
  const again = cluster({ ...v1('op'), metadata: { name: 'op', uid: OTHER_UID } }, withPlan(binnacleCe('op', 'twin')));
  await assert.rejects(approvePlan(again.client(), { kind: 'ClusterExtension', name: 'op', digest: D }), /metadata\.uid: Invalid value/);
  assert.equal((await again.client().get({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'op' })).metadata.annotations?.[ANNOTATION_APPROVED_PLAN], undefined);

  const forged = cluster(v1('op'), withPlan(binnacleCe('op', 'owner of another uid')));
  await approvePlan(forged.client(), { kind: 'ClusterExtension', name: 'op', digest: D });
  assert.deepEqual(forged.patched.map((p) => p.ref.apiVersion), [API_VERSION], 'not a twin: the OLM v1 object is not written');
});
