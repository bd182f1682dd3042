/**
 * Watching a Helm kind's dependent resources (helm-operator's `watchDependentResources`): one
 * informer per kind of object the releases hold, started the first time a release applies
 * one, filtered on the server by the owner-kind label every applied object carries. A change
 * to what the chart controls, or a deletion, re-queues the custom resource whose release holds
 * the object, so drift is repaired at once rather than at the next reconcile period.
 *
 * Status-only changes (a Deployment's replica counts, the controller's revision annotation
 * aside) do not re-queue: they are not drift, and reacting to them would reconcile on every
 * rollout step.
 */
import type { Logger } from 'pino';
import { HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION, OWNER_KIND_LABEL } from '../apply/ownership.js';
import type { KubeClient } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import { objectKey, type KubeObject, type ObjectRef } from '../kube/types.js';
import { canonicalJson } from '../util/canonical-json.js';

export interface DependentWatchesOptions {
  client: KubeClient;
  logger: Logger;
  /** The Helm kind whose releases are watched (the owner-kind label's value). */
  ownerKind: string;
  /** Namespaced dependents are watched in this namespace only (WATCH_NAMESPACE); all when absent. */
  namespace?: string;
  /** Re-queues the custom resource `namespace/name`. */
  enqueue: (key: string) => void;
  signal: AbortSignal;
}

/** What a change to `obj` may mean for its release: everything but status and bookkeeping. */
function desired(obj: KubeObject): string {
  const { status: _status, metadata, ...rest } = obj as KubeObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...meta } = metadata as KubeObject['metadata'] & { managedFields?: unknown; generation?: number };
  return canonicalJson({ ...rest, metadata: meta });
}

/** Did a dependent change in a way its release controls? */
export function isDependentChange(oldObj: KubeObject, newObj: KubeObject): boolean {
  if (oldObj.metadata.resourceVersion === newObj.metadata.resourceVersion) return false; // a resync
  return desired(oldObj) !== desired(newObj);
}

/** The custom resource whose release holds `obj`, from Helm's release annotations. */
export function releaseKeyOf(obj: KubeObject): string | undefined {
  const annotations = obj.metadata.annotations ?? {};
  const name = annotations[HELM_RELEASE_NAME_ANNOTATION];
  const namespace = annotations[HELM_RELEASE_NAMESPACE_ANNOTATION];
  if (name === undefined || name === '' || namespace === undefined) return undefined;
  return objectKey({ name, namespace });
}

export class DependentWatches {
  private readonly informers = new Map<string, { informer: Informer; done: Promise<void> }>();

  constructor(private readonly o: DependentWatchesOptions) {}

  /** Watch the kinds of `refs` (the objects a release applied), starting informers for new ones. */
  observe(refs: readonly ObjectRef[]): void {
    for (const ref of refs) {
      const namespaced = ref.namespace !== undefined && ref.namespace !== '';
      const key = `${ref.apiVersion}|${ref.kind}|${namespaced ? 'ns' : 'cluster'}`;
      if (this.informers.has(key) || this.o.signal.aborted) continue;
      const informer = new Informer(this.o.client, ref.apiVersion, ref.kind, {
        logger: this.o.logger,
        labelSelector: `${OWNER_KIND_LABEL}=${this.o.ownerKind}`,
        ...(namespaced && this.o.namespace !== undefined && this.o.namespace !== '' ? { namespace: this.o.namespace } : {}),
      });
      const requeue = (obj: KubeObject): void => {
        const cr = releaseKeyOf(obj);
        if (cr !== undefined) this.o.enqueue(cr);
      };
      informer.addHandlers({
        update: (oldObj, newObj) => {
          if (isDependentChange(oldObj, newObj)) requeue(newObj);
        },
        delete: requeue,
      });
      this.informers.set(key, { informer, done: informer.run(this.o.signal) });
    }
  }

  /** The kinds watched, as `apiVersion kind`. */
  watched(): string[] {
    return [...this.informers.values()].map(({ informer }) => `${informer.apiVersion} ${informer.kind}`).sort();
  }

  async stopped(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.done));
  }
}
