/**
 * The Helm release reconciler's steps, driven with fakes (no cluster, no Helm engine): each
 * step's success and failure branches, the identity a release acts as, its scope, its floors,
 * redaction, and one status write per reconcile.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { ApplyRequest, ApplyResult, ReleaseRevision } from '../apply/index.js';
import type { ChartRelease, ChartReleaseInput } from '../helm/chart-release.js';
import { HelmError } from '../helm/errors.js';
import type { KubeClient } from '../kube/client.js';
import { failureAction } from '../kube/controller.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import { HelmReleaseReconciler, reconcilePeriod, UNINSTALL_FINALIZER, type HelmKind, type ReleaseApplier } from './helm-release.js';

const logger = pino({ level: 'silent' });
const CLUSTER_SCOPED = new Set(['ClusterRoleBinding', 'ClusterRole', 'Namespace', 'CustomResourceDefinition']);

/** The slice of KubeClient the reconciler uses, in memory; every client made by impersonate shares it and records who asked. */
class FakeKube {
  readonly objects = new Map<string, KubeObject>();
  readonly statusWrites: Record<string, unknown>[] = [];
  readonly reads: { who: string; ref: string }[] = [];
  readonly patches: Record<string, unknown>[] = [];

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
        const live = this.objects.get(this.key(ref));
        if (live !== undefined && patch.metadata.finalizers !== undefined) live.metadata.finalizers = patch.metadata.finalizers;
        return Promise.resolve(live ?? { apiVersion: ref.apiVersion, kind: ref.kind, metadata: {} });
      },
      impersonate: (as: { user: string }) => this.client(as.user),
      resourceFor: (_apiVersion: string, kind: string) => Promise.resolve({ name: kind.toLowerCase(), kind, namespaced: !CLUSTER_SCOPED.has(kind), verbs: [] }),
      who,
    };
    return c as unknown as KubeClient;
  }
}

/** An applier that records what it was asked and by whom. */
class FakeApplier implements ReleaseApplier {
  readonly applied: { who: string; req: ApplyRequest }[] = [];
  readonly uninstalled: string[] = [];
  history_: ReleaseRevision[] = [];
  uninstallError: Error | undefined;
  constructor(private readonly who: string) {}
  apply(req: ApplyRequest): Promise<ApplyResult> {
    this.applied.push({ who: this.who, req });
    return Promise.resolve({ revision: 1, status: 'deployed', applied: [], pruned: [], health: { healthy: true, objects: [] }, message: '' });
  }
  uninstall(): Promise<{ deleted: ObjectRef[] }> {
    this.uninstalled.push(this.who);
    if (this.uninstallError !== undefined) return Promise.reject(this.uninstallError);
    return Promise.resolve({ deleted: [] });
  }
  history(): Promise<ReleaseRevision[]> {
    return Promise.resolve(this.history_);
  }
  currentRevision(): Promise<ReleaseRevision | undefined> {
    return Promise.resolve(undefined);
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
}

function setup(opts: { kind?: Partial<HelmKind>; unconfined?: boolean; cr?: Partial<KubeObject> & { spec?: Record<string, unknown> }; render?: (input: ChartReleaseInput) => Promise<ChartRelease>; serviceAccount?: boolean } = {}): Setup {
  const kube = new FakeKube();
  kube.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  if (opts.serviceAccount !== false) kube.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: 'team-a', name: 'releaser' } });
  kube.put({ apiVersion: 'example.com/v1', kind: 'Pushgateway', metadata: { namespace: 'team-a', name: 'pg', uid: 'u1', generation: 1, finalizers: [UNINSTALL_FINALIZER] }, spec: { replicas: 1 }, ...opts.cr });
  const appliers: FakeApplier[] = [];
  const renders: ChartReleaseInput[] = [];
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
    ports: {
      inputDigest: () => Promise.resolve('sha256:input'),
      render: (input) => {
        renders.push(input);
        return opts.render?.(input) ?? Promise.resolve(rendered(SECRET_MANIFEST));
      },
      applier: (client) => {
        const a = new FakeApplier((client as unknown as { who: string }).who);
        appliers.push(a);
        return a;
      },
    },
  });
  return { kube, appliers, renders, reconciler };
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

  test('an unchanged status is not written again', async () => {
    const { kube, reconciler } = setup();
    await reconciler.reconcile(req, ctx);
    await reconciler.reconcile(req, ctx);
    assert.equal(kube.statusWrites.length, 1);
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

  test('a render error is ReleaseFailed with Helm\'s message, and the CR waits for a change (the chart\'s or values\' fault, by its class)', async () => {
    const err = new HelmError('render', 'render exceeded the memory limit of 256 MiB');
    const { kube, appliers, reconciler } = setup({ render: () => Promise.reject(err) });
    const result = await reconciler.reconcile(req, ctx);
    assert.deepEqual(result, { failed: true, error: err });
    assert.equal(failureAction(result?.error), 'wait-for-change');
    assert.equal(appliers[0]?.applied.length, 0);
    assert.match(condition(kube, 'ReleaseFailed')?.message ?? '', /memory limit of 256 MiB/);
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
    const c = condition(kube, 'Irreconcilable');
    assert.equal(c?.reason, 'UninstallError');
    assert.match(c?.message ?? '', /as ServiceAccount team-a\/releaser failed: forbidden; mend that identity, or remove the finalizer/);
  });
});

/** Makes every applier the reconciler creates from now on fail its uninstall; answers a function that stops it. */
function setupApplierError(appliers: FakeApplier[], err: Error): () => void {
  const push = appliers.push.bind(appliers);
  appliers.push = (...items: FakeApplier[]): number => {
    for (const a of items) a.uninstallError = err;
    return push(...items);
  };
  return () => {
    appliers.push = push;
  };
}
