/**
 * The HelmOperator reconciler's steps with fakes (no cluster, no registry, no Helm engine):
 * identity required, chart failures, CRD ownership, the app-team role, deletion by policy, and
 * one status write per reconcile.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ReleaseRecords } from '../../apply/release-records.js';
import type { HelmOperator } from '../../api/types.js';
import type { FetchedChart } from '../../helm/chart-source/index.js';
import type { ChartDescription } from '../../helm-engine/engine.js';
import { HELM_OPERATOR_CRD } from '../../api/crds.js';
import { API_VERSION } from '../../api/types.js';
import { FakeCluster, faults, type FakeClient } from '../../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../../kube/types.js';
import { AGGREGATE_TO_APP_TEAM } from '../../api/app-team-role.js';
import { ANNOTATION_APPROVED_PLAN } from '../../api/approval.js';
import { appTeamRoleName, HELM_OPERATOR_FINALIZER, HELM_OPERATOR_LABEL, HelmOperatorReconciler, type HelmOperatorPorts } from './helm-operator.js';
import type { HelmKind } from './helm-release.js';
import { UNINSTALL_FINALIZER } from './helm-release.js';
import { DEFAULT_HELM_RECONCILES } from './watches.js';

const logger = pino({ level: 'silent' });
const ctx = { logger, signal: new AbortController().signal };

const HO = { apiVersion: API_VERSION, kind: 'HelmOperator', name: 'pg' };

/** The one fake cluster serving HelmOperators: what the reconciler wrote, read, deleted, and another writer's hand. */
class Kube {
  readonly cluster = new FakeCluster({ objects: [HELM_OPERATOR_CRD] });

  put(o: KubeObject): void {
    this.cluster.put(o);
  }

  /** The object of `kind` named `name` (in `namespace`), by the key `Kind/namespace/name`. */
  get(key: string): KubeObject | undefined {
    return [...this.cluster.objects.values()].find((o) => this.keyOf(o) === key);
  }

  private keyOf(o: KubeObject | undefined): string {
    return `${o?.kind ?? ''}/${o?.metadata.namespace ?? ''}/${o?.metadata.name ?? ''}`;
  }

  /** The HelmOperator as it is now. */
  hop(): HelmOperator | undefined {
    return this.cluster.get(HO) as HelmOperator | undefined;
  }

  /** Changes the HelmOperator as someone else would (kubectl, the API server marking it deleted). */
  change(fn: (h: HelmOperator) => void): void {
    const h = structuredClone(this.hop());
    assert.ok(h !== undefined);
    fn(h);
    this.cluster.put(h);
  }

  /** Every status the reconciler wrote, as sent. */
  get statusWrites(): Record<string, unknown>[] {
    return this.cluster.statusApplied.filter((a) => a.obj.kind === 'HelmOperator').map((a) => a.obj.status as Record<string, unknown>);
  }

  /** What was applied (not status), as `Kind/namespace/name`. */
  get applied(): string[] {
    return this.cluster.applied.map((a) => this.keyOf(a.obj));
  }

  /** What was deleted, as `Kind/namespace/name`. */
  get deleted(): string[] {
    return this.cluster.log.filter((r) => r.verb === 'delete').map((r) => `${r.kind}/${r.namespace}/${r.name}`);
  }

  /** Every object read with get, by key. */
  get gets(): string[] {
    return this.cluster.log.filter((r) => r.verb === 'get').map((r) => `${r.kind}/${r.namespace}/${r.name}`);
  }

  /** The next finalizer patch of the HelmOperator fails with a conflict. */
  failNextPatch(): void {
    this.cluster.inject({ verb: 'patch', kind: 'HelmOperator', error: faults.conflict });
  }

  client(): FakeClient {
    return this.cluster.client();
  }
}

const CHART: ChartDescription = { path: 'pg', metadata: { name: 'pg', version: '1.0.0' }, valuesYaml: 'replicaCount: 1\n' } as ChartDescription;

function hop(spec: Partial<HelmOperator['spec']> = {}, meta: Partial<KubeObject['metadata']> = {}): HelmOperator {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'HelmOperator',
    metadata: { name: 'pg', finalizers: [HELM_OPERATOR_FINALIZER], ...meta },
    spec: { chart: { oci: { ref: 'oci://r/pg' } }, kinds: [{ group: 'example.com', version: 'v1', kind: 'Gateway' }], serviceAccount: { name: 'releaser' }, ...spec },
  };
}

/** A runKind port that records each kind it starts in `started`. */
function startsInto(started: HelmKind[]): HelmOperatorPorts['runKind'] {
  return (kind) => {
    started.push(kind);
    return { enqueueAll: () => undefined, stop: () => Promise.resolve(), synced: Promise.resolve() };
  };
}

/**
 * A reconciler over a fake cluster holding `h` (as written: a spec its type would refuse too), with
 * these fetch and inspect ports; the kinds it starts go to `started`, or to `runKind` when given.
 */
function operatorSetup(h: KubeObject, ports: Pick<HelmOperatorPorts, 'fetchChart' | 'inspect'>, runKind?: HelmOperatorPorts['runKind']) {
  const kube = new Kube();
  kube.put(h);
  const started: HelmKind[] = [];
  const reconciler = new HelmOperatorReconciler({ client: kube.client(), logger, engine: { records: new ReleaseRecords({ client: kube.client(), namespace: 'binnacle-system', logger }) }, cacheDir: '/nonexistent', ports: { ...ports, runKind: runKind ?? startsInto(started) } });
  return { kube, reconciler, started };
}

function setup(h: KubeObject, fetchError?: Error, inspectError?: Error, runKind?: HelmOperatorPorts['runKind']) {
  return operatorSetup(
    h,
    {
      fetchChart: () => (fetchError === undefined ? Promise.resolve({ path: '/c/pg.tgz', kind: 'archive', digest: 'sha256:1', name: 'pg', version: '1.0.0' } as FetchedChart) : Promise.reject(fetchError)),
      inspect: () => (inspectError === undefined ? Promise.resolve([CHART]) : Promise.reject(inspectError)),
    },
    runKind,
  );
}

const req = { key: 'pg', name: 'pg' };
const ready = (kube: Kube) => (kube.statusWrites.at(-1)?.conditions as { type: string; status: string; reason: string; message: string }[] | undefined)?.find((c) => c.type === 'Ready');

describe('HelmOperator reconciler, step by step with fakes', () => {
  test('a served kind logs under its HelmOperator\'s name from the reconciler\'s logger, not under this reconcile\'s bindings (no key twice in a JSON line)', async () => {
    const bindings: Record<string, unknown>[] = [];
    const { reconciler } = setup(hop(), undefined, undefined, (_kind, o) => {
      bindings.push(o.logger.bindings());
      return { enqueueAll: () => undefined, stop: () => Promise.resolve(), synced: Promise.resolve() };
    });
    // The reconcile's logger is bound as the controller binds it; a kind started from it would repeat those keys.
    await reconciler.reconcile(req, { ...ctx, logger: logger.child({ controller: 'helmoperator', key: 'pg' }) });
    assert.deepEqual(bindings, [{ helmOperator: 'pg' }]);
  });

  test('a spec change restarts a kind only once the old one has stopped (its in-flight reconciles ended): never two controllers on one CR', async () => {
    const events: string[] = [];
    let finishStop: () => void = () => undefined;
    let stopCalled: () => void = () => undefined;
    const stopping = new Promise<void>((r) => (stopCalled = r));
    const { kube, reconciler } = setup(hop(), undefined, undefined, (kind) => {
      const n = events.filter((e) => e.startsWith('start')).length + 1;
      events.push(`start ${n} ${kind.conflictPolicy ?? 'Force'}`);
      return {
        enqueueAll: () => undefined,
        stop: () => {
          events.push(`stopping ${n}`);
          stopCalled();
          return new Promise<void>((resolve) => {
            finishStop = () => {
              events.push(`stopped ${n}`);
              resolve();
            };
          });
        },
        synced: Promise.resolve(),
      };
    });
    await reconciler.reconcile(req, ctx);
    kube.put(hop({ conflictPolicy: 'Fail' }));
    const second = reconciler.reconcile(req, ctx);
    // Waits for the stop to be asked for (a fixed 20 ms failed under CI's load), then gives the
    // reconcile time to start the new kind too early, which it must not.
    await stopping;
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(events, ['start 1 Force', 'stopping 1'], 'the new kind waits for the old one');
    finishStop();
    await second;
    assert.deepEqual(events, ['start 1 Force', 'stopping 1', 'stopped 1', 'start 2 Fail']);
  });

  test('serves its kinds as the named ServiceAccount of each CR\'s namespace, confined, with the floor; makes the CRD and the app-team role; one status write', async () => {
    const { kube, reconciler, started } = setup(hop());
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 600_000 });
    assert.equal(started.length, 1);
    assert.deepEqual(started[0]?.identity, { type: 'namespaceServiceAccount', name: 'releaser' });
    assert.deepEqual(started[0]?.scope, {});
    assert.equal(started[0]?.minReconcilePeriodMs, 60_000);
    const role = kube.get(`ClusterRole//${appTeamRoleName('pg')}`) as (KubeObject & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }) | undefined;
    assert.equal(role?.metadata.labels?.[AGGREGATE_TO_APP_TEAM], 'true');
    assert.deepEqual(role?.rules.map((r) => [r.apiGroups, r.resources, r.verbs.includes('update')]), [[['example.com'], ['gateways'], true], [['example.com'], ['gateways/status'], false]], 'the kinds, and their status read-only');
    assert.equal(kube.get('CustomResourceDefinition//gateways.example.com')?.metadata.labels?.[HELM_OPERATOR_LABEL], 'pg');
    assert.equal(kube.statusWrites.length, 1);
    assert.equal(ready(kube)?.reason, 'Serving');
  });

  test('Ready waits until kubectl can use every kind: KindsPending names what discovery or OpenAPI v3 lacks, served meanwhile and looked at again soon', async () => {
    const { kube, reconciler, started } = setup(hop());
    kube.cluster.notInDiscovery.add('example.com/v1/Gateway');
    kube.cluster.notInOpenApi.add('example.com/v1/Gateway');
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 1000 });
    assert.equal(started.length, 1, 'the kind is served while kubectl cannot use it yet');
    assert.deepEqual([ready(kube)?.status, ready(kube)?.reason], ['False', 'KindsPending']);
    assert.match(ready(kube)?.message ?? '', /Gateway \(example\.com\/v1\) is not yet in the API server's discovery or OpenAPI v3/);
    kube.cluster.notInDiscovery.clear();
    await reconciler.reconcile(req, ctx);
    assert.equal(ready(kube)?.reason, 'KindsPending');
    assert.match(ready(kube)?.message ?? '', /Gateway \(example\.com\/v1\) is not yet in the API server's OpenAPI v3$/);
    kube.cluster.notInOpenApi.clear();
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 600_000 });
    assert.deepEqual([ready(kube)?.status, ready(kube)?.reason], ['True', 'Serving']);
    assert.equal(started.length, 1, 'not restarted');
    assert.deepEqual(
      kube.cluster.raw.slice(-4).map((r) => r.path.split('?')[0]),
      ['/apis', '/apis/example.com/v1', '/openapi/v3', '/openapi/v3/apis/example.com/v1'],
      'asked anew, as kubectl does after a miss',
    );
  });

  test('a fixed ServiceAccount and an allow-list reach the kinds as the owner wrote them', async () => {
    const { reconciler, started } = setup(hop({ serviceAccount: { name: 'helm', namespace: 'platform' }, allowedObjects: { namespaces: ['monitoring'] } }));
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(started[0]?.identity, { type: 'serviceAccount', namespace: 'platform', name: 'helm' });
    assert.deepEqual(started[0]?.scope, { namespaces: ['monitoring'] });
  });

  test("its kinds run as many reconciles at once as `helm-operator run` does by default (not one); a kind's own maxConcurrentReconciles wins", async () => {
    const concurrency: (number | undefined)[] = [];
    const kube = new Kube();
    kube.put(hop({ kinds: [{ group: 'example.com', version: 'v1', kind: 'Gateway' }, { group: 'example.com', version: 'v1', kind: 'Route', maxConcurrentReconciles: 3 }] }));
    const runKind: HelmOperatorPorts['runKind'] = (_kind, opts) => {
      concurrency.push(opts.maxConcurrentReconciles);
      return { enqueueAll: () => undefined, stop: () => Promise.resolve(), synced: Promise.resolve() };
    };
    const reconciler = new HelmOperatorReconciler({ client: kube.client(), logger, engine: { records: new ReleaseRecords({ client: kube.client(), namespace: 'binnacle-system', logger }) }, cacheDir: '/nonexistent', ports: { fetchChart: () => Promise.resolve({ path: '/c/pg.tgz', kind: 'archive', digest: 'sha256:1', name: 'pg', version: '1.0.0' } as FetchedChart), inspect: () => Promise.resolve([CHART]), runKind } });
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(concurrency, [DEFAULT_HELM_RECONCILES, 3]);
    assert.ok(DEFAULT_HELM_RECONCILES >= 16);
  });

  test('without spec.serviceAccount nothing is served: releases never act as the manager', async () => {
    const h = hop();
    delete h.spec.serviceAccount;
    const { kube, reconciler, started } = setup(h);
    assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true });
    assert.equal(started.length, 0);
    assert.equal(ready(kube)?.reason, 'ServiceAccountRequired');
    assert.equal(kube.applied.length, 0, 'no CRD either');
  });

  test('its drift rules reach every kind it serves; bad ones are refused naming the field, and nothing is served', async () => {
    const drift = { ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }] };
    const good = setup(hop({ drift }));
    await good.reconciler.reconcile(req, ctx);
    assert.deepEqual(good.started[0]?.drift, drift);
    const bad = setup({ ...hop(), spec: { ...hop().spec, drift: { mode: 'Never', ignore: [{ paths: ['/metadata/ownerReferences'] }] } } });
    assert.deepEqual(await bad.reconciler.reconcile(req, ctx), { failed: true });
    assert.equal(bad.started.length, 0);
    assert.deepEqual([ready(bad.kube)?.reason, ready(bad.kube)?.message], ['InvalidSpec', 'spec.drift.mode: must be one of Repair, Warn, Off (got "Never"); spec.drift.ignore[0].paths[0]: /metadata/ownerReferences cannot be ignored: it holds the owner references Binnacle sets']);
  });

  test('a CRD another owner holds is never overwritten', async () => {
    const { kube, reconciler, started } = setup(hop());
    kube.put({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gateways.example.com', labels: { [HELM_OPERATOR_LABEL]: 'someone-else' } } });
    await reconciler.reconcile(req, ctx);
    assert.equal(ready(kube)?.reason, 'CRDOwnedElsewhere');
    assert.match(ready(kube)?.message ?? '', /belongs to HelmOperator someone-else/);
    assert.deepEqual(kube.applied, []);
    assert.equal(started.length, 0);
  });

  test('a chart that cannot be fetched is ChartUnavailable, in one status write', async () => {
    const { kube, reconciler } = setup(hop(), new Error('registry down'));
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    assert.equal(ready(kube)?.reason, 'ChartUnavailable');
    assert.equal(kube.statusWrites.length, 1);
  });

  test('Delete step failure: the finalizer patch fails; Ready=False ReconcileError in the one status write, thrown for backoff, nothing served', async () => {
    const { kube, reconciler, started } = setup(hop({}, { finalizers: [] }));
    kube.failNextPatch();
    await assert.rejects(reconciler.reconcile(req, ctx), /has been modified/);
    assert.equal(kube.statusWrites.length, 1);
    assert.equal(ready(kube)?.reason, 'ReconcileError');
    assert.equal(started.length, 0);
  });

  test('Inspect step failure: a chart Helm cannot read is InvalidChart, in one status write; nothing is served; looked at again after the poll interval', async () => {
    const { kube, reconciler, started } = setup(hop(), undefined, new Error('Chart.yaml: apiVersion is required'));
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 600_000 });
    assert.equal(ready(kube)?.reason, 'InvalidChart');
    assert.match(ready(kube)?.message ?? '', /apiVersion is required/);
    assert.equal(kube.statusWrites.length, 1);
    assert.deepEqual(kube.applied, [], 'no CRD or role for a chart that cannot be read');
    assert.equal(started.length, 0);
  });

  test('CRDs step failure: a kind naming a subchart the chart lacks is CRDFailed, naming it, in one status write', async () => {
    const { kube, reconciler, started } = setup(hop({ kinds: [{ group: 'example.com', version: 'v1', kind: 'Gateway', chart: 'missing' }] }));
    await reconciler.reconcile(req, ctx);
    assert.equal(ready(kube)?.reason, 'CRDFailed');
    assert.match(ready(kube)?.message ?? '', /has no subchart missing/);
    assert.equal(kube.statusWrites.length, 1);
    assert.equal(started.length, 0);
  });

  test('deleting: a failed finalizer removal is thrown for backoff; no status is written (the object is going)', async () => {
    const { kube, reconciler } = setup(hop({ deletionPolicy: 'Orphan' }));
    await reconciler.reconcile(req, ctx);
    kube.change((h) => (h.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
    kube.failNextPatch();
    const writes = kube.statusWrites.length;
    await assert.rejects(reconciler.reconcile(req, ctx), /has been modified/);
    assert.equal(kube.statusWrites.length, writes);
    assert.deepEqual(kube.hop()?.metadata.finalizers, [HELM_OPERATOR_FINALIZER]);
  });

  test('deleting with the default policy: CRs deleted and waited for, then the CRD and role go, then the finalizer', async () => {
    const { kube, reconciler } = setup(hop());
    await reconciler.reconcile(req, ctx);
    kube.put({ apiVersion: 'example.com/v1', kind: 'Gateway', metadata: { name: 'a', namespace: 'team-a', finalizers: [UNINSTALL_FINALIZER] } });
    kube.change((h) => (h.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 2000 });
    assert.ok(kube.deleted.includes('Gateway/team-a/a'));
    assert.notEqual(kube.get('Gateway/team-a/a'), undefined, 'held by its own finalizer');
    assert.equal(ready(kube)?.reason, 'Deleting');
    // The CR's own finalizer uninstalls its release; once it is gone the operator goes.
    kube.cluster.remove({ apiVersion: 'example.com/v1', kind: 'Gateway', namespace: 'team-a', name: 'a' });
    assert.equal(await reconciler.reconcile(req, ctx), undefined);
    assert.ok(kube.deleted.includes('CustomResourceDefinition//gateways.example.com'));
    assert.ok(kube.deleted.includes(`ClusterRole//${appTeamRoleName('pg')}`));
    assert.equal(kube.get(`ClusterRole//${appTeamRoleName('pg')}`), undefined);
    assert.equal(kube.hop(), undefined, 'its finalizer removed, the operator goes');
  });

  test('deleting with Orphan: the CRs lose only the uninstall finalizer and stay; the CRD stays', async () => {
    const { kube, reconciler } = setup(hop({ deletionPolicy: 'Orphan' }));
    await reconciler.reconcile(req, ctx);
    kube.put({ apiVersion: 'example.com/v1', kind: 'Gateway', metadata: { name: 'a', namespace: 'team-a', finalizers: [UNINSTALL_FINALIZER] } });
    kube.change((h) => (h.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
    assert.equal(await reconciler.reconcile(req, ctx), undefined);
    assert.deepEqual(kube.get('Gateway/team-a/a')?.metadata.finalizers, []);
    assert.ok(!kube.deleted.includes('Gateway/team-a/a'));
    assert.notEqual(kube.get('CustomResourceDefinition//gateways.example.com'), undefined);
    assert.equal(kube.hop(), undefined, 'its finalizer removed, the operator goes');
  });
});

test('a kind in a group no app team may write (rbac.authorization.k8s.io) is refused, not granted', async () => {
  const { kube, reconciler } = setup(hop({ kinds: [{ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Gateway' }] }));
  await reconciler.reconcile(req, ctx);
  assert.equal(ready(kube)?.reason, 'CRDFailed');
  assert.match(ready(kube)?.message ?? '', /would let a team escalate/);
  assert.equal(kube.get(`ClusterRole//${appTeamRoleName('pg')}`), undefined);
  assert.deepEqual(kube.applied, [], 'no CRD either');
});

describe('HelmOperator upgrade approval (issue 31 §1)', () => {
  /** A registry holding pg 1.0.0 and whatever `latest` says; a fetch asks for a range or an exact version. */
  function approvalSetup(h: HelmOperator) {
    const registry = { latest: '1.0.0', digests: new Map([['1.0.0', 'sha256:1'], ['1.1.0', 'sha256:2'], ['1.2.0', 'sha256:3']]) };
    const fetches: (string | undefined)[] = [];
    /** How many verify keys each fetch was given. */
    const fetchKeys: (number | undefined)[] = [];
    const { kube, reconciler, started } = operatorSetup(h, {
      fetchChart: (ref, opts) => {
        const asked = 'version' in ref ? ref.version : undefined;
        fetches.push(asked);
        fetchKeys.push(opts.verifyKeys?.length);
        const version = asked !== undefined && registry.digests.has(asked) ? asked : registry.latest;
        return Promise.resolve({ path: `/c/pg-${version}.tgz`, kind: 'archive', digest: registry.digests.get(version) ?? '', name: 'pg', version } as FetchedChart);
      },
      inspect: () => Promise.resolve([CHART]),
    });
    /** The status the reconciler writes becomes the object's, as the API server keeps it. */
    const reconcile = async (): Promise<void> => {
      await reconciler.reconcile(req, ctx);
    };
    const approve = (digest: string): void => kube.change((h) => (h.metadata.annotations = { [ANNOTATION_APPROVED_PLAN]: digest }));
    const served = (): string | undefined => started.at(-1)?.chart()?.version;
    return { kube, registry, fetches, fetchKeys, reconcile, approve, served };
  }
  const chartOf = (kube: Kube) => kube.statusWrites.at(-1)?.chart as { version: string } | undefined;
  const pendingOf = (kube: Kube) => kube.statusWrites.at(-1)?.pendingPlan as { digest: string; supersedes?: string; changes: { from?: string; to: string }[]; crdSafety?: unknown[] } | undefined;

  test('Manual: a new chart version keeps the served one (fetched again by its exact version) with the plan in status, until its digest is approved', async () => {
    const t = approvalSetup(hop({ upgradeApproval: 'Manual' }));
    await t.reconcile();
    assert.equal(chartOf(t.kube)?.version, '1.0.0', 'the first chart is served without approval');
    t.registry.latest = '1.1.0';
    await t.reconcile();
    assert.equal(chartOf(t.kube)?.version, '1.0.0');
    assert.equal(t.served(), '1.0.0');
    assert.equal(t.fetches.at(-1), '1.0.0', 'the served chart is fetched by its exact version');
    const pending = pendingOf(t.kube);
    assert.deepEqual(pending?.changes.map((c) => [c.from, c.to]), [['1.0.0', '1.1.0']]);
    assert.match(pending?.digest ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(pending?.crdSafety, [{ crd: 'gateways.example.com', safe: true }], 'the kinds\' CRDs the new chart makes, judged against those served');
    assert.match(ready(t.kube)?.message ?? '', /serving Gateway with pg 1\.0\.0; the upgrade of chart pg from 1\.0\.0 to 1\.1\.0 awaits approval of plan sha256:[0-9a-f]{64} \(binnacle approve pg --helm-operator --digest/);
    await t.reconcile();
    assert.equal(pendingOf(t.kube)?.digest, pending?.digest, 'a re-poll keeps the digest');
    t.approve(pending?.digest ?? '');
    await t.reconcile();
    assert.equal(chartOf(t.kube)?.version, '1.1.0');
    assert.equal(t.served(), '1.1.0');
    assert.equal(pendingOf(t.kube), undefined);
  });

  test('a newer chart before approval supersedes the plan; approving the superseded digest keeps the served chart and says why', async () => {
    const t = approvalSetup(hop({ upgradeApproval: 'Manual' }));
    await t.reconcile();
    t.registry.latest = '1.1.0';
    await t.reconcile();
    const first = pendingOf(t.kube)?.digest ?? '';
    t.registry.latest = '1.2.0';
    await t.reconcile();
    assert.equal(pendingOf(t.kube)?.supersedes, first);
    t.approve(first);
    await t.reconcile();
    assert.equal(chartOf(t.kube)?.version, '1.0.0');
    assert.match(ready(t.kube)?.message ?? '', /the approval of sha256:[0-9a-f]{64} is not applied: that plan was superseded before it was applied/);
  });

  test('the served version republished with other content is not served in its place: ChartUnavailable, naming both digests', async () => {
    const t = approvalSetup(hop({ upgradeApproval: 'Manual' }));
    await t.reconcile();
    t.registry.latest = '1.1.0';
    t.registry.digests.set('1.0.0', 'sha256:tampered');
    await t.reconcile();
    assert.equal(ready(t.kube)?.reason, 'ChartUnavailable');
    assert.match(ready(t.kube)?.message ?? '', /chart pg 1\.0\.0 served before now has digest sha256:tampered, not sha256:1/);
  });

  test('Manual with spec.chart.verify: the verify keys are read once a reconcile, and the chart held back is fetched with the same keys', async () => {
    const t = approvalSetup(hop({ upgradeApproval: 'Manual', chart: { oci: { ref: 'oci://r/pg' }, verify: { provider: 'cosign', secretRef: { namespace: 'binnacle-system', name: 'keys' } } } }));
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
    t.kube.put({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'binnacle-system', name: 'keys' }, data: { 'cosign.pub': Buffer.from(publicKey).toString('base64') } });
    await t.reconcile();
    t.registry.latest = '1.1.0';
    const from = t.kube.gets.length;
    t.fetchKeys.length = 0;
    await t.reconcile();
    assert.equal(t.served(), '1.0.0', 'held back for approval');
    assert.deepEqual(t.kube.gets.slice(from).filter((k) => k === 'Secret/binnacle-system/keys'), ['Secret/binnacle-system/keys']);
    assert.deepEqual(t.fetchKeys, [1, 1], 'the new chart and the one kept are both verified');
  });

  test('Automatic (the default) upgrades the chart without a plan', async () => {
    const t = approvalSetup(hop());
    await t.reconcile();
    t.registry.latest = '1.1.0';
    await t.reconcile();
    assert.equal(chartOf(t.kube)?.version, '1.1.0');
    assert.equal(pendingOf(t.kube), undefined);
  });
});
