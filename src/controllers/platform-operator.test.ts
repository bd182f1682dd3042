import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { KubeApiError } from '../kube/errors.js';
import { FakeCluster, type FakeClient, type FakeVerb } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { ALL_CRDS } from '../api/crds.js';
import { API_VERSION, type ClusterExtension, type PlatformOperator } from '../api/types.js';
import { platformExtensionName, PlatformOperatorReconciler, platformOperatorsOfDeployment } from './platform-operator.js';

const ctx = { logger: pino({ level: 'silent' }), signal: new AbortController().signal };

/** The one fake cluster serving Binnacle's kinds; a deleted ClusterExtension is held by its finalizer until the test lets it go. */
class FakeApi {
  readonly cluster = new FakeCluster({ objects: ALL_CRDS });

  put(obj: KubeObject): void {
    this.cluster.put(obj);
  }

  find(kind: string, name: string): KubeObject | undefined {
    return this.cluster.get({ apiVersion: API_VERSION, kind, name });
  }

  /** Status writes asked, by kind (a failed one too): a reconcile writes its PlatformOperator's status once at most. */
  get statusWrites(): string[] {
    return this.cluster.log.filter((r) => r.verb === 'status').map((r) => r.kind);
  }

  /** Makes every request of `verb` on `kind` fail as a restarting server would (a discovery of ClusterOperator too). */
  failOn(verb: FakeVerb, kind: string): void {
    this.cluster.inject({ verb, kind, error: () => new KubeApiError(503, 'ServiceUnavailable', `${verb} ${kind}: the server is restarting`), times: Infinity });
  }

  client(): FakeClient {
    return this.cluster.client();
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

/** A PlatformOperator of package `a`, reconciled once with `verb kind` failing: the reconcile must reject naming it. */
async function reconcileFailing(verb: FakeVerb, kind: string): Promise<FakeApi> {
  const api = new FakeApi();
  api.put(platformOperator(['a'], 1));
  api.failOn(verb, kind);
  await assert.rejects(new PlatformOperatorReconciler(api.client()).reconcile({ key: 'core', name: 'core' }, ctx), new RegExp(`${verb} ${kind}: the server is restarting`));
  return api;
}

describe('PlatformOperatorReconciler', () => {
  it("refuses a package without a namespace under the default installer, whose namespace is the manager's, and creates nothing", async () => {
    const api = new FakeApi();
    const po = platformOperator(['a', 'b'], 1);
    po.spec = { packages: [{ name: 'a' }, { name: 'b', namespace: 'ops' }] };
    api.put(po);
    await new PlatformOperatorReconciler(api.client()).reconcile({ key: 'core', name: 'core' }, ctx);
    const available = status(api)?.conditions?.find((c) => c.type === 'Available');
    assert.deepEqual([available?.status, available?.reason], ['False', 'InvalidSpec']);
    assert.equal(available?.message, `spec.packages[0].namespace: "binnacle-system" (the namespace of the installer binnacle-installer, the default) is Binnacle's own namespace, where no operator is installed: name another`);
    assert.equal(api.find('ClusterExtension', platformExtensionName('core', 'a')), undefined);
    assert.equal(api.find('ClusterExtension', platformExtensionName('core', 'b')), undefined);
  });

  it("refuses the manager's namespace however it is reached: an installer named there, or the package's namespace itself; the manager's namespace is the one it is told", async () => {
    const api = new FakeApi();
    const po = platformOperator(['a', 'b'], 1);
    po.spec = { packages: [{ name: 'a' }, { name: 'b', namespace: 'ops-system' }], serviceAccount: { name: 'installer', namespace: 'ops-system' } };
    api.put(po);
    await new PlatformOperatorReconciler(api.client(), { managerNamespace: 'ops-system' }).reconcile({ key: 'core', name: 'core' }, ctx);
    const available = status(api)?.conditions?.find((c) => c.type === 'Available');
    assert.equal(
      available?.message,
      `spec.packages[0].namespace: "ops-system" (the namespace of the installer spec.serviceAccount names) is Binnacle's own namespace, where no operator is installed: name another; spec.packages[1].namespace: "ops-system" is Binnacle's own namespace, where no operator is installed: name another`,
    );
    assert.equal(api.find('ClusterExtension', platformExtensionName('core', 'a')), undefined);
  });

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
    api.cluster.heldNames.add(bExt); // its finalizer uninstalls it first

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

    api.cluster.remove({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: bExt }); // its finalizer finished
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

  it('writes its status once per reconcile, and not on the next when nothing changed; again once something did', async () => {
    const api = new FakeApi();
    api.put(platformOperator(['a', 'b'], 1));
    const r = new PlatformOperatorReconciler(api.client());
    await r.reconcile({ key: 'core', name: 'core' }, ctx);
    assert.deepEqual(api.statusWrites, ['PlatformOperator']);
    await r.reconcile({ key: 'core', name: 'core' }, ctx);
    assert.deepEqual(api.statusWrites, ['PlatformOperator'], 'nothing new to say');
    setSpec(api, ['a'], 2);
    await r.reconcile({ key: 'core', name: 'core' }, ctx);
    assert.deepEqual(api.statusWrites, ['PlatformOperator', 'PlatformOperator'], 'a new generation is written');
  });

  it('EnsureExtensions failure: an extension that cannot be written is said in status (Available=False ReconcileFailed, written once) and thrown for backoff', async () => {
    const api = await reconcileFailing('apply', 'ClusterExtension');
    assert.deepEqual(api.statusWrites, ['PlatformOperator']);
    const available = status(api)?.conditions?.find((c) => c.type === 'Available');
    assert.equal(available?.status, 'False');
    assert.equal(available?.reason, 'ReconcileFailed');
    assert.match(available?.message ?? '', /ClusterExtension/);
    assert.deepEqual(status(api)?.packages ?? [], [], 'no packages reported from a reconcile that did not get to Report');
  });

  it('RemoveDropped failure: an extension that cannot be deleted is said in status and thrown for backoff; the last packages stay', async () => {
    const api = new FakeApi();
    const r = new PlatformOperatorReconciler(api.client());
    api.put(platformOperator(['a', 'b'], 1));
    await r.reconcile({ key: 'core', name: 'core' }, ctx);
    setSpec(api, ['a'], 2);
    api.failOn('delete', 'ClusterExtension');
    await assert.rejects(r.reconcile({ key: 'core', name: 'core' }, ctx), /delete ClusterExtension/);
    assert.equal(api.find('ClusterExtension', platformExtensionName('core', 'b'))?.metadata.deletionTimestamp, undefined);
    assert.deepEqual(api.statusWrites, ['PlatformOperator', 'PlatformOperator'], 'each reconcile wrote once');
    assert.equal(status(api)?.conditions?.find((c) => c.type === 'Available')?.reason, 'ReconcileFailed');
    assert.deepEqual((status(api)?.packages ?? []).map((p) => p.name), ['a', 'b'], "the first reconcile's packages stay");
  });

  it('Report failure: a status write that fails is thrown for backoff (tried once)', async () => {
    const api = await reconcileFailing('status', 'PlatformOperator');
    assert.deepEqual(api.statusWrites, ['PlatformOperator']);
    assert.equal(status(api), undefined);
  });

  it('ClusterOperator failure: discovery failing (not a 404) is thrown for backoff after the one status write', async () => {
    const api = await reconcileFailing('discover', 'ClusterOperator');
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
