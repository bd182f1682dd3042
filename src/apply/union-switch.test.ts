import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { managedFieldsOf, refOf, type KubeObject } from '../kube/types.js';
import { switchUnion, unionSwitchPatch, withLiveUnion, withoutUpdateHold } from './union-switch.js';

const deployment = (strategy: Record<string, unknown> | undefined, replicas = 1): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'op', namespace: 'ops' },
  spec: { replicas, ...(strategy === undefined ? {} : { strategy }) },
});
const statefulSet = (updateStrategy: Record<string, unknown> | undefined): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', namespace: 'ops' },
  spec: { serviceName: 'db', ...(updateStrategy === undefined ? {} : { updateStrategy }) },
});
const defaulted = deployment({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });

test("a Deployment switched to Recreate over the API server's defaulted rollingUpdate: the patch sets the type and drops the member", () => {
  assert.deepEqual(unionSwitchPatch(defaulted, deployment({ type: 'Recreate' })), { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } });
});

test("a StatefulSet switched to OnDelete over the defaulted rollingUpdate (the API server refuses it too) gets its patch; a DaemonSet's OnDelete is accepted with one and gets none", () => {
  const live = statefulSet({ type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  assert.deepEqual(unionSwitchPatch(live, statefulSet({ type: 'OnDelete' })), { spec: { updateStrategy: { type: 'OnDelete', rollingUpdate: null } } });
  const ds = (s: Record<string, unknown>): KubeObject => ({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd', namespace: 'ops' }, spec: { updateStrategy: s } });
  assert.equal(unionSwitchPatch(ds({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } }), ds({ type: 'OnDelete' })), undefined);
});

test('no patch where the apply alone is accepted', () => {
  assert.equal(unionSwitchPatch(undefined, deployment({ type: 'Recreate' })), undefined, 'created: nothing was defaulted yet');
  assert.equal(unionSwitchPatch(deployment({ type: 'Recreate' }), deployment({ type: 'Recreate' })), undefined, 'already Recreate');
  assert.equal(unionSwitchPatch(defaulted, deployment(undefined)), undefined, 'no strategy wanted: the default stays');
  assert.equal(unionSwitchPatch(defaulted, deployment({ type: 'RollingUpdate' })), undefined, 'RollingUpdate allows the member');
  assert.equal(unionSwitchPatch(defaulted, deployment({ type: 'Recreate', rollingUpdate: { maxSurge: 1 } })), undefined, 'the manifest sets the member itself: the API server says what it thinks of that');
  assert.equal(unionSwitchPatch(deployment({ type: 'RollingUpdate', rollingUpdate: null }), deployment({ type: 'Recreate' })), undefined, 'no member live');
  assert.equal(unionSwitchPatch(defaulted, { ...deployment({ type: 'Recreate' }), apiVersion: 'example.com/v1' }), undefined, 'another group\'s Deployment kind');
  assert.equal(unionSwitchPatch(defaulted, { ...deployment(undefined), spec: { strategy: 'Recreate' } }), undefined, 'a strategy that is not an object');
});

test("withLiveUnion: the desired object with the live strategy (what a dry run can check before the switch), the desired object's other fields kept and the input unchanged", () => {
  const desired = deployment({ type: 'Recreate' }, 3);
  const checked = withLiveUnion(desired, defaulted);
  assert.deepEqual(checked.spec, { replicas: 3, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } });
  assert.deepEqual(desired.spec, { replicas: 3, strategy: { type: 'Recreate' } });
  assert.deepEqual(withLiveUnion(desired, deployment(undefined)).spec, { replicas: 3 }, 'live without a strategy: the desired one is left out');
});

test("withoutUpdateHold: every Update entry's hold on the union is given up (an entry holding nothing else dropped); Apply entries and a status subresource's are kept", () => {
  const applied = { manager: 'binnacle', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:strategy': { 'f:type': {} }, 'f:replicas': {} } } };
  const patched = { manager: 'binnacle', operation: 'Update', fieldsV1: { 'f:spec': { 'f:strategy': { 'f:type': {} } } } };
  const edited = { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:x': {} } }, 'f:spec': { '.': {}, 'f:strategy': { 'f:type': {} }, 'f:paused': {} } } };
  const status = { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': { 'f:replicas': {} } } };
  assert.deepEqual(withoutUpdateHold([applied, patched, edited, status], 'strategy'), [
    applied,
    { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:x': {} } }, 'f:spec': { '.': {}, 'f:paused': {} } } },
    status,
  ]);
  assert.equal(withoutUpdateHold([applied, status], 'strategy'), undefined, 'nothing to give up');
});

test('switchUnion over the fake API server: the switch made, no Update entry left holding the strategy, so an apply of Recreate holds the type alone and a later apply without a strategy removes it (a rollback to a revision without one)', async () => {
  const cluster = new FakeCluster();
  const client = cluster.client();
  const desired = deployment({ type: 'Recreate' });
  // Installed without a strategy; the API server filled in the default, which no one holds.
  cluster.putApplied(deployment(undefined));
  const live = cluster.get(refOf(desired)) as KubeObject;
  cluster.put({ ...live, spec: { ...(live.spec as object), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } } });

  const patch = unionSwitchPatch(cluster.get(refOf(desired)), desired);
  assert.ok(patch !== undefined);
  await switchUnion(client, desired, patch);
  const switched = cluster.get(refOf(desired)) as KubeObject;
  assert.deepEqual((switched.spec as { strategy?: unknown }).strategy, { type: 'Recreate' });
  const updateHolds = managedFieldsOf(switched).filter((e) => e.operation === 'Update' && JSON.stringify(e.fieldsV1 ?? {}).includes('f:strategy'));
  assert.deepEqual(updateHolds, [], JSON.stringify(managedFieldsOf(switched)));

  await client.apply(desired, { force: true });
  await client.apply(deployment(undefined), { force: true });
  assert.equal((cluster.get(refOf(desired))?.spec as { strategy?: { type?: string } }).strategy?.type, undefined, 'the type went with the apply that held it');
});
