import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError } from '../kube/errors.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { managedFieldsOf, refOf, type KubeObject } from '../kube/types.js';
import type { DriftSpec } from '../api/types.js';
import { releaseEngine } from './engine.test-helper.js';
import type { ApplyRequest } from './types.js';
import { heldBySwitch, otherHolders, releaseSwitchHold, STRATEGY_SWITCH_MANAGER, switchedPaths, switchUnion, unionSwitchPatch, withLiveUnion } from './union-switch.js';

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

test("a Deployment switched to Recreate over the API server's defaulted rollingUpdate: the patch sets the type and drops the member, on the object read (its uid) only", () => {
  assert.deepEqual(unionSwitchPatch(defaulted, deployment({ type: 'Recreate' })), { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } });
  const read = { ...defaulted, metadata: { ...defaulted.metadata, uid: 'u-1' } };
  assert.deepEqual(unionSwitchPatch(read, deployment({ type: 'Recreate' })), { metadata: { uid: 'u-1' }, spec: { strategy: { type: 'Recreate', rollingUpdate: null } } });
});

test('a switch decided on one object is refused on another made under its name in between (a conflict: read again), which keeps its strategy', async () => {
  const cluster = new FakeCluster();
  const client = cluster.client();
  const desired = deployment({ type: 'Recreate' });
  cluster.putApplied(deployment({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }));
  const read = cluster.get(refOf(desired)) as KubeObject;
  const patch = unionSwitchPatch(read, desired);
  assert.ok(patch?.metadata?.uid !== undefined && patch.metadata.uid === read.metadata.uid);
  // Deleted and made again by someone else between the decision and the switch.
  await client.delete(refOf(desired));
  await client.create(deployment({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 } }));
  const other = cluster.get(refOf(desired)) as KubeObject;
  assert.notEqual(other.metadata.uid, read.metadata.uid);
  await assert.rejects(switchUnion(client, desired, patch), (err: Error & { statusCode?: number }) => err.statusCode === 409 && /not the object the strategy switch was decided on/.test(err.message));
  const after = cluster.get(refOf(desired)) as KubeObject;
  assert.deepEqual((after.spec as Record<string, unknown>).strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 } }, 'the other object is untouched');
  assert.equal(heldBySwitch(after), false);
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
  assert.equal(unionSwitchPatch(defaulted, deployment({ type: 'Recreat' })), undefined, 'a type the API server does not know: its dry run refuses the object as it is, naming the value');
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

test("releaseSwitchHold: the switch manager's entry handed to Binnacle's apply, every other entry kept; a write in between (a stale read) is a conflict, read again and handed over", async () => {
  const cluster = new FakeCluster();
  const client = cluster.client();
  const desired = deployment({ type: 'Recreate' });
  cluster.putApplied(deployment({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }));
  await client.patch(refOf(desired), { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } }, 'merge', { fieldManager: STRATEGY_SWITCH_MANAGER });
  const stale = cluster.get(refOf(desired)) as KubeObject;
  assert.equal(heldBySwitch(stale), true);
  await client.patch(refOf(desired), { metadata: { labels: { other: 'writer' } } }, 'merge', { fieldManager: 'someone' });
  await releaseSwitchHold(client, refOf(desired), stale);
  const after = cluster.get(refOf(desired)) as KubeObject;
  assert.equal(heldBySwitch(after), false);
  assert.deepEqual(managedFieldsOf(after).map((e) => e.manager).sort(), ['binnacle', 'someone']);
  const mine = managedFieldsOf(after).find((e) => e.manager === 'binnacle');
  assert.match(JSON.stringify(mine?.fieldsV1), /"f:strategy":\{"f:type":\{\}/, 'the switched type is held by the apply');
  assert.deepEqual(after.metadata.labels, { other: 'writer' }, "the other writer's change kept");
});

test("switchUnion over the fake API server: the switch made and its hold handed to Binnacle's apply, so a later apply without a strategy removes the type (a rollback to a revision without one)", async () => {
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
  const holds = managedFieldsOf(switched).filter((e) => JSON.stringify(e.fieldsV1 ?? {}).includes('f:strategy'));
  assert.deepEqual(holds.map((e) => [e.manager, e.operation]), [['binnacle', 'Apply']], JSON.stringify(managedFieldsOf(switched)));

  await client.apply(desired, { force: true });
  await client.apply(deployment(undefined), { force: true });
  assert.equal((cluster.get(refOf(desired))?.spec as { strategy?: { type?: string } }).strategy?.type, undefined, 'the type went with the apply that held it');
});

test('switchedPaths lists what a plan shows', () => {
  assert.deepEqual(switchedPaths({ spec: { strategy: { type: 'Recreate', rollingUpdate: null } } }), ['spec.strategy.type', 'spec.strategy.rollingUpdate']);
});

test("otherHolders: managers other than Binnacle's holding the union's type or member; a status entry and Binnacle's own are not", () => {
  const live: KubeObject = {
    ...defaulted,
    metadata: {
      ...defaulted.metadata,
      managedFields: [
        { manager: 'binnacle', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:strategy': { 'f:type': {} } } } },
        { manager: 'platform', operation: 'Update', fieldsV1: { 'f:spec': { 'f:strategy': { 'f:rollingUpdate': { 'f:maxSurge': {} } } } } },
        { manager: 'scaler', operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } },
        { manager: 'kcm', operation: 'Update', subresource: 'status', fieldsV1: { 'f:spec': { 'f:strategy': { 'f:type': {} } } } },
      ],
    },
  };
  assert.deepEqual(otherHolders(live, { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } }, 'binnacle'), ['platform']);
});

describe('the release engine over the fake API server', () => {
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' };
  const request = (strategy: Record<string, unknown> | undefined, more: Partial<ApplyRequest> = {}): ApplyRequest => ({ owner: { kind: 'BundleDeployment', name: 'op' }, release: { name: 'op', namespace: 'ops' }, objects: [deployment(strategy)], healthTimeoutMs: 200, waitForHealth: false, ...more });
  /** Revision 1 without a strategy, the API server's default then filled in (held by `holder`, or by no one). */
  async function installed(holder?: string): Promise<FakeCluster> {
    const cluster = new FakeCluster();
    cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } });
    const first = await releaseEngine(cluster).apply(request(undefined));
    assert.equal(first.status, 'deployed', first.message);
    const filled = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
    if (holder === undefined) {
      const live = cluster.get(ref) as KubeObject;
      cluster.put({ ...live, spec: { ...(live.spec as object), strategy: filled } });
    } else await cluster.client().apply({ ...deployment(filled), metadata: { name: 'op', namespace: 'ops' } }, { fieldManager: holder, force: true });
    return cluster;
  }
  const strategy = (c: FakeCluster): unknown => (c.get(ref)?.spec as { strategy?: unknown }).strategy;

  test('an upgrade to Recreate over the filled-in default: switched, then applied', async () => {
    const cluster = await installed();
    const res = await releaseEngine(cluster).apply(request({ type: 'Recreate' }));
    assert.equal(res.status, 'deployed', res.message);
    assert.deepEqual(strategy(cluster), { type: 'Recreate' });
  });

  test('conflictPolicy Fail: a switch that would take fields another manager holds is refused before anything changes, naming it; Force switches', async () => {
    const cluster = await installed('platform');
    const before = cluster.get(ref);
    await assert.rejects(releaseEngine(cluster).apply(request({ type: 'Recreate' }, { conflictPolicy: 'Fail' })), (err: Error) => {
      assert.match(err.message, /Deployment ops\/op: switching spec\.strategy\.type and spec\.strategy\.rollingUpdate takes fields platform holds \(conflictPolicy Fail/);
      return true;
    });
    assert.deepEqual(cluster.get(ref), before, 'nothing changed');
    const forced = await releaseEngine(cluster).apply(request({ type: 'Recreate' }));
    assert.equal(forced.status, 'deployed', forced.message);
    assert.deepEqual(strategy(cluster), { type: 'Recreate' });
  });

  test("a switch cut short (made, then a crash before its field manager's entry was removed): the next rollout removes it, so the apply holds the type alone and a rollback to the revision without a strategy drops it", async () => {
    const cluster = await installed();
    const engine = releaseEngine(cluster);
    await cluster.client().patch(ref, { spec: { strategy: { type: 'Recreate', rollingUpdate: null } } }, 'merge', { fieldManager: STRATEGY_SWITCH_MANAGER });
    assert.equal(heldBySwitch(cluster.get(ref)), true);
    const second = await engine.apply(request({ type: 'Recreate' }));
    assert.equal(second.status, 'deployed', second.message);
    assert.equal(heldBySwitch(cluster.get(ref)), false, 'the leftover entry removed');
    const back = await engine.rollback({ release: { name: 'op', namespace: 'ops' }, toRevision: 1, healthTimeoutMs: 200, waitForHealth: false });
    assert.equal(back.status, 'deployed', back.message);
    assert.equal((strategy(cluster) as { type?: string } | undefined)?.type, undefined, 'no one held the type but the apply: the API server would default it');
  });

  test('an apply that fails after the switch: the release rolls back to revision 1 and the type goes (Binnacle held it), as the strategy-less revision says', async () => {
    const cluster = await installed();
    cluster.inject({ verb: 'apply', kind: 'Deployment', error: () => new KubeApiError(422, 'Invalid', 'admission webhook "x" denied the request'), times: 1 });
    const res = await releaseEngine(cluster).apply(request({ type: 'Recreate' }));
    assert.notEqual(res.status, 'deployed', res.message);
    assert.equal(heldBySwitch(cluster.get(ref)), false);
    assert.equal((strategy(cluster) as { type?: string } | undefined)?.type, undefined, JSON.stringify(strategy(cluster)));
  });

  test('a drift rule that ignores the strategy: a repair of a revision that did not change it makes no switch (the rule wins)', async () => {
    const drift: DriftSpec = { ignore: [{ paths: ['/spec/strategy'] }] };
    const cluster = new FakeCluster();
    cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } });
    const first = await releaseEngine(cluster).apply(request({ type: 'Recreate' }, { drift }));
    assert.equal(first.status, 'deployed', first.message);
    // Someone switches it back by hand, as the rule allows.
    await cluster.client().patch(ref, { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '50%', maxUnavailable: 0 } } } });
    const again = await releaseEngine(cluster).apply(request({ type: 'Recreate' }, { drift }));
    assert.equal(again.status, 'deployed', again.message);
    assert.deepEqual(strategy(cluster), { type: 'RollingUpdate', rollingUpdate: { maxSurge: '50%', maxUnavailable: 0 } });
    // Under Fail too: the switch the rule rules out is not refused as a conflict (no release locked by an edit the rule allows).
    const failing = await releaseEngine(cluster).apply(request({ type: 'Recreate' }, { drift, conflictPolicy: 'Fail' }));
    assert.equal(failing.status, 'deployed', failing.message);
    const upgraded = await releaseEngine(cluster).apply(request({ type: 'Recreate' }, { drift, conflictPolicy: 'Fail', chart: { name: 'op', version: '2.0.0' } }));
    assert.equal(upgraded.status, 'deployed', upgraded.message);
    assert.equal(upgraded.revision, 2);
    assert.deepEqual(strategy(cluster), { type: 'RollingUpdate', rollingUpdate: { maxSurge: '50%', maxUnavailable: 0 } });
  });
});
