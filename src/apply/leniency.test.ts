/** The applier's leniency and atomic first install, against the in-memory cluster. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenApiDocument, StaticSchemas } from '../kube/openapi.js';
import type { KubeObject } from '../kube/types.js';
import { releaseEngine } from './engine.test-helper.js';
import { ApplyRefusedError } from './errors.js';
import { crdOf } from './crd.test-helper.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { parseManifest } from './release.js';
import type { ApplyRequest } from './types.js';

const owner = { kind: 'BundleDeployment', name: 'op' };
const release = { name: 'op', namespace: 'ops' };
const raw = JSON.parse(readFileSync(join(import.meta.dirname, 'testdata', 'openapi-v3-fragments.json'), 'utf8')) as Record<string, unknown>;
const schemas = new StaticSchemas(Object.entries(raw).map(([path, doc]) => OpenApiDocument.parse(path, doc)));

const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } };
const monitor: KubeObject = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'op-metrics' }, spec: { endpoints: [{ port: 'metrics' }] } };
const dep = (extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'op' },
  spec: { replicas: 1, selector: { matchLabels: { app: 'op' } }, template: { spec: { containers: [{ name: 'manager', image: 'op:1', env: [{ name: 'A', value: '1', ...extra }] }] } } },
});

function setup(): { cluster: FakeCluster; applier: ReturnType<typeof releaseEngine>; req: (objects: KubeObject[], extra?: Partial<ApplyRequest>) => ApplyRequest } {
  const cluster = new FakeCluster();
  const applier = releaseEngine(cluster, { schemas });
  return { cluster, applier, req: (objects, extra = {}) => ({ owner, release, objects, healthTimeoutMs: 200, ...extra }) };
}

test('an object of an optional API the cluster does not serve is skipped, recorded with its revision, and applied by a repair once the API appears', async () => {
  const { cluster, applier, req } = setup();
  cluster.unknownKinds.add('ServiceMonitor');
  const first = await applier.apply(req([ns, dep(), monitor]));
  assert.equal(first.status, 'deployed', first.message);
  assert.deepEqual(first.skipped?.map((s) => `${s.object.kind}/${s.object.name}`), ['ServiceMonitor/op-metrics']);
  assert.match(first.skipped?.[0]?.reason ?? '', /does not serve monitoring.coreos.com\/v1 ServiceMonitor: .*Prometheus operator/);
  assert.ok(!first.applied.some((r) => r.kind === 'ServiceMonitor'));
  assert.deepEqual(first.pruned, []);
  // Recorded with the revision (it is what the render made), so a repair applies it once it can.
  const [rev1] = await applier.history(release);
  assert.ok(parseManifest(rev1?.manifest ?? '', 'rev1').some((o) => o.kind === 'ServiceMonitor'), 'in the revision');

  // Nothing changed: the same revision, still skipped.
  const again = await applier.apply(req([ns, dep(), monitor]));
  assert.equal(again.revision, 1);
  assert.equal(again.skipped?.length, 1);

  // The API appears: the same revision's repair applies it (its render has not changed).
  cluster.unknownKinds.delete('ServiceMonitor');
  cluster.put(crdOf({ group: 'monitoring.coreos.com', kind: 'ServiceMonitor', plural: 'servicemonitors' }, {}));
  const later = await applier.apply(req([ns, dep(), monitor]));
  assert.equal(later.status, 'deployed', later.message);
  assert.equal(later.revision, 1);
  assert.deepEqual(later.skipped, []);
  assert.ok(cluster.get({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', namespace: 'ops', name: 'op-metrics' }) !== undefined);
});

test('an unknown kind that is not optional is still refused; an optional one whose CRD comes with the release is applied', async () => {
  const { cluster, applier, req } = setup();
  cluster.unknownKinds.add('Widget');
  cluster.unknownKinds.add('ServiceMonitor');
  const widget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
  await assert.rejects(applier.apply(req([ns, widget, monitor])), (err: unknown) => {
    assert.ok(err instanceof ApplyRefusedError);
    assert.deepEqual(err.result.errors().map((p) => p.field), ['Widget/w']);
    return true;
  });

  const crd = crdOf({ group: 'monitoring.coreos.com', kind: 'ServiceMonitor', plural: 'servicemonitors' }, { spec: { type: 'object', properties: { endpoints: { type: 'array', items: { type: 'object', properties: { port: { type: 'string' } } } } } } });
  const withCrd = { ...monitor, spec: { endpoints: [{ port: 'metrics', portt: 'typo' }] } };
  // The fake serves the kind once its CRD is applied (and Established).
  cluster.unknownKinds.delete('ServiceMonitor');
  const applier2 = releaseEngine(cluster, { schemas });
  const res = await applier2.apply(req([ns, crd, withCrd]));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(res.skipped, []);
  assert.deepEqual(res.droppedFields?.map((d) => [d.path, d.schema]), [['spec.endpoints[0].portt', 'CustomResourceDefinition servicemonitors.monitoring.coreos.com']]);
});

test('undeclared fields are dropped and reported; the rest is applied', async () => {
  const { cluster, applier, req } = setup();
  const res = await applier.apply(req([ns, dep({ resources: { limits: { cpu: '1' } } })]));
  assert.equal(res.status, 'deployed', res.message);
  assert.deepEqual(res.droppedFields, [
    { object: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'op' }, path: 'spec.template.spec.containers[name="manager"].env[name="A"].resources', schema: '/openapi/v3 apis/apps/v1' },
  ]);
  const live = cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' });
  const env = (live?.spec as { template: { spec: { containers: { env: unknown[] }[] } } }).template.spec.containers[0]?.env;
  assert.deepEqual(env, [{ name: 'A', value: '1' }]);
});

test('a failed first install is removed with its records; keepFailedInstall keeps it', async () => {
  const { cluster, applier, req } = setup();
  cluster.unhealthyNames.add('op');
  const res = await applier.apply(req([ns, dep()]));
  assert.equal(res.status, 'failed');
  assert.match(res.message, /^install failed: not healthy after 200 ms: Deployment ops\/op: 0 of 1 replicas available; removed the failed install \(2 objects and its release records/);
  assert.deepEqual(res.removed?.map((r) => r.kind), ['Deployment', 'Namespace']);
  assert.equal(cluster.objects.size, 0, 'nothing left');
  assert.deepEqual(await applier.history(release), []);

  const kept = await applier.apply(req([ns, dep()], { keepFailedInstall: true }));
  assert.equal(kept.status, 'failed');
  assert.equal(kept.removed, undefined);
  assert.match(kept.message, /not healthy after 200 ms/);
  assert.ok(cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }) !== undefined);
  assert.deepEqual((await applier.history(release)).map((r) => r.status), ['failed']);
});

test("a failed first install that took over another installer's objects (moving over from OLM v1) is kept, not removed: removing it would delete what ran before it", async () => {
  const { cluster, applier, req } = setup();
  cluster.unhealthyNames.add('op');
  cluster.put(ns);
  const ce = { apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'ext', uid: 'ce-uid' };
  const olmLabels = { 'olm.operatorframework.io/owner-kind': 'ClusterExtension', 'olm.operatorframework.io/owner-name': 'ext' };
  const running = dep();
  cluster.put({ ...running, metadata: { ...running.metadata, namespace: 'ops', creationTimestamp: '2026-01-01T00:00:00Z', labels: olmLabels, ownerReferences: [{ ...ce, controller: true }] } });
  const res = await applier.apply(req([dep()], { adopt: { controlledBy: ce, ownerLabels: olmLabels } }));
  assert.equal(res.status, 'failed');
  assert.equal(res.removed, undefined);
  assert.match(res.message, /not healthy after 200 ms.*the failed install is kept, not removed: it took over 1 object that existed before it/);
  assert.ok(cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }) !== undefined, "operator-controller's Deployment still runs");
  assert.deepEqual((await applier.history(release)).map((r) => r.status), ['failed']);
  // Tried again (the next reconcile: install over the failed revision), failing again: the
  // objects now carry this release's marks, and are still not removed.
  const again = await applier.apply(req([dep()], { adopt: { controlledBy: ce, ownerLabels: olmLabels } }));
  assert.equal(again.status, 'failed');
  assert.equal(again.removed, undefined);
  assert.ok(cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }) !== undefined, 'still running after the second failure');
});

test('with adoption on but nothing there before it, a failed first install is removed as always, on its retry too', async () => {
  const { cluster, applier, req } = setup();
  cluster.unhealthyNames.add('op');
  const adopt = { controlledBy: { apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterExtension', name: 'ext', uid: 'ce-uid' }, ownerLabels: {} };
  const kept = await applier.apply(req([ns, dep()], { adopt, keepFailedInstall: true }));
  assert.equal(kept.status, 'failed');
  // Its own objects (made by that try, not before it) are removed when the retry fails.
  const again = await applier.apply(req([ns, dep()], { adopt }));
  assert.equal(again.status, 'failed');
  assert.deepEqual(again.removed?.map((r) => r.kind), ['Deployment', 'Namespace']);
  assert.equal(cluster.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'ops', name: 'op' }), undefined);
});

test('a failed upgrade is not removed: it rolls back', async () => {
  const { cluster, applier, req } = setup();
  await applier.apply(req([ns]));
  cluster.unhealthyNames.add('op');
  const res = await applier.apply(req([ns, dep()]));
  assert.equal(res.status, 'rolled-back');
  assert.equal(res.removed, undefined);
  assert.ok(cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'ops' }) !== undefined);
});

test("a chart release re-applied from its record (same inputs, no render) still reports what it skips", async () => {
  const { cluster, applier, req } = setup();
  cluster.unknownKinds.add('ServiceMonitor');
  const manifest = [ns, dep(), monitor].map((o) => `---\n${JSON.stringify(o)}\n`).join('');
  const content = { chart: { metadata: { name: 'op', version: '1.0.0', apiVersion: 'v2' }, lock: null, templates: [], values: {}, schema: null, files: [] }, manifest, hooks: [] };
  const first = await applier.apply(req([ns, dep(), monitor], { content, inputDigest: 'sha256:inputs' }));
  assert.equal(first.status, 'deployed', first.message);
  assert.deepEqual(first.skipped?.map((s) => s.object.kind), ['ServiceMonitor']);
  // What a reconcile with unchanged inputs sends: no objects, the applier re-applies the record.
  const again = await applier.apply(req([], { content, inputDigest: 'sha256:inputs' }));
  assert.equal(again.revision, 1);
  assert.deepEqual(again.skipped?.map((s) => `${s.object.kind}/${s.object.name}`), ['ServiceMonitor/op-metrics']);
});
