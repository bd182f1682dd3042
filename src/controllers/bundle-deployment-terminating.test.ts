/**
 * A BundleDeployment whose apply finds an object still being deleted by an earlier owner
 * (preflight's OBJECT_TERMINATING): as in CI, where a test installed an operator right after
 * removing it, and the API server took minutes to finish deleting its CRD. The install waits on
 * the refused apply's capped backoff (never the queue's 1000 s), and the CRD's deletion re-queues
 * it at once (the dependent watches, not only the gone owner the CRD's labels name). Driven
 * through the controller runner with the real reconciler, release engine and dependent watches
 * over the one fake cluster.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ReleaseRecords } from '../apply/index.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { API_VERSION, FINALIZER_CLEANUP } from '../api/types.js';
import { Controller } from '../kube/controller.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { Condition, KubeObject, ObjectRef } from '../kube/types.js';
import { BundleDeploymentReconciler, type BundleDeploymentReconcilerOptions } from './bundle-deployment.js';
import { DependentWatches, ownerNameKeyOf } from './dependents.js';

const logger = pino({ level: 'silent' });
const ctx = { logger, signal: new AbortController().signal };
const PPRT = crdOf({ group: 'poison-pill.medik8s.io', kind: 'PoisonPillRemediationTemplate', plural: 'poisonpillremediationtemplates' }, {});
const PPRT_REF = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: PPRT.metadata.name ?? '' };
const bdRef = (name: string): ObjectRef => ({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The cluster and a reconciler over it; each BundleDeployment renders the CRD. */
function world(): { cluster: FakeCluster; reconciler: (extra?: Pick<BundleDeploymentReconcilerOptions, 'waitingOn' | 'onApplied'>) => BundleDeploymentReconciler } {
  const cluster = new FakeCluster();
  for (const ns of ['team-a', 'binnacle-system']) cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  cluster.put(crdOf({ group: 'binnacle.dev', kind: 'BundleDeployment', plural: 'bundledeployments' }, {}, { scope: 'Cluster', version: 'v1alpha1' }));
  cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'team-a', name: 'installer' } });
  const records = new ReleaseRecords({ client: cluster.client({ user: 'manager' }), namespace: 'binnacle-system', logger });
  const reconciler = (extra: Pick<BundleDeploymentReconcilerOptions, 'waitingOn' | 'onApplied'> = {}): BundleDeploymentReconciler =>
    new BundleDeploymentReconciler({
      client: cluster.client({ user: 'manager' }),
      engine: { records, pollIntervalMs: 10 },
      cacheDir: '/cache',
      resyncMs: 600_000,
      healthTimeoutMs: 200,
      ports: {
        unpack: () => Promise.resolve({ dir: '/cache/trees/a', digest: 'sha256:' + 'a'.repeat(64), resolved: { type: 'configMaps' } }),
        render: () => Promise.resolve({ objects: [structuredClone(PPRT)], chart: { name: 'pp', version: '1.0.0' } }),
        webhookCerts: () => Promise.resolve(undefined),
        missingPermissions: () => Promise.resolve([]),
        recordEvent: () => Promise.resolve(),
        now: () => Date.now(),
      },
      ...extra,
    });
  return { cluster, reconciler };
}

function bundleDeployment(name: string): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name, uid: `u-${name}`, finalizers: [FINALIZER_CLEANUP] },
    spec: { source: { type: 'configMaps', configMaps: [{ namespace: 'team-a', name: 'b', path: 'm' }] }, format: 'plain', installNamespace: 'team-a', serviceAccount: { name: 'installer' } },
  };
}

function condition(cluster: FakeCluster, name: string, type: string): Condition | undefined {
  return (cluster.get(bdRef(name))?.status as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type);
}

/**
 * `old` installs the CRD (with `installer`) and is uninstalled: it is gone, its CRD still being
 * deleted (held by a finalizer, as the API server's customresourcecleanup holds one). Then `new`
 * is created to install the same CRD.
 */
async function crdOfGoneOwner(cluster: FakeCluster, installer: BundleDeploymentReconciler): Promise<void> {
  cluster.put(bundleDeployment('old'));
  await installer.reconcile({ key: 'old', name: 'old' }, ctx);
  assert.notEqual(cluster.get(PPRT_REF), undefined, 'old installed the CRD');
  cluster.heldNames.add(PPRT_REF.name);
  const old = cluster.get(bdRef('old'));
  assert.ok(old !== undefined);
  cluster.put({ ...old, metadata: { ...old.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
  await installer.reconcile({ key: 'old', name: 'old' }, ctx);
  assert.equal(cluster.get(bdRef('old')), undefined, 'old is gone: its uninstall asked the CRD to go and did not wait');
  assert.notEqual(cluster.get(PPRT_REF)?.metadata.deletionTimestamp, undefined, 'its CRD is still being deleted');
  cluster.put(bundleDeployment('new'));
}

test("the install waits, saying so, on the refused apply's capped backoff: its next look is never more than a minute away (it was 5 ms doubling to 1000 s)", async () => {
  const { cluster, reconciler } = world();
  await crdOfGoneOwner(cluster, reconciler());
  const waits: [string, ObjectRef[]][] = [];
  const c = new Controller({ name: 'bundledeployment', logger, reconciler: reconciler({ waitingOn: (name, refs) => void waits.push([name, [...refs]]) }) });
  const delays: number[] = [];
  c.queue.addAfter = (_key: string, ms: number) => void delays.push(ms);
  const applies = cluster.applied.length;
  for (let i = 0; i < 20; i++) await c.processOne('new', ctx.signal);
  c.queue.shutDown();
  assert.equal(cluster.applied.length, applies, 'nothing applied while it waits');
  const progressing = condition(cluster, 'new', 'Progressing');
  assert.deepEqual([progressing?.status, progressing?.reason], ['True', 'Retrying']);
  assert.match(progressing?.message ?? '', /CustomResourceDefinition poisonpillremediationtemplates\.poison-pill\.medik8s\.io \(BundleDeployment old\) is being deleted; applying once it is gone/);
  assert.deepEqual(delays.slice(0, 7), [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000], 'from 1 s, doubling, as a refused apply');
  assert.ok(delays.length === 20 && delays.every((d) => d <= 60_000), `every retry within a minute (the queue's own backoff passes it at the 15th): ${delays.map((d) => `${d / 1000}s`).join(' ')}`);
  assert.deepEqual(waits.at(-1), ['new', [PPRT_REF]], 'it says what it waits for');
});

for (const watchedBefore of [true, false]) {
  const when = watchedBefore ? 'old applied it in this manager, so its kind is watched (the CI run)' : 'nothing of its kind was watched (old applied it before a restart)';
  test(`the install is re-queued the moment the CRD is gone, not only the gone owner its labels name: ${when}`, async () => {
    const { cluster, reconciler } = world();
    const enqueued: string[] = [];
    const stop = new AbortController();
    // The manager's wiring (manager.ts): the watches of what BundleDeployments installed, keyed by
    // the owner-name label, are told what each reconcile applied and what it waits for.
    const watches = new DependentWatches({ client: cluster.client({ user: 'manager' }), logger, ownerKind: 'BundleDeployment', keyOf: ownerNameKeyOf, enqueue: (k) => enqueued.push(k), signal: stop.signal });
    const wired = reconciler({ onApplied: (refs) => watches.observe(refs), waitingOn: (name, refs) => watches.waitFor(name, refs) });
    await crdOfGoneOwner(cluster, watchedBefore ? wired : reconciler());
    assert.deepEqual(watches.watched(), watchedBefore ? ['apiextensions.k8s.io/v1 CustomResourceDefinition'] : []);
    const c = new Controller({ name: 'bundledeployment', logger, reconciler: wired });
    c.queue.addAfter = () => undefined;
    await c.processOne('new', ctx.signal);
    assert.match(condition(cluster, 'new', 'Progressing')?.message ?? '', /is being deleted; applying once it is gone/);
    for (let i = 0; i < 200 && watches.cached(PPRT_REF)?.metadata.deletionTimestamp === undefined; i++) await sleep(5);
    assert.notEqual(watches.cached(PPRT_REF), undefined, 'the CRD is watched (labelled as old installed it)');
    // The API server's cleanup finishes: the CRD is gone.
    const crd = cluster.get(PPRT_REF);
    assert.ok(crd !== undefined);
    enqueued.length = 0;
    cluster.heldNames.delete(PPRT_REF.name);
    cluster.drop(crd);
    for (let i = 0; i < 200 && watches.cached(PPRT_REF) !== undefined; i++) await sleep(5);
    assert.deepEqual([...enqueued].sort(), ['new', 'old'], 'the install waiting for it, besides the gone owner its labels name');
    // The re-queued reconcile installs it, and waits for nothing any more.
    await c.processOne('new', ctx.signal);
    c.queue.shutDown();
    const installed = condition(cluster, 'new', 'Installed');
    assert.deepEqual([installed?.status, installed?.reason], ['True', 'Succeeded']);
    assert.equal(cluster.get(PPRT_REF)?.metadata.labels?.['binnacle.dev/owner-name'], 'new', 'installed anew, as new');
    assert.deepEqual([...watches.waiting()], []);
    stop.abort();
    await watches.stopped();
  });
}
