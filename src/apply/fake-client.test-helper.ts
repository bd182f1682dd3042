/**
 * An in-memory stand-in for the slice of KubeClient the applier uses, for unit tests:
 * objects in a map, server-side apply as replace, label-selector lists, and hooks to make a
 * kind unknown or an apply fail. Workloads report healthy status unless told otherwise.
 */
import { KubeApiError } from '../kube/errors.js';
import { describeRef, parseApiVersion, type KubeList, type KubeObject, type ObjectRef } from '../kube/types.js';
import { FIELD_MANAGER, type ApplyOptions, type DeleteOptions, type ResourceInfo } from '../kube/client.js';
import type { ApplierClient } from './applier.js';

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'APIService']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `patch` over `base`, maps merged key by key (lists replaced): a partial apply by another field manager. */
function merged(base: unknown, patch: unknown): unknown {
  if (!isRecord(base) || !isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = merged(base[k], v);
  return out;
}

export class FakeCluster {
  readonly objects = new Map<string, KubeObject>();
  /** Calls that changed something, in order: `apply Kind ns/name`, `delete …`, `create …`, `update …`. */
  readonly writes: string[] = [];
  /** Kinds the server does not serve (e.g. a custom resource whose CRD is missing). */
  readonly unknownKinds = new Set<string>();
  /** Applies of objects whose name is here fail with 422 Invalid. */
  readonly rejectNames = new Set<string>();
  /** Real (not dry-run) applies of objects whose name is here fail with 503 ServiceUnavailable (an API server restarting mid-apply). */
  readonly unavailableNames = new Set<string>();
  /** Deployments named here never become available. */
  readonly unhealthyNames = new Set<string>();
  /** CRDs (by name) whose conditions the server reports instead of Established=True. */
  readonly crdConditions = new Map<string, { type: string; status: string; reason?: string; message?: string }[]>();
  /** Applies that change an existing object whose name is here fail with 422 "field is immutable" (dry run too). */
  readonly immutableNames = new Set<string>();
  /** Every real apply, in order: the object as sent, and the field manager when one was named. */
  readonly applied: { obj: KubeObject; fieldManager?: string }[] = [];
  /** Deletes of objects whose name is here leave them Terminating, held by a finalizer. */
  readonly heldNames = new Set<string>();
  /** Every request as the API server would count it: `get Kind`, `list Kind`, `dry-run Kind`, `apply Kind`, `create Kind`, `update Kind`, `delete Kind`. */
  readonly requests: string[] = [];
  private rv = 1;

  key(ref: { apiVersion: string; kind: string; name?: string | undefined; namespace?: string | undefined }): string {
    return `${parseApiVersion(ref.apiVersion).group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name ?? ''}`;
  }

  put(obj: KubeObject): void {
    this.objects.set(this.key({ ...obj, ...obj.metadata }), obj);
  }

  get(ref: ObjectRef): KubeObject | undefined {
    return this.objects.get(this.key(ref));
  }

  client(): ApplierClient {
    const resourceFor = (apiVersion: string, kind: string): Promise<ResourceInfo> => {
      if (this.unknownKinds.has(kind)) return Promise.reject(new KubeApiError(404, 'NotFound', `no ${kind} in ${apiVersion}`));
      return Promise.resolve({ name: `${kind.toLowerCase()}s`, namespaced: !CLUSTER_SCOPED.has(kind), kind, verbs: [] });
    };
    const find = async (ref: ObjectRef): Promise<KubeObject | undefined> => {
      this.requests.push(`get ${ref.kind}`);
      await resourceFor(ref.apiVersion, ref.kind);
      return this.get(ref);
    };
    const withStatus = (obj: KubeObject): KubeObject => {
      const generation = 1;
      if (obj.kind === 'Deployment') {
        const available = this.unhealthyNames.has(obj.metadata.name ?? '') ? 0 : 1;
        return { ...obj, metadata: { ...obj.metadata, generation }, status: { observedGeneration: generation, replicas: 1, updatedReplicas: 1, availableReplicas: available } };
      }
      if (obj.kind === 'CustomResourceDefinition') return { ...obj, status: { conditions: this.crdConditions.get(obj.metadata.name ?? '') ?? [{ type: 'Established', status: 'True' }] } };
      return obj;
    };
    const fake = {
      resourceFor,
      find,
      invalidateDiscovery: (): void => undefined,
      apply: async (obj: KubeObject, opts: ApplyOptions = {}): Promise<KubeObject> => {
        this.requests.push(`${opts.dryRun === true ? 'dry-run' : 'apply'} ${obj.kind}`);
        await resourceFor(obj.apiVersion, obj.kind);
        if (this.rejectNames.has(obj.metadata.name ?? '')) throw new KubeApiError(422, 'Invalid', `apply ${obj.kind} ${obj.metadata.name ?? ''}: spec is invalid`);
        const existing = this.get({ ...obj, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace });
        if (this.immutableNames.has(obj.metadata.name ?? '') && existing !== undefined && JSON.stringify(existing.spec) !== JSON.stringify(obj.spec)) {
          throw new KubeApiError(422, 'Invalid', `${obj.kind}.apps "${obj.metadata.name ?? ''}" is invalid: spec.selector: Invalid value: field is immutable`);
        }
        if (this.unavailableNames.has(obj.metadata.name ?? '') && opts.dryRun !== true) throw new KubeApiError(503, 'ServiceUnavailable', `apply ${obj.kind} ${obj.metadata.name ?? ''}: storage is (re)initializing`);
        if (opts.dryRun === true) return obj;
        const manager = opts.fieldManager === undefined ? '' : ` as ${opts.fieldManager}`;
        this.writes.push(`apply ${describeRef({ ...obj, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace })}${opts.force === true ? ' (force)' : ''}${manager}`);
        this.applied.push({ obj: structuredClone(obj), ...(opts.fieldManager === undefined ? {} : { fieldManager: opts.fieldManager }) });
        // Another field manager's (partial) apply is merged into the object; the applier's own replaces it.
        const whole = opts.fieldManager !== undefined && existing !== undefined ? (merged(existing, obj) as KubeObject) : obj;
        // As the API server records it: the field manager that applied (the fake keeps the last one).
        const managedFields = [{ manager: opts.fieldManager ?? FIELD_MANAGER, operation: 'Apply' }];
        const stored = withStatus({ ...whole, metadata: { ...whole.metadata, resourceVersion: String(this.rv++), managedFields } });
        this.put(stored);
        return stored;
      },
      create: (obj: KubeObject): Promise<KubeObject> => {
        this.requests.push(`create ${obj.kind}`);
        const ref = { ...obj, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
        if (this.get(ref) !== undefined) return Promise.reject(new KubeApiError(409, 'AlreadyExists', `${describeRef(ref)} exists`));
        this.writes.push(`create ${describeRef(ref)}`);
        this.put(obj);
        return Promise.resolve(obj);
      },
      update: (obj: KubeObject): Promise<KubeObject> => {
        this.requests.push(`update ${obj.kind}`);
        const ref = { ...obj, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
        if (this.get(ref) === undefined) return Promise.reject(new KubeApiError(404, 'NotFound', `${describeRef(ref)} not found`));
        this.writes.push(`update ${describeRef(ref)}`);
        this.put(obj);
        return Promise.resolve(obj);
      },
      delete: (ref: ObjectRef, _opts?: DeleteOptions): Promise<boolean> => {
        this.requests.push(`delete ${ref.kind}`);
        const live = this.get(ref);
        if (live !== undefined && this.heldNames.has(ref.name)) {
          this.writes.push(`delete ${describeRef(ref)} (held)`);
          this.put({ ...live, metadata: { ...live.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['example.com/hold'] } });
          return Promise.resolve(true);
        }
        const had = this.objects.delete(this.key(ref));
        if (had) this.writes.push(`delete ${describeRef(ref)}`);
        return Promise.resolve(had);
      },
      list: (apiVersion: string, kind: string, opts: { namespace?: string; labelSelector?: string } = {}): Promise<KubeList> => {
        this.requests.push(`list ${kind}`);
        const want = (opts.labelSelector ?? '').split(',').filter((s) => s !== '').map((s) => s.split('='));
        const items = [...this.objects.values()].filter(
          (o) =>
            o.kind === kind &&
            o.apiVersion === apiVersion &&
            (opts.namespace === undefined || o.metadata.namespace === opts.namespace) &&
            want.every(([k, v]) => k !== undefined && o.metadata.labels?.[k] === v),
        );
        return Promise.resolve({ apiVersion, kind: `${kind}List`, metadata: {}, items });
      },
    };
    return fake as unknown as ApplierClient;
  }
}
