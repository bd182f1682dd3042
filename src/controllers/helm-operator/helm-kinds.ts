/**
 * Running Helm-operator kinds: for each kind a chart serves, an informer on its custom
 * resources and a controller whose reconciler is the Helm release reconciler. Used by the
 * HelmOperator controller (kinds come and go as HelmOperators change) and by
 * `binnacle helm-operator run` (kinds from a watches.yaml).
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { ManagerClient } from '../../kube/ports.js';
import { Controller, specOrMetadataChanged } from '../../kube/controller.js';
import { Informer } from '../../kube/informer.js';
import type { ControllerMetrics, ResourceCreatedMetric } from '../../kube/metrics.js';
import { objectKey, type KubeObject } from '../../kube/types.js';
import { DEFAULT_HELM_RECONCILES, dryRunLooksUp } from './watches.js';
import { mayI } from '../../kube/access-review.js';
import { DependentWatches } from '../dependents.js';
import { HelmReleaseReconciler, UNINSTALL_FINALIZER, type HelmKind } from './helm-release.js';
import type { ReleaseEngineOptions } from '../release-engine.js';

export interface RunningKindOptions {
  client: ManagerClient;
  logger: Logger;
  /** The trusted release records and the engine's settings every CR's release uses. */
  engine: ReleaseEngineOptions;
  metrics?: ControllerMetrics;
  /** How long a release's hooks may run; rollouts are not waited for (helm-operator's contract, helm-release.ts). */
  healthTimeoutMs?: number;
  /** Label selector for the CRs this kind serves. */
  selector?: string;
  /** Serve only the CRs of this namespace (WATCH_NAMESPACE); every namespace when absent. */
  namespace?: string;
  maxConcurrentReconciles?: number;
  /** operator-lib's resource_created_at_seconds, kept for every CR the informer holds. */
  createdMetric?: ResourceCreatedMetric;
}

export interface RunningKind {
  /** Look at every CR of the kind again (its chart changed). */
  enqueueAll(): void;
  stop(): Promise<void>;
  /** Resolves once the informer has listed the CRs. */
  synced: Promise<void>;
}

/**
 * A CR change worth a reconcile: its spec or metadata changed, except its uninstall finalizer
 * added, which the reconcile adding it goes on from (a second, full reconcile of every new CR
 * re-applied its release for nothing; helm-operator's predicates ignore finalizers too).
 */
export function helmCrChanged<T extends KubeObject>(oldObj: T, newObj: T): boolean {
  if (!specOrMetadataChanged(oldObj, newObj)) return false;
  if (oldObj === newObj) return true;
  const before = oldObj.metadata.finalizers ?? [];
  const after = newObj.metadata.finalizers ?? [];
  const onlyFinalizerAdded = !before.includes(UNINSTALL_FINALIZER) && JSON.stringify([...before, UNINSTALL_FINALIZER].sort()) === JSON.stringify([...after].sort());
  if (!onlyFinalizerAdded) return true;
  const without = (o: T): T => ({ ...o, metadata: { ...o.metadata, finalizers: [] } });
  return specOrMetadataChanged(without(oldObj), without(newObj));
}

export function kindKey(k: Pick<HelmKind, 'group' | 'version' | 'kind'>): string {
  return `${k.kind}.${k.version}.${k.group}`;
}

export function runHelmKind(kind: HelmKind, o: RunningKindOptions): RunningKind {
  const apiVersion = kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
  if (kind.dryRunOption !== undefined) {
    o.logger.info(
      { kind: kind.kind, dryRunOption: kind.dryRunOption },
      dryRunLooksUp(kind.dryRunOption)
        ? 'dryRunOption: upgrades are decided from the chart and values, not a dry-run diff; the release is rendered with lookup against the cluster, so a change only lookup sees makes no upgrade until the CR or chart changes'
        : 'dryRunOption: upgrades are decided from the chart and values, not a dry-run diff, so a chart using lookup is not upgraded on every reconcile as a client-side diff would; the release is rendered with lookup against the cluster, as every mode installs it',
    );
  }
  const stop = new AbortController();
  // One listener per informer: the kind's own and one per kind of dependent resource.
  setMaxListeners(0, stop.signal);
  const informer = new Informer(o.client, apiVersion, kind.kind, {
    logger: o.logger,
    resyncMs: kind.reconcilePeriodMs ?? 60_000,
    ...(o.selector === undefined ? {} : { labelSelector: o.selector }),
    ...(o.namespace === undefined || o.namespace === '' ? {} : { namespace: o.namespace }),
  });
  const created = o.createdMetric;
  if (created !== undefined) informer.addHandlers({ add: (cr) => created.set(cr), update: (_old, cr) => created.set(cr), delete: (cr) => created.delete(cr) });
  // Set below: the dependents re-queue through the controller, which is told of them by its reconciler.
  let dependents: DependentWatches | undefined;
  const controller = new Controller({
    name: `helm-${kind.kind.toLowerCase()}${o.namespace === undefined || o.namespace === '' ? '' : `-${o.namespace}`}`,
    logger: o.logger,
    workers: o.maxConcurrentReconciles ?? DEFAULT_HELM_RECONCILES,
    reconciler: new HelmReleaseReconciler({
      client: o.client,
      kind,
      engine: o.engine,
      ...(o.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: o.healthTimeoutMs }),
      onApplied: (refs) => dependents?.observe(refs),
      // A version too deep to read is not current: the reconciler reads it live and says why.
      cached: (namespace, name) => informer.current(objectKey({ namespace, name })),
      // A resync judges drift from what the dependent watches hold instead of reading every object.
      watched: (ref) => dependents?.cached(ref),
    }),
    ...(o.metrics === undefined ? {} : { metrics: o.metrics }),
  }).watch(informer, undefined, helmCrChanged);
  // A refused version still gets a reconcile, which reports it in status.
  informer.addHandlers({ refused: (stub) => controller.enqueue(objectKey(stub.metadata)) });
  if (kind.watchDependentResources !== false) {
    dependents = new DependentWatches({
      client: o.client,
      logger: o.logger,
      ownerKind: kind.kind,
      ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
      mayWatch: (ref, namespace) => mayI(o.client, ['list', 'watch'], ref.apiVersion, ref.kind, namespace),
      // Only the CRs this kind serves: another kind of the same name elsewhere is not ours.
      enqueue: (key) => {
        if (informer.get(key) !== undefined) controller.enqueue(key);
      },
      signal: stop.signal,
    });
  }
  const done = Promise.all([informer.run(stop.signal), controller.run(stop.signal)]);
  return {
    enqueueAll: () => {
      for (const cr of informer.list()) controller.enqueue(objectKey(cr.metadata));
    },
    stop: async () => {
      stop.abort();
      await Promise.all([done, dependents?.stopped()]);
    },
    synced: informer.waitForSync(),
  };
}
