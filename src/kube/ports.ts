/**
 * The narrow client ports, as controller-runtime's `client.Reader`, `client.Writer` and
 * `client.StatusWriter`: a step or a module names the least it needs, so its tests hand it the
 * one in-memory fake cluster (kube/fake-cluster.test-helper.ts) and nothing wider. `KubeClient` is the real
 * implementation of every port; the fake implements them too.
 *
 * - `ObjectReader`: GET, GET-or-undefined and LIST.
 * - `ObjectWriter`: server-side apply, create, update, patch and delete of whole objects.
 * - `StatusWriter`: the status subresource alone.
 * - `Discovery`: which resource serves a kind, and forgetting it when CRDs change.
 * - `Impersonating`: the same ports acting as another identity (a release's ServiceAccount).
 * - `Capabilities`, `RawRequester`: what a Helm render asks of the cluster (`.Capabilities`, `lookup`).
 */
import type { KubeList, KubeObject, ObjectRef } from './types.js';

export interface ResourceInfo {
  /** Plural resource name, e.g. `deployments`. */
  name: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
}

export interface ListOptions {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}

export interface ApplyOptions {
  fieldManager?: string;
  /** Take fields another manager owns. Ownership is taken explicitly at the call site. */
  force?: boolean;
  dryRun?: boolean;
  subresource?: 'status';
}

export interface PatchOptions {
  /** The field manager the patch's `Update` entry is kept under (default: the API server's, from the user agent). */
  fieldManager?: string;
}

export interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
  /**
   * The object nests deeper than the client reads (util/nesting.ts, MAX_OBJECT_NESTING):
   * `object` is only its identity (`stubOf`).
   */
  refused?: true;
}

export interface WatchOptions extends ListOptions {
  resourceVersion?: string | undefined;
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface Impersonation {
  user: string;
  groups?: string[];
}


export interface ObjectReader {
  get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T>;
  /** GET that answers undefined for NotFound. */
  find<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined>;
  /** Every page. */
  list<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts?: ListOptions): Promise<KubeList<T>>;
}

/** Writes of whole objects (the status subresource is `StatusWriter`'s). */
export interface ObjectWriter {
  /** Server-side apply under Binnacle's field manager unless another is named; `dryRun` asks the server's verdict only. */
  apply<T extends KubeObject = KubeObject>(obj: KubeObject, opts?: Omit<ApplyOptions, 'subresource'>): Promise<T>;
  create<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T>;
  /** PUT, conditional on metadata.resourceVersion when the object carries one. */
  update<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T>;
  patch<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, type?: 'merge' | 'json' | 'strategic', opts?: PatchOptions): Promise<T>;
  /** Answers false when the object was already gone. */
  delete(ref: ObjectRef, opts?: DeleteOptions): Promise<boolean>;
}

/** The status subresource: what a reconciler writes about its own object. */
export interface StatusWriter {
  /** Server-side apply of `obj.status` (obj carries apiVersion, kind, name and namespace). */
  applyStatus<T extends KubeObject = KubeObject>(obj: KubeObject, opts?: { fieldManager?: string; force?: boolean }): Promise<T>;
  updateStatus<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T>;
  patchStatus<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, type?: 'merge' | 'json'): Promise<T>;
}

export interface Discovery {
  /** The resource serving `kind` in `apiVersion`; NotFound (KubeApiError 404) when none does. */
  resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo>;
  /** Forgets what discovery answered (new CRDs are served). */
  invalidateDiscovery(apiVersion?: string): void;
}

export interface Watcher {
  watch<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts?: WatchOptions): AsyncGenerator<WatchEvent<T>>;
}

/** Reading objects and knowing their resources: what judging drift, health and scope takes. */
export type ClusterReader = ObjectReader & Discovery;

/** Reading and writing objects: what an operation of the release engine takes. */
export type ClusterClient = ObjectReader & ObjectWriter & Discovery;

/** Ports that can act as another identity; the identity's ports are as narrow as these. */
export interface Impersonating<C> {
  impersonate(who: Impersonation): C & Impersonating<C>;
}

/** The cluster's version and served API versions (Helm's `.Capabilities`). */
export interface Capabilities {
  serverVersion(): Promise<string>;
  apiVersionSet(): Promise<string[]>;
}

/** One request whose status the caller judges (a Helm template's `lookup`). */
export interface RawRequester {
  rawRequest(method: string, path: string, body?: string): Promise<{ status: number; body: string }>;
}

/** What a release acts as: reads, writes, discovery, and a render's capabilities and `lookup`. */
export type IdentityClient = ClusterClient & Capabilities & RawRequester;

/** A reconciler's client: its own object's status, and the identities its releases act as. */
export type ControllerClient = IdentityClient & StatusWriter & Impersonating<IdentityClient>;

/** A reconciler's client that also watches: what starts informers and controllers of its own (a HelmOperator's kinds). */
export type ManagerClient = ControllerClient & Watcher;
