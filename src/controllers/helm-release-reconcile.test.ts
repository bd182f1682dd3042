/**
 * The Helm release reconciler's steps, driven with fakes (no cluster, no Helm engine): each
 * step's success and failure branches, the identity a release acts as, its scope, its floors,
 * redaction, and one status write per reconcile.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ApplyRefusedError, HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION, ownerLabels, type ApplyRequest, type ConfineCheck, type ApplyResult, type ReleaseRevision } from '../apply/index.js';
import type { ChartRelease, ChartReleaseInput } from '../helm/chart-release.js';
import { HelmError } from '../helm/errors.js';
import { helmEngine } from '../helm/engine.js';
import { renderStats } from '../render/index.js';
import type { KubeClient } from '../kube/client.js';
import { failureAction } from '../kube/controller.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { ValidationResult } from '../util/errors.js';
import { ACCOUNT_FOUND_TTL_MS, annotationTrue, goQuote, HelmReleaseReconciler, overrideValuesMessage, reconcilePeriod, UNINSTALL_FINALIZER, type HelmKind, type ReleaseApplier } from './helm-release.js';
import { conflict, NextFailure } from './fakes.test-helper.js';

const logger = pino({ level: 'silent' });
const CLUSTER_SCOPED = new Set(['ClusterRoleBinding', 'ClusterRole', 'Namespace', 'CustomResourceDefinition']);

/** The slice of KubeClient the reconciler uses, in memory; every client made by impersonate shares it and records who asked. */
class FakeKube {
  readonly objects = new Map<string, KubeObject>();
  readonly statusWrites: Record<string, unknown>[] = [];
  readonly reads: { who: string; ref: string }[] = [];
  readonly patches: Record<string, unknown>[] = [];
  /** Fails the next finalizer patch. */
  readonly patchFailure = new NextFailure();

  key(r: { kind: string; namespace?: string | undefined; name?: string | undefined }): string {
    return `${r.kind}/${r.namespace ?? ''}/${r.name ?? ''}`;
  }

  put(o: KubeObject): void {
    this.objects.set(this.key({ kind: o.kind, ...o.metadata }), o);
  }

  client(who = 'manager'): KubeClient {
    const find = (ref: ObjectRef): Promise<KubeObject | undefined> => {
      this.reads.push({ who, ref: this.key(ref) });
      return Promise.resolve(this.objects.get(this.key(ref)));
    };
    const c = {
      get: async (ref: ObjectRef) => {
        const o = await find(ref);
        if (o === undefined) throw new KubeApiError(404, 'NotFound', `${ref.kind} ${ref.name} not found`);
        return structuredClone(o);
      },
      find,
      apply: (obj: KubeObject, opts: { subresource?: string }) => {
        assert.equal(opts.subresource, 'status', 'the reconciler writes only status with apply');
        this.statusWrites.push(obj.status as Record<string, unknown>);
        const live = this.objects.get(this.key({ kind: obj.kind, ...obj.metadata }));
        if (live !== undefined) live.status = obj.status;
        return Promise.resolve(obj);
      },
      patch: (ref: ObjectRef, patch: { metadata: { finalizers?: string[] } }) => {
        this.patches.push(patch);
        const failed = this.patchFailure.take();
        if (failed !== undefined) return failed;
        const live = this.objects.get(this.key(ref));
        if (live !== undefined && patch.metadata.finalizers !== undefined) live.metadata.finalizers = patch.metadata.finalizers;
        return Promise.resolve(live ?? { apiVersion: ref.apiVersion, kind: ref.kind, metadata: {} });
      },
      impersonate: (as: { user: string }) => this.client(as.user),
      // The cluster's capabilities, for a render through the real render function.
      serverVersion: () => Promise.resolve('v1.31.0'),
      apiVersionSet: () => Promise.resolve(['v1']),
      resourceFor: (_apiVersion: string, kind: string) => Promise.resolve({ name: kind.toLowerCase(), kind, namespaced: !CLUSTER_SCOPED.has(kind), verbs: [] }),
      who,
    };
    return c as unknown as KubeClient;
  }
}

/** The release records every applier of one setup shares, as the cluster's release Secrets are. */
interface FakeRelease {
  history: ReleaseRevision[];
  /** What the next uninstall deletes (then the records are gone, as the real applier's). */
  deletes: ObjectRef[];
  /** The revision the next apply answers. */
  applyRevision: number;
  /** What the next apply answers instead: a refusal (thrown) or a failed release. */
  applyOutcome?: Error | { failed: string };
  /** What the next apply answers of drift. */
  drift?: ApplyResult['drift'];
}

/** A recorded revision of the release `pg` in team-a. */
function revision(n: number, manifest: string): ReleaseRevision {
  return { name: 'pg', namespace: 'team-a', revision: n, status: 'deployed', description: '', firstDeployed: '', lastDeployed: '', chart: { name: 'pg', version: '1.0.0' }, config: {}, manifest, owner: { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' } };
}

/** An applier that records what it was asked and by whom. */
class FakeApplier implements ReleaseApplier {
  readonly applied: { who: string; req: ApplyRequest }[] = [];
  readonly uninstalled: string[] = [];
  /** The scope check each uninstall was given, if any. */
  readonly uninstallConfine: (ConfineCheck | undefined)[] = [];
  uninstallError: Error | undefined;
  constructor(
    private readonly who: string,
    private readonly release: FakeRelease,
  ) {}
  apply(req: ApplyRequest): Promise<ApplyResult> {
    this.applied.push({ who: this.who, req });
    const outcome = this.release.applyOutcome;
    if (outcome instanceof Error) return Promise.reject(outcome);
    if (outcome !== undefined) return Promise.resolve({ revision: this.release.applyRevision, status: 'failed', applied: [], pruned: [], health: { healthy: true, objects: [] }, message: outcome.failed });
    const drift = this.release.drift;
    return Promise.resolve({ revision: this.release.applyRevision, status: 'deployed', applied: [], pruned: [], health: { healthy: true, objects: [] }, message: '', ...(drift === undefined ? {} : { drift }) });
  }
  uninstall(opts: { confine?: ConfineCheck }): Promise<{ deleted: ObjectRef[] }> {
    this.uninstalled.push(this.who);
    this.uninstallConfine.push(opts.confine);
    if (this.uninstallError !== undefined) return Promise.reject(this.uninstallError);
    const deleted = this.release.deletes;
    this.release.deletes = [];
    this.release.history = [];
    return Promise.resolve({ deleted });
  }
  /** Reads of the release's records (history or current revision): each is a list of its Secrets. */
  reads = 0;
  history(): Promise<ReleaseRevision[]> {
    this.reads++;
    return Promise.resolve(this.release.history);
  }
  currentRevision(): Promise<ReleaseRevision | undefined> {
    this.reads++;
    return Promise.resolve(this.release.history.findLast((r) => r.status === 'deployed'));
  }
}

const SECRET_MANIFEST = '---\n# Source: pg/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ndata:\n  password: c2VjcmV0\n';

function rendered(manifest: string, hooks: { name: string; manifest: string }[] = []): ChartRelease {
  return {
    objects: [],
    content: { chart: {}, manifest, hooks: hooks.map((h) => ({ ...h, kind: 'Job', path: '', events: ['pre-install'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 })) },
    chart: { name: 'pg', version: '1.0.0' },
    inputDigest: 'sha256:x',
    notes: 'hello',
    values: {},
  };
}

interface Setup {
  kube: FakeKube;
  appliers: FakeApplier[];
  renders: ChartReleaseInput[];
  reconciler: HelmReleaseReconciler;
  release: FakeRelease;
  events: { obj: KubeObject; type: string; reason: string; message: string }[];
}

/** `realRender`: the default render and input-digest ports (src/render's one render function, Helm's engine). */
function setup(opts: { kind?: Partial<HelmKind>; unconfined?: boolean; cr?: Partial<KubeObject> & { spec?: Record<string, unknown> }; render?: (input: ChartReleaseInput) => Promise<ChartRelease>; realRender?: boolean; serviceAccount?: boolean; env?: Record<string, string>; healthTimeoutMs?: number; cached?: (namespace: string | undefined, name: string) => KubeObject | undefined; watched?: (ref: ObjectRef) => KubeObject | undefined } = {}): Setup {
  const kube = new FakeKube();
  kube.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  if (opts.serviceAccount !== false) kube.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'team-a', name: 'releaser' } });
  kube.put({ apiVersion: 'example.com/v1', kind: 'Pushgateway', metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', generation: 1, finalizers: [UNINSTALL_FINALIZER] }, spec: { replicas: 1 }, ...opts.cr });
  const appliers: FakeApplier[] = [];
  const renders: ChartReleaseInput[] = [];
  const release: FakeRelease = { history: [], deletes: [], applyRevision: 1 };
  const events: Setup['events'] = [];
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
  const reconciler = new HelmReleaseReconciler({
    client: kube.client(),
    kind,
    ...(opts.env === undefined ? {} : { env: opts.env }),
    ...(opts.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: opts.healthTimeoutMs }),
    ...(opts.cached === undefined ? {} : { cached: opts.cached }),
    ...(opts.watched === undefined ? {} : { watched: opts.watched }),
    ports: {
      ...(opts.realRender === true
        ? {}
        : {
            inputDigest: () => Promise.resolve('sha256:input'),
            render: (input: ChartReleaseInput) => {
              renders.push(input);
              return opts.render?.(input) ?? Promise.resolve(rendered(SECRET_MANIFEST));
            },
          }),
      applier: (client) => {
        const a = new FakeApplier((client as unknown as { who: string }).who, release);
        appliers.push(a);
        return a;
      },
      event: (obj, type, reason, message) => {
        events.push({ obj, type, reason, message });
        return Promise.resolve();
      },
    },
  });
  return { kube, appliers, renders, reconciler, release, events };
}

const req = { key: 'team-a/pg', namespace: 'team-a', name: 'pg' };
const ctx = { logger, signal: new AbortController().signal };
const SA_USER = 'system:serviceaccount:team-a:releaser';

function condition(kube: FakeKube, type: string): { status: string; reason: string; message: string } | undefined {
  const status = kube.statusWrites.at(-1) as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined;
  return status?.conditions?.find((c) => c.type === type);
}

describe('Helm release reconciler, step by step with fakes', () => {
  test('a CR is rendered and applied as the ServiceAccount in its own namespace, owned with that namespace, and status is written once with Secret data redacted', async () => {
    const { kube, appliers, renders, reconciler } = setup();
    const result = await reconciler.reconcile(req, ctx);
    assert.deepEqual(result, { requeueAfterMs: 60_000 });
    assert.equal(appliers[0]?.applied.length, 1);
    assert.equal(appliers[0]?.applied[0]?.who, SA_USER, 'applied as the tenant\'s ServiceAccount, never the manager');
    assert.deepEqual(appliers[0]?.applied[0]?.req.owner, { kind: 'Pushgateway', name: 'pg', namespace: 'team-a' });
    assert.equal((renders[0]?.client as unknown as { who: string }).who, SA_USER, '`lookup` runs as the same identity');
    assert.equal(kube.statusWrites.length, 1, 'one status write per reconcile');
    assert.equal(condition(kube, 'Deployed')?.status, 'True');
    const manifest = (kube.statusWrites[0]?.deployedRelease as { manifest: string }).manifest;
    assert.doesNotMatch(manifest, /c2VjcmV0/, 'Secret data never reaches status');
    assert.match(manifest, /kind: Secret/);
  });

  test("with the kind's informer cache, the CR is read from it (a copy: the cache is not changed), not with a GET; the applier gets the history the reconcile read", async () => {
    const inCache: KubeObject = { apiVersion: 'example.com/v1', kind: 'Pushgateway', metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', generation: 1, resourceVersion: '7' }, spec: { replicas: 1 } };
    const asked: string[] = [];
    const { kube, appliers, reconciler, release } = setup({
      cached: (namespace, name) => {
        asked.push(`${namespace ?? ''}/${name}`);
        return inCache;
      },
    });
    release.history = [revision(1, SECRET_MANIFEST)];
    release.applyRevision = 2;
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(asked, ['team-a/pg']);
    assert.deepEqual(kube.reads.filter((r) => r.ref.startsWith('Pushgateway/')), [], 'no GET of the CR');
    assert.equal(kube.patches.length, 1, 'the finalizer added to the CR as the cache had it');
    assert.equal(inCache.metadata.finalizers, undefined, 'the cached object is not changed');
    assert.equal(condition(kube, 'Deployed')?.status, 'True');
    assert.deepEqual(appliers[0]?.applied[0]?.req.history, release.history);
    assert.equal(appliers[0]?.reads, 1);
    // Not in the cache (not seen yet, or gone): read from the API server.
    const missing = setup({ cached: () => undefined });
    await missing.reconciler.reconcile(req, ctx);
    assert.deepEqual(missing.kube.reads.filter((r) => r.ref.startsWith('Pushgateway/')).map((r) => r.ref), ['Pushgateway/team-a/pg']);
  });

  test("the release's objects as the dependent watches hold them go with the apply, so a resync judges from them", async () => {
    const watched = (): KubeObject | undefined => undefined;
    const { appliers, reconciler } = setup({ watched });
    await reconciler.reconcile(req, ctx);
    assert.equal(appliers[0]?.applied[0]?.req.watched, watched);
    const without = setup();
    await without.reconciler.reconcile(req, ctx);
    assert.equal(without.appliers[0]?.applied[0]?.req.watched, undefined, 'no dependent watches (watchDependentResources: false): every object is read');
  });

  test("the kind's scope goes with the apply and the uninstall, so what the release's records hold is confined too; an unconfined kind sends none", async () => {
    const { appliers, reconciler } = setup();
    await reconciler.reconcile(req, ctx);
    const confine = appliers[0]?.applied[0]?.req.confine;
    assert.ok(confine !== undefined);
    const recorded = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ok', namespace: 'team-a' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-config', namespace: 'kube-system' } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'me-admin' } },
    ];
    const problems = await confine(recorded);
    assert.equal(problems.length, 2, problems.join('; '));
    assert.match(problems.join('; '), /ConfigMap kube-system\/cluster-config is in namespace kube-system/);
    assert.match(problems.join('; '), /ClusterRoleBinding me-admin is cluster-scoped/);
    const deleting = setup({ cr: deletingCr({}) });
    await deleting.reconciler.reconcile(req, ctx);
    assert.ok(deleting.appliers[0]?.uninstallConfine[0] !== undefined, 'the uninstall gets it too (recorded delete hooks)');
    const unconfined = setup({ unconfined: true });
    await unconfined.reconciler.reconcile(req, ctx);
    assert.equal(unconfined.appliers[0]?.applied[0]?.req.confine, undefined);
  });

  test('an unchanged status is not written again', async () => {
    const { kube, reconciler } = setup();
    await reconciler.reconcile(req, ctx);
    await reconciler.reconcile(req, ctx);
    assert.equal(kube.statusWrites.length, 1);
  });

  test('a ServiceAccount found is taken to exist for ACCOUNT_FOUND_TTL_MS, then looked for again; one not found is looked for each time', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const { kube, reconciler } = setup();
    const accountReads = (): number => kube.reads.filter((r) => r.ref === 'ServiceAccount/team-a/releaser').length;
    await reconciler.reconcile(req, ctx);
    await reconciler.reconcile(req, ctx);
    assert.equal(accountReads(), 1, 'the second reconcile did not ask');
    kube.objects.delete('ServiceAccount/team-a/releaser');
    t.mock.timers.tick(ACCOUNT_FOUND_TTL_MS);
    assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true }, 'deleted: noticed once the time is up');
    assert.equal(condition(kube, 'Irreconcilable')?.reason, 'ServiceAccountNotFound');
    await reconciler.reconcile(req, ctx);
    assert.equal(accountReads(), 3, 'not found is not remembered');
  });

  test('a missing ServiceAccount is Irreconcilable, named; nothing is rendered or applied, and the CR backs off', async () => {
    const { kube, appliers, renders, reconciler } = setup({ serviceAccount: false });
    const result = await reconciler.reconcile(req, ctx);
    assert.deepEqual(result, { failed: true });
    assert.equal(renders.length, 0);
    assert.equal(appliers[0]?.applied.length, 0);
    const c = condition(kube, 'Irreconcilable');
    assert.equal(c?.reason, 'ServiceAccountNotFound');
    assert.match(c?.message ?? '', /ServiceAccount team-a\/releaser does not exist/);
    assert.equal(kube.statusWrites.length, 1);
  });

  test('a fixed ServiceAccount (the cluster-wide opt-in) is the one used, whatever the CR\'s namespace', async () => {
    const { kube, appliers, reconciler } = setup({ kind: { identity: { type: 'serviceAccount', namespace: 'platform', name: 'helm' } } });
    kube.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'platform', name: 'helm' } });
    await reconciler.reconcile(req, ctx);
    assert.equal(appliers[0]?.applied[0]?.who, 'system:serviceaccount:platform:helm');
  });

  test('objects outside the CR\'s namespace, cluster-scoped ones and hooks elsewhere are refused by name; nothing is applied', async () => {
    const manifest = '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: me-admin\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: kube-system\n';
    const hook = { name: 'h', manifest: 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: h\n  namespace: team-b\n' };
    const { kube, appliers, reconciler } = setup({ render: () => Promise.resolve(rendered(manifest, [hook])) });
    assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true });
    assert.equal(appliers[0]?.applied.length, 0);
    const c = condition(kube, 'ReleaseFailed');
    assert.equal(c?.reason, 'ObjectsOutOfScope');
    assert.match(c?.message ?? '', /ClusterRoleBinding me-admin is cluster-scoped/);
    assert.match(c?.message ?? '', /ConfigMap kube-system\/x is in namespace kube-system/);
    assert.match(c?.message ?? '', /Job team-b\/h is in namespace team-b/);
  });

  test('the allow-list of the operator\'s owner lets exactly what it names through', async () => {
    const manifest = '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n';
    const { appliers, reconciler } = setup({ kind: { scope: { clusterScopedKinds: ['ClusterRole.rbac.authorization.k8s.io'] } }, render: () => Promise.resolve(rendered(manifest)) });
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    assert.equal(appliers[0]?.applied.length, 1);
  });

  test('helm-operator run\'s kinds act as the process itself and are not confined (operator-sdk\'s model)', async () => {
    const manifest = '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\n';
    const { appliers, reconciler } = setup({ kind: { identity: { type: 'own' } }, unconfined: true, render: () => Promise.resolve(rendered(manifest)) });
    await reconciler.reconcile(req, ctx);
    assert.equal(appliers[0]?.applied[0]?.who, 'manager');
  });

  test('a render error is ReleaseFailed with Helm\'s message, and is retried with capped backoff (the chart or a looked-up object may change while the CR does not)', async () => {
    const err = new HelmError('render', 'render exceeded the memory limit of 256 MiB');
    const { kube, appliers, reconciler } = setup({ render: () => Promise.reject(err) });
    const result = await reconciler.reconcile(req, ctx);
    assert.deepEqual(result, { failed: true, error: err });
    assert.equal(failureAction(result?.error), 'retry');
    assert.equal(appliers[0]?.applied.length, 0);
    assert.match(condition(kube, 'ReleaseFailed')?.message ?? '', /memory limit of 256 MiB/);
  });

  test('Pause step failure: the finalizer patch fails; Irreconcilable in the one status write, thrown for backoff, nothing rendered', async () => {
    const { kube, renders, reconciler } = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', generation: 1 } } });
    kube.patchFailure.arm(conflict());
    await assert.rejects(reconciler.reconcile(req, ctx), /has been modified/);
    assert.equal(kube.statusWrites.length, 1);
    assert.equal(condition(kube, 'Irreconcilable')?.reason, 'ReconcileError');
    assert.equal(renders.length, 0);
  });

  test('Chart step failure: a kind whose chart is not fetched yet is ErrorGettingChart, looked at again in 10 s; nothing rendered; one status write', async () => {
    const { kube, renders, reconciler } = setup({ kind: { chart: () => undefined } });
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
    assert.equal(condition(kube, 'Irreconcilable')?.reason, 'ErrorGettingChart');
    assert.equal(renders.length, 0);
    assert.equal(kube.statusWrites.length, 1);
  });

  test('Apply step failure: a refused apply is Irreconcilable and ReleaseFailed InstallError, handed back as a failure; one status write', async () => {
    const { kube, release, reconciler } = setup();
    const refusal = new ApplyRefusedError(new ValidationResult('release team-a/pg').error('owner', 'ConfigMap team-a/settings belongs to Pushgateway other'));
    release.applyOutcome = refusal;
    assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true, error: refusal });
    assert.equal(condition(kube, 'ReleaseFailed')?.reason, 'InstallError');
    assert.match(condition(kube, 'Irreconcilable')?.message ?? '', /belongs to Pushgateway other/);
    assert.equal(condition(kube, 'Deployed'), undefined);
    assert.equal(kube.statusWrites.length, 1);
  });

  test('Apply step failure: a release the applier reports failed is ReleaseFailed with its message; not Deployed; one status write', async () => {
    const { kube, release, reconciler } = setup();
    release.applyOutcome = { failed: 'pre-install hook Job team-a/migrate failed' };
    assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true });
    assert.equal(condition(kube, 'ReleaseFailed')?.message, 'pre-install hook Job team-a/migrate failed');
    assert.equal(condition(kube, 'Deployed'), undefined);
    assert.equal(kube.statusWrites.length, 1);
  });

  test('an unexpected failure is Irreconcilable in the one status write, then thrown for backoff', async () => {
    const { kube, reconciler } = setup({ render: () => Promise.reject(new Error('boom')) });
    await assert.rejects(reconciler.reconcile(req, ctx), /boom/);
    assert.equal(kube.statusWrites.length, 1);
    assert.equal(condition(kube, 'Irreconcilable')?.message, 'boom');
  });

  test('valuesFrom is read as the release\'s identity, not the manager', async () => {
    const { kube, reconciler } = setup({ kind: { valuesFrom: [{ kind: 'ConfigMap', name: 'vals' }] } });
    kube.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'vals' }, data: { 'values.yaml': 'a: 1\n' } });
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(kube.reads.filter((r) => r.ref === 'ConfigMap/team-a/vals').map((r) => r.who), [SA_USER]);
  });

  test('a missing valuesFrom object is Irreconcilable ErrorGettingValues', async () => {
    const { kube, reconciler } = setup({ kind: { valuesFrom: [{ kind: 'Secret', name: 'gone' }] } });
    assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true });
    assert.equal(condition(kube, 'Irreconcilable')?.reason, 'ErrorGettingValues');
  });

  test('a reconcile-period annotation below the kind\'s floor is raised to it and said so', async () => {
    const { kube, reconciler } = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', finalizers: [UNINSTALL_FINALIZER], annotations: { 'helm.sdk.operatorframework.io/reconcile-period': '1ms' } } } });
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    assert.match(condition(kube, 'ReconcilePeriodRaised')?.message ?? '', /asks for 1ms; this kind's floor is 1m0s/);
  });

  test('reconcilePeriod: the floor applies to the annotation only, and never below 1 s', () => {
    assert.deepEqual(reconcilePeriod(undefined, { reconcilePeriodMs: 5 }), { ms: 5 }, 'the operator author\'s own period is not floored');
    assert.deepEqual(reconcilePeriod('2m', { minReconcilePeriodMs: 60_000 }), { ms: 120_000 });
    assert.deepEqual(reconcilePeriod('1ms', {}), { ms: 1000, raisedFrom: 1 });
    assert.deepEqual(reconcilePeriod('nonsense', {}), { ms: 60_000 });
  });

  test('a paused CR is not rendered', async () => {
    const { kube, renders, reconciler } = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', finalizers: [UNINSTALL_FINALIZER], annotations: { 'binnacle.dev/paused': 'true' } } } });
    await reconciler.reconcile(req, ctx);
    assert.equal(renders.length, 0);
    assert.equal(condition(kube, 'Paused')?.status, 'True');
  });

  test('deleting: the release is uninstalled as its identity and the finalizer removed, with no status write', async () => {
    const { kube, appliers, reconciler } = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', finalizers: [UNINSTALL_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' } } });
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(appliers[0]?.uninstalled, [SA_USER]);
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, []);
    assert.equal(kube.statusWrites.length, 0);
  });

  test('deleting in a namespace being deleted: a failed uninstall (its ServiceAccount gone) still lets the CR go, so the namespace finishes', async () => {
    const { kube, reconciler, appliers } = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', finalizers: [UNINSTALL_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' } } });
    kube.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', deletionTimestamp: '2026-01-01T00:00:00Z' } });
    const original = setupApplierError(appliers, new KubeApiError(403, 'Forbidden', 'forbidden'));
    await reconciler.reconcile(req, ctx);
    original();
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, []);
  });

  test('deleting in a live namespace: a failed uninstall keeps the finalizer and says how to get out', async () => {
    const { kube, reconciler, appliers } = setup({ cr: { metadata: { namespace: 'team-a', name: 'pg', finalizers: [UNINSTALL_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' } } });
    const original = setupApplierError(appliers, new KubeApiError(403, 'Forbidden', 'forbidden'));
    assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true });
    original();
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, [UNINSTALL_FINALIZER]);
    const c = condition(kube, 'ReleaseFailed');
    assert.equal(c?.reason, 'UninstallError', 'helm-operator says a failed uninstall in ReleaseFailed');
    assert.match(c?.message ?? '', /as ServiceAccount team-a\/releaser failed: forbidden; mend that identity, or remove the finalizer/);
  });
});

/** Makes every applier the reconciler creates from now on fail its uninstall; answers a function that stops it. */
function setupApplierError(appliers: FakeApplier[], err: Error): () => void {
  const push = appliers.push.bind(appliers);
  appliers.push = (...items: FakeApplier[]): number => {
    for (const a of items) {
      // The identity is gone: its every read fails as its uninstall does.
      a.uninstallError = err;
      a.history = () => Promise.reject(err);
    }
    return push(...items);
  };
  return () => {
    appliers.push = push;
  };
}

/** A context whose logger keeps every line, to read as a user greps the manager's log. */
function capturing(): { ctx: typeof ctx; lines: Record<string, unknown>[]; messages: () => string[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { ctx: { logger: log, signal: new AbortController().signal }, lines, messages: () => lines.map((l) => String(l.msg)) };
}

const UNINSTALL_WAIT = 'helm.sdk.operatorframework.io/uninstall-wait';
const RELEASE_MANIFEST = [
  '---\n# Source: pg/templates/statefulset.yaml\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: pg\n',
  '---\n# Source: pg/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: pg\n',
  '---\n# Source: pg/templates/keep.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  annotations:\n    helm.sh/resource-policy: keep\n',
].join('');
const OWNED = {
  labels: ownerLabels({ kind: 'Pushgateway', name: 'pg', namespace: 'team-a' }),
  annotations: { [HELM_RELEASE_NAME_ANNOTATION]: 'pg', [HELM_RELEASE_NAMESPACE_ANNOTATION]: 'team-a' },
};
const STS = { apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'team-a', name: 'pg' };

function deletingCr(annotations: Record<string, string>, status?: Record<string, unknown>): Partial<KubeObject> {
  return { metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', finalizers: [UNINSTALL_FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z', annotations }, ...(status === undefined ? {} : { status }) };
}

describe("Helm release reconciler: operator-sdk helm-operator's contract", () => {
  test('uninstall-wait: the CR keeps its finalizer while an object of the release lingers (a finalizer holds it), across requeues whose uninstall deletes nothing, then goes', async () => {
    const { kube, reconciler, release } = setup({ cr: deletingCr({ [UNINSTALL_WAIT]: 'true' }) });
    release.history = [revision(1, RELEASE_MANIFEST)];
    release.deletes = [STS, { apiVersion: 'v1', kind: 'Service', namespace: 'team-a', name: 'pg' }];
    // Deleted by the uninstall, held by someone else's finalizer; the kept ConfigMap stays by design.
    kube.put({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { namespace: 'team-a', name: 'pg', ...OWNED, deletionTimestamp: '2026-01-01T00:00:01Z', finalizers: ['helm.sdk.operatorframework.io/fake-finalizer'] } });
    kube.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'kept', ...OWNED } });
    const log = capturing();

    assert.deepEqual(await reconciler.reconcile(req, log.ctx), { requeueAfterMs: 2000 });
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, [UNINSTALL_FINALIZER], 'held while the StatefulSet lingers');
    const deployed = condition(kube, 'Deployed');
    assert.deepEqual([deployed?.status, deployed?.reason, deployed?.message], ['False', 'UninstallSuccessful', 'Waiting until all resources are deleted.']);
    assert.match((kube.statusWrites.at(-1)?.deployedRelease as { manifest?: string } | undefined)?.manifest ?? '', /kind: StatefulSet/, "the release's objects are remembered in status");
    assert.deepEqual(log.messages(), ['Uninstalled release', 'Uninstall wait', 'Waiting until all resources are deleted']);

    // The requeue: the release's records are gone and its uninstall deletes nothing; the object still holds the CR.
    assert.deepEqual(await reconciler.reconcile(req, log.ctx), { requeueAfterMs: 2000 });
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, [UNINSTALL_FINALIZER], 'still held: whatever call deleted it, it is there');
    assert.deepEqual(log.messages().slice(3), ['Release not found', 'Uninstall wait', 'Waiting until all resources are deleted']);

    kube.objects.delete('StatefulSet/team-a/pg');
    assert.equal(await reconciler.reconcile(req, log.ctx), undefined);
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, [], 'let go once every object is gone');
    assert.deepEqual(log.messages().slice(6), ['Release not found', 'Uninstall wait', 'Removing finalizer']);
  });

  test('uninstall-wait: an object the status manifest names but this release does not own (status is writable by others) never holds the CR', async () => {
    const forged = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-config\n  namespace: kube-system\n';
    const { kube, reconciler } = setup({ cr: deletingCr({ [UNINSTALL_WAIT]: 'true' }, { deployedRelease: { name: 'pg', manifest: forged } }) });
    kube.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'kube-system', name: 'cluster-config' } });
    assert.equal(await reconciler.reconcile(req, ctx), undefined);
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, []);
    assert.ok(kube.objects.has('ConfigMap/kube-system/cluster-config'), 'looked at, never touched');
    assert.deepEqual(
      kube.reads.filter((r) => r.ref === 'ConfigMap/kube-system/cluster-config').map((r) => r.who),
      [SA_USER],
      "looked up as the release's identity, never the manager",
    );
  });

  test('without uninstall-wait a lingering object does not hold the CR; the log reads as helm-operator\'s', async () => {
    const { kube, reconciler, release } = setup({ cr: deletingCr({}) });
    release.history = [revision(1, RELEASE_MANIFEST)];
    kube.put({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { namespace: 'team-a', name: 'pg', ...OWNED, deletionTimestamp: '2026-01-01T00:00:01Z', finalizers: ['x'] } });
    const log = capturing();
    assert.equal(await reconciler.reconcile(req, log.ctx), undefined);
    assert.deepEqual(kube.objects.get('Pushgateway/team-a/pg')?.metadata.finalizers, []);
    assert.deepEqual(log.messages(), ['Uninstalled release', 'Removing finalizer']);
  });

  test('install, upgrade and repair log Installed / Upgraded / Reconciled release with operator-sdk\'s key fields', async () => {
    const { release, reconciler } = setup();
    const log = capturing();
    await reconciler.reconcile(req, log.ctx);
    release.history = [revision(1, SECRET_MANIFEST)];
    release.applyRevision = 2;
    await reconciler.reconcile(req, log.ctx);
    // Unchanged inputs: no render, the recorded revision is re-applied.
    release.history = [{ ...revision(2, SECRET_MANIFEST), inputDigest: 'sha256:input', content: rendered(SECRET_MANIFEST).content }];
    await reconciler.reconcile(req, log.ctx);
    assert.deepEqual(log.messages(), ['Installed release', 'Upgraded release', 'Reconciled release']);
    for (const line of log.lines) {
      assert.deepEqual([line.namespace, line.name, line.apiVersion, line.kind, line.release], ['team-a', 'pg', 'example.com/v1', 'Pushgateway', 'pg']);
    }
    assert.equal(log.lines[1]?.force, false);
  });

  test("install and upgrade do not wait for the rollout (Helm without --wait, as helm-operator): Deployed once applied, looked at again after the reconcile period", async () => {
    const { kube, release, appliers, reconciler } = setup({ healthTimeoutMs: 30_000 });
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    release.history = [revision(1, SECRET_MANIFEST)];
    release.applyRevision = 2;
    assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
    const requests = appliers.flatMap((a) => a.applied.map((x) => x.req));
    assert.equal(requests.length, 2);
    for (const r of requests) {
      assert.equal(r.waitForHealth, false, 'the applier is told not to wait for health');
      assert.equal(r.healthTimeoutMs, 30_000, "the kind's timeout still bounds the hooks");
    }
    assert.deepEqual([condition(kube, 'Deployed')?.status, condition(kube, 'Deployed')?.reason], ['True', 'UpgradeSuccessful']);
  });

  test('a reconcile reads the release records once: the revision it re-applied or installed is what status says, without reading them again', async () => {
    const { release, appliers, reconciler, kube } = setup();
    release.history = [{ ...revision(1, SECRET_MANIFEST), inputDigest: 'sha256:input', content: rendered(SECRET_MANIFEST).content }];
    await reconciler.reconcile(req, ctx);
    assert.equal(appliers[0]?.applied.length, 1, 'the recorded revision is re-applied');
    assert.equal(appliers[0]?.reads, 1);
    assert.match((kube.statusWrites.at(-1)?.deployedRelease as { manifest: string }).manifest, /kind: Secret/);
    const install = setup();
    await install.reconciler.reconcile(req, ctx);
    assert.equal(install.appliers[0]?.reads, 1, 'an install: the new revision 1 is the render');
    assert.equal(condition(install.kube, 'Deployed')?.message, 'hello', "the render's notes");
  });

  test('when the applier deployed another revision than the reconcile expected, status is read from the release records', async () => {
    const other = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-records\n';
    const t = setup({
      // The records move on while this reconcile renders (it expects to install revision 1).
      render: () => {
        t.release.history = [{ ...revision(3, other), content: { chart: {}, manifest: other, hooks: [], notes: 'recorded' } }];
        return Promise.resolve(rendered(SECRET_MANIFEST));
      },
    });
    t.release.applyRevision = 3;
    await t.reconciler.reconcile(req, ctx);
    assert.equal(t.appliers[0]?.reads, 2, 'once before, once after for what was deployed');
    assert.match((t.kube.statusWrites.at(-1)?.deployedRelease as { manifest: string }).manifest, /from-records/);
    assert.equal(condition(t.kube, 'Deployed')?.message, 'recorded');
  });

  test('OverrideValuesInUse: a Warning on the CR per watches.yaml override, with operator-sdk\'s message, before an install or upgrade only', async () => {
    const { release, reconciler, events } = setup({ kind: { overrideValues: { 'image.tag': 'v2', token: '${TOKEN}' } }, env: { TOKEN: 's3cr3t' } });
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(
      events.map((e) => [e.obj.metadata.name, e.type, e.reason, e.message]),
      [
        ['pg', 'Warning', 'OverrideValuesInUse', 'Chart value "image.tag" overridden to "v2" by operator\'s watches.yaml'],
        ['pg', 'Warning', 'OverrideValuesInUse', 'Chart value "token" overridden to "s3cr3t" by operator\'s watches.yaml'],
      ],
    );
    release.history = [{ ...revision(1, SECRET_MANIFEST), inputDigest: 'sha256:input', content: rendered(SECRET_MANIFEST).content }];
    await reconciler.reconcile(req, ctx);
    assert.equal(events.length, 2, 'a repair of the same revision says nothing');
  });

  test('suppressOverrideValues: the event says the value was overridden without printing it', async () => {
    const { reconciler, events } = setup({ kind: { overrideValues: { password: 'hunter2' }, suppressOverrideValues: true } });
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(events.map((e) => e.message), ['Chart value "password" overridden to "****" by operator\'s watches.yaml']);
    assert.doesNotMatch(JSON.stringify(events), /hunter2/);
  });

  test("status as helm-operator's: Initialized (no reason) and Deployed with deployedRelease {name, manifest}; ReleaseFailed and Irreconcilable removed once it deploys", async () => {
    let fail = true;
    const { kube, reconciler } = setup({ render: () => (fail ? Promise.reject(new HelmError('render', 'template: bad')) : Promise.resolve(rendered(SECRET_MANIFEST))) });
    const first = await reconciler.reconcile(req, ctx);
    assert.equal(first?.failed, true);
    assert.ok(first?.error instanceof HelmError, 'the render error goes to the runner, whose rule reads its class');
    const failed = condition(kube, 'ReleaseFailed');
    assert.deepEqual([failed?.status, failed?.reason, failed?.message], ['True', 'InstallError', 'template: bad']);
    fail = false;
    await reconciler.reconcile(req, ctx);
    const status = kube.statusWrites.at(-1) as { conditions: Record<string, unknown>[]; deployedRelease: Record<string, unknown> };
    assert.deepEqual(status.conditions.map((c) => c.type), ['Deployed', 'Initialized']);
    const initialized = status.conditions.find((c) => c.type === 'Initialized');
    assert.deepEqual([initialized?.status, 'reason' in (initialized ?? {}), 'message' in (initialized ?? {})], ['True', false, false]);
    assert.deepEqual([condition(kube, 'Deployed')?.reason, condition(kube, 'Deployed')?.message], ['InstallSuccessful', 'hello']);
    assert.deepEqual(Object.keys(status.deployedRelease).sort(), ['manifest', 'name']);
    assert.equal(status.deployedRelease.name, 'pg');
  });

  test("annotation booleans read as Go's ParseBool; messages quote as Go's %q", () => {
    assert.deepEqual(['true', 'True', 'TRUE', 't', '1', 'yes', 'false', '', undefined].map(annotationTrue), [true, true, true, true, true, false, false, false, false]);
    assert.equal(goQuote('a"b\\c\n\x07\x01é'), '"a\\"b\\\\c\\n\\a\\x01é"');
    assert.equal(overrideValuesMessage('a.b', 'x', false), 'Chart value "a.b" overridden to "x" by operator\'s watches.yaml');
  });

  test("its HelmOperator's drift rules reach the applier, and Warn's finding is a Drifted condition and an Event on the CR", async () => {
    const drift = { mode: 'Warn' as const, ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }] };
    const { kube, release, appliers, reconciler, events } = setup({ kind: { drift } });
    release.drift = { mode: 'Warn', drifted: [{ apiVersion: 'v1', kind: 'Secret', name: 'creds', namespace: 'team-a', state: 'changed', fields: [{ path: 'data.password', hidden: true }] }] };
    await reconciler.reconcile(req, ctx);
    assert.deepEqual(appliers[0]?.applied[0]?.req.drift, drift);
    const drifted = condition(kube, 'Drifted');
    assert.deepEqual([drifted?.status, drifted?.reason, drifted?.message], ['True', 'DriftDetected', 'drift left in place (spec.drift.mode Warn): Secret team-a/creds: data.password (values hidden)']);
    assert.deepEqual(events.map((e) => [e.type, e.reason, e.obj.metadata.name]), [['Warning', 'DriftDetected', 'pg']]);
  });
});

describe('Helm release reconciler through the one render function (src/render), with Helm\'s engine', () => {
  after(() => helmEngine().close());

  test('its default render port is render(): the same input rendered twice (the first apply refused) is one engine render and one cache hit, with the same output', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hr-render-'));
    try {
      await mkdir(join(dir, 'templates'));
      await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: pg\nversion: 1.0.0\n');
      // A random value: a second engine render would differ, a cache hit cannot.
      await writeFile(join(dir, 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pg\ndata:\n  replicas: "{{ .Values.replicas }}"\n  token: {{ randAlphaNum 16 | quote }}\n');
      const { release, appliers, reconciler } = setup({ realRender: true, kind: { chart: () => ({ path: dir, digest: 'sha256:hr-render-test', version: '1.0.0' }) } });
      release.applyOutcome = new ApplyRefusedError(new ValidationResult('release team-a/pg').error('owner', 'refused once'));
      const before = renderStats();
      await reconciler.reconcile(req, ctx);
      delete release.applyOutcome;
      await reconciler.reconcile(req, ctx);
      const after = renderStats();
      assert.equal(after.calls.chart - before.calls.chart, 2, 'both reconciles render through render({ chart })');
      assert.equal(after.cache.misses - before.cache.misses, 1);
      assert.equal(after.cache.hits - before.cache.hits, 1);
      const manifests = appliers.flatMap((a) => a.applied.map((x) => x.req.content?.manifest ?? ''));
      assert.equal(manifests.length, 2);
      assert.match(manifests[0] ?? '', /replicas: "1"/);
      assert.equal(manifests[1], manifests[0]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

