/** The ClusterExtension reconciler's tests' world: the fake cluster, the installed-state view, and builders of extensions, catalogs and resolutions. */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { OPERATOR_CONDITION_CRD, type OperatorCondition } from '../api/operator-condition.js';
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
import type { StoredCatalog } from '../catalog-store/index.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { neededByLabel } from '../installed/index.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import type { Condition, KubeObject } from '../kube/types.js';
import type { ChosenBundle, Resolution, ResolveInput } from '../resolve/index.js';
import type { ServedCatalog } from './catalog-registry.js';
import { ClusterExtensionReconciler, type CatalogAccess, type ClusterExtensionPorts, type InstalledStateView } from './cluster-extension.js';
import { CachedInstalledStateReader, type InstalledRead } from './installed-state-reader.js';

export const logger = pino({ level: 'silent' });
export const ctx = { logger, signal: new AbortController().signal };
export const req = { key: 'demo', name: 'demo' };
export const NOW = new Date('2026-11-26T12:00:00Z');
export const T = '2026-01-01T00:00:00Z';

export const CE_REF = { apiVersion: API_VERSION, kind: 'ClusterExtension' };
export const BD_REF = { apiVersion: API_VERSION, kind: 'BundleDeployment' };

/** Objects of one kind in the cluster, by name: read as they are, written by another's hand. */
export interface Named<T extends KubeObject> {
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
export class World {
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
export class FakeView implements InstalledStateView {
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

export function extension(over: { name?: string; spec?: Partial<ClusterExtension['spec']>; metadata?: Partial<ClusterExtension['metadata']> } = {}): ClusterExtension {
  const name = over.name ?? 'demo';
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name, uid: `uid-${name}`, finalizers: [FINALIZER_CLEANUP], ...over.metadata },
    spec: { namespace: 'demo-ns', serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: name } }, ...over.spec },
  };
}

export function served(name: string, config: DeclarativeConfig = emptyDeclarativeConfig(), labels: Record<string, string> = {}): ServedCatalog {
  return { name, priority: 0, labels, digest: `sha256:${name}`, config, stored: {} as StoredCatalog };
}

export function chosen(pkg: string, version: string, over: Partial<ChosenBundle> = {}): ChosenBundle {
  return { name: `${pkg}.v${version}`, package: pkg, version, image: `registry.example/${pkg}@sha256:${version}`, catalog: 'ops', installed: false, dependsOn: [], provides: [], ...over };
}

export function resolution(bundles: ChosenBundle[]): Resolution {
  return { bundles, warnings: [], notices: [], stats: { satCalls: 1, conflicts: 0, decisions: 0, propagations: 0, variables: bundles.length } };
}

export interface Setup {
  cluster: World;
  view: FakeView;
  resolves: ResolveInput[];
  reconciler: ClusterExtensionReconciler;
}

export interface SetupOptions {
  ce?: ClusterExtension;
  catalogs?: ServedCatalog[];
  loading?: string[];
  /** What the resolver answers; the real resolver when absent. */
  resolve?: (input: ResolveInput) => Resolution;
  ports?: Partial<ClusterExtensionPorts>;
}

export function setup(o: SetupOptions = {}): Setup {
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

export const resolvesTo =
  (...bundles: ChosenBundle[]) =>
  (): Resolution =>
    resolution(bundles);

/** A reconciler as the manager makes it: `lock` around the installed state, caches holding the extension as the watch last saw it, resolving to demo at `version`. */
export function withCaches(cluster: World, view: FakeView, lock: { withLock: <T>(fn: () => Promise<T>) => Promise<T> }, version: string): ClusterExtensionReconciler {
  const caches = {
    extensions: { get: (name: string) => cluster.extensions.get(name), list: () => [], waitForResourceVersion: () => Promise.resolve(true) },
    deployments: { get: () => undefined, list: () => [], waitForResourceVersion: () => Promise.resolve(true) },
  };
  const list = [served('ops')];
  const ports = { catalogs: { served: () => list, get: (name: string) => list.find((c) => c.name === name), stillLoading: () => [] }, installed: view, clock: () => NOW, resolve: resolvesTo(chosen('demo', version)) };
  return new ClusterExtensionReconciler({ client: cluster.cluster.client(), lock, caches, ports });
}

export function lastStatus(cluster: World): ClusterExtensionStatus | undefined {
  return cluster.statusWrites.at(-1)?.status;
}

export function condition(cluster: World, type: string): Condition | undefined {
  return lastStatus(cluster)?.conditions?.find((c) => c.type === type);
}

/** A BundleDeployment that installed `pkg` for `extensions` (the first requested it). */
export function installedDeployment(name: string, pkg: string, version: string, extensions: string[], over: Partial<BundleDeployment['metadata']> = {}): BundleDeployment {
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

