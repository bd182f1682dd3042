/**
 * Watching what releases installed (helm-operator's `watchDependentResources`, and the same for
 * BundleDeployments, as OLM v0 restores a changed operator Deployment): one informer per kind of
 * object the releases hold, started the first time a release applies one, filtered on the
 * server by the owner-kind label every applied object carries. A change to what the release
 * controls, or a deletion, re-queues the owner whose release holds the object (a Helm kind's
 * custom resource, a BundleDeployment), so drift is repaired within seconds rather than at the
 * next reconcile period.
 *
 * Status-only changes (a Deployment's replica counts) do not re-queue: they are not drift, and
 * reacting to them would reconcile on every rollout step. Neither do Binnacle's own writes (an
 * upgrade's patches come back as update events): an event whose managedFields changed only in
 * Binnacle's own field managers' entries is the release's apply, not drift. Measured at 100 CRs,
 * these were ~2 no-change reconciles a CR (a history list, gets and a dry run each).
 *
 * Nor does another writer's change that left Binnacle's applied fields alone (the Deployment
 * controller's `deployment.kubernetes.io/revision` annotation on every rollout, an annotation a
 * person adds): server-side apply moves a field to whoever changes or removes it, so a change to
 * anything the release applied shows as a change in Binnacle's own entry, and re-applying the
 * release would not touch the rest. Measured at 1,000 loki CRs, the rollouts after an upgrade
 * caused 1,644 reconciles that changed nothing. An object where Binnacle holds no entry cannot be
 * judged this way and still re-queues, and a write under Binnacle's manager name by someone else
 * is still repaired at the next reconcile period.
 *
 * An owner whose apply waits for an object to be deleted (preflight's OBJECT_TERMINATING: an
 * earlier owner's CRD still being cleaned up) is re-queued when that object's deletion is seen
 * (`waitFor`), not only the owner its labels name, which is often gone already. Only objects
 * these watches see can wake it: labelled with this owner kind, in the watched namespace, of a
 * kind the manager may watch. Whatever they miss (or a restart forgets) the owner's capped
 * retry finds.
 */
import type { Logger } from 'pino';
import { DRIFT_HANDOVER_MANAGER } from '../apply/drift-policy.js';
import { identityOf } from '../apply/phases.js';
import { HELM_RELEASE_NAME_ANNOTATION, HELM_RELEASE_NAMESPACE_ANNOTATION, OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../apply/ownership.js';
import { FIELD_MANAGER } from '../kube/client.js';
import { Informer, type ListWatcher } from '../kube/informer.js';
import { managedFieldsOf, objectKey, type KubeObject, type ObjectRef } from '../kube/types.js';
import { canonicalJson } from '../util/canonical-json.js';

export interface DependentWatchesOptions {
  client: ListWatcher;
  logger: Logger;
  /** The owner kind whose releases are watched (the owner-kind label's value). */
  ownerKind: string;
  /** The key of the owner holding an object; default a Helm kind's CR, from Helm's release annotations (`releaseKeyOf`). */
  keyOf?: (obj: KubeObject) => string | undefined;
  /** Namespaced dependents are watched in this namespace only (WATCH_NAMESPACE); all when absent. */
  namespace?: string;
  /** Re-queues the custom resource `namespace/name`. */
  enqueue: (key: string) => void;
  signal: AbortSignal;
  /**
   * Whether the watching identity may list and watch `ref`'s kind where its informer would
   * (`namespace`, or all when absent); assumed when not given. A kind it may not watch is not
   * watched (its drift is repaired at the owner's resync period) and is asked about again after
   * REFUSED_RECHECK_MS: a manager with narrow rights (install-self's) is not refused in a loop.
   */
  mayWatch?: (ref: ObjectRef, namespace: string | undefined) => Promise<boolean>;
}

/** How long a kind the identity may not watch goes unwatched before it is asked about again. */
const REFUSED_RECHECK_MS = 10 * 60_000;

/** What a change to `obj` may mean for its release: everything but status and bookkeeping. */
function desired(obj: KubeObject): string {
  const { status: _status, metadata, ...rest } = obj as KubeObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, generation: _g, ...meta } = metadata as KubeObject['metadata'] & { managedFields?: unknown; generation?: number };
  return canonicalJson({ ...rest, metadata: meta });
}

/**
 * The field managers Binnacle applies a release's objects with (server-side apply). Only their
 * Apply entries count: a plain patch or update from any Binnacle client is recorded as manager
 * `binnacle` (its user agent) with operation Update, and may be anyone's edit.
 */
const OWN_MANAGERS = new Set([FIELD_MANAGER, DRIFT_HANDOVER_MANAGER]);

/** Each managedFields entry by manager, operation and subresource, as canonical JSON (its time and fields). */
function managedEntries(obj: KubeObject): Map<string, { own: boolean; json: string }> {
  const entries = managedFieldsOf(obj).map(
    (e) => [`${e.manager ?? ''}|${e.operation ?? ''}|${e.subresource ?? ''}`, { own: OWN_MANAGERS.has(e.manager ?? '') && e.operation === 'Apply', json: canonicalJson(e) }] as const,
  );
  return new Map(entries);
}

/**
 * Was the change between two versions Binnacle's own write? Only when some managedFields entry
 * changed and every one that did is one of Binnacle's managers (a write records its manager's
 * entry, with the time of the change). No changed entry at all proves nothing: not ours.
 */
export function isOwnWrite(oldObj: KubeObject, newObj: KubeObject): boolean {
  const before = managedEntries(oldObj);
  const after = managedEntries(newObj);
  const changed = [...after].filter(([key, e]) => before.get(key)?.json !== e.json).map(([, e]) => e);
  changed.push(...[...before].filter(([key]) => !after.has(key)).map(([, e]) => e));
  return changed.length > 0 && changed.every((e) => e.own);
}

/**
 * Did another writer leave everything Binnacle applied as it was? Only when Binnacle holds an
 * entry and none of its entries changed: any change or removal of a field it applied moves that
 * field out of its entry.
 */
export function leftOwnFieldsAlone(oldObj: KubeObject, newObj: KubeObject): boolean {
  const before = managedEntries(oldObj);
  const after = managedEntries(newObj);
  const own = (entries: Map<string, { own: boolean; json: string }>): string[] =>
    [...entries].filter(([, e]) => e.own).map(([key, e]) => `${key} ${e.json}`).sort();
  const ownBefore = own(before);
  return ownBefore.length > 0 && ownBefore.join('\n') === own(after).join('\n');
}

/** Did a dependent change in a way its release controls, by someone other than Binnacle? */
export function isDependentChange(oldObj: KubeObject, newObj: KubeObject): boolean {
  if (oldObj.metadata.resourceVersion === newObj.metadata.resourceVersion) return false; // a resync
  // Status-only changes (the many of a rollout) stop here; only a change of what the chart controls is looked at for whose it was.
  if (desired(oldObj) === desired(newObj)) return false;
  return !isOwnWrite(oldObj, newObj) && !leftOwnFieldsAlone(oldObj, newObj);
}

/** The custom resource whose release holds `obj`, from Helm's release annotations. */
export function releaseKeyOf(obj: KubeObject): string | undefined {
  const annotations = obj.metadata.annotations ?? {};
  const name = annotations[HELM_RELEASE_NAME_ANNOTATION];
  const namespace = annotations[HELM_RELEASE_NAMESPACE_ANNOTATION];
  if (name === undefined || name === '' || namespace === undefined) return undefined;
  return objectKey({ name, namespace });
}

/** The cluster-scoped owner (a BundleDeployment) whose release holds `obj`, from its owner-name label. */
export function ownerNameKeyOf(obj: KubeObject): string | undefined {
  const name = obj.metadata.labels?.[OWNER_NAME_LABEL];
  return name === undefined || name === '' ? undefined : name;
}

function isNamespaced(ref: ObjectRef): boolean {
  return ref.namespace !== undefined && ref.namespace !== '';
}

/** One informer per kind and scope. */
function informerKey(ref: ObjectRef): string {
  return `${ref.apiVersion}|${ref.kind}|${isNamespaced(ref) ? 'ns' : 'cluster'}`;
}

export class DependentWatches {
  private readonly informers = new Map<string, { informer: Informer; done: Promise<void> }>();
  /** Kinds being asked about (undefined) or refused (until when they are asked again). */
  private readonly asked = new Map<string, number | undefined>();
  /** Owners waiting for an object to be deleted, by the object's identity (`identityOf`: group, kind, namespace, name). */
  private readonly waiters = new Map<string, Set<string>>();
  /** What each waiting owner waits for, by identity (replaced at each `waitFor`). */
  private readonly waits = new Map<string, string[]>();

  constructor(private readonly o: DependentWatchesOptions) {}

  /** Watch the kinds of `refs` (the objects a release applied), starting informers for new ones. */
  observe(refs: readonly ObjectRef[]): void {
    for (const ref of refs) {
      const key = informerKey(ref);
      if (this.informers.has(key) || this.o.signal.aborted) continue;
      const namespace = isNamespaced(ref) && this.o.namespace !== undefined && this.o.namespace !== '' ? this.o.namespace : undefined;
      if (this.o.mayWatch === undefined) {
        this.start(ref, key, namespace);
        continue;
      }
      if (this.asked.has(key) && (this.asked.get(key) ?? Infinity) > Date.now()) continue;
      this.asked.set(key, undefined);
      this.o.mayWatch(ref, namespace).then(
        (may) => {
          if (may) {
            this.asked.delete(key);
            this.start(ref, key, namespace);
            return;
          }
          this.asked.set(key, Date.now() + REFUSED_RECHECK_MS);
          this.o.logger.info({ kind: `${ref.apiVersion} ${ref.kind}`, namespace: namespace ?? 'all' }, 'not watching what releases installed of this kind: the manager may not list and watch it (drift is repaired at the resync period)');
        },
        (err: unknown) => {
          // Not known: asked again at the next apply of the kind.
          this.asked.delete(key);
          this.o.logger.warn({ kind: `${ref.apiVersion} ${ref.kind}`, err: err instanceof Error ? err.message : String(err) }, 'could not ask whether the manager may watch this kind');
        },
      );
    }
  }

  /**
   * The owner `owner` (a queue key) waits for `refs` to be deleted (none: for nothing), replacing
   * what it waited for before: the deletion of any re-queues it, once. Their kinds are watched
   * from now on, as if the owner had applied them.
   */
  waitFor(owner: string, refs: readonly ObjectRef[]): void {
    for (const id of this.waits.get(owner) ?? []) {
      const owners = this.waiters.get(id);
      owners?.delete(owner);
      if (owners?.size === 0) this.waiters.delete(id);
    }
    this.waits.delete(owner);
    if (refs.length === 0) return;
    const ids = [...new Set(refs.map((r) => identityOf(r)))];
    this.waits.set(owner, ids);
    for (const id of ids) {
      const owners = this.waiters.get(id) ?? new Set<string>();
      owners.add(owner);
      this.waiters.set(id, owners);
    }
    this.observe(refs);
  }

  /** The owners waiting for `obj`, which is gone: no longer waiting for it. */
  private takeWaiters(obj: KubeObject): string[] {
    const id = identityOf(obj);
    const owners = [...(this.waiters.get(id) ?? [])];
    this.waiters.delete(id);
    for (const owner of owners) {
      const left = (this.waits.get(owner) ?? []).filter((w) => w !== id);
      if (left.length === 0) this.waits.delete(owner);
      else this.waits.set(owner, left);
    }
    return owners;
  }

  /** Owners waiting for an object to be deleted, each with what it waits for (`identityOf`); for tests and diagnostics. */
  waiting(): Map<string, readonly string[]> {
    return new Map(this.waits);
  }

  private start(ref: ObjectRef, key: string, namespace: string | undefined): void {
    if (this.informers.has(key) || this.o.signal.aborted) return;
    const informer = new Informer(this.o.client, ref.apiVersion, ref.kind, {
      logger: this.o.logger,
      labelSelector: `${OWNER_KIND_LABEL}=${this.o.ownerKind}`,
      ...(namespace !== undefined ? { namespace } : {}),
    });
    const keyOf = this.o.keyOf ?? releaseKeyOf;
    const requeue = (obj: KubeObject): void => {
      const owner = keyOf(obj);
      if (owner !== undefined) this.o.enqueue(owner);
    };
    informer.addHandlers({
      update: (oldObj, newObj) => {
        if (isDependentChange(oldObj, newObj)) requeue(newObj);
      },
      delete: (obj) => {
        requeue(obj);
        for (const owner of this.takeWaiters(obj)) this.o.enqueue(owner);
      },
    });
    this.informers.set(key, { informer, done: informer.run(this.o.signal) });
  }

  /**
   * `ref` as its kind's informer holds it, once that informer has listed (the release's
   * `ApplyRequest.watched`); undefined when no informer of its kind has, its watch is failing
   * (the copy may be stale), or it holds no such object (not labelled as this kind's, or not
   * there): the caller reads it instead.
   */
  cached(ref: ObjectRef): KubeObject | undefined {
    const watch = this.informers.get(informerKey(ref));
    if (watch === undefined || !watch.informer.isWatching) return undefined;
    return watch.informer.current(objectKey(ref));
  }

  /** The kinds watched, as `apiVersion kind`. */
  watched(): string[] {
    return [...this.informers.values()].map(({ informer }) => `${informer.apiVersion} ${informer.kind}`).sort();
  }

  async stopped(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.done));
  }
}
