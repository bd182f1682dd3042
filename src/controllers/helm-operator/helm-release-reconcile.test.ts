/**
 * The Helm release reconciler's steps over the one fake cluster with the release engine's real
 * operations (no fake applier: the seam between the reconciler and the engine is where the
 * release-wipe bug lived): each step's success and failure branches, the identity a release
 * acts as, its scope, its floors, redaction, one status write per reconcile, the trusted history
 * and its mirror. Only the render and the input digest are stand-ins, except in the last suite.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ReleaseRecords, revisionRecordSecret, RECORD_OWNER_UID_LABEL } from '../../apply/index.js';
import { crdOf } from '../../apply/crd.test-helper.js';
import { withChartDir } from '../../helm/chart-source/fixtures.test-helper.js';
import type { ChartRender, ChartRenderInput } from '../../helm/chart-render.js';
import { HelmError } from '../../helm-engine/errors.js';
import { helmEngine } from '../../helm-engine/engine.js';
import { createRenderer, type Renderer } from '../../render/index.js';
import { failureAction } from '../../kube/controller.js';
import { Crash, FakeCluster, faults } from '../../kube/fake-cluster.test-helper.js';
import { KubeApiError } from '../../kube/errors.js';
import type { KubeObject, ObjectRef } from '../../kube/types.js';
import { rendered } from './rendered.test-helper.js';
import { ACCOUNT_FOUND_TTL_MS, annotationTrue, goQuote, HelmReleaseReconciler, overrideValuesMessage, reconcilePeriod, UNINSTALL_FINALIZER, uninstallWaitMs, type HelmKind } from './helm-release.js';

const logger = pino({ level: 'silent' });
const SYSTEM = 'binnacle-system';
const CR = { apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: 'team-a', name: 'pg' };
const SA_USER = 'system:serviceaccount:team-a:releaser';

const SECRET_MANIFEST = '---\n# Source: pg/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: c2VjcmV0\n';

interface SetupOptions {
  kind?: Partial<HelmKind>;
  unconfined?: boolean;
  cr?: Partial<KubeObject> & { spec?: Record<string, unknown> };
  render?: (input: ChartRenderInput) => Promise<ChartRender>;
  realRender?: boolean;
  /** The renderer the real render port renders with (default: the reconciler's own). */
  renderer?: Renderer;
  serviceAccount?: boolean;
  env?: Record<string, string>;
  healthTimeoutMs?: number;
  cached?: (namespace: string | undefined, name: string) => KubeObject | undefined;
  watched?: (ref: ObjectRef) => KubeObject | undefined;
}

interface Setup {
  cluster: FakeCluster;
  renders: ChartRenderInput[];
  reconciler: HelmReleaseReconciler;
  records: ReleaseRecords;
  /** The digest the input-digest port answers: change it to change the inputs. */
  digest: { value: string };
  events: { obj: KubeObject; type: string; reason: string; message: string }[];
}

function setup(opts: SetupOptions = {}): Setup {
  const cluster = new FakeCluster();
  for (const ns of ['team-a', SYSTEM]) cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  cluster.put(crdOf({ group: 'example.com', kind: 'Pushgateway', plural: 'pushgateways' }, {}));
  if (opts.serviceAccount !== false) cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'team-a', name: 'releaser' } });
  cluster.put({ apiVersion: CR.apiVersion, kind: CR.kind, metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', finalizers: [UNINSTALL_FINALIZER] }, spec: { replicas: 1 }, ...opts.cr });
  const renders: ChartRenderInput[] = [];
  const events: Setup['events'] = [];
  const digest = { value: 'sha256:input-1' };
  const kind: HelmKind = {
    group: 'example.com',
    version: 'v1',
    kind: 'Pushgateway',
    chart: () => ({ path: '/charts/pg', digest: 'sha256:c', version: '1.0.0' }),
    identity: { type: 'namespaceServiceAccount', name: 'releaser' },
    scope: {},
    minReconcilePeriodMs: 60_000,
    ...opts.kind,
  };
  if (opts.unconfined === true) delete kind.scope;
  const client = cluster.client({ user: 'manager' });
  const records = new ReleaseRecords({ client, namespace: SYSTEM, logger });
  const reconciler = new HelmReleaseReconciler({
    client,
    kind,
    engine: { records, pollIntervalMs: 10, ...(opts.renderer === undefined ? {} : { renderer: opts.renderer }) },
    ...(opts.env === undefined ? {} : { env: opts.env }),
    ...(opts.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: opts.healthTimeoutMs }),
    ...(opts.cached === undefined ? {} : { cached: opts.cached }),
    ...(opts.watched === undefined ? {} : { watched: opts.watched }),
    ports: {
      ...(opts.realRender === true
        ? {}
        : {
            inputDigest: () => Promise.resolve(digest.value),
            render: (input: ChartRenderInput) => {
              renders.push(input);
              return opts.render?.(input) ?? Promise.resolve(rendered(SECRET_MANIFEST));
            },
          }),
      event: (obj, type, reason, message) => {
        events.push({ obj, type, reason, message });
        return Promise.resolve();
      },
    },
  });
  return { cluster, renders, reconciler, records, digest, events };
}

const req = { key: 'team-a/pg', namespace: 'team-a', name: 'pg' };
const ctx = { logger, signal: new AbortController().signal };

function crOf(cluster: FakeCluster): KubeObject | undefined {
  return cluster.get(CR);
}

function condition(cluster: FakeCluster, type: string): { status: string; reason: string; message: string } | undefined {
  const status = crOf(cluster)?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined;
  return status?.conditions?.find((c) => c.type === type);
}

/** Status writes of the CR (the status subresource). */
function statusWrites(cluster: FakeCluster): number {
  return cluster.log.filter((r) => r.verb === 'status' && r.kind === 'Pushgateway').length;
}

/** The trusted history of the CR: each record's revision and status, from the labels of its Secret. */
function trusted(s: Setup): Promise<{ revision: number; status: string | undefined }[]> {
  const secrets = s.cluster.all('Secret', SYSTEM).filter((x) => x.metadata.labels?.[RECORD_OWNER_UID_LABEL] === 'u1');
  const byRevision = secrets.map((x) => [Number(x.metadata.labels?.version), x.metadata.labels?.status] as const).sort((a, b) => a[0] - b[0]);
  return Promise.resolve(byRevision.map(([revision, status]) => ({ revision, status })));
}

function objectOf(cluster: FakeCluster, kind: string, name: string, apiVersion = 'v1'): KubeObject | undefined {
  return cluster.get({ apiVersion, kind, namespace: 'team-a', name });
}

describe('Helm release reconciler over the fake cluster and the real release engine', () => {
  test('a CR is rendered and applied as the ServiceAccount in its own namespace, owned with that namespace, and status is written once with Secret data redacted', async () => {
    const s = setup();
    const result = await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(result, { requeueAfterMs: 60_000 });
    const applied = s.cluster.applied.filter((a) => a.obj.kind === 'Secret');
    assert.deepEqual(applied.map((a) => a.identity), [SA_USER], "applied as the tenant's ServiceAccount, never the manager");
    const live = objectOf(s.cluster, 'Secret', 'creds');
    assert.deepEqual([live?.metadata.labels?.['binnacle.dev/owner-kind'], live?.metadata.labels?.['binnacle.dev/owner-namespace']], ['Pushgateway', 'team-a']);
    assert.deepEqual(live?.metadata.ownerReferences?.map((r) => r.uid), ['u1'], 'the CR owns it');
    assert.equal(s.renders[0]?.client !== undefined, true);
    assert.deepEqual(s.cluster.log.filter((r) => r.verb === 'get' && r.kind === 'Secret' && r.name === 'creds').map((r) => r.identity), [SA_USER], '`lookup`, preflight and repairs read as the same identity');
    assert.equal(statusWrites(s.cluster), 1, 'one status write per reconcile');
    assert.equal(condition(s.cluster, 'Deployed')?.status, 'True');
    const manifest = ((crOf(s.cluster)?.status as { deployedRelease?: { manifest: string } }).deployedRelease?.manifest) ?? '';
    assert.doesNotMatch(manifest, /c2VjcmV0/, 'Secret data never reaches status');
    assert.match(manifest, /kind: Secret/);
  });

  test("the history the engine acts on is kept in the manager's namespace, keyed by the CR's UID and written as the manager; Helm's records in the CR's namespace mirror it, written as the release's identity", async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(await trusted(s), [{ revision: 1, status: 'deployed' }]);
    const writers = (ns: string): string[] => [...new Set(s.cluster.log.filter((r) => r.kind === 'Secret' && r.namespace === ns && ['create', 'update'].includes(r.verb)).map((r) => r.identity))];
    assert.deepEqual(writers(SYSTEM), ['manager']);
    assert.deepEqual(writers('team-a'), [SA_USER]);
    const mirror = objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1');
    assert.deepEqual([mirror?.type, mirror?.metadata.labels?.owner, mirror?.metadata.labels?.status], ['helm.sh/release.v1', 'helm', 'deployed'], 'helm list and helm history read it');
  });

  test("with the kind's informer cache, the CR is read from it (a copy: the cache is not changed), not with a GET; the history is listed once", async () => {
    const cache: { cr?: KubeObject | undefined } = {};
    const asked: string[] = [];
    const s = setup({
      cr: { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1' } },
      cached: (namespace, name) => {
        asked.push(`${namespace ?? ''}/${name}`);
        return cache.cr;
      },
    });
    // The informer holds the CR as it is (its resourceVersion the live one).
    cache.cr = structuredClone(crOf(s.cluster));
    const inCache = cache.cr;
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(asked, ['team-a/pg']);
    assert.deepEqual(s.cluster.log.filter((r) => r.verb === 'get' && r.kind === 'Pushgateway'), [], 'no GET of the CR');
    assert.equal(inCache?.metadata.finalizers, undefined, 'the cached object is not changed');
    assert.deepEqual(crOf(s.cluster)?.metadata.finalizers, [UNINSTALL_FINALIZER], 'the finalizer added to the CR as the cache had it');
    assert.equal(condition(s.cluster, 'Deployed')?.status, 'True');
    assert.equal(s.cluster.log.filter((r) => r.verb === 'list' && r.kind === 'Secret' && r.namespace === SYSTEM).length, 1, 'the trusted history is read once');
    // Not in the cache (not seen yet, or gone): read from the API server.
    const missing = setup({ cached: () => undefined });
    await missing.reconciler.reconcile(req, ctx);
    assert.deepEqual(missing.cluster.log.filter((r) => r.verb === 'get' && r.kind === 'Pushgateway').map((r) => r.name), ['pg']);
  });

  test('a resync with unchanged inputs renders nothing and judges drift from what the dependent watches hold: no read of a watched object', async () => {
    const held = new Map<string, KubeObject>();
    const s = setup({ watched: (ref) => held.get(`${ref.kind}/${ref.name}`) });
    await s.reconciler.reconcile(req, ctx);
    const live = objectOf(s.cluster, 'Secret', 'creds');
    assert.ok(live !== undefined);
    held.set('Secret/creds', structuredClone(live));
    const from = s.cluster.log.length;
    await s.reconciler.reconcile(req, ctx);
    assert.equal(s.renders.length, 1, 'rendered once, at install');
    assert.deepEqual(s.cluster.log.slice(from).filter((r) => r.kind === 'Secret' && r.verb === 'get'), [], 'the watched Secret is not read');
    assert.equal(condition(s.cluster, 'Deployed')?.status, 'True');
  });

  test('an unchanged status is not written again', async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    await s.reconciler.reconcile(req, ctx);
    assert.equal(statusWrites(s.cluster), 1);
  });

  test('a ServiceAccount found is taken to exist for ACCOUNT_FOUND_TTL_MS, then looked for again; one not found is looked for each time', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const s = setup();
    const accountReads = (): number => s.cluster.log.filter((r) => r.verb === 'get' && r.kind === 'ServiceAccount' && r.name === 'releaser').length;
    await s.reconciler.reconcile(req, ctx);
    await s.reconciler.reconcile(req, ctx);
    assert.equal(accountReads(), 1, 'the second reconcile did not ask');
    s.cluster.remove({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'team-a', name: 'releaser' });
    t.mock.timers.tick(ACCOUNT_FOUND_TTL_MS);
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { failed: true }, 'deleted: noticed once the time is up');
    assert.equal(condition(s.cluster, 'Irreconcilable')?.reason, 'ServiceAccountNotFound');
    await s.reconciler.reconcile(req, ctx);
    assert.equal(accountReads(), 3, 'not found is not remembered');
  });

  test('a missing ServiceAccount is Irreconcilable, named; nothing is rendered or applied, and the CR backs off', async () => {
    const s = setup({ serviceAccount: false });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { failed: true });
    assert.equal(s.renders.length, 0);
    assert.deepEqual(s.cluster.applied, []);
    const c = condition(s.cluster, 'Irreconcilable');
    assert.equal(c?.reason, 'ServiceAccountNotFound');
    assert.match(c?.message ?? '', /ServiceAccount team-a\/releaser does not exist/);
    assert.equal(statusWrites(s.cluster), 1);
  });

  test('an object of the release still being deleted (an earlier owner): said, nothing applied, looked at again within a minute, not on the kind\'s 16-minute backoff', async () => {
    const s = setup();
    s.cluster.put({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'team-a', name: 'creds', finalizers: ['example.com/slow'], deletionTimestamp: '2026-01-01T00:00:00Z' } });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { failed: true, retryCapMs: 60_000 });
    assert.deepEqual(s.cluster.applied, []);
    const c = condition(s.cluster, 'Irreconcilable');
    assert.deepEqual([c?.status, c?.reason], ['True', 'ReconcileError']);
    assert.match(c?.message ?? '', /Secret team-a\/creds .* is being deleted; applying once it is gone/);
  });

  test("a fixed ServiceAccount (the cluster-wide opt-in) is the one used, whatever the CR's namespace", async () => {
    const s = setup({ kind: { identity: { type: 'serviceAccount', namespace: 'platform', name: 'helm' } } });
    s.cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'platform', name: 'helm' } });
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(s.cluster.applied.filter((a) => a.obj.kind === 'Secret').map((a) => a.identity), ['system:serviceaccount:platform:helm']);
    // Its `lookup` reads namespaced resources in the CR's namespace (and the scope's) only: the account's reads elsewhere are not the tenant's.
    assert.deepEqual(s.renders[0]?.lookupNamespaces, ['team-a']);
  });

  test("a fixed ServiceAccount's lookup is confined to the CR's namespace and the scope's namespaces; the tenant's own ServiceAccount's is not", async () => {
    const fixed = setup({ kind: { identity: { type: 'serviceAccount', namespace: 'platform', name: 'helm' }, scope: { namespaces: ['shared'] } } });
    fixed.cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'platform', name: 'helm' } });
    await fixed.reconciler.reconcile(req, ctx);
    assert.deepEqual(fixed.renders[0]?.lookupNamespaces, ['team-a', 'shared']);
    const own = setup();
    await own.reconciler.reconcile(req, ctx);
    assert.equal(own.renders[0]?.lookupNamespaces, undefined);
  });

  test("objects outside the CR's namespace, cluster-scoped ones and hooks elsewhere are refused by name; nothing is applied", async () => {
    const manifest = '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: me-admin\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: kube-system\n';
    const hook = { name: 'h', manifest: 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: h\n  namespace: team-b\n' };
    const s = setup({ render: () => Promise.resolve(rendered(manifest, [hook])) });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { failed: true });
    assert.deepEqual(s.cluster.applied, []);
    const c = condition(s.cluster, 'ReleaseFailed');
    assert.equal(c?.reason, 'ObjectsOutOfScope');
    assert.match(c?.message ?? '', /ClusterRoleBinding me-admin is cluster-scoped/);
    assert.match(c?.message ?? '', /ConfigMap kube-system\/x is in namespace kube-system/);
    assert.match(c?.message ?? '', /Job team-b\/h is in namespace team-b/);
  });

  test("the allow-list of the operator's owner lets exactly what it names through", async () => {
    const manifest = '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n';
    const s = setup({ kind: { scope: { clusterScopedKinds: ['ClusterRole.rbac.authorization.k8s.io'] } }, render: () => Promise.resolve(rendered(manifest)) });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    assert.notEqual(s.cluster.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'reader' }), undefined);
  });

  test("helm-operator run's kinds act as the process itself and are not confined (operator-sdk's model)", async () => {
    const manifest = '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n';
    const s = setup({ kind: { identity: { type: 'own' } }, unconfined: true, render: () => Promise.resolve(rendered(manifest)) });
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(s.cluster.applied.map((a) => a.identity), ['manager']);
  });

  test("a render error is ReleaseFailed with Helm's message, and is retried with capped backoff (the chart or a looked-up object may change while the CR does not)", async () => {
    const err = new HelmError('render', 'render exceeded the memory limit of 256 MiB');
    const s = setup({ render: () => Promise.reject(err) });
    const result = await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(result, { failed: true, error: err });
    assert.equal(failureAction(result?.error), 'retry');
    assert.deepEqual(s.cluster.applied, []);
    assert.match(condition(s.cluster, 'ReleaseFailed')?.message ?? '', /memory limit of 256 MiB/);
  });

  test('Pause step failure: the finalizer patch fails; Irreconcilable in the one status write, thrown for backoff, nothing rendered', async () => {
    const s = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1' } } });
    s.cluster.inject({ verb: 'patch', kind: 'Pushgateway', error: faults.conflict });
    await assert.rejects(s.reconciler.reconcile(req, ctx), /has been modified/);
    assert.equal(statusWrites(s.cluster), 1);
    assert.equal(condition(s.cluster, 'Irreconcilable')?.reason, 'ReconcileError');
    assert.equal(s.renders.length, 0);
  });

  test('Chart step failure: a kind whose chart is not fetched yet is ErrorGettingChart, looked at again in 10 s; nothing rendered; one status write', async () => {
    const s = setup({ kind: { chart: () => undefined } });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
    assert.equal(condition(s.cluster, 'Irreconcilable')?.reason, 'ErrorGettingChart');
    assert.equal(s.renders.length, 0);
    assert.equal(statusWrites(s.cluster), 1);
  });

  test("Apply step failure: an object another owner holds is refused before anything changes: Irreconcilable and ReleaseFailed InstallError naming it; one status write", async () => {
    const s = setup();
    s.cluster.put({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'team-a', name: 'creds', labels: { 'binnacle.dev/owner-kind': 'Pushgateway', 'binnacle.dev/owner-name': 'other', 'binnacle.dev/owner-namespace': 'team-a' } } });
    const result = await s.reconciler.reconcile(req, ctx);
    assert.equal(result?.failed, true);
    assert.equal(condition(s.cluster, 'ReleaseFailed')?.reason, 'InstallError');
    assert.match(condition(s.cluster, 'Irreconcilable')?.message ?? '', /Secret team-a\/creds already exists and belongs to Pushgateway team-a\/other/);
    assert.equal(condition(s.cluster, 'Deployed'), undefined);
    assert.deepEqual(s.cluster.applied, [], 'nothing written');
    assert.equal(statusWrites(s.cluster), 1);
  });

  test('Apply step failure: an apply the server refuses fails the first install, which is removed: ReleaseFailed with the reason, not Deployed, no history left; one status write', async () => {
    const s = setup();
    s.cluster.inject({ verb: 'apply', kind: 'Secret', name: 'creds', error: () => new KubeApiError(422, 'Invalid', 'admission webhook "x" denied the request'), times: Infinity });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { failed: true });
    assert.match(condition(s.cluster, 'ReleaseFailed')?.message ?? '', /apply failed: admission webhook "x" denied the request; removed the failed install/);
    assert.equal(condition(s.cluster, 'Deployed'), undefined);
    assert.deepEqual(await trusted(s), []);
    assert.equal(objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1'), undefined, 'the mirror is gone too');
    assert.equal(statusWrites(s.cluster), 1);
  });

  test('an unexpected failure is Irreconcilable in the one status write, then thrown for backoff', async () => {
    const s = setup({ render: () => Promise.reject(new Error('boom')) });
    await assert.rejects(s.reconciler.reconcile(req, ctx), /boom/);
    assert.equal(statusWrites(s.cluster), 1);
    assert.equal(condition(s.cluster, 'Irreconcilable')?.message, 'boom');
  });

  test("valuesFrom is read as the release's identity, not the manager", async () => {
    const s = setup({ kind: { valuesFrom: [{ kind: 'ConfigMap', name: 'vals' }] } });
    s.cluster.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'vals' }, data: { 'values.yaml': 'a: 1\n' } });
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(s.cluster.log.filter((r) => r.verb === 'get' && r.name === 'vals').map((r) => r.identity), [SA_USER]);
  });

  test('a missing valuesFrom object is Irreconcilable ErrorGettingValues', async () => {
    const s = setup({ kind: { valuesFrom: [{ kind: 'Secret', name: 'gone' }] } });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { failed: true });
    assert.equal(condition(s.cluster, 'Irreconcilable')?.reason, 'ErrorGettingValues');
  });

  test("a reconcile-period annotation below the kind's floor is raised to it and said so", async () => {
    const s = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', finalizers: [UNINSTALL_FINALIZER], annotations: { 'helm.sdk.operatorframework.io/reconcile-period': '1ms' } } } });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    assert.match(condition(s.cluster, 'ReconcilePeriodRaised')?.message ?? '', /asks for 1ms; this kind's floor is 1m0s/);
  });

  test('reconcilePeriod: the floor applies to the annotation only, and never below 1 s', () => {
    assert.deepEqual(reconcilePeriod(undefined, { reconcilePeriodMs: 5 }), { ms: 5 }, "the operator author's own period is not floored");
    assert.deepEqual(reconcilePeriod('2m', { minReconcilePeriodMs: 60_000 }), { ms: 120_000 });
    assert.deepEqual(reconcilePeriod('1ms', {}), { ms: 1000, raisedFrom: 1 });
    assert.deepEqual(reconcilePeriod('nonsense', {}), { ms: 60_000 });
  });

  test('a paused CR is not rendered', async () => {
    const s = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', finalizers: [UNINSTALL_FINALIZER], annotations: { 'binnacle.dev/paused': 'true' } } } });
    await s.reconciler.reconcile(req, ctx);
    assert.equal(s.renders.length, 0);
    assert.equal(condition(s.cluster, 'Paused')?.status, 'True');
  });
});

/** Marks the CR deleted (its finalizer holds it), with these annotations. */
function deleteCr(cluster: FakeCluster, annotations: Record<string, string> = {}): void {
  const cr = crOf(cluster);
  assert.ok(cr !== undefined);
  cluster.put({ ...cr, metadata: { ...cr.metadata, annotations, deletionTimestamp: '2026-01-01T00:00:00Z' } });
}

/** A context whose logger keeps every line, to read as a user greps the manager's log. */
function capturing(): { ctx: typeof ctx; lines: Record<string, unknown>[]; messages: () => string[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { ctx: { logger: log, signal: new AbortController().signal }, lines, messages: () => lines.map((l) => String(l.msg)).filter((m) => /release|Uninstall|Waiting|finalizer/i.test(m) && !/^(installing|upgrading|uninstalled) release$/.test(m)) };
}

const UNINSTALL_WAIT = 'helm.sdk.operatorframework.io/uninstall-wait';
const RELEASE_MANIFEST = [
  '---\n# Source: pg/templates/statefulset.yaml\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: pg\n',
  '---\n# Source: pg/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: pg\n',
  '---\n# Source: pg/templates/keep.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  annotations:\n    helm.sh/resource-policy: keep\n',
].join('');

describe('Helm release reconciler: deletion', () => {
  test('deleting: the release is uninstalled as its identity, its history (trusted and mirror) removed and the finalizer removed, with no status write', async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    deleteCr(s.cluster);
    const writes = statusWrites(s.cluster);
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(s.cluster.log.filter((r) => r.verb === 'delete' && r.kind === 'Secret' && r.name === 'creds').map((r) => r.identity), [SA_USER]);
    assert.equal(objectOf(s.cluster, 'Secret', 'creds'), undefined);
    assert.deepEqual(await trusted(s), []);
    assert.equal(objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1'), undefined);
    assert.equal(crOf(s.cluster), undefined, 'the finalizer went, and with it the CR');
    assert.equal(statusWrites(s.cluster), writes);
  });

  test('deleting in a namespace being deleted: a failed uninstall (its ServiceAccount gone) still lets the CR go, so the namespace finishes', async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    deleteCr(s.cluster);
    const ns = s.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'team-a' });
    assert.ok(ns !== undefined);
    s.cluster.put({ ...ns, metadata: { ...ns.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
    s.cluster.inject({ identity: SA_USER, error: faults.forbidden, times: Infinity });
    await s.reconciler.reconcile(req, ctx);
    assert.equal(crOf(s.cluster), undefined);
  });

  test('deleting in a live namespace: a failed uninstall keeps the finalizer and says how to get out', async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    deleteCr(s.cluster);
    s.cluster.inject({ verb: 'delete', identity: SA_USER, error: faults.forbidden, times: Infinity });
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { failed: true });
    assert.deepEqual(crOf(s.cluster)?.metadata.finalizers, [UNINSTALL_FINALIZER]);
    const c = condition(s.cluster, 'ReleaseFailed');
    assert.equal(c?.reason, 'UninstallError', 'helm-operator says a failed uninstall in ReleaseFailed');
    assert.match(c?.message ?? '', /as ServiceAccount team-a\/releaser failed: secrets "creds" is forbidden: User "system:serviceaccount:team-a:releaser" cannot delete resource "secrets" in API group "" in the namespace "team-a"; mend that identity, or remove the finalizer/);
  });

  test('uninstall-wait: the CR keeps its finalizer while an object of the release lingers (a finalizer holds it), across requeues whose uninstall deletes nothing, then goes', async () => {
    const s = setup({ render: () => Promise.resolve(rendered(RELEASE_MANIFEST)) });
    await s.reconciler.reconcile(req, ctx);
    s.cluster.heldNames.add('pg');
    deleteCr(s.cluster, { [UNINSTALL_WAIT]: 'true' });
    const log = capturing();
    assert.deepEqual(await s.reconciler.reconcile(req, log.ctx), { requeueAfterMs: 2000 });
    assert.deepEqual(crOf(s.cluster)?.metadata.finalizers, [UNINSTALL_FINALIZER], 'held while the StatefulSet lingers');
    const deployed = condition(s.cluster, 'Deployed');
    assert.deepEqual([deployed?.status, deployed?.reason, deployed?.message], ['False', 'UninstallSuccessful', 'Waiting until all resources are deleted.']);
    assert.match((crOf(s.cluster)?.status as { deployedRelease?: { manifest?: string } }).deployedRelease?.manifest ?? '', /kind: StatefulSet/, "the release's objects are remembered in status");
    assert.deepEqual(log.messages(), ['Uninstalled release', 'Uninstall wait', 'Waiting until all resources are deleted']);
    assert.notEqual(objectOf(s.cluster, 'ConfigMap', 'kept'), undefined, 'kept by its resource policy');

    // The requeue: the release's records are gone and its uninstall deletes nothing; the object still holds the CR.
    assert.deepEqual(await s.reconciler.reconcile(req, log.ctx), { requeueAfterMs: 4000 }, 'each look waits twice as long as the last');
    assert.deepEqual(log.messages().slice(3), ['Release not found', 'Uninstall wait', 'Waiting until all resources are deleted']);
    // The dependent watches re-queue the CR as objects go; the backstop grows up to the reconcile period.
    for (const ms of [8000, 16_000, 32_000, 60_000, 60_000]) assert.deepEqual(await s.reconciler.reconcile(req, log.ctx), { requeueAfterMs: ms });
    // A reconcile period of hours does not hold the namespace's deletion for hours: a minute at the most.
    assert.deepEqual([uninstallWaitMs(0, 3_600_000), uninstallWaitMs(5, 3_600_000), uninstallWaitMs(40, 3_600_000), uninstallWaitMs(3, 5000)], [2000, 60_000, 60_000, 5000]);

    // Whoever held them lets go (the Service of the same name was held too).
    s.cluster.remove({ apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'team-a', name: 'pg' });
    s.cluster.remove({ apiVersion: 'v1', kind: 'Service', namespace: 'team-a', name: 'pg' });
    assert.equal(await s.reconciler.reconcile(req, log.ctx), undefined);
    assert.equal(crOf(s.cluster), undefined, 'let go once every object is gone');
    assert.deepEqual(log.messages().slice(21), ['Release not found', 'Uninstall wait', 'Removing finalizer']);
  });

  test('uninstall-wait: an object the status manifest names but this release does not own (status is writable by others) never holds the CR, and is read only as the release', async () => {
    const forged = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-config\n  namespace: kube-system\n';
    const s = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', finalizers: [UNINSTALL_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z', annotations: { [UNINSTALL_WAIT]: 'true' } }, status: { deployedRelease: { name: 'pg', manifest: forged } } } });
    s.cluster.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'kube-system', name: 'cluster-config' } });
    assert.equal(await s.reconciler.reconcile(req, ctx), undefined);
    assert.equal(crOf(s.cluster), undefined);
    assert.notEqual(s.cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'cluster-config' }), undefined, 'looked at, never touched');
    assert.deepEqual(s.cluster.log.filter((r) => r.name === 'cluster-config').map((r) => `${r.verb} ${r.identity}`), [`get ${SA_USER}`], "looked up as the release's identity, never the manager");
  });

  test("without uninstall-wait a lingering object does not hold the CR; the log reads as helm-operator's", async () => {
    const s = setup({ render: () => Promise.resolve(rendered(RELEASE_MANIFEST)) });
    await s.reconciler.reconcile(req, ctx);
    s.cluster.heldNames.add('pg');
    deleteCr(s.cluster);
    const log = capturing();
    assert.equal(await s.reconciler.reconcile(req, log.ctx), undefined);
    assert.equal(crOf(s.cluster), undefined);
    assert.deepEqual(log.messages(), ['Uninstalled release', 'Removing finalizer']);
  });

  test("an uninstall runs no delete hook its history holds outside the kind's scope, and still removes the release's objects", async () => {
    const s = setup({ render: () => Promise.resolve(rendered(SECRET_MANIFEST, [{ name: 'cleanup', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cleanup\n', events: ['pre-delete'] }])) });
    await s.reconciler.reconcile(req, ctx);
    // A record written under a wider scope (the operator's owner narrowed it since): its hook goes to kube-system.
    const history = s.records.bind({ kind: 'Pushgateway', name: 'pg', namespace: 'team-a', uid: 'u1', apiVersion: CR.apiVersion }, { name: 'pg', namespace: 'team-a' }, new (await import('../../apply/index.js')).ReleaseStore(s.cluster.client()));
    const [rev] = (await history.read()).revisions;
    assert.ok(rev?.content !== undefined);
    const hooks = rev.content.hooks.map((h) => ({ ...h, manifest: `${h.manifest}  namespace: kube-system\n` }));
    await history.setStatus({ ...rev, content: { ...rev.content, hooks } }, 'deployed');
    deleteCr(s.cluster);
    await s.reconciler.reconcile(req, ctx);
    assert.equal(s.cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'cleanup' }), undefined, 'the out-of-scope hook did not run');
    assert.equal(objectOf(s.cluster, 'Secret', 'creds'), undefined, 'the uninstall went on');
  });
});

describe("Helm release reconciler: operator-sdk helm-operator's contract", () => {
  test("install, upgrade and repair log Installed / Upgraded / Reconciled release with operator-sdk's key fields", async () => {
    const s = setup();
    const log = capturing();
    await s.reconciler.reconcile(req, log.ctx);
    s.digest.value = 'sha256:input-2';
    await s.reconciler.reconcile(req, log.ctx);
    // Unchanged inputs: no render, the recorded revision is repaired.
    await s.reconciler.reconcile(req, log.ctx);
    assert.deepEqual(log.messages(), ['Installed release', 'Upgraded release', 'Reconciled release']);
    assert.equal(s.renders.length, 2);
    for (const line of log.lines.filter((l) => /^(Installed|Upgraded|Reconciled) release$/.test(String(l.msg)))) {
      assert.deepEqual([line.namespace, line.name, line.apiVersion, line.kind, line.release], ['team-a', 'pg', 'example.com/v1', 'Pushgateway', 'pg']);
    }
    assert.deepEqual(await trusted(s), [
      { revision: 1, status: 'superseded' },
      { revision: 2, status: 'deployed' },
    ]);
  });

  test('install and upgrade do not wait for the rollout (Helm without --wait, as helm-operator): Deployed once applied, looked at again after the reconcile period', async () => {
    const manifest = '---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: pg\nspec:\n  replicas: 1\n';
    const s = setup({ healthTimeoutMs: 30_000, render: () => Promise.resolve(rendered(manifest)) });
    s.cluster.unhealthyNames.add('pg');
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    s.digest.value = 'sha256:input-2';
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    assert.deepEqual([condition(s.cluster, 'Deployed')?.status, condition(s.cluster, 'Deployed')?.reason], ['True', 'UpgradeSuccessful']);
  });

  test("a repair's status is the revision it repaired, read once: its notes and manifest, with no render", async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    s.cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace: 'team-a', name: 'creds' });
    const from = s.cluster.log.length;
    await s.reconciler.reconcile(req, ctx);
    assert.equal(s.renders.length, 1);
    assert.notEqual(objectOf(s.cluster, 'Secret', 'creds'), undefined, 'the deleted object is back');
    assert.equal(s.cluster.log.slice(from).filter((r) => r.verb === 'list' && r.kind === 'Secret' && r.namespace === SYSTEM).length, 1);
    assert.equal(condition(s.cluster, 'Deployed')?.message, 'hello', "the recorded revision's notes");
  });

  test('an upgrade the API server refuses changes nothing: ReleaseFailed says why, nothing is recorded, revision 1 keeps running', async () => {
    const s = setup({ render: (input) => Promise.resolve(rendered(input.values.broken === true ? `${SECRET_MANIFEST}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n` : SECRET_MANIFEST)) });
    await s.reconciler.reconcile(req, ctx);
    const cr = crOf(s.cluster);
    assert.ok(cr !== undefined);
    s.cluster.put({ ...cr, spec: { broken: true } });
    s.digest.value = 'sha256:input-2';
    s.cluster.rejectNames.add('bad');
    const result = await s.reconciler.reconcile(req, ctx);
    assert.equal(result?.failed, true);
    assert.match(condition(s.cluster, 'ReleaseFailed')?.message ?? '', /the API server rejects it/);
    assert.deepEqual(await trusted(s), [{ revision: 1, status: 'deployed' }], 'refused in preflight: nothing recorded, revision 1 keeps running');
  });

  test("OverrideValuesInUse: a Warning on the CR per watches.yaml override, with operator-sdk's message, before an install or upgrade only", async () => {
    const s = setup({ kind: { overrideValues: { 'image.tag': 'v2', token: '${TOKEN}' } }, env: { TOKEN: 's3cr3t' } });
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(
      s.events.map((e) => [e.obj.metadata.name, e.type, e.reason, e.message]),
      [
        ['pg', 'Warning', 'OverrideValuesInUse', 'Chart value "image.tag" overridden to "v2" by operator\'s watches.yaml'],
        ['pg', 'Warning', 'OverrideValuesInUse', 'Chart value "token" overridden to "s3cr3t" by operator\'s watches.yaml'],
      ],
    );
    await s.reconciler.reconcile(req, ctx);
    assert.equal(s.events.length, 2, 'a repair of the same revision says nothing');
  });

  test('suppressOverrideValues: the event says the value was overridden without printing it', async () => {
    const s = setup({ kind: { overrideValues: { password: 'hunter2' }, suppressOverrideValues: true } });
    await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(s.events.map((e) => e.message), ['Chart value "password" overridden to "****" by operator\'s watches.yaml']);
    assert.doesNotMatch(JSON.stringify(s.events), /hunter2/);
  });

  test("status as helm-operator's: Initialized (no reason) and Deployed with deployedRelease {name, manifest}; ReleaseFailed and Irreconcilable removed once it deploys", async () => {
    let fail = true;
    const s = setup({ render: () => (fail ? Promise.reject(new HelmError('render', 'template: bad')) : Promise.resolve(rendered(SECRET_MANIFEST))) });
    const first = await s.reconciler.reconcile(req, ctx);
    assert.equal(first?.failed, true);
    assert.ok(first?.error instanceof HelmError, 'the render error goes to the runner, whose rule reads its class');
    const failed = condition(s.cluster, 'ReleaseFailed');
    assert.deepEqual([failed?.status, failed?.reason, failed?.message], ['True', 'InstallError', 'template: bad']);
    fail = false;
    await s.reconciler.reconcile(req, ctx);
    const status = crOf(s.cluster)?.status as { conditions: Record<string, unknown>[]; deployedRelease: Record<string, unknown> };
    assert.deepEqual(status.conditions.map((c) => c.type), ['Deployed', 'Initialized']);
    const initialized = status.conditions.find((c) => c.type === 'Initialized');
    assert.deepEqual([initialized?.status, 'reason' in (initialized ?? {}), 'message' in (initialized ?? {})], ['True', false, false]);
    assert.deepEqual([condition(s.cluster, 'Deployed')?.reason, condition(s.cluster, 'Deployed')?.message], ['InstallSuccessful', 'hello']);
    assert.deepEqual(Object.keys(status.deployedRelease).sort(), ['manifest', 'name']);
    assert.equal(status.deployedRelease.name, 'pg');
  });

  test("annotation booleans read as Go's ParseBool; messages quote as Go's %q", () => {
    assert.deepEqual(['true', 'True', 'TRUE', 't', '1', 'yes', 'false', '', undefined].map(annotationTrue), [true, true, true, true, true, false, false, false, false]);
    assert.equal(goQuote('a"b\\c\n\x07\x01é'), '"a\\"b\\\\c\\n\\a\\x01é"');
    assert.equal(overrideValuesMessage('a.b', 'x', false), 'Chart value "a.b" overridden to "x" by operator\'s watches.yaml');
  });

  test("its HelmOperator's drift rules reach the engine: Warn's finding of a hand edit is a Drifted condition and an Event on the CR, and the edit stays", async () => {
    const drift = { mode: 'Warn' as const };
    const s = setup({ kind: { drift } });
    await s.reconciler.reconcile(req, ctx);
    const live = objectOf(s.cluster, 'Secret', 'creds');
    assert.ok(live !== undefined);
    s.cluster.put({ ...live, data: { password: 'ZWRpdGVk' } });
    await s.reconciler.reconcile(req, ctx);
    const drifted = condition(s.cluster, 'Drifted');
    assert.deepEqual([drifted?.status, drifted?.reason, drifted?.message], ['True', 'DriftDetected', 'drift left in place (spec.drift.mode Warn): Secret team-a/creds: data.password (values hidden)']);
    assert.deepEqual(s.events.map((e) => [e.type, e.reason, e.obj.metadata.name]), [['Warning', 'DriftDetected', 'pg']]);
    assert.deepEqual(objectOf(s.cluster, 'Secret', 'creds')?.data, { password: 'ZWRpdGVk' });
  });
});

describe('Helm release reconciler: nothing lost, nothing forged (issue 43)', () => {
  test('an upgrade interrupted by a crash, then the CR changed back: the deployed revision is rolled out again, nothing is pruned, and Deployed is true', async () => {
    const manifest = (extra: string): string => `---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: pg-data\n${SECRET_MANIFEST}${extra}`;
    // The operator's owner lets its releases hold their namespace (as a chart with `createNamespace` does).
    const s = setup({ kind: { scope: { clusterScopedKinds: ['Namespace'] } }, render: (input) => Promise.resolve(rendered(manifest(input.values.b === true ? '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: only-b\n' : ''))) });
    await s.reconciler.reconcile(req, ctx);
    const cr = crOf(s.cluster);
    assert.ok(cr !== undefined);
    // Inputs B: the upgrade records its pending revision, applies, and the manager dies on the ConfigMap's apply.
    s.cluster.put({ ...cr, spec: { b: true } });
    s.digest.value = 'sha256:input-b';
    s.cluster.inject({ verb: 'apply', kind: 'ConfigMap', name: 'only-b', when: 'after', error: faults.crash });
    await assert.rejects(s.reconciler.reconcile(req, ctx), Crash);
    s.cluster.restart();
    assert.deepEqual(await trusted(s), [
      { revision: 1, status: 'deployed' },
      { revision: 2, status: 'pending-upgrade' },
    ]);
    // Back to inputs A (the digest of revision 1).
    const again = crOf(s.cluster);
    assert.ok(again !== undefined);
    s.cluster.put({ ...again, spec: { replicas: 1 } });
    s.digest.value = 'sha256:input-1';
    const deletesBefore = s.cluster.log.filter((r) => r.verb === 'delete').length;
    assert.deepEqual(await s.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    assert.notEqual(s.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'pg-data' }), undefined, "the release's namespace stays");
    assert.notEqual(objectOf(s.cluster, 'Secret', 'creds'), undefined, 'the Secret stays');
    assert.equal(objectOf(s.cluster, 'ConfigMap', 'only-b'), undefined, "what the unfinished revision added is pruned");
    assert.deepEqual(
      s.cluster.log.slice(0).filter((r) => r.verb === 'delete').slice(deletesBefore).map((r) => `${r.kind} ${r.name}`),
      ['ConfigMap only-b'],
      'the only delete is what revision 2 added',
    );
    assert.equal(condition(s.cluster, 'Deployed')?.status, 'True');
    assert.deepEqual(await trusted(s), [
      { revision: 1, status: 'superseded' },
      { revision: 2, status: 'failed' },
      { revision: 3, status: 'deployed' },
    ]);
  });

  test("a pre-install hook never takes over another release's object: the release is refused before anything changes, naming the owner, and the object is untouched", async () => {
    const s = setup({ render: () => Promise.resolve(rendered(SECRET_MANIFEST, [{ name: 'settings', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  evil: "1"\n' }])) });
    const theirs = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'settings', labels: { 'binnacle.dev/owner-kind': 'Pushgateway', 'binnacle.dev/owner-name': 'gw', 'binnacle.dev/owner-namespace': 'team-a' } }, data: { mine: '1' } };
    s.cluster.put(theirs);
    assert.equal((await s.reconciler.reconcile(req, ctx))?.failed, true);
    assert.match(condition(s.cluster, 'ReleaseFailed')?.message ?? '', /nothing was changed[^]*apply\.hook-not-owned\] ConfigMap team-a\/settings: a hook of the release: already exists and belongs to Pushgateway team-a\/gw.*a hook never takes it over/);
    assert.deepEqual(objectOf(s.cluster, 'ConfigMap', 'settings')?.data, { mine: '1' });
    assert.equal(s.cluster.log.filter((r) => r.name === 'settings' && (r.verb === 'delete' || r.verb === 'apply')).length, 0, 'neither deleted nor applied');
    assert.equal(s.cluster.all('Secret', 'binnacle-system').length, 0, 'no revision recorded: refused, not failed, so it is tried again');
    // Once the name is free, the release goes ahead (no failed revision holds it back).
    s.cluster.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'settings' });
    assert.equal((await s.reconciler.reconcile(req, ctx))?.failed, undefined);
    assert.equal(condition(s.cluster, 'Deployed')?.status, 'True');
  });

  test("a planted Helm record (a gzip bomb, a forged revision 1e21 with delete hooks) is refused by its bounds: named in status, never decoded whole, nothing in it run", async () => {
    const s = setup();
    // A tenant plants records in the CR's namespace before its first reconcile.
    const { gzipSync } = await import('node:zlib');
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20)).toString('base64');
    const ours = { 'binnacle.dev/owner-kind': 'Pushgateway', 'binnacle.dev/owner-name': 'pg', 'binnacle.dev/owner-namespace': 'team-a' };
    s.cluster.put({ apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1', metadata: { namespace: 'team-a', name: 'sh.helm.release.v1.pg.v7', labels: { ...ours, owner: 'helm', name: 'pg', version: '7', status: 'deployed' } }, data: { release: Buffer.from(bomb).toString('base64') } });
    const forged = revisionRecordSecret(
      { name: 'pg', namespace: 'team-a', version: 1e21, status: 'failed', description: '', firstDeployed: '', lastDeployed: '', chart: { name: 'pg', version: '1' }, config: {}, manifest: '', content: { chart: {}, manifest: '', hooks: [{ name: 'x', kind: 'ConfigMap', path: 'x', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: kube-system\n', events: ['pre-delete'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 }] } },
      { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' },
      new Date(),
      'created',
    );
    s.cluster.put({ ...forged, metadata: { ...forged.metadata, name: 'sh.helm.release.v1.pg.v8', labels: { ...forged.metadata.labels, version: '8' } } });
    const result = await s.reconciler.reconcile(req, ctx);
    assert.deepEqual(result, { requeueAfterMs: 60_000 }, 'the release installs all the same');
    const refused = condition(s.cluster, 'ReleaseRecordsRefused');
    assert.equal(refused?.status, 'True');
    assert.match(refused?.message ?? '', /sh\.helm\.release\.v1\.pg\.v7: .*inflates to more than/);
    assert.match(refused?.message ?? '', /sh\.helm\.release\.v1\.pg\.v8: .*version 1e\+21 is not a revision number/);
    assert.equal(s.cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'x' }), undefined);
    deleteCr(s.cluster);
    await s.reconciler.reconcile(req, ctx);
    assert.equal(s.cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'x' }), undefined, 'its delete hook never runs either');
  });

  test('a hand edit of the mirror (helm rollback by hand, an edited record) is drift on the CR, not executed; the mirror is put back as the history says', async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    // `helm upgrade` by hand writes revision 2 into the mirror and marks 1 superseded.
    const mirror = objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1');
    assert.ok(mirror !== undefined);
    s.cluster.put({ ...mirror, metadata: { ...mirror.metadata, name: 'sh.helm.release.v1.pg.v2', labels: { ...mirror.metadata.labels, version: '2' } } });
    s.cluster.put({ ...mirror, data: { release: 'aGFuZCBlZGl0' } });
    await s.reconciler.reconcile(req, ctx);
    const drifted = condition(s.cluster, 'ReleaseRecordsDrifted');
    assert.equal(drifted?.status, 'True');
    assert.match(drifted?.message ?? '', /revision 1 changed by hand, revision 2 added by hand/);
    assert.equal(objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v2'), undefined, 'the added record is gone');
    assert.notEqual((objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1')?.data as { release?: string }).release, 'aGFuZCBlZGl0', 'the edited one is put back');
    assert.deepEqual(await trusted(s), [{ revision: 1, status: 'deployed' }], 'the history is untouched');
    await s.reconciler.reconcile(req, ctx);
    assert.equal(condition(s.cluster, 'ReleaseRecordsDrifted'), undefined, 'said until the mirror is as the history says');
  });

  test("a Helm record under a name Helm never gives, with this release's labels (helm history lists it by them), is removed and said; another owner's stays; an uninstall removes one planted since", async () => {
    const s = setup();
    await s.reconciler.reconcile(req, ctx);
    const mirror = objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1');
    assert.ok(mirror !== undefined);
    const stray = (name: string, version: string, owner = 'pg'): KubeObject => ({ ...mirror, metadata: { namespace: 'team-a', name, labels: { ...mirror.metadata.labels, version, 'binnacle.dev/owner-name': owner } } });
    s.cluster.put(stray('pg-forged', '9'));
    s.cluster.put(stray('sh.helm.release.v1.pg.v1e21', '1e21'));
    s.cluster.put(stray('theirs', '5', 'other'));
    await s.reconciler.reconcile(req, ctx);
    assert.match(condition(s.cluster, 'ReleaseRecordsDrifted')?.message ?? '', /record pg-forged added by hand, record sh\.helm\.release\.v1\.pg\.v1e21 added by hand/);
    assert.equal(objectOf(s.cluster, 'Secret', 'pg-forged'), undefined);
    assert.equal(objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1e21'), undefined);
    assert.notEqual(objectOf(s.cluster, 'Secret', 'theirs'), undefined, "another owner's record is not this release's to remove");
    assert.deepEqual(await trusted(s), [{ revision: 1, status: 'deployed' }], 'the history is untouched');
    s.cluster.put(stray('pg-planted-late', '2'));
    deleteCr(s.cluster);
    await s.reconciler.reconcile(req, ctx);
    assert.equal(objectOf(s.cluster, 'Secret', 'pg-planted-late'), undefined, 'the uninstall removed it');
    assert.equal(objectOf(s.cluster, 'Secret', 'sh.helm.release.v1.pg.v1'), undefined);
  });

  test("a release made before the trusted history moves over once: Helm's records in the CR's namespace are checked (owner, scope) and become its history; one out of scope is named, not applied", async () => {
    const s = setup();
    const owner = { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' };
    const base = { name: 'pg', namespace: 'team-a', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name: 'pg', version: '1.0.0' }, config: {}, inputDigest: 'sha256:input-1' };
    s.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'superseded', manifest: SECRET_MANIFEST }, owner, new Date(), 'created'));
    s.cluster.put(revisionRecordSecret({ ...base, version: 2, status: 'deployed', manifest: `${SECRET_MANIFEST}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sneaky\n  namespace: kube-system\n` }, owner, new Date(), 'created'));
    // Discovery fails for a while: the reconcile fails and moves nothing (read as a scope problem,
    // revision 1 would be refused for good); the next one moves it.
    s.cluster.inject({ verb: 'discover', kind: 'Secret', error: () => new KubeApiError(503, 'ServiceUnavailable', 'etcd leader changed') });
    await assert.rejects(s.reconciler.reconcile(req, ctx), /etcd leader changed/);
    assert.equal(condition(s.cluster, 'ReleaseRecordsRefused'), undefined);
    assert.deepEqual(await trusted(s), []);
    await s.reconciler.reconcile(req, ctx);
    assert.match(condition(s.cluster, 'ReleaseRecordsRefused')?.message ?? '', /sh\.helm\.release\.v1\.pg\.v2: .*ConfigMap kube-system\/sneaky is in namespace kube-system/);
    assert.equal(s.cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'kube-system', name: 'sneaky' }), undefined);
    assert.deepEqual((await trusted(s)).map((r) => r.revision), [1, 2], 'revision 1 moved over; the next revision continues its numbering');

    // The API server's verdict (forbidden) on what a record names is that record's problem, named; the reconcile goes on.
    const v = setup();
    v.cluster.put(revisionRecordSecret({ ...base, version: 1, status: 'deployed', manifest: SECRET_MANIFEST }, owner, new Date(), 'created'));
    v.cluster.inject({ verb: 'discover', kind: 'Secret', error: () => new KubeApiError(403, 'Forbidden', 'discovery is forbidden here') });
    await v.reconciler.reconcile(req, ctx);
    assert.match(condition(v.cluster, 'ReleaseRecordsRefused')?.message ?? '', /sh\.helm\.release\.v1\.pg\.v1: .*discovery is forbidden here/);
  });

  test("moving over takes a record only under Helm's name for its revision: a record under another name, or whose name, version label and body disagree, is refused by its Secret's name", async () => {
    const s = setup();
    const owner = { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' };
    const base = { name: 'pg', namespace: 'team-a', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name: 'pg', version: '1.0.0' }, config: {}, manifest: SECRET_MANIFEST, status: 'superseded' as const };
    const r1 = revisionRecordSecret({ ...base, version: 1 }, owner, new Date(), 'created');
    s.cluster.put({ ...r1, metadata: { ...r1.metadata, name: 'pg-history' } });
    const r2 = revisionRecordSecret({ ...base, version: 2 }, owner, new Date(), 'created');
    s.cluster.put({ ...r2, metadata: { ...r2.metadata, name: 'sh.helm.release.v1.pg.v3' } });
    await s.reconciler.reconcile(req, ctx);
    const refused = condition(s.cluster, 'ReleaseRecordsRefused')?.message ?? '';
    assert.match(refused, /pg-history: .*its name is not Helm's name for a revision of release pg/);
    assert.match(refused, /sh\.helm\.release\.v1\.pg\.v3: .*metadata\.labels\.version: "2" is not the revision its name says \(3\)/);
    assert.deepEqual((await trusted(s)).map((r) => [r.revision, r.status]), [[1, 'deployed']], 'nothing moved over: the release installed anew');
  });
});

describe("Helm release reconciler through the renderer (src/render), with Helm's engine", () => {
  after(() => helmEngine().close());

  test("its default render port is the renderer's chart(): the same input rendered twice (the first apply refused) is one engine render and one cache hit, with the same output", { timeout: 120_000 }, async () => {
    // A random value: a second engine render would differ, a cache hit cannot.
    const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pg\ndata:\n  replicas: "{{ .Values.replicas }}"\n  token: {{ randAlphaNum 16 | quote }}\n';
    await withChartDir('hr-render-', 'pg', { 'cm.yaml': cm }, async (dir) => {
      const renderer = createRenderer();
      const s = setup({ realRender: true, renderer, kind: { chart: () => ({ path: dir, digest: 'sha256:hr-render-test', version: '1.0.0' }) } });
      const theirs = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'pg', labels: { 'binnacle.dev/owner-kind': 'Other', 'binnacle.dev/owner-name': 'x' } } };
      s.cluster.put(theirs);
      const before = renderer.stats();
      await s.reconciler.reconcile(req, ctx);
      s.cluster.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'pg' });
      await s.reconciler.reconcile(req, ctx);
      const after = renderer.stats();
      assert.equal(after.calls.chart - before.calls.chart, 2, "both reconciles render through the renderer's chart()");
      assert.equal(after.cache.misses - before.cache.misses, 1);
      assert.equal(after.cache.hits - before.cache.hits, 1);
      const live = objectOf(s.cluster, 'ConfigMap', 'pg');
      assert.equal((live?.data as { replicas?: string }).replicas, '1');
      assert.equal(condition(s.cluster, 'Deployed')?.status, 'True');
    });
  });

  test("a render past the release's limits is refused before it is parsed: ReleaseFailed ReleaseTooLarge names the limit; nothing applied; not rendered again until the CR changes", { timeout: 120_000 }, async () => {
    const many = '{{- range $i := until (int .Values.count) }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{{ $i }}\n{{- end }}\n';
    await withChartDir('hr-limit-', 'big', { 'many.yaml': many }, async (dir) => {
      const s = setup({ realRender: true, cr: { spec: { count: 2001 } }, kind: { chart: () => ({ path: dir, digest: 'sha256:hr-limit-test', version: '1.0.0' }) } });
      const result = await s.reconciler.reconcile(req, ctx);
      assert.equal(result?.failed, true);
      assert.equal(failureAction(result?.error), 'wait-for-change');
      const c = condition(s.cluster, 'ReleaseFailed');
      assert.equal(c?.reason, 'ReleaseTooLarge');
      assert.match(c?.message ?? '', /release team-a\/pg: the render holds more than 2000 objects, this release's limit \(spec\.limits\.maxObjects\); nothing of it is applied/);
      assert.deepEqual(s.cluster.applied, []);
      assert.deepEqual(await trusted(s), []);
      // The operator's owner raises the limit: the same CR installs.
      const raised = setup({ realRender: true, cr: { spec: { count: 2001 } }, kind: { limits: { maxObjects: 2500 }, chart: () => ({ path: dir, digest: 'sha256:hr-limit-test', version: '1.0.0' }) } });
      assert.deepEqual(await raised.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.equal(raised.cluster.all('ConfigMap', 'team-a').length, 2001);
    });
  });
});
