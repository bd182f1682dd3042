import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { ApplyOptions, KubeClient, ListOptions } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';
import type { ClusterExtension, PlatformOperator } from '../api/types.js';
import { platformExtensionName, PlatformOperatorReconciler, platformOperatorsOfDeployment } from './platform-operator.js';

const ctx = { logger: pino({ level: 'silent' }), signal: new AbortController().signal };

/** Just enough of an API server for the reconciler: objects by kind and name, SSA as merge, label selectors. */
class FakeApi {
  readonly objects = new Map<string, KubeObject>();
  /** Status writes, by kind: a reconcile writes its PlatformOperator's status once at most. */
  readonly statusWrites: string[] = [];
  /** Makes a call fail: `apply ClusterExtension`, `delete ClusterExtension`, `status PlatformOperator`, `resourceFor ClusterOperator`. */
  failOn = new Set<string>();
  private uid = 0;

  private key(kind: string, name: string): string {
    return `${kind}/${name}`;
  }

  put(obj: KubeObject): void {
    this.objects.set(this.key(obj.kind, obj.metadata.name ?? ''), obj);
  }

  find(kind: string, name: string): KubeObject | undefined {
    return this.objects.get(this.key(kind, name));
  }

  client(): KubeClient {
    const notFound = (what: string): KubeApiError => new KubeApiError(404, 'NotFound', `${what} not found`);
    const failed = (call: string): Promise<never> | undefined => (this.failOn.has(call) ? Promise.reject(new KubeApiError(503, 'ServiceUnavailable', `${call}: the server is restarting`)) : undefined);
    const api = {
      get: (ref: ObjectRef) => {
        const o = this.find(ref.kind, ref.name);
        return o === undefined ? Promise.reject(notFound(ref.name)) : Promise.resolve(structuredClone(o));
      },
      find: (ref: ObjectRef) => Promise.resolve(this.find(ref.kind, ref.name)),
      list: (_apiVersion: string, kind: string, opts: ListOptions = {}) => {
        const want = (opts.labelSelector ?? '').split(',').filter((x) => x !== '').map((x) => x.split('='));
        const items = [...this.objects.values()].filter((o) => o.kind === kind && want.every(([k, v]) => o.metadata.labels?.[k ?? ''] === v));
        return Promise.resolve({ apiVersion: 'v1', kind: 'List', metadata: {}, items: structuredClone(items) });
      },
      apply: (obj: KubeObject, opts: ApplyOptions = {}) => {
        const live = this.find(obj.kind, obj.metadata.name ?? '');
        if (opts.subresource === 'status') {
          this.statusWrites.push(obj.kind);
          const fail = failed(`status ${obj.kind}`);
          if (fail !== undefined) return fail;
          if (live === undefined) return Promise.reject(notFound(obj.metadata.name ?? ''));
          live.status = structuredClone(obj.status);
          return Promise.resolve(live);
        }
        const fail = failed(`apply ${obj.kind}`);
        if (fail !== undefined) return fail;
        const next: KubeObject = { ...structuredClone(obj), metadata: { ...structuredClone(obj.metadata), uid: live?.metadata.uid ?? `uid-${++this.uid}`, generation: 1 } };
        if (live?.metadata.deletionTimestamp !== undefined) next.metadata.deletionTimestamp = live.metadata.deletionTimestamp;
        if (live?.status !== undefined) next.status = live.status;
        this.put(next);
        return Promise.resolve(next);
      },
      delete: (ref: ObjectRef) => {
        const fail = failed(`delete ${ref.kind}`);
        if (fail !== undefined) return fail;
        const live = this.find(ref.kind, ref.name);
        if (live === undefined) return Promise.resolve(false);
        // A finalizer holds it until the test lets it go.
        live.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
        return Promise.resolve(true);
      },
      resourceFor: (_apiVersion: string, kind: string) => failed(`resourceFor ${kind}`) ?? Promise.reject(notFound(kind)),
    };
    return api as unknown as KubeClient;
  }
}

function platformOperator(packages: string[], generation: number): PlatformOperator {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'PlatformOperator',
    metadata: { name: 'core', uid: 'po-uid', generation },
    spec: { packages: packages.map((name) => ({ name, namespace: 'ops' })), serviceAccount: { name: 'installer', namespace: 'ops' } },
  };
}

function setSpec(api: FakeApi, packages: string[], generation: number): void {
  const live = api.find('PlatformOperator', 'core');
  api.put({ ...platformOperator(packages, generation), status: live?.status });
}

const status = (api: FakeApi): PlatformOperator['status'] => (api.find('PlatformOperator', 'core') as PlatformOperator | undefined)?.status;

/** A PlatformOperator of package `a`, reconciled once with `call` failing: the reconcile must reject naming it. */
async function reconcileFailing(call: string): Promise<FakeApi> {
  const api = new FakeApi();
  api.put(platformOperator(['a'], 1));
  api.failOn.add(call);
  await assert.rejects(new PlatformOperatorReconciler(api.client()).reconcile({ key: 'core', name: 'core' }, ctx), new RegExp(`${call}: the server is restarting`));
  return api;
}

describe('PlatformOperatorReconciler', () => {
  it('keeps one owned, labelled ClusterExtension per package and reports each package', async () => {
    const api = new FakeApi();
    api.put(platformOperator(['a', 'b'], 1));
    await new PlatformOperatorReconciler(api.client()).reconcile({ key: 'core', name: 'core' }, ctx);
    const ce = api.find('ClusterExtension', platformExtensionName('core', 'a')) as ClusterExtension | undefined;
    assert.deepEqual(ce?.metadata.labels, { 'binnacle.dev/owner-kind': 'PlatformOperator', 'binnacle.dev/owner-name': 'core' });
    assert.deepEqual(ce?.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]), [['PlatformOperator', 'core', true]]);
    assert.deepEqual(ce?.spec, { namespace: 'ops', serviceAccount: { name: 'installer', namespace: 'ops' }, source: { sourceType: 'Catalog', catalog: { packageName: 'a' } } });
    assert.deepEqual(status(api)?.packages?.map((p) => [p.name, p.reason]), [['a', 'Installing'], ['b', 'Installing']]);
    assert.equal(status(api)?.conditions?.find((c) => c.type === 'Available')?.status, 'False');
  });

  it('uninstalls a package taken off the list and says so: Removing, then Removed until the spec changes again', async () => {
    const api = new FakeApi();
    const r = new PlatformOperatorReconciler(api.client());
    const reconcile = (): Promise<unknown> => r.reconcile({ key: 'core', name: 'core' }, ctx);
    api.put(platformOperator(['a', 'b'], 1));
    await reconcile();
    const bExt = platformExtensionName('core', 'b');

    setSpec(api, ['a'], 2);
    await reconcile();
    assert.notEqual(api.find('ClusterExtension', bExt)?.metadata.deletionTimestamp, undefined, 'its extension is being deleted');
    assert.deepEqual(status(api)?.packages?.find((p) => p.name === 'b'), {
      name: 'b',
      extension: bExt,
      installed: false,
      healthy: false,
      reason: 'Removing',
      message: `removed from spec.packages: uninstalling ClusterExtension ${bExt}`,
    });
    assert.equal(status(api)?.conditions?.find((c) => c.type === 'Progressing')?.status, 'True');

    api.objects.delete(`ClusterExtension/${bExt}`); // its finalizer finished
    await reconcile();
    assert.equal(status(api)?.packages?.find((p) => p.name === 'b')?.reason, 'Removed');
    await reconcile();
    assert.equal(status(api)?.packages?.find((p) => p.name === 'b')?.reason, 'Removed', 'still said while the spec stays');

    setSpec(api, ['a', 'c'], 3);
    await reconcile();
    assert.deepEqual(status(api)?.packages?.map((p) => p.name), ['a', 'c']);
  });

  it('refuses a list that names a package twice', async () => {
    const api = new FakeApi();
    api.put(platformOperator(['a', 'a'], 1));
    await new PlatformOperatorReconciler(api.client()).reconcile({ key: 'core', name: 'core' }, ctx);
    const available = status(api)?.conditions?.find((c) => c.type === 'Available');
    assert.deepEqual([available?.status, available?.reason], ['False', 'InvalidSpec']);
    assert.match(available?.message ?? '', /spec\.packages\[1\]\.name: package "a" is listed twice/);
    assert.equal(api.find('ClusterExtension', platformExtensionName('core', 'a')), undefined);
    assert.deepEqual(api.statusWrites, ['PlatformOperator'], 'one status write');
  });

  it('writes its status once per reconcile (Report), and again once on the next', async () => {
    const api = new FakeApi();
    api.put(platformOperator(['a', 'b'], 1));
    const r = new PlatformOperatorReconciler(api.client());
    await r.reconcile({ key: 'core', name: 'core' }, ctx);
    assert.deepEqual(api.statusWrites, ['PlatformOperator']);
    await r.reconcile({ key: 'core', name: 'core' }, ctx);
    assert.deepEqual(api.statusWrites, ['PlatformOperator', 'PlatformOperator']);
  });

  it('EnsureExtensions failure: an extension that cannot be written is thrown for backoff; no status is written', async () => {
    const api = await reconcileFailing('apply ClusterExtension');
    assert.deepEqual(api.statusWrites, []);
  });

  it('RemoveDropped failure: an extension that cannot be deleted is thrown for backoff; no status is written', async () => {
    const api = new FakeApi();
    const r = new PlatformOperatorReconciler(api.client());
    api.put(platformOperator(['a', 'b'], 1));
    await r.reconcile({ key: 'core', name: 'core' }, ctx);
    setSpec(api, ['a'], 2);
    api.failOn.add('delete ClusterExtension');
    await assert.rejects(r.reconcile({ key: 'core', name: 'core' }, ctx), /delete ClusterExtension/);
    assert.equal(api.find('ClusterExtension', platformExtensionName('core', 'b'))?.metadata.deletionTimestamp, undefined);
    assert.deepEqual(api.statusWrites, ['PlatformOperator'], 'only the first reconcile wrote');
  });

  it('Report failure: a status write that fails is thrown for backoff (tried once)', async () => {
    const api = await reconcileFailing('status PlatformOperator');
    assert.deepEqual(api.statusWrites, ['PlatformOperator']);
    assert.equal(status(api), undefined);
  });

  it('ClusterOperator failure: discovery failing (not a 404) is thrown for backoff after the one status write', async () => {
    const api = await reconcileFailing('resourceFor ClusterOperator');
    assert.deepEqual(api.statusWrites, ['PlatformOperator']);
    assert.equal(status(api)?.packages?.[0]?.name, 'a');
  });
});

describe('platformOperatorsOfDeployment', () => {
  const extensions = new Map<string, KubeObject>([
    ['core-a', { apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', metadata: { name: 'core-a', labels: { 'binnacle.dev/owner-kind': 'PlatformOperator', 'binnacle.dev/owner-name': 'core' } } }],
    ['mine', { apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', metadata: { name: 'mine' } }],
  ]);
  const map = platformOperatorsOfDeployment((n) => extensions.get(n));
  const bd = (labels: Record<string, string>): KubeObject => ({ apiVersion: 'binnacle.dev/v1alpha1', kind: 'BundleDeployment', metadata: { name: 'x', labels } });

  it('reaches the PlatformOperator of every extension that needs the BundleDeployment', () => {
    assert.deepEqual(map(bd({ 'needed-by.binnacle.dev/mine': 'requested', 'needed-by.binnacle.dev/core-a': 'dependency' })), ['core']);
    assert.deepEqual(map(bd({ 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'core-a' })), ['core']);
  });

  it('reaches nobody for other extensions’ BundleDeployments', () => {
    assert.deepEqual(map(bd({ 'needed-by.binnacle.dev/mine': 'requested' })), []);
    assert.deepEqual(map(bd({})), []);
  });
});
