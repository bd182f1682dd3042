/**
 * The ClusterExtension reconciler's steps over the one fake cluster: each step's success and
 * failure branches, and one status write per reconcile (none when nothing changed). The cluster
 * holds the extension (finalizer, status), its BundleDeployments (applied and deleted through the
 * default port) and OperatorConditions; the installed-state view is the real reader listing it.
 * Catalogs, the resolver, the planner and the clock are ports the tests answer.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { OPERATOR_CONDITION_API_VERSION, OPERATOR_CONDITION_CRD, OPERATOR_CONDITION_KIND, type OperatorCondition } from '../api/operator-condition.js';
import { ALL_CRDS } from '../api/crds.js';
import {
  ANNOTATION_BUNDLE_VERSION,
  API_VERSION,
  FINALIZER_CLEANUP,
  LABEL_OWNER_KIND,
  LABEL_OWNER_NAME,
  LABEL_PACKAGE,
  type BundleDeployment,
  type ClusterExtension,
  type ClusterExtensionStatus,
} from '../api/types.js';
import { ANNOTATION_APPROVED_PLAN } from '../api/approval.js';
import type { StoredCatalog } from '../catalog-store/index.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { neededByLabel } from '../installed/index.js';
import { LABEL_OLMV1_TWIN_OF } from '../api/olmv1/types.js';
import { KubeApiError } from '../kube/errors.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import type { Condition, KubeObject } from '../kube/types.js';
import type { ChosenBundle, Resolution, ResolveInput } from '../resolve/index.js';
import type { ServedCatalog } from './catalog-registry.js';
import { ClusterExtensionReconciler, type CatalogAccess, type ClusterExtensionPorts, type InstalledStateView } from './cluster-extension.js';
import { CachedInstalledStateReader, type InstalledRead } from './installed-state-reader.js';

const logger = pino({ level: 'silent' });
const ctx = { logger, signal: new AbortController().signal };
const req = { key: 'demo', name: 'demo' };
const NOW = new Date('2026-11-26T12:00:00Z');
const T = '2026-01-01T00:00:00Z';

const CE_REF = { apiVersion: API_VERSION, kind: 'ClusterExtension' };
const BD_REF = { apiVersion: API_VERSION, kind: 'BundleDeployment' };

/** Objects of one kind in the cluster, by name: read as they are, written by another's hand. */
interface Named<T extends KubeObject> {
  get(name: string): T | undefined;
  /** As the manager applied it before (its fields Binnacle's), with its status as given. */
  set(name: string, obj: T): void;
  /** Gone at once (its finalizer finished). */
  delete(name: string): void;
  clear(): void;
}

/**
 * The one fake cluster serving ClusterExtensions, BundleDeployments and OperatorConditions, with
 * what was written to it. A BundleDeployment carries its own finalizer (its controller uninstalls
 * it first), so a deleted one stays, being deleted, until the test lets it go.
 */
class World {
  readonly cluster = new FakeCluster({ objects: [...ALL_CRDS, OPERATOR_CONDITION_CRD] });
  readonly extensions: Named<ClusterExtension> = this.named<ClusterExtension>(CE_REF);
  readonly deployments: Named<BundleDeployment> = this.named<BundleDeployment>(BD_REF);

  private named<T extends KubeObject>(ref: { apiVersion: string; kind: string }): Named<T> {
    return {
      get: (name) => this.cluster.get({ ...ref, name }) as T | undefined,
      set: (_name, obj) => void this.cluster.putApplied(obj),
      delete: (name) => void this.cluster.remove({ ...ref, name }),
      clear: () => {
        for (const o of this.cluster.all(ref.kind)) this.cluster.remove({ ...ref, name: o.metadata.name ?? '' });
      },
    };
  }

  /** An operator's OperatorCondition, as it writes it. */
  putOperatorCondition(oc: OperatorCondition): void {
    this.cluster.put(oc);
  }

  /** Every status the reconciler wrote, as sent. */
  get statusWrites(): { name: string; status: ClusterExtensionStatus }[] {
    return this.cluster.statusApplied.filter((a) => a.obj.kind === 'ClusterExtension').map((a) => ({ name: a.obj.metadata.name ?? '', status: a.obj.status as ClusterExtensionStatus }));
  }

  /** Every BundleDeployment applied, as sent. */
  get applied(): BundleDeployment[] {
    return this.cluster.applied.filter((a) => a.obj.kind === 'BundleDeployment').map((a) => a.obj as BundleDeployment);
  }

  /** The BundleDeployments deleted, by name. */
  get deleted(): string[] {
    return this.cluster.log.filter((r) => r.verb === 'delete' && r.kind === 'BundleDeployment').map((r) => r.name);
  }

  /** Finalizer patches of the extension asked, a failed one too. */
  get finalizerPatches(): number {
    return this.cluster.log.filter((r) => r.verb === 'patch' && r.kind === 'ClusterExtension').length;
  }

  /** Makes BundleDeployment applies and deletes fail with `err`. */
  failWrites(err: Error): void {
    this.cluster.inject({ verb: ['apply', 'delete'], kind: 'BundleDeployment', error: () => err, times: Infinity });
  }

  /** Makes finalizer patches of the extension fail with `err`. */
  failPatches(err: Error): void {
    this.cluster.inject({ verb: 'patch', kind: 'ClusterExtension', error: () => err, times: Infinity });
  }

  view(): FakeView {
    return new FakeView(this.cluster.client());
  }

  /** The BundleDeployment controller's verdict on `name` at its current generation. */
  setDeploymentStatus(name: string, installed: { status: Condition['status']; reason: string; message: string }, progressing?: { status: Condition['status']; reason: string; message: string }): void {
    const bd = this.deployments.get(name);
    assert.ok(bd !== undefined, `BundleDeployment ${name} exists`);
    const generation = bd.metadata.generation ?? 1;
    const conditions: Condition[] = [{ type: 'Installed', ...installed, lastTransitionTime: T, observedGeneration: generation }];
    if (progressing !== undefined) conditions.push({ type: 'Progressing', ...progressing, lastTransitionTime: T, observedGeneration: generation });
    this.cluster.put({ ...bd, status: { observedGeneration: generation, conditions } });
  }
}

/** The real installed-state view (no caches: it lists the API server), with the writes and deletes it was told of. */
class FakeView implements InstalledStateView {
  readonly writes: string[] = [];
  deletes = 0;
  private readonly reader: CachedInstalledStateReader;

  constructor(client: FakeClient) {
    this.reader = new CachedInstalledStateReader({ client });
  }

  read(name: string): Promise<InstalledRead | undefined> {
    return this.reader.read(name);
  }

  wrote(kind: 'deployments' | 'extensions', obj: KubeObject | undefined): void {
    this.writes.push(`${kind}@${obj?.metadata.resourceVersion ?? ''}`);
    this.reader.wrote(kind, obj);
  }

  deleting(): void {
    this.deletes++;
    this.reader.deleting();
  }
}

function extension(over: { name?: string; spec?: Partial<ClusterExtension['spec']>; metadata?: Partial<ClusterExtension['metadata']> } = {}): ClusterExtension {
  const name = over.name ?? 'demo';
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name, uid: `uid-${name}`, finalizers: [FINALIZER_CLEANUP], ...over.metadata },
    spec: { namespace: 'demo-ns', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: name } }, ...over.spec },
  };
}

function served(name: string, config: DeclarativeConfig = emptyDeclarativeConfig(), labels: Record<string, string> = {}): ServedCatalog {
  return { name, priority: 0, labels, digest: `sha256:${name}`, config, stored: {} as StoredCatalog };
}

function chosen(pkg: string, version: string, over: Partial<ChosenBundle> = {}): ChosenBundle {
  return { name: `${pkg}.v${version}`, package: pkg, version, image: `registry.example/${pkg}@sha256:${version}`, catalog: 'ops', installed: false, dependsOn: [], provides: [], ...over };
}

function resolution(bundles: ChosenBundle[]): Resolution {
  return { bundles, warnings: [], notices: [], stats: { satCalls: 1, conflicts: 0, decisions: 0, propagations: 0, variables: bundles.length } };
}

interface Setup {
  cluster: World;
  view: FakeView;
  resolves: ResolveInput[];
  reconciler: ClusterExtensionReconciler;
}

interface SetupOptions {
  ce?: ClusterExtension;
  catalogs?: ServedCatalog[];
  loading?: string[];
  /** What the resolver answers; the real resolver when absent. */
  resolve?: (input: ResolveInput) => Resolution;
  ports?: Partial<ClusterExtensionPorts>;
}

function setup(o: SetupOptions = {}): Setup {
  const cluster = new World();
  const ce = o.ce ?? extension();
  cluster.extensions.set(ce.metadata.name ?? '', ce);
  const list = o.catalogs ?? [served('ops')];
  const catalogs: CatalogAccess = { served: () => list, get: (name) => list.find((c) => c.name === name), stillLoading: () => o.loading ?? [] };
  const view = cluster.view();
  const resolves: ResolveInput[] = [];
  const resolver = o.resolve;
  const reconciler = new ClusterExtensionReconciler({
    client: cluster.cluster.client(),
    ports: {
      catalogs,
      installed: view,
      clock: () => NOW,
      ...(resolver === undefined
        ? {}
        : {
            resolve: (input: ResolveInput) => {
              resolves.push(input);
              return resolver(input);
            },
          }),
      ...o.ports,
    },
  });
  return { cluster, view, resolves, reconciler };
}

const resolvesTo =
  (...bundles: ChosenBundle[]) =>
  (): Resolution =>
    resolution(bundles);

/** A reconciler as the manager makes it: `lock` around the installed state, caches holding the extension as the watch last saw it, resolving to demo at `version`. */
function withCaches(cluster: World, view: FakeView, lock: { withLock: <T>(fn: () => Promise<T>) => Promise<T> }, version: string): ClusterExtensionReconciler {
  const caches = {
    extensions: { get: (name: string) => cluster.extensions.get(name), list: () => [], waitForResourceVersion: () => Promise.resolve(true) },
    deployments: { get: () => undefined, list: () => [], waitForResourceVersion: () => Promise.resolve(true) },
  };
  const list = [served('ops')];
  const ports = { catalogs: { served: () => list, get: (name: string) => list.find((c) => c.name === name), stillLoading: () => [] }, installed: view, clock: () => NOW, resolve: resolvesTo(chosen('demo', version)) };
  return new ClusterExtensionReconciler({ client: cluster.cluster.client(), lock, caches, ports });
}

function lastStatus(cluster: World): ClusterExtensionStatus | undefined {
  return cluster.statusWrites.at(-1)?.status;
}

function condition(cluster: World, type: string): Condition | undefined {
  return lastStatus(cluster)?.conditions?.find((c) => c.type === type);
}

/** A BundleDeployment that installed `pkg` for `extensions` (the first requested it). */
function installedDeployment(name: string, pkg: string, version: string, extensions: string[], over: Partial<BundleDeployment['metadata']> = {}): BundleDeployment {
  const needs = Object.fromEntries(extensions.map((e, i) => [neededByLabel(e), i === 0 && e === pkg ? 'requested' : 'dependency']));
  return {
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: {
      name,
      generation: 1,
      creationTimestamp: T,
      // Its controller's: it uninstalls the bundle before the BundleDeployment goes.
      finalizers: [FINALIZER_CLEANUP],
      labels: { [LABEL_OWNER_KIND]: 'ClusterExtension', [LABEL_OWNER_NAME]: extensions[0] ?? 'gone', [LABEL_PACKAGE]: pkg, ...needs },
      annotations: { [ANNOTATION_BUNDLE_VERSION]: version },
      ...over,
    },
    spec: { source: { type: 'image', image: { ref: `registry.example/${pkg}@sha256:${version}` } }, format: 'registry+v1', installNamespace: 'demo-ns', serviceAccount: { name: 'installer' }, releaseName: name },
    status: { observedGeneration: 1, conditions: [{ type: 'Installed', status: 'True', reason: 'Succeeded', message: '', lastTransitionTime: T, observedGeneration: 1 }] },
  };
}

describe('ClusterExtension reconciler, step by step with fakes', () => {
  describe('status is written once per reconcile', () => {
    test('a first install: the BundleDeployment is created, and status is written exactly once; the same reconcile again writes nothing', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, 1, 'one status write per reconcile');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, 1, 'nothing changed: no second write');
      assert.equal(cluster.applied.length, 1, 'the unchanged BundleDeployment is not written again');
    });

    test('once the BundleDeployment is installed: one write saying so, then none while nothing changes', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: 'installed' });
      const before = cluster.statusWrites.length;
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(cluster.statusWrites.length, before + 1);
      await reconciler.reconcile(req, ctx);
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, before + 1);
    });

    test('only the installed state is read and changed under the lock: the finalizer is added before it is waited for, the status written after it is let go', async () => {
      const { cluster, view } = setup({ ce: extension({ metadata: { finalizers: [] } }) });
      const counts = (): string => `finalizer ${cluster.finalizerPatches}, applied ${cluster.applied.length}, status ${cluster.statusWrites.length}`;
      const seen: string[] = [];
      const lock = {
        withLock: async <T>(fn: () => Promise<T>): Promise<T> => {
          seen.push(`lock taken: ${counts()}`);
          try {
            return await fn();
          } finally {
            seen.push(`lock let go: ${counts()}`);
          }
        },
      };
      await withCaches(cluster, view, lock, '1.0.0').reconcile(req, ctx);
      assert.deepEqual(seen, ['lock taken: finalizer 1, applied 0, status 0', 'lock let go: finalizer 1, applied 1, status 0']);
      assert.equal(cluster.statusWrites.length, 1, 'the status, written after the lock');
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP]);
      // A reconcile that fails in the lock still says why in status, after it.
      cluster.failWrites(new KubeApiError(422, 'Invalid', 'refused'));
      cluster.extensions.set('demo', { ...(cluster.extensions.get('demo') as ClusterExtension), spec: { ...extension().spec, source: { sourceType: 'Catalog', catalog: { packageName: 'demo', version: '2.0.0' } } } });
      await assert.rejects(withCaches(cluster, view, lock, '2.0.0').reconcile(req, ctx));
      assert.equal(seen.at(-1), 'lock let go: finalizer 1, applied 1, status 1');
      assert.equal(cluster.statusWrites.length, 2);
      assert.match(JSON.stringify(cluster.statusWrites.at(-1)?.status.conditions), /refused/);
    });

    test('a finalizer patch refused before the lock (forbidden, not a conflict) does not escape: the locked reconcile tries again and says why in status', async () => {
      const { cluster, view } = setup({ ce: extension({ metadata: { finalizers: [] } }) });
      cluster.failPatches(new KubeApiError(403, 'Forbidden', 'clusterextensions.binnacle.dev "demo" is forbidden'));
      let locked = 0;
      const lock = { withLock: <T>(fn: () => Promise<T>): Promise<T> => { locked += 1; return fn(); } };
      await assert.rejects(withCaches(cluster, view, lock, '1.0.0').reconcile(req, ctx), /forbidden/);
      assert.equal(locked, 1, 'the lock was still taken');
      assert.equal(cluster.finalizerPatches, 2, 'tried before the lock, and again in it');
      assert.equal(cluster.statusWrites.length, 1, 'the refusal is said in status');
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /forbidden/);
      assert.equal(cluster.applied.length, 0);
    });

    test('an extension that is gone is not reconciled and nothing is written', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.extensions.clear();
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(cluster.statusWrites.length + cluster.applied.length + cluster.finalizerPatches, 0);
    });
  });

  describe('HandleFinalizer', () => {
    test('success: an extension without the cleanup finalizer gets it, its write is told to the view, and the reconcile goes on', async () => {
      const { cluster, view, reconciler } = setup({ ce: extension({ metadata: { finalizers: [] } }), resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP]);
      assert.equal(cluster.applied.length, 1, 'resolved and deployed in the same reconcile');
      assert.ok(view.writes.some((w) => w.startsWith('extensions@')), 'the view must see the finalizer write');
    });

    test('failure: the finalizer patch fails; the error is said in the one status write and thrown for backoff', async () => {
      const { cluster, reconciler } = setup({ ce: extension({ metadata: { finalizers: [] } }), resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.failPatches(new KubeApiError(409, 'Conflict', 'the object has been modified'));
      await assert.rejects(reconciler.reconcile(req, ctx), /the object has been modified/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
      assert.equal(condition(cluster, 'Progressing')?.message, 'the object has been modified');
      assert.equal(cluster.applied.length, 0);
    });

    test('deletion: the set is let go (its BundleDeployments deleted) and the extension waits; once they are gone the finalizer goes; no status is written', async () => {
      const ce = extension({ metadata: { deletionTimestamp: T } });
      const { cluster, view, reconciler } = setup({ ce, resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 2_000 });
      assert.deepEqual(cluster.deleted, ['demo']);
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP], 'held until its BundleDeployments are gone');
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 2_000 }, 'still being removed: wait');
      cluster.deployments.delete('demo');
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(cluster.extensions.get('demo'), undefined, 'its finalizer removed, the extension goes');
      assert.equal(cluster.statusWrites.length, 0);
      // The BundleDeployment's delete makes the view list the API server next; the extension's own
      // going does not (it is written after the lock, and nothing installed changes with it).
      assert.equal(view.deletes, 1);
    });

    test('deletion: a dependency another extension still needs stays, handed to it', async () => {
      const ce = extension({ metadata: { deletionTimestamp: T } });
      const { cluster, reconciler } = setup({ ce });
      cluster.extensions.set('other', extension({ name: 'other' }));
      cluster.deployments.set('demo-lib', installedDeployment('demo-lib', 'lib', '1.0.0', ['demo', 'other']));
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.deepEqual(cluster.deleted, []);
      const lib = cluster.deployments.get('demo-lib');
      assert.equal(lib?.metadata.labels?.[neededByLabel('demo')], undefined);
      assert.equal(lib?.metadata.labels?.[neededByLabel('other')], 'dependency');
      assert.equal(lib?.metadata.labels?.[LABEL_OWNER_NAME], 'other');
    });

    test('deletion failure: a BundleDeployment delete is refused; the extension keeps its finalizer, status says why, the error is thrown', async () => {
      const ce = extension({ metadata: { deletionTimestamp: T } });
      const { cluster, reconciler } = setup({ ce });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      cluster.failWrites(new KubeApiError(403, 'Forbidden', 'bundledeployments "demo" is forbidden'));
      await assert.rejects(reconciler.reconcile(req, ctx), /forbidden/);
      assert.deepEqual(cluster.extensions.get('demo')?.metadata.finalizers, [FINALIZER_CLEANUP]);
      assert.equal(cluster.statusWrites.length, 1);
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /forbidden/);
    });
  });

  describe('Validate', () => {
    test('failure: an invalid spec is Progressing=False InvalidSpec naming each field; nothing is resolved or written but status', async () => {
      const ce = extension({ spec: { namespace: '', serviceAccount: { name: '' } } });
      const { cluster, resolves, reconciler } = setup({ ce, resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.equal(await reconciler.reconcile(req, ctx), undefined, 'not retried: a spec change calls it back');
      const c = condition(cluster, 'Progressing');
      assert.equal(c?.status, 'False');
      assert.equal(c?.reason, 'InvalidSpec');
      assert.equal(c?.message, 'spec.namespace: required; spec.serviceAccount.name: required');
      assert.equal(c?.observedGeneration, 1);
      assert.equal(lastStatus(cluster)?.observedGeneration, 1);
      assert.equal(resolves.length, 0);
      assert.equal(cluster.applied.length, 0);
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure keeps what status said before (the installed bundle, the last resolution and history)', async () => {
      const previous: ClusterExtensionStatus = {
        install: { bundle: { name: 'demo.v1.0.0', version: '1.0.0', package: 'demo', image: 'i', catalog: 'ops' }, bundleDeployment: 'demo', namespace: 'demo-ns' },
        resolution: { bundles: [] },
        history: [{ time: T, reason: 'Initial', generation: 1, catalogs: [], bundles: [], outcome: 'Resolved' }],
      };
      const ce = extension({ spec: { namespace: '' }, metadata: { generation: 2 } });
      ce.status = previous;
      const { cluster, reconciler } = setup({ ce });
      await reconciler.reconcile(req, ctx);
      assert.deepEqual(lastStatus(cluster)?.install, previous.install);
      assert.deepEqual(lastStatus(cluster)?.history, previous.history);
      assert.equal(lastStatus(cluster)?.observedGeneration, 2);
    });
  });

  describe('Tidy', () => {
    test('success: a BundleDeployment no existing extension needs (left by a crash) is deleted', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('gone-lib', installedDeployment('gone-lib', 'lib', '1.0.0', ['gone']));
      await reconciler.reconcile(req, ctx);
      assert.deepEqual(cluster.deleted, ['gone-lib']);
      assert.equal(cluster.applied.length, 1, 'and the extension is still deployed');
    });

    test('failure: the delete fails; status says why, once, and the error is thrown', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('gone-lib', installedDeployment('gone-lib', 'lib', '1.0.0', ['gone']));
      cluster.failWrites(new KubeApiError(500, 'InternalError', 'etcdserver: request timed out'));
      await assert.rejects(reconciler.reconcile(req, ctx), /etcdserver/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
    });
  });

  describe('Catalogs', () => {
    test('failure: a ClusterCatalog the selector draws from is still loading; wait for it, nothing resolved', async () => {
      const { cluster, resolves, reconciler } = setup({ loading: ['certified', 'community'], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      assert.equal(condition(cluster, 'Progressing')?.message, 'waiting for ClusterCatalogs certified, community to serve content before resolving');
      assert.equal(resolves.length, 0);
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure: no catalog is serving', async () => {
      const { cluster, resolves, reconciler } = setup({ catalogs: [], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      const c = condition(cluster, 'Progressing');
      assert.equal(c?.reason, 'Retrying');
      assert.equal(c?.message, 'no ClusterCatalog matching the selector is serving content yet');
      assert.equal(resolves.length, 0);
    });

    test("an OLM v1 twin with its catalog gone keeps its installed bundle and still applies its other spec changes (operator-controller's fallback); another version asked for, or a binnacle.dev extension, waits", async () => {
      const twin = (over: Partial<ClusterExtension['spec']> = {}): ClusterExtension =>
        extension({ metadata: { labels: { 'binnacle.dev/olmv1-twin-of': 'uid-v1' }, generation: 2 }, spec: { install: { crdUpgradeSafety: 'None' }, ...over } });
      const kept = setup({ ce: twin(), catalogs: [], resolve: resolvesTo(chosen('demo', '2.0.0')) });
      kept.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await kept.reconciler.reconcile(req, ctx);
      assert.equal(kept.resolves.length, 0, 'nothing to resolve against: not resolved');
      assert.equal(kept.cluster.deployments.get('demo')?.spec.crdUpgradeSafety, 'None', 'the spec change reached the BundleDeployment');
      assert.equal(kept.cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.0.0', 'the installed version is kept');
      assert.notEqual(condition(kept.cluster, 'Progressing')?.message, 'no ClusterCatalog matching the selector is serving content yet');

      const other = setup({ ce: twin({ source: { sourceType: 'Catalog', catalog: { packageName: 'demo', version: '2.0.0' } } }), catalogs: [] });
      other.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await other.reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 }, 'another version cannot be had without a catalog');
      const own = setup({ ce: extension({ spec: { install: { crdUpgradeSafety: 'None' } } }), catalogs: [] });
      own.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await own.reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
    });

    test('failure: catalogs serve, but none matches the selector', async () => {
      const ce = extension({ spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo', selector: { matchLabels: { tier: 'gold' } } } } } });
      const { cluster, resolves, reconciler } = setup({ ce, catalogs: [served('ops', undefined, { tier: 'silver' })], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      assert.equal(condition(cluster, 'Progressing')?.message, 'no ClusterCatalog matching the selector is serving content yet');
      assert.equal(resolves.length, 0);
    });

    test('success: only the catalogs the selector draws from reach the resolver and the history', async () => {
      const ce = extension({ spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo', selector: { matchLabels: { tier: 'gold' } } } } } });
      const { cluster, resolves, reconciler } = setup({ ce, catalogs: [served('gold', undefined, { tier: 'gold' }), served('silver', undefined, { tier: 'silver' })], resolve: resolvesTo(chosen('demo', '1.0.0', { catalog: 'gold' })) });
      await reconciler.reconcile(req, ctx);
      assert.equal(resolves.length, 1);
      assert.deepEqual(lastStatus(cluster)?.history?.[0]?.catalogs, [{ name: 'gold', digest: 'sha256:gold' }]);
    });
  });

  describe('Resolve', () => {
    test('failure: nothing fits (the real resolver): the explanation is in status.resolution, the condition and the history, and it is looked at again later', async () => {
      const { cluster, reconciler } = setup();
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      const status = lastStatus(cluster);
      const explanation = status?.resolution?.explanation ?? '';
      assert.match(explanation, /no set of bundles satisfies the request/);
      assert.match(explanation, /demo/);
      assert.deepEqual(status?.resolution?.bundles, []);
      assert.equal(status?.resolution?.requestUnmatched, true, 'no bundle of the requested package fits: said as data (OLM v1 words it from this)');
      assert.equal(condition(cluster, 'Progressing')?.message, `resolution failed: ${explanation}`);
      assert.equal(condition(cluster, 'Installed')?.status, 'False');
      assert.equal(condition(cluster, 'Installed')?.reason, 'Failed');
      assert.deepEqual(
        status?.history?.map((h) => ({ time: h.time, reason: h.reason, outcome: h.outcome })),
        [{ time: '2026-11-26T12:00:00Z', reason: 'Initial', outcome: 'Failed' }],
        'recorded at the clock port\'s time',
      );
      assert.equal(cluster.applied.length, 0);
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure: the package is already installed by another extension; refused, naming it', async () => {
      const { cluster, resolves, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.extensions.set('first', extension({ name: 'first', spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo' } } } }));
      cluster.deployments.set('first-demo', installedDeployment('first-demo', 'demo', '1.0.0', ['first'], { labels: { [LABEL_OWNER_KIND]: 'ClusterExtension', [LABEL_OWNER_NAME]: 'first', [LABEL_PACKAGE]: 'demo', [neededByLabel('first')]: 'requested' } }));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
      assert.equal(
        lastStatus(cluster)?.resolution?.explanation,
        'package demo is already installed by extension first (BundleDeployment first-demo, version 1.0.0); a package is installed once per cluster',
      );
      assert.equal(lastStatus(cluster)?.resolution?.requestUnmatched, undefined, 'not a request nothing fits');
      assert.equal(resolves.length, 0);
      assert.equal(cluster.applied.length, 0);
    });

    describe("taking over another extension's dependency", () => {
      const verify = { provider: 'cosign' as const, secretRef: { namespace: 'prod', name: 'keys' } };
      /** `first` installed `app`, which needs `demo`: demo's BundleDeployment is first's dependency, verified or not. */
      const withDependency = (o: { verified: boolean; ce?: ClusterExtension }): ReturnType<typeof setup> => {
        const w = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')), ...(o.ce === undefined ? {} : { ce: o.ce }) });
        w.cluster.extensions.set('first', extension({ name: 'first', spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'app' } } } }));
        const dep = installedDeployment('first-demo', 'demo', '1.0.0', ['first'], { labels: { [LABEL_OWNER_KIND]: 'ClusterExtension', [LABEL_OWNER_NAME]: 'first', [LABEL_PACKAGE]: 'demo', [neededByLabel('first')]: 'dependency' } });
        if (o.verified) dep.spec.source.verify = verify;
        w.cluster.deployments.set('first-demo', dep);
        return w;
      };

      test("failure: an OLM v1 ClusterExtension's twin does not take it over (it would install as the other's installer, where it runs); nothing written", async () => {
        const { cluster, resolves, reconciler } = withDependency({ verified: false, ce: extension({ metadata: { labels: { [LABEL_OLMV1_TWIN_OF]: 'uid-v1' } } }) });
        assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
        assert.equal(lastStatus(cluster)?.resolution?.explanation, "package demo is installed as a dependency (BundleDeployment first-demo in namespace demo-ns, needed by first); an OLM v1 ClusterExtension does not take over another extension's install");
        assert.equal(resolves.length, 0);
        assert.equal(cluster.applied.length, 0);
      });

      test('failure: a take-over that would drop the signature policy its source is verified with is refused; repeating it, it is taken over', async () => {
        const refused = withDependency({ verified: true });
        assert.deepEqual(await refused.reconciler.reconcile(req, ctx), { requeueAfterMs: 60_000 });
        assert.match(lastStatus(refused.cluster)?.resolution?.explanation ?? '', /^package demo is installed as a dependency \(BundleDeployment first-demo in namespace demo-ns, needed by first\), its source verified with a signature policy; spec\.verify must repeat it/);
        assert.equal(refused.cluster.applied.length, 0);
        const same = withDependency({ verified: true, ce: extension({ spec: { verify } }) });
        await same.reconciler.reconcile(req, ctx);
        assert.equal(same.resolves.length, 1, 'resolved');
        assert.deepEqual(same.cluster.applied.map((b) => [b.metadata?.name, b.spec?.source?.verify]), [['first-demo', verify]], 'taken over in place, verified as before');
      });
    });

    test('failure: the cluster\'s facts cannot be read; said as a failed resolution and retried with backoff', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { clusterFacts: () => Promise.reject(new Error('the server is currently unable to handle the request')) } });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { failed: true });
      assert.equal(condition(cluster, 'Progressing')?.message, 'resolution failed: the server is currently unable to handle the request');
      assert.equal(lastStatus(cluster)?.resolution?.explanation, 'the server is currently unable to handle the request');
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('success: the request carries the spec, the cluster\'s facts and what is installed; only the package\'s own set is kept', async () => {
      const ce = extension({ spec: { source: { sourceType: 'Catalog', catalog: { packageName: 'demo', channels: ['stable'], version: '>=1.0.0', upgradeConstraintPolicy: 'SelfCertified' } } } });
      const { cluster, resolves, reconciler } = setup({
        ce,
        resolve: resolvesTo(chosen('lib', '2.0.0'), chosen('unrelated', '1.0.0'), chosen('demo', '1.0.0', { dependsOn: ['lib'] })),
        ports: { clusterFacts: () => Promise.resolve({ kubeVersion: 'v1.31.2' }) },
      });
      cluster.extensions.set('other', extension({ name: 'other' }));
      cluster.deployments.set('other', installedDeployment('other', 'other', '3.0.0', ['other']));
      await reconciler.reconcile(req, ctx);
      const input = resolves[0];
      assert.deepEqual(input?.requests, [{ package: 'demo', channels: ['stable'], versionRange: '>=1.0.0', upgradePolicy: 'SelfCertified', preferUpgrade: true }]);
      assert.deepEqual(input?.cluster, { kubeVersion: 'v1.31.2' });
      assert.deepEqual(input?.installed?.map((b) => `${b.package}@${b.version}`), ['other@3.0.0']);
      assert.deepEqual(lastStatus(cluster)?.resolution?.bundles.map((b) => b.name), ['lib.v2.0.0', 'demo.v1.0.0']);
      assert.deepEqual(cluster.applied.map((b) => b.metadata.name), ['demo-lib', 'demo'], 'dependencies first');
      assert.equal(lastStatus(cluster)?.history?.at(-1)?.outcome, 'Resolved');
    });
  });

  describe('CheckUpgradeable', () => {
    const upgraded = (): Setup => {
      const ce = extension();
      ce.status = {
        conditions: [{ type: 'Installed', status: 'True', reason: 'Succeeded', message: 'installed demo.v1.0.0', lastTransitionTime: T, observedGeneration: 1 }],
        resolution: { bundles: [{ name: 'demo.v1.0.0', package: 'demo', version: '1.0.0', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' }] },
      };
      const s = setup({ ce, resolve: resolvesTo(chosen('demo', '1.1.0')) });
      s.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      return s;
    };

    test('failure: the installed operator\'s OperatorCondition says Upgradeable=False; the upgrade waits, in its own words, and nothing is written but status', async () => {
      const { cluster, reconciler } = upgraded();
      cluster.putOperatorCondition({
        apiVersion: OPERATOR_CONDITION_API_VERSION,
        kind: OPERATOR_CONDITION_KIND,
        metadata: { name: 'demo.v1.0.0', namespace: 'demo-ns', labels: { [LABEL_OWNER_KIND]: 'BundleDeployment', [LABEL_OWNER_NAME]: 'demo' } },
        spec: { conditions: [{ type: 'Upgradeable', status: 'False', reason: 'Migrating', message: 'a storage migration is running', lastTransitionTime: T }] },
      });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 10_000 });
      const c = condition(cluster, 'Progressing');
      assert.equal(c?.reason, 'UpgradeBlocked');
      assert.match(c?.message ?? '', /upgrade of demo to demo\.v1\.1\.0 is held back: the operator \(OperatorCondition demo-ns\/demo\.v1\.0\.0\) says Upgradeable=False: a storage migration is running/);
      assert.equal(cluster.applied.length, 0, 'the BundleDeployment is not switched');
      assert.deepEqual(lastStatus(cluster)?.resolution?.bundles.map((b) => b.version), ['1.0.0'], 'status.resolution still says what is installed');
      assert.equal(condition(cluster, 'Installed')?.status, 'True');
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('success: Upgradeable=True (or no OperatorCondition) lets the upgrade through', async () => {
      const { cluster, reconciler } = upgraded();
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 1);
      assert.equal(cluster.applied[0]?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.1.0');
    });

    test('failure: the OperatorConditions cannot be read; status says why, once, and the error is thrown', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { upgradeBlockers: () => Promise.reject(new KubeApiError(503, 'ServiceUnavailable', 'apiserver is shutting down')) } });
      await assert.rejects(reconciler.reconcile(req, ctx), /shutting down/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.message, 'apiserver is shutting down');
      assert.equal(lastStatus(cluster)?.history?.at(-1)?.outcome, 'Resolved', 'what was learnt before the failure is kept');
      assert.equal(cluster.applied.length, 0);
    });
  });

  describe('Deploy', () => {
    test('success: a BundleDeployment is created for the resolution, with the extension\'s namespace, ServiceAccount, image and needs', async () => {
      const { cluster, view, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      const bd = cluster.applied[0];
      assert.equal(bd?.metadata.name, 'demo');
      assert.equal(bd?.metadata.labels?.[LABEL_PACKAGE], 'demo');
      assert.equal(bd?.metadata.labels?.[neededByLabel('demo')], 'requested');
      assert.equal(bd?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.0.0');
      assert.deepEqual(bd?.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name}/${r.uid}`), ['ClusterExtension/demo/uid-demo']);
      assert.equal(bd?.spec.source.image?.ref, 'registry.example/demo@sha256:1.0.0');
      assert.equal(bd?.spec.installNamespace, 'demo-ns');
      assert.deepEqual(bd?.spec.serviceAccount, { name: 'installer' });
      assert.ok(view.writes.some((w) => w.startsWith('deployments@')), 'the view must see the BundleDeployment write');
    });

    test('waiting: an earlier copy of the package is still being removed; nothing is written, and it looks again soon', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.deployments.set('old-demo', installedDeployment('old-demo', 'demo', '0.9.0', ['gone'], { deletionTimestamp: T }));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 2_000 });
      assert.equal(cluster.applied.length, 0);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Waiting');
      assert.equal(condition(cluster, 'Progressing')?.message, 'demo: waiting for BundleDeployment old-demo to be removed');
      assert.equal(condition(cluster, 'Installed')?.reason, 'Installing');
      assert.equal(cluster.statusWrites.length, 1);
    });

    test('failure: the BundleDeployment write is refused; status says why, once, and the error is thrown', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      cluster.failWrites(new KubeApiError(422, 'Invalid', 'BundleDeployment.binnacle.dev "demo" is invalid'));
      await assert.rejects(reconciler.reconcile(req, ctx), /is invalid/);
      assert.equal(cluster.statusWrites.length, 1);
      assert.equal(condition(cluster, 'Progressing')?.message, 'BundleDeployment.binnacle.dev "demo" is invalid');
    });
  });

  describe('Report', () => {
    test('installing: the new BundleDeployment has no verdict yet', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 30_000 });
      assert.equal(condition(cluster, 'Installed')?.reason, 'Installing');
      assert.equal(condition(cluster, 'Installed')?.message, 'installing demo.v1.0.0');
      assert.equal(condition(cluster, 'Progressing')?.message, 'waiting for demo.v1.0.0');
      assert.deepEqual(lastStatus(cluster)?.resolution?.bundles, [{ name: 'demo.v1.0.0', package: 'demo', version: '1.0.0', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' }]);
      assert.equal(lastStatus(cluster)?.install, undefined);
    });

    test('success: the BundleDeployment is installed; so is the extension, with status.install', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: '' });
      assert.equal(await reconciler.reconcile(req, ctx), undefined);
      assert.equal(condition(cluster, 'Installed')?.status, 'True');
      assert.equal(condition(cluster, 'Installed')?.message, 'installed demo.v1.0.0');
      assert.equal(condition(cluster, 'Progressing')?.status, 'False');
      assert.equal(condition(cluster, 'Deprecated')?.status, 'False');
      assert.deepEqual(lastStatus(cluster)?.install, {
        bundle: { name: 'demo.v1.0.0', version: '1.0.0', package: 'demo', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' },
        bundleDeployment: 'demo',
        namespace: 'demo-ns',
      });
    });

    test('failure: the BundleDeployment failing is reflected in the extension\'s status, in its own words', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      cluster.setDeploymentStatus('demo', { status: 'False', reason: 'Failed', message: 'pulling registry.example/demo@sha256:1.0.0: unauthorized' });
      assert.equal(await reconciler.reconcile(req, ctx), undefined, 'its own news calls the extension back');
      assert.equal(condition(cluster, 'Installed')?.reason, 'Failed');
      assert.equal(condition(cluster, 'Installed')?.message, 'demo.v1.0.0: pulling registry.example/demo@sha256:1.0.0: unauthorized');
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
      assert.equal(lastStatus(cluster)?.install, undefined);
    });

    test('a configuration the bundle refuses (OLM v1 rules, bundleConfig): Progressing=False/InvalidConfiguration in the BundleDeployment\'s words, terminal', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      const message = 'invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing';
      cluster.setDeploymentStatus('demo', { status: 'False', reason: 'InvalidConfiguration', message }, { status: 'False', reason: 'InvalidConfiguration', message });
      await reconciler.reconcile(req, ctx);
      assert.equal(condition(cluster, 'Installed')?.reason, 'Failed');
      assert.equal(condition(cluster, 'Installed')?.message, `demo.v1.0.0: ${message}`);
      assert.deepEqual([condition(cluster, 'Progressing')?.status, condition(cluster, 'Progressing')?.reason, condition(cluster, 'Progressing')?.message], ['False', 'InvalidConfiguration', message]);
    });

    // The BundleDeployment's words after an upgrade failed: Failed, or rolled back (Installed=True: the old revision runs).
    for (const [how, bdStatus, expected] of [
      ['failed', { status: 'False', reason: 'Failed', message: 'upgrade failed' }, /^demo\.v1\.1\.0: upgrade failed$/],
      ['rolled back', { status: 'True', reason: 'RolledBack', message: 'revision 3 failed (not healthy after 120 s); rolled back to revision 2 as revision 4' }, /^demo\.v1\.1\.0: revision 3 failed .*rolled back/],
    ] as const) {
      test(`an upgrade ${how}: Installed stays True and status.install on the old version (it runs); Progressing=Retrying says why the new one is not installed`, async () => {
        const ce = extension();
        ce.status = {
          conditions: [{ type: 'Installed', status: 'True', reason: 'Succeeded', message: 'installed demo.v1.0.0', lastTransitionTime: T, observedGeneration: 1 }],
          install: { bundle: { name: 'demo.v1.0.0', version: '1.0.0', package: 'demo', image: 'registry.example/demo@sha256:1.0.0', catalog: 'ops' }, bundleDeployment: 'demo', namespace: 'demo-ns' },
        };
        const { cluster, reconciler } = setup({ ce, resolve: resolvesTo(chosen('demo', '1.1.0')) });
        cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
        await reconciler.reconcile(req, ctx);
        cluster.setDeploymentStatus('demo', bdStatus);
        await reconciler.reconcile(req, ctx);
        assert.equal(condition(cluster, 'Installed')?.status, 'True');
        assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
        assert.match(condition(cluster, 'Progressing')?.message ?? '', expected);
        assert.equal(lastStatus(cluster)?.install?.bundle.version, '1.0.0', 'the extension does not claim 1.1.0');
      });
    }

    test('a verdict from the version before is not this version\'s', async () => {
      const { cluster, reconciler } = setup({ resolve: resolvesTo(chosen('demo', '1.1.0')) });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.deployments.get('demo')?.metadata.generation, 2, 'the spec changed: a new generation');
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Installing', 'Installed=True of generation 1 does not speak for 1.1.0');
    });

    test('deprecations the catalog declares for the package are reported', async () => {
      const config = emptyDeclarativeConfig();
      config.deprecations.push({ schema: 'olm.deprecations', package: 'demo', entries: [{ reference: { schema: 'olm.package' }, message: 'demo is end of life' }] });
      const { cluster, reconciler } = setup({ catalogs: [served('ops', config)], resolve: resolvesTo(chosen('demo', '1.0.0')) });
      await reconciler.reconcile(req, ctx);
      assert.equal(condition(cluster, 'Deprecated')?.message, 'demo is end of life');
      assert.equal(condition(cluster, 'PackageDeprecated')?.status, 'True');
      assert.equal(condition(cluster, 'BundleDeprecated')?.status, 'False');
    });
  });

  describe('Approve (issue 31 §1: upgrades approved from their plan)', () => {
    /** A planner whose plan digest follows the chosen bundles (as the real one's follows their digests and manifests). */
    function planner(calls: string[] = []): ClusterExtensionPorts['planChange'] {
      return ({ chosen: bundles }) => {
        calls.push(bundles.map((b) => b.name).join(','));
        const digest = `sha256:${bundles.map((b) => b.version).join('-')}`;
        return Promise.resolve({ digest, changes: bundles.map((b) => ({ name: b.name, package: b.package, to: b.version, ref: b.image })), objects: { create: 0, update: 1, delete: 0, unchanged: 3, changed: ['~ Deployment demo-ns/demo'] }, crdSafety: [], missingPermissions: [] });
      };
    }
    const manual = (over: { annotations?: Record<string, string>; spec?: Partial<ClusterExtension['spec']> } = {}): ClusterExtension =>
      extension({ spec: { upgradeApproval: 'Manual', ...over.spec }, metadata: over.annotations === undefined ? {} : { annotations: over.annotations } });
    /** Someone approves the plan: the annotation, written by their own hand. */
    const approve = (cluster: World, digest: string): void => {
      const ce = cluster.extensions.get('demo');
      assert.ok(ce !== undefined);
      cluster.cluster.put({ ...ce, metadata: { ...ce.metadata, annotations: { ...ce.metadata.annotations, [ANNOTATION_APPROVED_PLAN]: digest } } });
    };

    test('Manual: a newer bundle changes nothing; status shows the plan and its digest, and Installed stays True', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      assert.deepEqual(await reconciler.reconcile(req, ctx), { requeueAfterMs: 300_000 });
      assert.equal(cluster.applied.length, 0, 'no BundleDeployment is written');
      assert.equal(cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.0.0');
      const pending = lastStatus(cluster)?.pendingPlan;
      assert.equal(pending?.digest, 'sha256:1.1.0');
      assert.equal(pending?.since, NOW.toISOString());
      assert.deepEqual(pending?.objects?.changed, ['~ Deployment demo-ns/demo']);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'AwaitingApproval');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /the upgrade to demo\.v1\.1\.0 awaits approval of plan sha256:1\.1\.0 \(binnacle approve demo --digest sha256:1\.1\.0\)/);
      assert.notEqual(condition(cluster, 'Installed')?.status, 'False');
    });

    test('a re-poll with nothing new keeps the same plan (digest and time) and writes nothing', async () => {
      let minutes = 0;
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner(), clock: () => new Date(NOW.getTime() + minutes * 60_000) } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      minutes = 10;
      const writes = cluster.statusWrites.length;
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.statusWrites.length, writes, 'the same plan: no status write');
      assert.equal(lastStatus(cluster)?.pendingPlan?.since, NOW.toISOString());
    });

    test('approving the digest shown lets exactly that upgrade through, and the plan leaves status once it is applied', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      approve(cluster, 'sha256:1.1.0');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 1);
      assert.equal(cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.1.0');
      assert.equal(lastStatus(cluster)?.pendingPlan, undefined);
      cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: 'installed' });
      await reconciler.reconcile(req, ctx);
      assert.equal(condition(cluster, 'Installed')?.message, 'installed demo.v1.1.0');
    });

    test('a newer plan supersedes an unapproved one and says so; the approval of the superseded digest is not applied and says why', async () => {
      let offered = chosen('demo', '1.1.0');
      const { cluster, reconciler } = setup({ ce: manual(), resolve: () => resolution([offered]), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      offered = chosen('demo', '1.2.0'); // the catalog moved on before anyone approved
      await reconciler.reconcile(req, ctx);
      assert.equal(lastStatus(cluster)?.pendingPlan?.digest, 'sha256:1.2.0');
      assert.equal(lastStatus(cluster)?.pendingPlan?.supersedes, 'sha256:1.1.0');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /it supersedes plan sha256:1\.1\.0, which was not approved/);
      approve(cluster, 'sha256:1.1.0');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 0, 'the superseded plan is not applied, nor the newer one');
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /the approval of sha256:1\.1\.0 is not applied: that plan was superseded before it was applied/);
      approve(cluster, 'sha256:1.2.0');
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.deployments.get('demo')?.metadata.annotations?.[ANNOTATION_BUNDLE_VERSION], '1.2.0');
    });

    test('an approval naming no pending plan (a typo, an old one) lets nothing through and says why', async () => {
      const { cluster, reconciler } = setup({ ce: manual({ annotations: { [ANNOTATION_APPROVED_PLAN]: 'sha256:nope' } }), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 0);
      assert.match(condition(cluster, 'Progressing')?.message ?? '', /the approval of sha256:nope is not applied: it names no plan awaiting approval/);
    });

    test('a new dependency the upgrade brings waits too', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('lib', '1.0.0'), chosen('demo', '1.0.0', { dependsOn: ['lib'] })), ports: { planChange: planner() } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await reconciler.reconcile(req, ctx);
      assert.equal(cluster.applied.length, 0);
      assert.equal(lastStatus(cluster)?.pendingPlan?.digest, 'sha256:1.0.0-1.0.0');
    });

    test('Automatic (the default) and Manual with nothing new: no plan is made and nothing waits', async () => {
      const calls: string[] = [];
      const auto = setup({ resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: planner(calls) } });
      auto.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await auto.reconciler.reconcile(req, ctx);
      assert.equal(auto.cluster.applied.length, 1);
      const same = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { planChange: planner(calls) } });
      same.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await same.reconciler.reconcile(req, ctx);
      assert.deepEqual(calls, []);
      assert.equal(condition(same.cluster, 'Installed')?.status, 'True');
      assert.equal(lastStatus(same.cluster)?.pendingPlan, undefined);
    });

    test('a first install waits only when spec.install.approval is Manual; upgradeApproval alone does not hold it', async () => {
      const first = setup({ ce: extension({ spec: { install: { approval: 'Manual' } } }), resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { planChange: planner() } });
      await first.reconciler.reconcile(req, ctx);
      assert.equal(first.cluster.applied.length, 0);
      assert.equal(condition(first.cluster, 'Installed')?.reason, 'AwaitingApproval');
      assert.match(condition(first.cluster, 'Installed')?.message ?? '', /the install of demo\.v1\.0\.0 awaits approval of plan sha256:1\.0\.0/);
      approve(first.cluster, 'sha256:1.0.0');
      await first.reconciler.reconcile(req, ctx);
      assert.equal(first.cluster.applied.length, 1);
      const upgradesOnly = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.0.0')), ports: { planChange: planner() } });
      await upgradesOnly.reconciler.reconcile(req, ctx);
      assert.equal(upgradesOnly.cluster.applied.length, 1);
    });

    describe('an approval pins the digests its plan showed (issue 43 §4)', () => {
      const OLD = `sha256:${'a'.repeat(64)}`;
      const MOVED = `sha256:${'b'.repeat(64)}`;
      /** The registry as the planner and the reconciler see it: the tag points to `at.digest`. */
      const at = { digest: OLD };
      const tagged = chosen('demo', '1.1.0', { image: 'registry.example/demo:1.1.0' });
      /** A planner that pulls by tag, as the real one does: its plan's digest covers the image's digest. */
      const pulling: ClusterExtensionPorts['planChange'] = ({ chosen: bundles }) =>
        Promise.resolve({ digest: `sha256:plan-${at.digest.slice(7, 15)}`, changes: bundles.map((b) => ({ name: b.name, package: b.package, to: b.version, ref: b.image, digest: at.digest })), objects: { create: 0, update: 1, delete: 0, unchanged: 3, changed: [] }, crdSafety: [], missingPermissions: [] });

      /** demo 1.0.0 installed, 1.1.0 offered by tag while the tag points to OLD, its plan approved and applied. */
      async function approvedAtOld(): Promise<Setup> {
        at.digest = OLD;
        const s = setup({ ce: manual(), resolve: resolvesTo(tagged), ports: { planChange: pulling, resolveDigest: () => Promise.resolve(at.digest) } });
        s.cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
        await s.reconciler.reconcile(req, ctx);
        approve(s.cluster, `sha256:plan-${OLD.slice(7, 15)}`);
        await s.reconciler.reconcile(req, ctx);
        return s;
      }

      test('the BundleDeployment an approved plan makes names the image by the digest the plan showed, not the catalog tag', async () => {
        const { cluster } = await approvedAtOld();
        assert.equal(cluster.applied.length, 1);
        assert.equal(cluster.deployments.get('demo')?.spec.source.image?.ref, `registry.example/demo@${OLD}`);
      });

      test('a tag that moves after approval is a new plan awaiting approval; what the approval let through keeps running, pinned', async () => {
        const { cluster, reconciler } = await approvedAtOld();
        cluster.setDeploymentStatus('demo', { status: 'True', reason: 'Succeeded', message: 'installed' });
        // Nothing moved: the pinned BundleDeployment is left as it is, and no plan waits.
        await reconciler.reconcile(req, ctx);
        assert.equal(cluster.applied.length, 1, 'nothing new to write');
        assert.equal(lastStatus(cluster)?.pendingPlan, undefined);
        // Someone pushes other content under the same tag.
        at.digest = MOVED;
        await reconciler.reconcile(req, ctx);
        assert.equal(cluster.applied.length, 1, 'the moved tag is not installed under the old approval');
        assert.equal(cluster.deployments.get('demo')?.spec.source.image?.ref, `registry.example/demo@${OLD}`);
        assert.equal(lastStatus(cluster)?.pendingPlan?.digest, `sha256:plan-${MOVED.slice(7, 15)}`);
        assert.equal(condition(cluster, 'Progressing')?.reason, 'AwaitingApproval');
        approve(cluster, `sha256:plan-${MOVED.slice(7, 15)}`);
        await reconciler.reconcile(req, ctx);
        assert.equal(cluster.deployments.get('demo')?.spec.source.image?.ref, `registry.example/demo@${MOVED}`, 'approved: the new digest, pinned');
      });
    });

    test('failure: the plan cannot be made (the image cannot be pulled); nothing changes, status says why, retried with backoff', async () => {
      const { cluster, reconciler } = setup({ ce: manual(), resolve: resolvesTo(chosen('demo', '1.1.0')), ports: { planChange: () => Promise.reject(new Error('pull registry.example/demo: connection refused')) } });
      cluster.deployments.set('demo', installedDeployment('demo', 'demo', '1.0.0', ['demo']));
      await assert.rejects(reconciler.reconcile(req, ctx), /connection refused/);
      assert.equal(cluster.applied.length, 0);
      assert.equal(condition(cluster, 'Progressing')?.reason, 'Retrying');
    });
  });

  test('the default catalog access needs a registry: without one (or ports.catalogs) the reconciler is not made', () => {
    assert.throws(() => new ClusterExtensionReconciler({ client: new FakeCluster().client() }), /registry or ports\.catalogs/);
  });
});
