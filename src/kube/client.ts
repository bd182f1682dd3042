/**
 * A thin REST client over the API server: kubeconfig auth from @kubernetes/client-node,
 * discovery-based mapping of apiVersion+kind to resources, CRUD, server-side apply, watch,
 * and impersonation. Everything is plain JSON; callers narrow `KubeObject` to their kinds.
 */
import type { Agent, IncomingMessage } from 'node:http';
import * as https from 'node:https';
import type { KubeConfig } from './kube-config.js';
import { timeoutReason } from '../util/deadline.js';
import { BinnacleError } from '../util/errors.js';
import { apiErrorFromResponse, isNotFound, KubeApiError } from './errors.js';
import { Credentials } from './credentials.js';
import { nodeHttp } from '../util/node-http.js';
import { parseApiVersion, stubOf, type KubeList, type KubeObject, type ObjectRef } from './types.js';
import { DEFAULT_RATE_LIMIT, MAX_RETRIES, RateLimiters, REAL_CLOCK, retryAfterSeconds, retryDelayMs, type Clock, type RateLimit, type ThrottleEvent, type TokenBucket } from './rate-limit.js';
import { MAX_OBJECT_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { RefreshingValue } from '../util/refreshing-value.js';
import type { ApplyOptions, DeleteOptions, Discovery as DiscoveryPort, Impersonation, ListOptions, ObjectReader, ObjectWriter, PatchOptions, ResourceInfo, StatusWriter, WatchEvent, WatchOptions, Watcher } from './ports.js';

export type { ApplyOptions, DeleteOptions, Impersonation, ListOptions, PatchOptions, ResourceInfo, WatchEvent, WatchEventType, WatchOptions } from './ports.js';

/** Binnacle's one field manager for server-side apply. */
export const FIELD_MANAGER = 'binnacle';

interface Transport {
  base: URL;
  agent: Agent;
  /** Bearer headers, read again when they can change (token files, exec plugins). */
  credentials: Credentials;
  /** Told of every response (method, status), for request metrics. */
  observers: ((method: string, status: number, target: RequestTarget) => void)[];
  /** Deadline of one request, response body included (a watch gets its own timeout plus this). */
  timeoutMs: number;
  /** One token bucket per identity (rate-limit.ts); undefined: no client-side limit. */
  limiters: RateLimiters | undefined;
  clock: Clock;
  /** Jitter of retry waits (Math.random; a test's own). */
  random: () => number;
  /** Told of every wait for the limiter and every retry the server asked for, for metrics. */
  throttleObservers: ((event: ThrottleEvent) => void)[];
}

/** How long one API request may take unless the client is told otherwise. */
export const DEFAULT_KUBE_TIMEOUT_MS = 60_000;

export interface KubeClientOptions {
  /** Deadline of one request, body included; a watch may last its `timeoutSeconds` plus this. */
  timeoutMs?: number;
  /**
   * The client-side limit of each identity (the client's own, and each one it impersonates has
   * its own bucket); `false` or unset: none (DEFAULT_RATE_LIMIT, controller-runtime's default).
   */
  rateLimit?: RateLimit | false;
  /** The limiter's and the retries' time (tests). */
  clock?: Clock;
  /** The retries' jitter, 0 ≤ x < 1 (tests). */
  random?: () => number;
}

interface Deadline {
  signal: AbortSignal;
  ms: number;
}

function deadline(ms: number): Deadline {
  return { signal: AbortSignal.timeout(ms), ms };
}

/** What `open` answers: the response, the deadline it ran under, and how often the server had it sent again. */
interface Opened {
  res: IncomingMessage;
  limit: Deadline;
  retries: number;
  /** ms spent waiting between sends. */
  waitedMs: number;
}

/** The limiter's key of an identity: the client's own is '', an impersonated one its user and groups. */
function identityKey(who: Impersonation | undefined): string {
  if (who === undefined) return '';
  return `user:${who.user}\n${[...(who.groups ?? [])].sort().join('\n')}`;
}

interface RawResponse {
  status: number;
  body: string;
}

interface RequestOptions {
  query?: Record<string, string | undefined> | undefined;
  body?: unknown;
  contentType?: string;
  /** Accept header; JSON by default. */
  accept?: string;
  /** What the caller is doing, for error messages: "get Deployment ns/name". */
  what: string;
}

/**
 * What a client's writes depend on, such as holding the leader Lease: `check` throws once
 * writes are no longer allowed (it is asked before every mutating request), and `signal`
 * aborts the requests in flight when the fence closes.
 */
export interface WriteFence {
  readonly signal: AbortSignal;
  check(what: string): void;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** What one request asked for, as the API server's audit log names it: `list` `bundledeployments`. */
export interface RequestTarget {
  verb: string;
  /** The resource (plural), with its subresource after a slash (`clusterextensions/status`); a non-resource path as it is (`/version`). */
  resource: string;
}

/** The verb and resource of a request to `path` (no query string). */
export function requestTarget(method: string, path: string, watch = false): RequestTarget {
  const parts = path.split('/').filter((p) => p !== '');
  // /api/v1/… or /apis/group/version/…
  const rest = parts[0] === 'api' && parts.length >= 2 ? parts.slice(2) : parts[0] === 'apis' && parts.length >= 3 ? parts.slice(3) : undefined;
  const m = method.toUpperCase();
  if (rest === undefined || rest.length === 0) return { verb: m.toLowerCase(), resource: path };
  // namespaces/NS/resource/… names a namespaced resource; namespaces or namespaces/NS alone is the Namespace itself.
  const inNamespace = rest[0] === 'namespaces' && rest.length >= 3 ? rest.slice(2) : rest;
  const [resource = '', name, sub] = inNamespace;
  const collection = name === undefined;
  const verb = watch ? 'watch' : m === 'GET' ? (collection ? 'list' : 'get') : m === 'POST' ? 'create' : m === 'PUT' ? 'update' : m === 'PATCH' ? 'patch' : m === 'DELETE' ? (collection ? 'deletecollection' : 'delete') : m.toLowerCase();
  return { verb, resource: sub === undefined ? resource : `${resource}/${sub}` };
}

/**
 * What discovery found, shared by a client and every client made from it (impersonating or
 * fenced): the API server's discovery answers everyone alike (system:discovery), so a release
 * acting as its own ServiceAccount does not discover again. Measured at 1,000 HelmOperator CRs,
 * each reconcile's impersonating client read /version, /api and /apis anew: a quarter of the
 * manager's requests.
 */
interface Discovery {
  /** Each group-version's resources. */
  resources: Map<string, Promise<Map<string, ResourceInfo>>>;
  /** The server's version and its set of API versions (Helm's capabilities). */
  facts: Map<'version' | 'versionSet', RefreshingValue<unknown>>;
}

/** How long the server's version and API version set are kept; `invalidateDiscovery` forgets them at once. */
export const CAPABILITIES_TTL_MS = 30_000;
/**
 * How long after it was asked an answered fact is still served while it is asked again: the
 * request runs in the background, and the callers meanwhile (every render) do not wait for it.
 * Three TTLs: room for one request to take the client's whole deadline (60 s); past that, a
 * server that cannot answer fails the callers, rather than have charts rendered against minutes-old
 * capabilities.
 */
export const CAPABILITIES_STALE_MS = 3 * CAPABILITIES_TTL_MS;

/**
 * One line of a watch stream: an event with its object's apiVersion and kind filled in (an
 * object nested too deep for the readers is a stub, `refused`); an ERROR event is thrown.
 */
function watchEventOf<T extends KubeObject>(line: string, apiVersion: string, kind: string): WatchEvent<T> {
  const ev = JSON.parse(line) as WatchEvent<T>;
  if (ev.type === 'ERROR') {
    const status = ev.object as unknown as { code?: number; reason?: string; message?: string };
    throw new KubeApiError(status.code ?? 500, status.reason ?? 'InternalError', `watch ${kind}: ${status.message ?? 'error'}`);
  }
  if (ev.type === 'BOOKMARK') return ev;
  ev.object = { ...ev.object, apiVersion, kind };
  if (nestsDeeperThan(ev.object, MAX_OBJECT_NESTING)) return { type: ev.type, object: stubOf(ev.object) as T, refused: true };
  return ev;
}

/** A group (a DNS subdomain, or none for the core group) and a version (a DNS label). */
const API_VERSION_RE = /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;

/**
 * Refuses an apiVersion that is not one (`../../healthz`): it is put in a URL path, where it
 * would name another endpoint of the API server, asked with this client's identity.
 */
export function checkApiVersion(apiVersion: string): void {
  if (apiVersion.length > 317 || !API_VERSION_RE.test(apiVersion)) {
    throw new BinnacleError('input', 'INVALID_API_VERSION', `apiVersion ${JSON.stringify(apiVersion.slice(0, 100))} is not a group/version (a DNS subdomain, then a DNS label)`);
  }
}

/** Refuses a name or namespace "." or "..": percent-encoding leaves them, and the URL would climb to another path (the API server refuses such names anyway). */
export function checkPathNames(kind: string, where: { namespace?: string | undefined; name?: string | undefined }): void {
  for (const [field, value] of [['metadata.namespace', where.namespace], ['metadata.name', where.name]] as const) {
    if (value === '.' || value === '..') throw new BinnacleError('input', 'INVALID_NAME', `${kind} ${JSON.stringify(value)}: field ${field}: "${value}" is not a Kubernetes name`);
  }
}

export class KubeClient implements ObjectReader, ObjectWriter, StatusWriter, DiscoveryPort, Watcher {
  private readonly transport: Transport;
  private readonly impersonation: Impersonation | undefined;
  private readonly discovery: Discovery;
  private readonly fence: WriteFence | undefined;
  private readonly identity: string;

  private constructor(transport: Transport, discovery: Discovery, impersonation?: Impersonation, fence?: WriteFence, limiterKey?: string) {
    this.transport = transport;
    this.discovery = discovery;
    this.impersonation = impersonation;
    this.fence = fence;
    this.identity = limiterKey ?? identityKey(impersonation);
  }

  static async fromKubeConfig(kc: KubeConfig, clientOpts: KubeClientOptions = {}): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new BinnacleError('input', 'KUBECONFIG_NO_CLUSTER', 'no current cluster in kubeconfig');
    let base: URL;
    try {
      base = new URL(cluster.server);
    } catch {
      throw new BinnacleError('input', 'KUBECONFIG_INVALID', `cluster "${cluster.name}": server ${JSON.stringify(cluster.server)} is not a URL`);
    }
    if (base.protocol === 'http:' && !cluster.skipTLSVerify) {
      // Credentials would cross the network in the clear; client-node refuses it with a stack trace.
      throw new BinnacleError(
        'input',
        'KUBECONFIG_INSECURE_SERVER',
        `cluster "${cluster.name}": server ${base.origin} is plain http://; binnacle talks to API servers over https:// only (set insecure-skip-tls-verify: true on the cluster to allow it)`,
      );
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new BinnacleError('input', 'KUBECONFIG_INVALID', `cluster "${cluster.name}": server ${base.origin} must be https://`);
    }
    const opts: https.RequestOptions = {};
    try {
      await kc.applyToHTTPSOptions(opts);
    } catch (err) {
      if (err instanceof BinnacleError) throw err;
      throw new BinnacleError('input', 'KUBECONFIG_INVALID', `cluster "${cluster.name}": cannot use its credentials: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const credentials = Credentials.fromKubeConfig(kc, opts);
    const agent =
      base.protocol === 'https:'
        ? new https.Agent({
            keepAlive: true,
            maxSockets: 32,
            ca: opts.ca,
            cert: opts.cert,
            key: opts.key,
            rejectUnauthorized: opts.rejectUnauthorized ?? true,
            servername: opts.servername,
          })
        : new nodeHttp.Agent({ keepAlive: true, maxSockets: 32 });
    const clock = clientOpts.clock ?? REAL_CLOCK;
    const rateLimit = clientOpts.rateLimit ?? DEFAULT_RATE_LIMIT;
    return new KubeClient(
      {
        base,
        agent,
        credentials,
        observers: [],
        timeoutMs: clientOpts.timeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS,
        limiters: rateLimit === false ? undefined : new RateLimiters(rateLimit, clock),
        clock,
        random: clientOpts.random ?? Math.random,
        throttleObservers: [],
      },
      { resources: new Map(), facts: new Map() },
    );
  }

  /**
   * A client that acts as `who` (the API server checks `who`'s permissions). Shares discovery
   * and the connection pool; its requests take tokens from `who`'s own bucket, as a rest.Config
   * of its own would (API Priority and Fairness sorts them by `who` too).
   */
  impersonate(who: Impersonation): KubeClient {
    return new KubeClient(this.transport, this.discovery, who, this.fence);
  }

  /**
   * A client whose mutating requests pass `fence` first and whose requests in flight abort
   * when it closes (a leader's client: no write once the lease may have passed to another).
   * Clients made from it by `impersonate` keep the fence. Shares transport and discovery.
   */
  fenced(fence: WriteFence): KubeClient {
    return new KubeClient(this.transport, this.discovery, this.impersonation, fence, this.identity);
  }

  /**
   * The same client with a token bucket of its own, named `purpose`: leader election's, whose
   * renewals must not queue behind the controllers' requests (controller-runtime gives its
   * resource lock a rest.Config, and so a limiter, of its own; kube-controller-manager too).
   */
  withOwnRateLimit(purpose: string): KubeClient {
    return new KubeClient(this.transport, this.discovery, this.impersonation, this.fence, `${this.identity}\n${purpose}`);
  }

  get server(): string {
    return this.transport.base.toString();
  }

  /**
   * Calls `fn` with the method and status of every response this client (and those made from
   * it) gets, and what it asked for: the verb (get, list, watch, create, …) and the resource.
   */
  observeResponses(fn: (method: string, status: number, target: RequestTarget) => void): void {
    this.transport.observers.push(fn);
  }

  /**
   * Calls `fn` at every wait for the client-side limiter (of this client or those made from it)
   * and at every request the server had sent again (429, or 5xx with Retry-After).
   */
  observeThrottling(fn: (event: ThrottleEvent) => void): void {
    this.transport.throttleObservers.push(fn);
  }

  /** The client-side limit of each identity; undefined when there is none. */
  get rateLimit(): RateLimit | undefined {
    return this.transport.limiters?.limit;
  }

  /** Frees sockets so the process can exit. */
  close(): void {
    this.transport.agent.destroy();
  }

  // --- discovery --------------------------------------------------------------

  private async resources(apiVersion: string, refresh = false): Promise<Map<string, ResourceInfo>> {
    const cache = this.discovery.resources;
    let entry = cache.get(apiVersion);
    if (entry === undefined || refresh) {
      entry = this.fetchResources(apiVersion);
      cache.set(apiVersion, entry);
      // A failed lookup is not cached: the group may appear later (a CRD being established).
      entry.catch(() => cache.delete(apiVersion));
    }
    return entry;
  }

  private async fetchResources(apiVersion: string): Promise<Map<string, ResourceInfo>> {
    const { group, version } = parseApiVersion(apiVersion);
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const list = (await this.requestJson('GET', path, { what: `discover ${apiVersion}` })) as {
      resources?: { name: string; namespaced: boolean; kind: string; verbs?: string[] }[];
    };
    const byKind = new Map<string, ResourceInfo>();
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue; // subresources
      byKind.set(r.kind, { name: r.name, namespaced: r.namespaced, kind: r.kind, verbs: r.verbs ?? [] });
    }
    return byKind;
  }

  /** Maps apiVersion+kind to its resource; re-discovers once on a miss (new CRDs). */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo> {
    checkApiVersion(apiVersion);
    let info: ResourceInfo | undefined;
    try {
      info = (await this.resources(apiVersion)).get(kind);
      if (info === undefined) info = (await this.resources(apiVersion, true)).get(kind);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (info === undefined) {
      throw new KubeApiError(404, 'NotFound', `the server has no resource for kind ${kind} in ${apiVersion} (is its CRD installed?)`);
    }
    return info;
  }

  /** Forgets discovery results, e.g. after installing CRDs. */
  invalidateDiscovery(apiVersion?: string): void {
    if (apiVersion === undefined) this.discovery.resources.clear();
    else this.discovery.resources.delete(apiVersion);
    this.discovery.facts.clear();
  }

  /**
   * A discovery fact, asked again once older than CAPABILITIES_TTL_MS; a failure is not kept.
   * Asked as the client's own identity, never an impersonated one: the answer is shared, so one
   * identity's refusal or throttling must not become every caller's.
   *
   * Past its time, an answered fact is served while it is asked again in the background, up to
   * CAPABILITIES_STALE_MS (util/refreshing-value.ts: every render shares it, and one slow answer
   * must not hold them all); `invalidateDiscovery` (CRDs installed) makes the next caller wait.
   */
  private fact<T>(key: 'version' | 'versionSet', ask: (own: KubeClient) => Promise<T>): Promise<T> {
    const facts = this.discovery.facts;
    let fact = facts.get(key);
    if (fact === undefined) {
      const clock = this.transport.clock;
      fact = new RefreshingValue<unknown>({ ttlMs: CAPABILITIES_TTL_MS, staleMs: CAPABILITIES_STALE_MS, now: () => clock.now() });
      facts.set(key, fact);
    }
    return fact.get(() => ask(this.impersonation === undefined ? this : new KubeClient(this.transport, this.discovery, undefined, this.fence))) as Promise<T>;
  }

  async pathFor(apiVersion: string, kind: string, where: { namespace?: string | undefined; name?: string | undefined; subresource?: string | undefined }): Promise<string> {
    checkPathNames(kind, where);
    const info = await this.resourceFor(apiVersion, kind);
    const { group, version } = parseApiVersion(apiVersion);
    let path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    if (info.namespaced && where.namespace !== undefined && where.namespace !== '') path += `/namespaces/${encodeURIComponent(where.namespace)}`;
    path += `/${info.name}`;
    if (where.name !== undefined) path += `/${encodeURIComponent(where.name)}`;
    if (where.subresource !== undefined) path += `/${where.subresource}`;
    return path;
  }

  // --- verbs -----------------------------------------------------------------

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    const path = await this.pathFor(ref.apiVersion, ref.kind, ref);
    return (await this.requestJson('GET', path, { what: `get ${describe(ref)}` })) as T;
  }

  /** GET that answers undefined for NotFound. */
  async find<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.get<T>(ref);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Lists every page. */
  async list<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}): Promise<KubeList<T>> {
    const path = await this.pathFor(apiVersion, kind, { namespace: opts.namespace });
    const items: T[] = [];
    let cont: string | undefined;
    let last: KubeList<T> | undefined;
    const refused: KubeObject[] = [];
    do {
      // Parsed without the whole-answer depth check: one object too deep leaves out that object, not the list.
      last = (await this.requestParsed('GET', path, {
        query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: '500', continue: cont },
        what: `list ${kind}`,
      })) as KubeList<T>;
      for (const item of last.items) {
        if (nestsDeeperThan(item, MAX_OBJECT_NESTING)) refused.push(stubOf({ ...item, apiVersion, kind }));
        else items.push({ ...item, apiVersion, kind });
      }
      cont = last.metadata.continue !== undefined && last.metadata.continue !== '' ? last.metadata.continue : undefined;
    } while (cont !== undefined);
    return { apiVersion: last.apiVersion, kind: last.kind, metadata: last.metadata, items, ...(refused.length === 0 ? {} : { refused }) };
  }

  async create<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T> {
    const path = await this.pathFor(obj.apiVersion, obj.kind, { namespace: obj.metadata.namespace });
    return (await this.requestJson('POST', path, { body: obj, what: `create ${describeObj(obj)}` })) as T;
  }

  /** PUT: optimistic concurrency through metadata.resourceVersion. */
  async update<T extends KubeObject = KubeObject>(obj: KubeObject, subresource?: 'status'): Promise<T> {
    const path = await this.pathFor(obj.apiVersion, obj.kind, { namespace: obj.metadata.namespace, name: obj.metadata.name, subresource });
    return (await this.requestJson('PUT', path, { body: obj, what: `update ${describeObj(obj)}${subresource === undefined ? '' : ` ${subresource}`}` })) as T;
  }

  async patch<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, type: 'merge' | 'json' | 'strategic' = 'merge', opts: PatchOptions & { subresource?: 'status' } = {}): Promise<T> {
    const contentType = { merge: 'application/merge-patch+json', json: 'application/json-patch+json', strategic: 'application/strategic-merge-patch+json' }[type];
    const path = await this.pathFor(ref.apiVersion, ref.kind, { ...ref, subresource: opts.subresource });
    const query = opts.fieldManager === undefined ? undefined : { fieldManager: opts.fieldManager };
    return (await this.requestJson('PATCH', path, { body: patch, contentType, ...(query === undefined ? {} : { query }), what: `patch ${describe(ref)}` })) as T;
  }

  /** Server-side apply under Binnacle's field manager (or the one given). */
  async apply<T extends KubeObject = KubeObject>(obj: KubeObject, opts: ApplyOptions = {}): Promise<T> {
    const path = await this.pathFor(obj.apiVersion, obj.kind, { namespace: obj.metadata.namespace, name: obj.metadata.name, subresource: opts.subresource });
    const query: Record<string, string | undefined> = {
      fieldManager: opts.fieldManager ?? FIELD_MANAGER,
      force: opts.force === true ? 'true' : undefined,
      dryRun: opts.dryRun === true ? 'All' : undefined,
    };
    return (await this.requestJson('PATCH', path, { body: obj, query, contentType: 'application/apply-patch+yaml', what: `apply ${describeObj(obj)}` })) as T;
  }

  /** Server-side apply of the status subresource (StatusWriter). */
  applyStatus<T extends KubeObject = KubeObject>(obj: KubeObject, opts: { fieldManager?: string; force?: boolean } = {}): Promise<T> {
    return this.apply<T>(obj, { ...opts, subresource: 'status' });
  }

  updateStatus<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T> {
    return this.update<T>(obj, 'status');
  }

  patchStatus<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, type: 'merge' | 'json' = 'merge'): Promise<T> {
    return this.patch<T>(ref, patch, type, { subresource: 'status' });
  }

  /** DELETE; answers false when the object was already gone. */
  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    const path = await this.pathFor(ref.apiVersion, ref.kind, ref);
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.propagationPolicy !== undefined) body.propagationPolicy = opts.propagationPolicy;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.preconditions !== undefined) body.preconditions = opts.preconditions;
    try {
      // The answer (the object, or a Status) is not read: an object too deep to read can still be deleted.
      await this.request('DELETE', path, { body, what: `delete ${describe(ref)}` });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Streams watch events until the server closes the watch, the timeout passes or `signal` aborts. */
  async *watch<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts: WatchOptions = {}): AsyncGenerator<WatchEvent<T>> {
    const path = await this.pathFor(apiVersion, kind, { namespace: opts.namespace });
    const query = {
      watch: '1',
      allowWatchBookmarks: 'true',
      resourceVersion: opts.resourceVersion,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      timeoutSeconds: String(opts.timeoutSeconds ?? 300),
    };
    // The server ends the watch after timeoutSeconds; a silent connection must not outlive that.
    // The limiter gates the watch's start only: the stream is not a request.
    const opened = await this.open('GET', path, { query, what: `watch ${kind}` }, opts.signal, (opts.timeoutSeconds ?? 300) * 1000 + this.transport.timeoutMs);
    const { res, limit } = opened;
    if ((res.statusCode ?? 0) >= 300) {
      const body = await readAll(res);
      throw this.apiError(opened, body, `watch ${kind}`);
    }
    res.setEncoding('utf8');
    let buf = '';
    try {
      for await (const chunk of res as AsyncIterable<string>) {
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line === '') continue;
          yield watchEventOf<T>(line, apiVersion, kind);
        }
      }
    } catch (err) {
      if (opts.signal?.aborted === true) return;
      if (limit.signal.aborted) throw this.timeoutError(`watch ${kind}`, limit.ms, err);
      throw err;
    } finally {
      res.destroy();
    }
  }

  /**
   * Every served group/version and group/version/Kind, as Helm's `.Capabilities.APIVersions`
   * lists them (helm's action.GetVersionSet), from aggregated discovery: two requests, kept for
   * CAPABILITIES_TTL_MS. Each caller gets its own copy.
   */
  async apiVersionSet(): Promise<string[]> {
    return [...(await this.fact('versionSet', (own) => own.fetchApiVersionSet()))];
  }

  private async fetchApiVersionSet(): Promise<string[]> {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9';
    const out = new Set<string>();
    for (const root of ['/api', '/apis']) {
      const list = (await this.requestJson('GET', root, { what: `discover ${root}`, accept })) as {
        kind?: string;
        items?: { metadata?: { name?: string }; versions?: { version?: string; resources?: { responseKind?: { kind?: string } }[] }[] }[];
      };
      if (list.kind !== 'APIGroupDiscoveryList') throw new BinnacleError('terminal', 'DISCOVERY_UNSUPPORTED', `${root}: the API server does not serve aggregated discovery (needs Kubernetes ≥ 1.30)`);
      for (const g of list.items ?? []) {
        const group = g.metadata?.name ?? '';
        for (const v of g.versions ?? []) {
          const gv = group === '' ? (v.version ?? '') : `${group}/${v.version ?? ''}`;
          out.add(gv);
          for (const r of v.resources ?? []) if (r.responseKind?.kind !== undefined && r.responseKind.kind !== '') out.add(`${gv}/${r.responseKind.kind}`);
        }
      }
    }
    return [...out].sort();
  }

  /** One request whose status the caller judges (a template's `lookup` wants the 404). */
  async rawRequest(method: string, path: string, body?: string): Promise<RawResponse> {
    const q = path.indexOf('?');
    const query = q < 0 ? undefined : Object.fromEntries(new URLSearchParams(path.slice(q + 1)));
    const what = `${method} ${path}`;
    const { res, limit } = await this.open(method, q < 0 ? path : path.slice(0, q), {
      what,
      ...(query === undefined ? {} : { query }),
      ...(body === undefined || body === '' ? {} : { body: JSON.parse(body) as unknown }),
    }, undefined, this.transport.timeoutMs);
    return { status: res.statusCode ?? 0, body: await this.readBody(res, what, limit) };
  }

  /** The server's version, e.g. `v1.36.3` (kept for CAPABILITIES_TTL_MS). */
  serverVersion(): Promise<string> {
    return this.fact('version', async (own) => {
      const v = (await own.requestJson('GET', '/version', { what: 'get server version' })) as { gitVersion?: string };
      return v.gitVersion ?? 'unknown';
    });
  }

  // --- transport -------------------------------------------------------------

  /** The answer as JSON; refused (KUBE_OBJECT_TOO_DEEP) when it nests deeper than MAX_OBJECT_NESTING (util/nesting.ts says why). */
  async requestJson(method: string, path: string, opts: RequestOptions): Promise<unknown> {
    const value = await this.requestParsed(method, path, opts);
    if (nestsDeeperThan(value, MAX_OBJECT_NESTING)) {
      throw new BinnacleError('terminal', 'KUBE_OBJECT_TOO_DEEP', `${opts.what}: the object nests deeper than ${MAX_OBJECT_NESTING} levels, which Binnacle does not read (the API server keeps up to 10,000); make it shallower`);
    }
    return value;
  }

  private async requestParsed(method: string, path: string, opts: RequestOptions): Promise<unknown> {
    const raw = await this.request(method, path, opts);
    if (raw.body === '') return {};
    return JSON.parse(raw.body) as unknown;
  }

  async request(method: string, path: string, opts: RequestOptions): Promise<RawResponse> {
    const opened = await this.open(method, path, opts, undefined, this.transport.timeoutMs);
    const body = await this.readBody(opened.res, opts.what, opened.limit);
    const status = opened.res.statusCode ?? 0;
    if (status >= 300) throw this.apiError(opened, body, opts.what);
    return { status, body };
  }

  /** The error of a failed answer; one the server had sent again says how often and for how long. */
  private apiError(opened: Opened, body: string, what: string): KubeApiError {
    const err = apiErrorFromResponse(opened.res.statusCode ?? 0, body, what);
    if (opened.retries === 0) return err;
    const retryAfter = retryAfterSeconds(opened.res.headers['retry-after']);
    const flowSchema = opened.res.headers['x-kubernetes-pf-flowschema-uid'];
    const why = `the API server still answered ${err.statusCode} ${err.reason}${retryAfter === undefined ? '' : ` (Retry-After ${retryAfter} s)`} after ${opened.retries} ${opened.retries === 1 ? 'retry' : 'retries'} over ${(opened.waitedMs / 1000).toFixed(1)} s${
      typeof flowSchema === 'string' && flowSchema !== '' ? `; API Priority and Fairness put it in FlowSchema UID ${flowSchema}` : ''
    }`;
    return new KubeApiError(err.statusCode, err.reason, `${err.message.slice(0, what.length)}: ${why}: ${err.message.slice(what.length + 2)}`, err.details);
  }

  /** "did not answer within", naming the API server and the deadline. */
  private timeoutError(what: string, ms: number, cause?: unknown): BinnacleError {
    return new BinnacleError('transient', 'KUBE_TIMEOUT', `${what}: ${timeoutReason(`the API server at ${this.transport.base.host}`, ms)}`, { cause });
  }

  private async readBody(res: IncomingMessage, what: string, limit: Deadline): Promise<string> {
    try {
      return await readAll(res);
    } catch (err) {
      if (limit.signal.aborted) throw this.timeoutError(what, limit.ms, err);
      throw err;
    }
  }

  /**
   * A request, as client-go's rest client sends one:
   * - it first waits for a token of its identity's bucket (when there is a limiter), before its
   *   deadline (`limitMs`) starts: a throttled client does not time out before it has asked once;
   * - after a 401 with credentials that can change, it reads them again and sends it once more;
   * - after an answer that asks for a retry (a 429 of API Priority and Fairness, or a 5xx with
   *   Retry-After: rate-limit.ts's retryDelayMs), it waits as the answer says and sends it again,
   *   through the limiter again, up to MAX_RETRIES times, and never past its deadline: the last
   *   answer is then the caller's, who reports it with the retries (`apiError`).
   */
  private async open(method: string, path: string, opts: RequestOptions, callerSignal: AbortSignal | undefined, limitMs: number): Promise<Opened> {
    const t = this.transport;
    const bucket = t.limiters?.for(this.identity);
    if (bucket !== undefined) {
      try {
        await this.throttle(bucket, method, path, opts, callerSignal);
      } catch (err) {
        if (this.fence?.signal.aborted === true && callerSignal?.aborted !== true) this.fence.check(opts.what);
        throw err;
      }
    }
    const limit = deadline(limitMs);
    const started = t.clock.now();
    let retries = 0;
    let waitedMs = 0;
    let refreshed = false;
    for (;;) {
      const res = await this.openOnce(method, path, opts, await this.readCredentials(opts.what), callerSignal, limit);
      this.observe(method, path, opts, res);
      if (res.statusCode === 401 && !refreshed && t.credentials.invalidate()) {
        refreshed = true;
        res.resume();
        continue;
      }
      const delay = retries >= MAX_RETRIES ? undefined : retryDelayMs(res.statusCode ?? 0, res.headers['retry-after'], retries + 1, t.random);
      // Never past the deadline: the answer in hand is better than a timeout.
      if (delay === undefined || t.clock.now() - started + delay >= limit.ms) return { res, limit, retries, waitedMs };
      res.resume();
      retries++;
      this.tellThrottled(method, path, opts, (target) => ({ type: 'retry', ms: delay, status: res.statusCode ?? 0, method: method.toUpperCase(), ...target }));
      const before = t.clock.now();
      await this.pause(opts.what, callerSignal, limit, (signal) => t.clock.sleep(delay, signal));
      if (bucket !== undefined) await this.pause(opts.what, callerSignal, limit, (signal) => this.throttle(bucket, method, path, opts, signal));
      waitedMs += t.clock.now() - before;
    }
  }

  /** Waits for a token of `bucket`; a wait is told to the throttling observers. */
  private async throttle(bucket: TokenBucket, method: string, path: string, opts: RequestOptions, signal: AbortSignal | undefined): Promise<void> {
    const fence = this.fence?.signal;
    const waited = await bucket.take(fence === undefined ? signal : signal === undefined ? fence : AbortSignal.any([signal, fence]));
    if (waited > 0) this.tellThrottled(method, path, opts, (target) => ({ type: 'wait', ms: waited, ...target }));
  }

  private tellThrottled(method: string, path: string, opts: RequestOptions, event: (target: RequestTarget) => ThrottleEvent): void {
    if (this.transport.throttleObservers.length === 0) return;
    const e = event(requestTarget(method, path, opts.query?.watch !== undefined));
    for (const fn of this.transport.throttleObservers) fn(e);
  }

  /** A wait between sends that the caller, the deadline or the fence may end: each says so as a request would. */
  private async pause(what: string, callerSignal: AbortSignal | undefined, limit: Deadline, wait: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const signals = [limit.signal, ...(callerSignal === undefined ? [] : [callerSignal]), ...(this.fence === undefined ? [] : [this.fence.signal])];
    try {
      await wait(signals.length === 1 ? limit.signal : AbortSignal.any(signals));
    } catch (err) {
      if (this.fence?.signal.aborted === true && callerSignal?.aborted !== true) this.fence.check(what);
      if (limit.signal.aborted && callerSignal?.aborted !== true) throw this.timeoutError(what, limit.ms, err);
      throw err;
    }
  }

  private observe(method: string, path: string, opts: RequestOptions, res: IncomingMessage): void {
    if (this.transport.observers.length === 0) return;
    const target = requestTarget(method, path, opts.query?.watch !== undefined);
    for (const fn of this.transport.observers) fn(method.toUpperCase(), res.statusCode ?? 0, target);
  }

  private async readCredentials(what: string): Promise<Record<string, string>> {
    try {
      return await this.transport.credentials.current();
    } catch (err) {
      throw new BinnacleError('transient', 'KUBE_CREDENTIALS', `${what}: cannot read the kubeconfig user's credentials again: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  private openOnce(method: string, path: string, opts: RequestOptions, auth: Record<string, string>, callerSignal?: AbortSignal, limit?: Deadline): Promise<IncomingMessage> {
    const fence = this.fence;
    let signal = callerSignal;
    if (limit !== undefined) signal = signal === undefined ? limit.signal : AbortSignal.any([signal, limit.signal]);
    if (fence !== undefined) {
      try {
        if (MUTATING.has(method.toUpperCase())) fence.check(opts.what);
        else if (fence.signal.aborted) fence.check(opts.what);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new BinnacleError('transient', 'WRITE_FENCED', `${opts.what}: refused`));
      }
      signal = signal === undefined ? fence.signal : AbortSignal.any([signal, fence.signal]);
    }
    const url = new URL(this.transport.base.toString());
    url.pathname = (url.pathname.replace(/\/$/, '') + path).replace(/\/+/g, '/');
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const headers: Record<string, string | string[]> = { ...auth, Accept: opts.accept ?? 'application/json', 'User-Agent': 'binnacle/0.1.0' };
    if (this.impersonation !== undefined) {
      headers['Impersonate-User'] = this.impersonation.user;
      if (this.impersonation.groups !== undefined && this.impersonation.groups.length > 0) headers['Impersonate-Group'] = this.impersonation.groups;
    }
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const mod = url.protocol === 'https:' ? https : nodeHttp;
    return new Promise((resolve, reject) => {
      const req = mod.request(url, { method, headers, agent: this.transport.agent, signal }, resolve);
      req.on('error', (err) => {
        if (fence?.signal.aborted === true && callerSignal?.aborted !== true) {
          try {
            fence.check(opts.what);
          } catch (fenced) {
            reject(fenced instanceof Error ? fenced : err);
            return;
          }
        }
        if (limit?.signal.aborted === true && callerSignal?.aborted !== true) {
          reject(this.timeoutError(opts.what, limit.ms, err));
          return;
        }
        reject(new BinnacleError('transient', 'KUBE_UNREACHABLE', `${opts.what}: cannot reach the API server at ${this.transport.base.host}: ${err.message}`, { cause: err }));
      });
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    // An aborted request may close its response without an error: never wait for an end that cannot come.
    res.on('close', () => {
      if (!res.complete) reject(new Error('the response was cut off before its end'));
    });
  });
}

function describe(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace !== undefined && ref.namespace !== '' ? `${ref.namespace}/` : ''}${ref.name}`;
}

function describeObj(obj: KubeObject): string {
  return describe({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? obj.metadata.generateName ?? '', namespace: obj.metadata.namespace });
}
