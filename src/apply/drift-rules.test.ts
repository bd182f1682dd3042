/** The applier under drift rules (spec.drift): each mode, ignored fields in repairs and upgrades, the handover. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import type { DriftSpec } from '../api/types.js';
import { releaseEngine } from './engine.test-helper.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { ApplyRequest, ApplyResult } from './types.js';

const owner = { kind: 'BundleDeployment', name: 'op' };
const release = { name: 'op', namespace: 'ops' };
const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } };
const dep = (replicas: number, image = 'op:1'): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op' }, spec: { replicas, template: { spec: { containers: [{ name: 'manager', image }] } } } });
const DEP_REF = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' };
const IGNORE_REPLICAS: DriftSpec = { ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }] };

function setup(): { cluster: FakeCluster; applier: ReturnType<typeof releaseEngine>; req: (objects: KubeObject[], drift?: DriftSpec) => ApplyRequest } {
  const cluster = new FakeCluster();
  const applier = releaseEngine(cluster);
  // The fake reports one replica ready: health is not what these tests are about.
  const req = (objects: KubeObject[], drift?: DriftSpec): ApplyRequest => ({ owner, release, objects, healthTimeoutMs: 200, waitForHealth: false, ...(drift === undefined ? {} : { drift }) });
  return { cluster, applier, req };
}

/** An autoscaler sets the live replicas (an Update: Binnacle's applied configuration no longer holds them). */
function scale(cluster: FakeCluster, replicas: number, holder = 'kube-controller-manager'): void {
  const live = cluster.get(DEP_REF);
  assert.ok(live !== undefined);
  const managedFields = [{ manager: holder, operation: holder === 'binnacle' ? 'Apply' : 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }];
  cluster.put({ ...live, metadata: { ...live.metadata, managedFields }, spec: { ...(live.spec as object), replicas } });
}

/** The namespace and one replica installed under drift, an autoscaler then setting 3, and the same applied again: its result, and the cluster whose writes are that apply's. */
async function scaledThenApplied(drift?: DriftSpec): Promise<{ cluster: FakeCluster; res: ApplyResult }> {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, dep(1)], drift));
  scale(cluster, 3);
  cluster.writes.length = 0;
  return { cluster, res: await applier.apply(req([ns, dep(1)], drift)) };
}

const liveReplicas = (cluster: FakeCluster): unknown => (cluster.get(DEP_REF)?.spec as { replicas?: unknown } | undefined)?.replicas;
const lastApplied = (cluster: FakeCluster, manager?: string): KubeObject | undefined => [...cluster.applied].reverse().find((a) => a.obj.kind === 'Deployment' && a.fieldManager === manager)?.obj;

test('Repair (the default) re-applies the manifest and reports what it took back', async () => {
  const { cluster, res } = await scaledThenApplied();
  assert.equal(res.status, 'deployed', res.message);
  assert.equal(liveReplicas(cluster), 1);
  assert.equal(res.drift?.mode, 'Repair');
  assert.deepEqual(res.drift?.drifted.map((d) => [d.kind, d.name, d.fields]), [['Deployment', 'op', [{ path: 'spec.replicas', manifest: 1, live: 3 }]]]);
});

test('an ignored field is left out of the repair and not reported; the rest is repaired', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, dep(1)], IGNORE_REPLICAS));
  scale(cluster, 3);
  const live = cluster.get(DEP_REF);
  assert.ok(live !== undefined);
  cluster.put({ ...live, spec: { ...(live.spec as object), template: { spec: { containers: [{ name: 'manager', image: 'evil:1' }] } } } });
  cluster.applied.length = 0;
  const res = await applier.apply(req([ns, dep(1)], IGNORE_REPLICAS));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(res.drift?.drifted.flatMap((d) => d.fields.map((f) => f.path)), ['spec.template.spec.containers[name=manager].image']);
  const intent = lastApplied(cluster);
  assert.equal((intent?.spec as { replicas?: number }).replicas, undefined, 'replicas are not in what is applied');
  assert.equal((intent?.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]?.image, 'op:1');
  assert.equal(lastApplied(cluster, 'binnacle-drift-ignored'), undefined, 'no handover: the autoscaler holds the field already');
});

test('a field Binnacle still holds is handed over at its live value before the repair lets go of it', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, dep(1)], IGNORE_REPLICAS));
  scale(cluster, 1, 'binnacle');
  cluster.writes.length = 0;
  await applier.apply(req([ns, dep(1)], IGNORE_REPLICAS));
  assert.deepEqual(cluster.writes.filter((w) => w.includes('Deployment')), ['apply Deployment ops/op (force) as binnacle-drift-ignored', 'apply Deployment ops/op (force)']);
  assert.deepEqual(lastApplied(cluster, 'binnacle-drift-ignored'), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'op', namespace: 'ops' }, spec: { replicas: 1 } });
});

test('an upgrade applies an ignored field its manifest changes, and leaves out one it does not change', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, dep(1)], IGNORE_REPLICAS));
  scale(cluster, 3);
  // A new image, same replicas: the autoscaler keeps its replicas.
  const same = await applier.apply(req([ns, dep(1, 'op:2')], IGNORE_REPLICAS));
  assert.equal(same.revision, 2, same.message);
  assert.equal((lastApplied(cluster)?.spec as { replicas?: number }).replicas, undefined);
  assert.equal(same.drift, undefined, 'an upgrade compares nothing');
  // The manifest now says 5: applied.
  const changed = await applier.apply(req([ns, dep(5, 'op:2')], IGNORE_REPLICAS));
  assert.equal(changed.revision, 3, changed.message);
  assert.equal((lastApplied(cluster)?.spec as { replicas?: number }).replicas, 5);
  assert.equal(liveReplicas(cluster), 5);
});

test('a first install applies ignored fields: there is nothing to leave them to', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns, dep(2)], IGNORE_REPLICAS));
  assert.equal(liveReplicas(cluster), 2);
});

test('Warn reports drift and applies nothing', async () => {
  const { cluster, res } = await scaledThenApplied({ mode: 'Warn' });
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(cluster.writes, []);
  assert.equal(liveReplicas(cluster), 3);
  assert.equal(res.drift?.mode, 'Warn');
  assert.deepEqual(res.drift?.drifted[0]?.fields, [{ path: 'spec.replicas', manifest: 1, live: 3 }]);
  assert.deepEqual(res.applied.map((r) => r.kind).sort(), ['Deployment', 'Namespace'], 'the revision’s objects are still named');
});

test('Warn with an ignore rule reports nothing for the ignored field', async () => {
  const { res } = await scaledThenApplied({ mode: 'Warn', ...IGNORE_REPLICAS });
  assert.deepEqual(res.drift, { mode: 'Warn', drifted: [] });
});

test('Off neither compares nor applies', async () => {
  const { cluster, res } = await scaledThenApplied({ mode: 'Off' });
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(cluster.writes, []);
  assert.equal(res.drift, undefined);
  assert.equal(liveReplicas(cluster), 3);
});

test('an ignore rule cannot keep ownership marks out of what is applied', async () => {
  const { cluster, applier, req } = setup();
  // Validation refuses such a rule; the applier drops it as well, were it to get one.
  const drift: DriftSpec = { ignore: [{ paths: ['/metadata/labels', '/metadata/labels/binnacle.dev~1owner-name'] }] };
  await applier.apply(req([ns, dep(1)], drift));
  const live = cluster.get(DEP_REF);
  assert.ok(live !== undefined);
  cluster.put({ ...live, metadata: { ...live.metadata, labels: { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'op' } } });
  await applier.apply(req([ns, dep(1)], drift));
  assert.equal(lastApplied(cluster)?.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm');
});

/**
 * operator-sdk's memcached chart renders `imagePullPolicy: ""` (`default "" .Values.imagePullPolicy | quote`):
 * the API server stores the empty string as unset and defaults it to IfNotPresent, its field still
 * Binnacle's (the benchmark's 1,000 CRs: every resync "repaired drift" on every StatefulSet, an apply that changed nothing).
 */
const sts = (): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'mc' },
  spec: { serviceName: 'mc', replicas: 3, selector: { matchLabels: { app: 'mc' } }, template: { metadata: { labels: { app: 'mc' } }, spec: { containers: [{ name: 'mc', image: 'memcached:1.5.20', imagePullPolicy: '', livenessProbe: { tcpSocket: { port: 'memcache' }, timeoutSeconds: 0 } }] } } },
});
const STS_REF = { apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'ops', name: 'mc' };
type Container = { name: string; imagePullPolicy?: string; livenessProbe?: { timeoutSeconds?: number } };
const containerOf = (o: KubeObject | undefined): Container | undefined => (o?.spec as { template: { spec: { containers: Container[] } } } | undefined)?.template.spec.containers[0];

/** The StatefulSet installed, then given the values the API server defaults its zero values to (its managedFields as they were). */
async function installedAndDefaulted(): Promise<ReturnType<typeof setup>> {
  const s = setup();
  await s.applier.apply(s.req([ns, sts()]));
  const live = structuredClone(s.cluster.get(STS_REF));
  const c = containerOf(live);
  assert.ok(live !== undefined && c?.livenessProbe !== undefined);
  c.imagePullPolicy = 'IfNotPresent';
  c.livenessProbe.timeoutSeconds = 1;
  s.cluster.put(live);
  s.cluster.writes.length = 0;
  return s;
}

test('a zero value the server defaulted in a field Binnacle still holds is not drift: the repair reports and applies nothing', async () => {
  const { cluster, applier, req } = await installedAndDefaulted();
  const res = await applier.apply(req([ns, sts()]));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(res.drift, { mode: 'Repair', drifted: [] });
  assert.deepEqual(cluster.writes, []);
  assert.equal(containerOf(cluster.get(STS_REF))?.imagePullPolicy, 'IfNotPresent');
});

test('the same field set by another writer (who holds it now) is drift, and repaired', async () => {
  const { cluster, applier, req } = await installedAndDefaulted();
  const live = structuredClone(cluster.get(STS_REF));
  const c = containerOf(live);
  assert.ok(live !== undefined && c !== undefined);
  c.imagePullPolicy = 'Always';
  await cluster.client({ user: 'kubectl-edit' }).update(live);
  cluster.writes.length = 0;
  const res = await applier.apply(req([ns, sts()]));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(res.drift?.drifted.map((d) => [d.kind, d.name]), [['StatefulSet', 'mc']]);
  // The fake's lists are atomic: the editor holds the whole container list (the API server, only the field it changed).
  const fields = res.drift?.drifted[0]?.fields ?? [];
  assert.deepEqual(
    fields.filter((f) => f.path.endsWith('.imagePullPolicy')),
    [{ path: 'spec.template.spec.containers[name=mc].imagePullPolicy', manifest: '', live: 'Always' }],
  );
  assert.deepEqual(cluster.writes, ['apply StatefulSet ops/mc (force)']);
  assert.equal(containerOf(cluster.get(STS_REF))?.imagePullPolicy, '', 'the manifest’s value again (the fake does not default it)');
});

test("an upgrade after a failed revision (not rolled back) that turned privileged on sets the deployed revision's privileged: false again: a zero value Binnacle holds is not taken for a server default", async () => {
  const cluster = new FakeCluster();
  const applier = releaseEngine(cluster);
  const owner = { kind: 'BundleDeployment', name: 'op' };
  const release = { name: 'op', namespace: 'ops' };
  const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } };
  const cm = (v: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { v } });
  const dep = (privileged: boolean): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'op' },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'manager', image: 'op:1', securityContext: { privileged } }] } } },
  });
  const privileged = (): unknown => (cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' })?.spec as { template: { spec: { containers: { securityContext?: { privileged?: boolean } }[] } } }).template.spec.containers[0]?.securityContext?.privileged;
  const req = (objects: KubeObject[]): ApplyRequest => ({ owner, release, objects, healthTimeoutMs: 300, waitForHealth: true, autoRollback: false });
  assert.equal((await applier.apply(req([ns, cm('1'), dep(false)]))).status, 'deployed');
  cluster.unhealthyNames.add('op');
  assert.equal((await applier.apply(req([ns, cm('1'), dep(true)]))).status, 'failed');
  assert.equal(privileged(), true);
  cluster.unhealthyNames.delete('op');
  // The next change is a ConfigMap's; the Deployment is as the deployed revision 1 had it.
  const r3 = await applier.apply(req([ns, cm('2'), dep(false)]));
  assert.equal(r3.status, 'deployed', r3.message);
  assert.equal(privileged(), false, `revision ${r3.revision} is deployed saying privileged: false`);
});
