/**
 * The one in-memory fake cluster every reconciler, applier and console test runs over (as
 * controller-runtime's fake client): it implements the narrow ports (kube/ports.ts) with the
 * API server's rules that matter to Binnacle, counts every request and write, and injects
 * failures at any request.
 *
 * What it models: uids, resourceVersions (a write with a stale one is a 409 Conflict),
 * generation bumped by a spec change, finalizers and deletionTimestamp, a Namespace's deletion
 * removing what is in it, garbage collection of owned objects, discovery of built-in kinds and
 * of the kinds an Established CRD serves, label selectors, watches, the status subresource, and
 * server-side apply with field managers (conflicts, force, fields a manager stops applying
 * removed; lists are atomic). Workloads report healthy status unless told otherwise. RBAC
 * (`authorize`) refuses in the API server's words; reviews (TokenReview, SelfSubjectReview,
 * (Self)SubjectAccessReview) are answered and never kept. Watches can be ended (a timeout, a cut
 * connection, 410 Gone) and sent bookmarks; an object nesting deeper than the client reads is
 * refused as KubeClient refuses it.
 *
 * Faults (`inject`): before a request (it fails, nothing changes) or after it (the change
 * lands, the caller sees the error: a lost response, or the process killed right after the
 * write), for a conflict, a 429, a 5xx or a `Crash`, matched by verb, kind, name and identity;
 * discovery (never logged) fails only by a fault armed for `discover`.
 */
import { KubeApiError } from './errors.js';
import { checkApiVersion, checkPathNames, FIELD_MANAGER, type ApplyOptions, type DeleteOptions, type Impersonation, type ListOptions, type ResourceInfo, type WatchEvent, type WatchOptions } from './client.js';
import type { Capabilities, Discovery, Impersonating, ObjectReader, ObjectWriter, PatchOptions, RawRequester, StatusWriter, Watcher } from './ports.js';
import { describeRef, parseApiVersion, stubOf, type KubeList, type KubeObject, type ObjectRef } from './types.js';
import { deleteAt, dropPath, fieldsOf, holdsPath, leaves, mergePatch, same, selects, selectsFields, setAt, valueAt, type FieldSet, type ManagedEntry } from './fake-fields.test-helper.js';
import { isRecord } from '../util/object.js';
import { BUILTIN, type KindInfo } from './fake-kinds.test-helper.js';
import { discoveryDocument, servedKey, type ServedKind } from './fake-discovery.test-helper.js';
import { Crash, faults, matches, REVIEW_KINDS, WRITE_VERBS, type AccessReview, type FakeRequest, type FakeVerb, type FaultRule } from './fake-requests.test-helper.js';

export { Crash, faults, forbiddenMessage, WRITE_VERBS, type AccessReview, type FakeRequest, type FakeVerb, type FaultRule } from './fake-requests.test-helper.js';
import { BinnacleError } from '../util/errors.js';
import { MAX_OBJECT_NESTING, nestsDeeperThan } from '../util/nesting.js';

export class FakeCluster {
  readonly objects = new Map<string, KubeObject>();
  /** Every request, as `verb Kind` (what the API server's audit log counts). */
  readonly requests: string[] = [];
  /** Every request with who sent it. */
  readonly log: FakeRequest[] = [];
  /** Writes that changed something, in order: `apply Kind ns/name (force) as manager`, `create …`, `update …`, `delete …`. */
  readonly writes: string[] = [];
  /** Every real apply, in order: the object as sent, the field manager when one was named, and who sent it. */
  readonly applied: { obj: KubeObject; fieldManager?: string; identity: string }[] = [];
  /** Every apply of the status subresource that landed, in order, as `applied` keeps the others. */
  readonly statusApplied: { obj: KubeObject; fieldManager?: string; identity: string }[] = [];
  /** Every patch that landed (the status subresource's too), in order: what it named, the body as sent, its type, and who sent it. */
  readonly patched: { ref: ObjectRef; patch: unknown; type: 'merge' | 'json' | 'strategic'; subresource?: 'status'; identity: string }[] = [];
  /** Kinds the server does not serve (e.g. a custom resource whose CRD is missing). */
  readonly unknownKinds = new Set<string>();
  /** Applies (and dry runs) of objects whose name is here fail with 422 Invalid. */
  readonly rejectNames = new Set<string>();
  /** Real applies of objects whose name is here fail with 503. */
  readonly unavailableNames = new Set<string>();
  /** Deployments named here never become available. */
  readonly unhealthyNames = new Set<string>();
  /** CRDs (by name) whose conditions the server reports instead of Established=True. */
  readonly crdConditions = new Map<string, { type: string; status: string; reason?: string; message?: string }[]>();
  /** Kinds (`group/version/Kind`) an Established CRD serves that the group list of discovery (`/apis`) and a group-version's resource list leave out yet. */
  readonly notInDiscovery = new Set<string>();
  /** Kinds (`group/version/Kind`) an Established CRD serves that the OpenAPI v3 documents leave out yet. */
  readonly notInOpenApi = new Set<string>();
  /** Applies that change an existing object whose name is here fail with 422 "field is immutable" (dry run too). */
  readonly immutableNames = new Set<string>();
  /** Deletes of objects whose name is here leave them Terminating, held by a finalizer. */
  readonly heldNames = new Set<string>();
  /** Namespaced objects can be created only in a Namespace that exists, as the API server requires (off by default: most fixtures skip Namespaces). */
  requireNamespaces = false;
  /** Awaited before each request is served (a slow API server: tests that measure what runs side by side). */
  latency?: (verb: FakeVerb, kind: string) => Promise<void>;
  /** Who may do what; every request is allowed when unset. */
  authorize?: (req: FakeRequest) => boolean;
  /**
   * How SubjectAccessReviews and SelfSubjectAccessReviews are answered. Unset: a review of a
   * verb and resource the fake serves is answered by `authorize` (as the request it names would
   * be), anything else is allowed.
   */
  reviewAccess?: (review: AccessReview) => boolean;
  /** Every raw request (a template's `lookup`), as sent. */
  readonly raw: { method: string; path: string; identity: string }[] = [];
  /** How many times a client was closed. */
  closed = 0;
  /** Every access review answered, as asked. */
  readonly reviews: AccessReview[] = [];
  /** Every review (access and token reviews alike) created, as sent. */
  readonly reviewed: KubeObject[] = [];
  /** Bearer tokens a TokenReview authenticates, with the user each one is. */
  readonly tokens = new Map<string, { username: string; groups?: string[] }>();
  private readonly faultRules: (FaultRule & { left: number })[] = [];
  private readonly watchers = new Set<(ev: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; rv: number }) => void>();
  private readonly streams = new Set<OpenWatch>();
  private readonly history: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; rv: number }[] = [];
  private rv = 1;
  private uid = 1;
  private readonly now: () => Date;
  /** What `serverVersion` answers. */
  version = 'v1.36.3';

  /** `objects` are put first (the CRDs of the kinds a test serves, say). */
  constructor(opts: { now?: () => Date; objects?: readonly KubeObject[] } = {}) {
    this.now = opts.now ?? (() => new Date());
    for (const o of opts.objects ?? []) this.put(o);
  }

  // --- test conveniences -----------------------------------------------------

  key(ref: { apiVersion: string; kind: string; name?: string | undefined; namespace?: string | undefined }): string {
    return `${parseApiVersion(ref.apiVersion).group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name ?? ''}`;
  }

  /** Puts an object as it is (no request counted): a fixture, or another writer's hand. */
  put(obj: KubeObject): KubeObject {
    const existing = this.objects.get(this.keyOf(obj));
    const stored = this.stamp(structuredClone(obj), existing);
    this.store(stored, existing === undefined ? 'ADDED' : 'MODIFIED');
    return stored;
  }

  /**
   * Puts an object as `fieldManager` (Binnacle's by default) would have applied it, its fields
   * owned by that manager, and its status (if any) as another writer left it; no request counted.
   * A fixture of what a controller applied before: applied again without a field, it loses it.
   */
  putApplied(obj: KubeObject, fieldManager: string = FIELD_MANAGER): KubeObject {
    const existing = this.objects.get(this.keyOf(obj));
    const { status, ...spec } = obj;
    const applied = this.serverSideApply(existing, spec, fieldManager, true, undefined);
    // The server's own metadata as the fixture gives it (an apply never sets it).
    const m = obj.metadata;
    const server = { ...(m.uid === undefined ? {} : { uid: m.uid }), ...(m.creationTimestamp === undefined ? {} : { creationTimestamp: m.creationTimestamp }), ...(m.generation === undefined ? {} : { generation: m.generation }), ...(m.deletionTimestamp === undefined ? {} : { deletionTimestamp: m.deletionTimestamp }) };
    const next = { ...applied, metadata: { ...applied.metadata, ...server } };
    return this.put(status === undefined ? next : { ...next, status });
  }

  get(ref: ObjectRef): KubeObject | undefined {
    return this.objects.get(this.key(ref));
  }

  /** Removes an object at once (no finalizers, no request counted): another writer's hand. */
  remove(ref: ObjectRef): boolean {
    const live = this.get(ref);
    if (live === undefined) return false;
    this.drop(live);
    return true;
  }

  /** Objects of `kind`, optionally in `namespace`. */
  all(kind: string, namespace?: string): KubeObject[] {
    return [...this.objects.values()].filter((o) => o.kind === kind && (namespace === undefined || o.metadata.namespace === namespace));
  }

  /** Arms a failure (see FaultRule); answers a function that disarms it. */
  /**
   * Arms a crash of the process at the n-th write from now by anyone but `kubectl` (someone
   * else's edit is not Binnacle's process crashing), before or after it lands; `crashed` hears
   * of each (the model tests count crashes by write site).
   */
  crashAtWrite(nth: number, when: 'before' | 'after', crashed: (r: FakeRequest) => void): () => void {
    let writes = 0;
    return this.inject({
      match: (r) => WRITE_VERBS.has(r.verb) && r.identity !== 'kubectl' && ++writes === nth,
      when,
      error: (r) => {
        crashed(r);
        return faults.crash(r);
      },
    });
  }

  inject(rule: FaultRule): () => void {
    const armed = { ...rule, left: rule.times ?? 1 };
    this.faultRules.push(armed);
    return () => {
      const i = this.faultRules.indexOf(armed);
      if (i >= 0) this.faultRules.splice(i, 1);
    };
  }

  clearFaults(): void {
    this.faultRules.length = 0;
  }

  /** Writes by verb since the start (or since `from`, an index into `log`). */
  countWrites(from = 0): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.log.slice(from)) if (WRITE_VERBS.has(r.verb)) out[r.verb] = (out[r.verb] ?? 0) + 1;
    return out;
  }

  /** The ports, acting as the cluster's admin (or as `who`). */
  client(who?: Impersonation): FakeClient {
    return new FakeClient(this, who?.user ?? 'admin', who?.groups);
  }

  // --- the API server ----------------------------------------------------------

  kindInfo(apiVersion: string, kind: string): KindInfo | undefined {
    if (this.unknownKinds.has(kind)) return undefined;
    const { group, version } = parseApiVersion(apiVersion);
    for (const [k, g, versions, plural, namespaced] of BUILTIN) if (k === kind && g === group && versions.includes(version)) return { group: g, versions, plural, namespaced };
    for (const crd of this.all('CustomResourceDefinition')) {
      const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string; plural?: string }; scope?: string; versions?: { name?: string; served?: boolean }[] };
      if (spec.group !== group || spec.names?.kind !== kind || crd.metadata.deletionTimestamp !== undefined) continue;
      const served = (spec.versions ?? []).filter((v) => v.served !== false).map((v) => v.name ?? '');
      if (!served.includes(version) || !this.established(crd)) continue;
      return { group, versions: served, plural: spec.names.plural ?? `${kind.toLowerCase()}s`, namespaced: spec.scope !== 'Cluster' };
    }
    return undefined;
  }

  /** The APIResourceList discovery answers for `/api/v1` or `/apis/<group>/<version>`; undefined for any other path. */
  resourceList(path: string): { kind: 'APIResourceList'; groupVersion: string; resources: { name: string; namespaced: boolean; kind: string; verbs: string[] }[] } | undefined {
    const parts = path.split('/').filter((p) => p !== '');
    const groupVersion = parts[0] === 'api' && parts.length === 2 ? (parts[1] ?? '') : parts[0] === 'apis' && parts.length === 3 ? `${parts[1] ?? ''}/${parts[2] ?? ''}` : undefined;
    if (groupVersion === undefined) return undefined;
    const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    const kinds = new Set([...BUILTIN.map(([kind]) => kind), ...this.all('CustomResourceDefinition').map((crd) => ((crd.spec ?? {}) as { names?: { kind?: string } }).names?.kind ?? '')]);
    const resources = [...kinds].flatMap((kind) => {
      const info = this.kindInfo(groupVersion, kind);
      return info === undefined || this.notInDiscovery.has(servedKey({ ...parseApiVersion(groupVersion), kind })) ? [] : [{ name: info.plural, namespaced: info.namespaced, kind, verbs }];
    });
    return resources.length === 0 ? undefined : { kind: 'APIResourceList', groupVersion, resources };
  }

  /** Every group/version/kind served: built in, and each served version of an Established CRD. */
  servedKinds(): ServedKind[] {
    const out: ServedKind[] = BUILTIN.flatMap(([kind, group, versions]) => versions.map((version) => ({ group, version, kind })));
    for (const crd of this.all('CustomResourceDefinition')) {
      const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string }; versions?: { name?: string; served?: boolean }[] };
      if (spec.group === undefined || spec.names?.kind === undefined || crd.metadata.deletionTimestamp !== undefined || !this.established(crd)) continue;
      for (const v of spec.versions ?? []) if (v.served !== false) out.push({ group: spec.group, version: v.name ?? '', kind: spec.names.kind });
    }
    return out;
  }

  /** `/apis`, `/openapi/v3` and its documents, as kubectl reads them (less the kinds held out of each); undefined for any other path. */
  discoveryDocument(path: string): { status: number; body: unknown } | undefined {
    const served = this.servedKinds();
    return discoveryDocument(
      path,
      served.filter((k) => !this.notInDiscovery.has(servedKey(k))),
      served.filter((k) => !this.notInOpenApi.has(servedKey(k))),
    );
  }

  /** The kind a REST path names (`/api/v1/namespaces/ns/configmaps/x`, `/apis/g/v/plural`). */
  pathTarget(path: string): { apiVersion: string; kind: string; namespace?: string; name?: string } | undefined {
    const parts = path.split('/').filter((p) => p !== '');
    let apiVersion: string;
    if (parts[0] === 'api') apiVersion = parts[1] ?? '';
    else if (parts[0] === 'apis') apiVersion = `${parts[1] ?? ''}/${parts[2] ?? ''}`;
    else return undefined;
    let rest = parts.slice(parts[0] === 'api' ? 2 : 3);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name] = rest;
    const { group, version } = parseApiVersion(apiVersion);
    const builtin = BUILTIN.find(([, g, versions, p]) => g === group && versions.includes(version) && p === plural);
    let kind = builtin?.[0];
    if (kind === undefined) {
      for (const crd of this.all('CustomResourceDefinition')) {
        const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string; plural?: string } };
        if (spec.group === group && spec.names?.plural === plural) kind = spec.names?.kind;
      }
    }
    if (kind === undefined) return undefined;
    return { apiVersion, kind, ...(namespace === undefined ? {} : { namespace }), ...(name === undefined ? {} : { name }) };
  }

  private established(crd: KubeObject): boolean {
    const conditions = this.crdConditions.get(crd.metadata.name ?? '');
    return conditions === undefined || conditions.some((c) => c.type === 'Established' && c.status === 'True');
  }

  /**
   * The process that sent the requests was killed (a Crash fault fired): every later request it
   * sends fails with Crash too, so nothing more it does lands, whatever it catches. `restart`
   * starts a new process.
   */
  dead = false;

  /** A new process after a crash: requests land again. */
  restart(): void {
    this.dead = false;
  }

  /** A server-side apply of an absent object: refused, in the API server's words, unless `create` is allowed too. */
  mayCreate(req: FakeRequest): void {
    const create: FakeRequest = { ...req, verb: 'create' };
    if (this.authorize !== undefined && !this.authorize(create)) throw faults.forbidden(create);
  }

  /** Counts the request, checks authorization and the armed faults before it; answers the faults to raise after it. */
  request(req: FakeRequest): FaultRule[] {
    if (this.dead) throw new Crash(`${req.verb} ${req.kind} ${req.namespace}/${req.name} after the crash`);
    this.requests.push(`${req.verb} ${req.kind}`);
    this.log.push(req);
    const after = this.faultsOf(req);
    if (this.authorize !== undefined && !this.authorize(req)) throw faults.forbidden(req);
    return after;
  }

  /** A discovery lookup: not logged, open to everyone, failed only by a fault armed for `discover`. */
  discoveryRequest(req: FakeRequest): void {
    if (this.dead) throw new Crash(`discover ${req.kind} after the crash`);
    const after = this.faultsOf(req)[0];
    if (after !== undefined) throw after.error(req);
  }

  /** Raises the first armed fault for before `req`; answers those armed for after it. */
  private faultsOf(req: FakeRequest): FaultRule[] {
    const after: FaultRule[] = [];
    for (const rule of [...this.faultRules]) {
      if (!matches(rule, req)) continue;
      rule.left--;
      if (rule.left <= 0) this.faultRules.splice(this.faultRules.indexOf(rule), 1);
      if ((rule.when ?? 'before') === 'before') {
        const err = rule.error(req);
        if (err instanceof Crash) this.dead = true;
        throw err;
      }
      after.push(rule);
    }
    return after;
  }

  /** The answer to a review (see REVIEW_KINDS) `from` created: its status, as the API server fills it in. */
  answerReview(obj: KubeObject, from: { identity: string; groups?: readonly string[] | undefined }): KubeObject {
    this.reviewed.push(structuredClone(obj));
    const spec = isRecord(obj.spec) ? obj.spec : {};
    const str = (v: unknown): string => (typeof v === 'string' ? v : '');
    if (obj.kind === 'TokenReview') {
      const user = this.tokens.get(str(spec.token));
      return { ...obj, status: user === undefined ? { authenticated: false } : { authenticated: true, user: { username: user.username, groups: user.groups ?? [] } } };
    }
    if (obj.kind === 'SelfSubjectReview') return { ...obj, status: { userInfo: { username: from.identity, groups: [...(from.groups ?? [])] } } };
    const self = obj.kind === 'SelfSubjectAccessReview';
    const attrs = isRecord(spec.resourceAttributes) ? spec.resourceAttributes : {};
    const nonResource = isRecord(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
    const review: AccessReview = {
      user: self ? from.identity : str(spec.user),
      groups: self ? [...(from.groups ?? [])] : Array.isArray(spec.groups) ? spec.groups.map(str) : [],
      verb: str(nonResource?.verb ?? attrs.verb),
      group: str(attrs.group),
      resource: str(attrs.resource),
      subresource: str(attrs.subresource),
      namespace: str(attrs.namespace),
      name: str(attrs.name),
      path: str(nonResource?.path),
    };
    this.reviews.push(review);
    return { ...obj, status: { allowed: this.allows(review) } };
  }

  private allows(review: AccessReview): boolean {
    if (this.reviewAccess !== undefined) return this.reviewAccess(review);
    const authorize = this.authorize;
    const verbs: readonly string[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    if (authorize === undefined || review.path !== '' || !verbs.includes(review.verb)) return true;
    const served = this.kindOfResource(review.group, review.resource);
    if (served === undefined) return true;
    const verb = (review.subresource === 'status' ? 'status' : review.verb) as FakeVerb;
    return authorize({ verb, ...served, resource: review.resource, namespace: review.namespace, name: review.name, identity: review.user, ...(review.groups.length === 0 ? {} : { groups: review.groups }) });
  }

  /** The apiVersion and kind that serve `resource` (plural) in `group`. */
  kindOfResource(group: string, resource: string): { apiVersion: string; kind: string } | undefined {
    const builtin = BUILTIN.find(([, g, , plural]) => g === group && plural === resource);
    if (builtin !== undefined) return { apiVersion: group === '' ? (builtin[2][0] ?? 'v1') : `${group}/${builtin[2][0] ?? 'v1'}`, kind: builtin[0] };
    for (const crd of this.all('CustomResourceDefinition')) {
      const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string; plural?: string }; versions?: { name?: string; served?: boolean }[] };
      const version = (spec.versions ?? []).find((v) => v.served !== false)?.name;
      if (spec.group === group && spec.names?.plural === resource && spec.names.kind !== undefined && version !== undefined) return { apiVersion: `${group}/${version}`, kind: spec.names.kind };
    }
    return undefined;
  }

  resolve(ref: { apiVersion: string; kind: string; namespace?: string | undefined }): KindInfo {
    const info = this.kindInfo(ref.apiVersion, ref.kind);
    if (info === undefined) throw new KubeApiError(404, 'NotFound', `the server could not find the requested resource (no ${ref.kind} in ${ref.apiVersion})`);
    if (info.namespaced && (ref.namespace === undefined || ref.namespace === '')) throw new KubeApiError(422, 'Invalid', `${ref.kind}: metadata.namespace is required`);
    return info;
  }

  keyOf(obj: KubeObject): string {
    const info = this.kindInfo(obj.apiVersion, obj.kind);
    const ns = info === undefined || info.namespaced ? obj.metadata.namespace : undefined;
    return this.key({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: ns });
  }

  /** Server-set metadata: uid, creationTimestamp and generation kept (a new object's as given, else 1), resourceVersion new, generation bumped by a spec change. */
  private stamp(obj: KubeObject, existing: KubeObject | undefined): KubeObject {
    const meta = obj.metadata;
    meta.uid = existing?.metadata.uid ?? meta.uid ?? `uid-${this.uid++}`;
    meta.creationTimestamp = existing?.metadata.creationTimestamp ?? meta.creationTimestamp ?? this.now().toISOString();
    meta.resourceVersion = String(this.rv++);
    const specOf = (o: KubeObject | undefined): string => JSON.stringify(Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => k !== 'metadata' && k !== 'status')));
    meta.generation = existing === undefined ? (meta.generation ?? 1) : specOf(existing) === specOf(obj) ? (existing.metadata.generation ?? 1) : (existing.metadata.generation ?? 1) + 1;
    if (existing?.metadata.deletionTimestamp !== undefined) meta.deletionTimestamp = existing.metadata.deletionTimestamp;
    return this.withStatus(obj);
  }

  /** What the cluster's own controllers would report: Deployments available, CRDs Established, claims Bound (a provisioner at work). */
  private withStatus(obj: KubeObject): KubeObject {
    const generation = obj.metadata.generation ?? 1;
    if (obj.kind === 'PersistentVolumeClaim' && obj.status === undefined) return { ...obj, status: { phase: 'Bound' } };
    if (obj.kind === 'Deployment') {
      const available = this.unhealthyNames.has(obj.metadata.name ?? '') ? 0 : 1;
      return { ...obj, status: { observedGeneration: generation, replicas: 1, updatedReplicas: 1, readyReplicas: available, availableReplicas: available } };
    }
    if (obj.kind === 'CustomResourceDefinition') {
      // storedVersions keeps every version ever stored, as the API server's does, until someone changes it.
      const given = isRecord(obj.status) && Array.isArray(obj.status.storedVersions) ? (obj.status.storedVersions as string[]) : [];
      const storage = ((isRecord(obj.spec) && Array.isArray(obj.spec.versions) ? obj.spec.versions : []) as { name?: string; storage?: boolean }[]).filter((v) => v.storage === true).map((v) => v.name ?? '');
      const storedVersions = [...new Set([...given, ...storage])];
      const conditions = this.crdConditions.get(obj.metadata.name ?? '') ?? [{ type: 'Established', status: 'True' }, { type: 'NamesAccepted', status: 'True' }];
      return { ...obj, status: { ...(isRecord(obj.status) ? obj.status : {}), conditions, ...(storedVersions.length === 0 ? {} : { storedVersions }) } };
    }
    return obj;
  }

  store(obj: KubeObject, type: 'ADDED' | 'MODIFIED'): void {
    this.objects.set(this.keyOf(obj), obj);
    this.emit(type, obj);
  }

  private emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void {
    const ev = { type, object: structuredClone(obj), rv: Number(obj.metadata.resourceVersion ?? this.rv) };
    this.history.push(ev);
    if (this.history.length > 10_000) this.history.splice(0, this.history.length - 10_000);
    for (const w of this.watchers) w(ev);
  }

  /** Removes an object for good, and (as the garbage collector and the namespace controller) what it owns or holds. */
  drop(live: KubeObject): void {
    if (!this.objects.delete(this.keyOf(live))) return;
    this.emit('DELETED', { ...live, metadata: { ...live.metadata, resourceVersion: String(this.rv++) } });
    const uid = live.metadata.uid;
    for (const o of [...this.objects.values()]) {
      const owned = uid !== undefined && (o.metadata.ownerReferences ?? []).some((r) => r.uid === uid);
      const inNamespace = live.kind === 'Namespace' && live.apiVersion === 'v1' && o.metadata.namespace === live.metadata.name;
      if (owned || inNamespace) this.deleteObject(o);
    }
    if (live.kind === 'CustomResourceDefinition') {
      const spec = (live.spec ?? {}) as { group?: string; names?: { kind?: string } };
      for (const o of [...this.objects.values()]) if (o.kind === spec.names?.kind && parseApiVersion(o.apiVersion).group === spec.group) this.drop(o);
    }
  }

  /** A delete as the API server does it: with finalizers the object only becomes Terminating. */
  deleteObject(live: KubeObject): void {
    const held = this.heldNames.has(live.metadata.name ?? '');
    const finalizers = [...(live.metadata.finalizers ?? []), ...(held && !(live.metadata.finalizers ?? []).includes('example.com/hold') ? ['example.com/hold'] : [])];
    const namespaceWithContent = live.kind === 'Namespace' && [...this.objects.values()].some((o) => o.metadata.namespace === live.metadata.name);
    if (finalizers.length > 0 || namespaceWithContent) {
      if (live.metadata.deletionTimestamp !== undefined && !namespaceWithContent) return;
      const terminating = { ...live, metadata: { ...live.metadata, finalizers, deletionTimestamp: live.metadata.deletionTimestamp ?? this.now().toISOString(), resourceVersion: String(this.rv++) } };
      this.store(terminating, 'MODIFIED');
      if (namespaceWithContent) {
        for (const o of [...this.objects.values()]) if (o.metadata.namespace === live.metadata.name) this.deleteObject(o);
        if (finalizers.length === 0 && ![...this.objects.values()].some((o) => o.metadata.namespace === live.metadata.name)) this.drop(terminating);
      }
      return;
    }
    this.drop(live);
  }

  /** Finishes what the cluster's controllers finish later: Terminating namespaces with nothing left go. */
  settle(): void {
    for (const ns of this.all('Namespace')) {
      if (ns.metadata.deletionTimestamp === undefined || (ns.metadata.finalizers ?? []).length > 0) continue;
      if (![...this.objects.values()].some((o) => o.metadata.namespace === ns.metadata.name)) this.drop(ns);
    }
  }

  subscribe(fn: (ev: { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; rv: number }) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  eventsSince(rv: number): { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; rv: number }[] {
    return this.history.filter((e) => e.rv > rv);
  }

  /** The last resourceVersion given out: a list's, from which a watch goes on. */
  get resourceVersion(): number {
    return this.rv - 1;
  }

  nextResourceVersion(): string {
    return String(this.rv++);
  }

  /** Server-side apply of `obj` by `manager`, over `live` (see the top of this file). */
  serverSideApply(live: KubeObject | undefined, obj: KubeObject, manager: string, force: boolean, subresource: 'status' | undefined): KubeObject {
    const fresh = fieldsOf(obj, subresource === 'status' ? 'status' : 'object');
    const entries: ManagedEntry[] = structuredClone(((live?.metadata.managedFields ?? []) as ManagedEntry[]).filter((e) => isRecord(e.fieldsV1)));
    const conflicts: { manager: string; field: string }[] = [];
    for (const e of entries) {
      if (e.manager === manager && e.operation === 'Apply' && e.subresource === subresource) continue;
      for (const path of leaves(fresh)) {
        if (!holdsPath(e.fieldsV1, path) || same(valueAt(live, path), valueAt(obj, path))) continue;
        if (force) dropPath(e.fieldsV1, path);
        else conflicts.push({ manager: e.manager ?? '', field: `.${path.join('.')}` });
      }
    }
    // As the API server says it: the message, and one FieldManagerConflict cause per field.
    if (conflicts.length > 0) {
      const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${obj.apiVersion}`, field: c.field }));
      throw new KubeApiError(409, 'Conflict', `Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? '' : 's'}: ${causes.map((c) => `${c.message}: ${c.field}`).join('\n')}`, { causes });
    }
    const mine = entries.find((e) => e.manager === manager && e.operation === 'Apply' && e.subresource === subresource);
    const result: KubeObject = structuredClone(live ?? { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name, ...(obj.metadata.namespace === undefined ? {} : { namespace: obj.metadata.namespace }) } });
    result.apiVersion = obj.apiVersion;
    // What this manager applied before and applies no more goes, unless another manager holds it too.
    for (const path of leaves(mine?.fieldsV1 ?? {})) {
      if (holdsPath(fresh, path)) continue;
      if (entries.some((e) => e !== mine && holdsPath(e.fieldsV1, path))) continue;
      deleteAt(result, path);
    }
    for (const path of leaves(fresh)) setAt(result, path, valueAt(obj, path));
    const others = entries.filter((e) => e !== mine && leaves(e.fieldsV1).length > 0);
    const managed: ManagedEntry[] = [...others, { manager, operation: 'Apply', ...(subresource === undefined ? {} : { subresource }), fieldsV1: fresh }];
    result.metadata.managedFields = managed.map((e) => ({ ...e, fieldsType: 'FieldsV1' }));
    return result;
  }

  /** An Update (PUT or patch) by `manager`: the fields it changed become its own. */
  ownChanges(live: KubeObject, next: KubeObject, manager: string, subresource: 'status' | undefined): KubeObject {
    // managedFields the request itself changes are kept as sent (the API server honours them; csaupgrade relies on it).
    const sent = next.metadata.managedFields;
    if (Array.isArray(sent) && sent.length > 0 && JSON.stringify(sent) !== JSON.stringify(live.metadata.managedFields ?? [])) return next;
    const entries: ManagedEntry[] = structuredClone(((live.metadata.managedFields ?? []) as ManagedEntry[]).filter((e) => isRecord(e.fieldsV1)));
    const scope = subresource === 'status' ? 'status' : 'object';
    const before = fieldsOf(live, scope);
    const after = fieldsOf(next, scope);
    const changed = [...leaves(after).filter((p) => !same(valueAt(live, p), valueAt(next, p))), ...leaves(before).filter((p) => !holdsPath(after, p))];
    if (changed.length === 0) return { ...next, metadata: { ...next.metadata, managedFields: live.metadata.managedFields ?? [] } };
    for (const e of entries) for (const p of changed) dropPath(e.fieldsV1, p);
    let mine = entries.find((e) => e.manager === manager && e.operation === 'Update');
    if (mine === undefined) {
      mine = { manager, operation: 'Update', fieldsV1: {} };
      entries.push(mine);
    }
    for (const p of changed.filter((x) => holdsPath(after, x))) {
      let node = mine.fieldsV1;
      for (const k of p.slice(0, -1)) {
        const next2 = node[`f:${k}`];
        if (!isRecord(next2)) node[`f:${k}`] = {};
        node = node[`f:${k}`] as FieldSet;
      }
      node[`f:${p.at(-1) ?? ''}`] = {};
    }
    const managedFields = entries.filter((e) => leaves(e.fieldsV1).length > 0).map((e) => ({ ...e, fieldsType: 'FieldsV1' }));
    return { ...next, metadata: { ...next.metadata, managedFields } };
  }

  /**
   * The WatchEvent stream of `kind` from `resourceVersion` until `signal` aborts or `endWatches`
   * ends it. An object nesting deeper than the client reads comes as its stub, `refused`, as
   * KubeClient's watch sends it.
   */
  async *watchStream(apiVersion: string, kind: string, opts: WatchOptions): AsyncGenerator<WatchEvent> {
    const wanted = (o: KubeObject): boolean =>
      o.kind === kind && parseApiVersion(o.apiVersion).group === parseApiVersion(apiVersion).group && (opts.namespace === undefined || o.metadata.namespace === opts.namespace) && selects(opts.labelSelector, o.metadata.labels);
    const eventOf = (type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject): WatchEvent => {
      const object = { ...structuredClone(o), apiVersion };
      return nestsDeeperThan(object, MAX_OBJECT_NESTING) ? { type, object: stubOf(object), refused: true } : { type, object };
    };
    const stream: OpenWatch = { apiVersion, kind, queue: [], wake: undefined, end: undefined };
    const since = Number(opts.resourceVersion ?? this.resourceVersion);
    for (const ev of this.eventsSince(since)) if (wanted(ev.object)) stream.queue.push(eventOf(ev.type, ev.object));
    const unsubscribe = this.subscribe((ev) => {
      if (!wanted(ev.object) || stream.end !== undefined) return;
      stream.queue.push(eventOf(ev.type, ev.object));
      stream.wake?.();
    });
    this.streams.add(stream);
    const aborted = new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve(), { once: true }));
    const stopped = (): boolean => opts.signal?.aborted === true;
    try {
      for (;;) {
        while (stream.queue.length > 0) {
          const ev = stream.queue.shift();
          if (ev !== undefined) yield ev;
        }
        if (stopped()) return;
        if (stream.end !== undefined) {
          if (stream.end.error !== undefined) throw stream.end.error;
          return;
        }
        await Promise.race([new Promise<void>((resolve) => (stream.wake = resolve)), aborted]);
        stream.wake = undefined;
      }
    } finally {
      unsubscribe();
      this.streams.delete(stream);
    }
  }

  /** Watches open now. */
  get watching(): number {
    return this.streams.size;
  }

  /** Events the open watches hold that their readers have not taken yet. */
  get pendingWatchEvents(): number {
    return [...this.streams].reduce((n, w) => n + w.queue.length, 0);
  }

  /**
   * Ends every open watch once its reader has taken what was already sent: as the API server does
   * at a watch's timeout, or with `error` (a connection cut, `410 Gone` when what it watched from
   * was compacted away); only the watches of `kind`, when given. Later watches are not affected.
   */
  endWatches(opts: { error?: Error; kind?: string } = {}): void {
    const error = opts.error;
    for (const w of this.streams) {
      if (opts.kind !== undefined && w.kind !== opts.kind) continue;
      w.end = error === undefined ? {} : { error };
      w.wake?.();
    }
  }

  /** Sends every open watch a BOOKMARK at the current resourceVersion, as the API server does now and then. */
  bookmark(): void {
    for (const w of this.streams) {
      if (w.end !== undefined) continue;
      w.queue.push({ type: 'BOOKMARK', object: { apiVersion: w.apiVersion, kind: w.kind, metadata: { resourceVersion: String(this.resourceVersion) } } });
      w.wake?.();
    }
  }
}

/** One watch being served: what it watches, the events its reader has not taken, and how it is to end. */
interface OpenWatch {
  apiVersion: string;
  kind: string;
  queue: WatchEvent[];
  wake: (() => void) | undefined;
  end: { error?: Error } | undefined;
}

/** What a request names. */
interface RequestRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name?: string | undefined;
}

/** The fake cluster's ports, as one identity. */
export class FakeClient implements ObjectReader, ObjectWriter, StatusWriter, Discovery, Watcher, Capabilities, RawRequester, Impersonating<FakeClient> {
  constructor(
    readonly cluster: FakeCluster,
    readonly identity: string,
    readonly groups?: readonly string[],
  ) {}

  impersonate(who: Impersonation): FakeClient {
    return new FakeClient(this.cluster, who.user, who.groups);
  }

  /** Sends a request: counted, authorized and faulted (before) by the cluster; answers it and the faults to raise after it. */
  private req(verb: FakeVerb, ref: RequestRef, extra: Pick<FakeRequest, 'propagation' | 'resourceVersion' | 'labelSelector'> = {}): { req: FakeRequest; after: FaultRule[] } {
    const req = this.request(verb, ref, extra);
    return { req, after: this.cluster.request(req) };
  }

  /**
   * As the API server: a server-side apply that makes the object is a create too, and RBAC checks
   * both (a dry run as well: the store checks create before it decides not to write); not a
   * status write, which needs the object.
   */
  private applyMayCreate(req: FakeRequest, live: KubeObject | undefined, opts: ApplyOptions): void {
    if (live === undefined && opts.subresource !== 'status') this.cluster.mayCreate(req);
  }

  /** Raises the faults armed for after a request that landed. */
  private after(rules: FaultRule[], req: FakeRequest): void {
    const first = rules[0];
    if (first === undefined) return;
    const err = first.error(req);
    if (err instanceof Crash) this.cluster.dead = true;
    throw err;
  }

  private request(verb: FakeVerb, ref: RequestRef, extra: Pick<FakeRequest, 'propagation' | 'resourceVersion' | 'labelSelector'> = {}): FakeRequest {
    // The real client's checks before any request: an apiVersion or name that would climb in a URL path.
    if (verb !== 'discover' || ref.apiVersion !== '') checkApiVersion(ref.apiVersion);
    checkPathNames(ref.kind, ref);
    const resource = this.cluster.kindInfo(ref.apiVersion, ref.kind)?.plural ?? `${ref.kind.toLowerCase()}s`;
    return {
      verb,
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      resource,
      namespace: ref.namespace ?? '',
      name: ref.name ?? '',
      identity: this.identity,
      ...(this.groups === undefined || this.groups.length === 0 ? {} : { groups: [...this.groups] }),
      ...(extra.propagation === undefined ? {} : { propagation: extra.propagation }),
      ...(extra.resourceVersion === undefined ? {} : { resourceVersion: extra.resourceVersion }),
      ...(extra.labelSelector === undefined || extra.labelSelector === '' ? {} : { labelSelector: extra.labelSelector }),
    };
  }

  resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo> {
    try {
      this.cluster.discoveryRequest(this.request('discover', { apiVersion, kind }));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const info = this.cluster.kindInfo(apiVersion, kind);
    if (info === undefined) return Promise.reject(new KubeApiError(404, 'NotFound', `the server has no resource for kind ${kind} in ${apiVersion} (is its CRD installed?)`));
    return Promise.resolve({ name: info.plural, namespaced: info.namespaced, kind, verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] });
  }

  invalidateDiscovery(): void {
    // Discovery is always current here.
  }

  /** Frees nothing (the fake holds no sockets); counted in `closed`. */
  close(): void {
    this.cluster.closed++;
  }

  /** The server's version (a discovery request: a fault armed for `discover` with no kind fails it). */
  serverVersion(): Promise<string> {
    try {
      this.cluster.discoveryRequest(this.request('discover', { apiVersion: '', kind: '' }));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return Promise.resolve(this.cluster.version);
  }

  /** Every served group/version and group/version/Kind, as aggregated discovery lists them. */
  apiVersionSet(): Promise<string[]> {
    try {
      this.cluster.discoveryRequest(this.request('discover', { apiVersion: '', kind: '' }));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const out = new Set<string>();
    for (const [kind, group, versions] of BUILTIN) {
      for (const v of versions) {
        const gv = group === '' ? v : `${group}/${v}`;
        out.add(gv);
        out.add(`${gv}/${kind}`);
      }
    }
    for (const crd of this.cluster.all('CustomResourceDefinition')) {
      const spec = (crd.spec ?? {}) as { group?: string; names?: { kind?: string }; versions?: { name?: string; served?: boolean }[] };
      for (const v of spec.versions ?? []) {
        if (v.served === false || spec.group === undefined) continue;
        out.add(`${spec.group}/${v.name ?? ''}`);
        out.add(`${spec.group}/${v.name ?? ''}/${spec.names?.kind ?? ''}`);
      }
    }
    return Promise.resolve([...out].sort());
  }

  /** A GET of one object or a list by its REST path, of a group version's resources, of `/apis` or of OpenAPI v3, as a template's `lookup` or kubectl asks (other methods: 405); each one kept in `raw`. */
  async rawRequest(method: string, path: string): Promise<{ status: number; body: string }> {
    this.cluster.raw.push({ method, path, identity: this.identity });
    if (method.toUpperCase() !== 'GET') return { status: 405, body: '' };
    const bare = path.split('?')[0] ?? '';
    const document = this.cluster.discoveryDocument(bare);
    if (document !== undefined) return { status: document.status, body: JSON.stringify(document.body) };
    const resources = this.cluster.resourceList(bare);
    if (resources !== undefined) return { status: 200, body: JSON.stringify(resources) };
    const target = this.cluster.pathTarget(bare);
    if (target === undefined) return { status: 404, body: JSON.stringify({ kind: 'Status', reason: 'NotFound', code: 404 }) };
    try {
      if (target.name === undefined) return { status: 200, body: JSON.stringify(await this.list(target.apiVersion, target.kind, target.namespace === undefined ? {} : { namespace: target.namespace })) };
      const found = await this.find({ apiVersion: target.apiVersion, kind: target.kind, name: target.name, namespace: target.namespace });
      return found === undefined ? { status: 404, body: JSON.stringify({ kind: 'Status', reason: 'NotFound', code: 404 }) } : { status: 200, body: JSON.stringify(found) };
    } catch (err) {
      const status = err instanceof KubeApiError ? err.statusCode : 500;
      return { status, body: JSON.stringify({ kind: 'Status', code: status, message: err instanceof Error ? err.message : String(err) }) };
    }
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    const found = await this.find<T>(ref);
    if (found === undefined) throw new KubeApiError(404, 'NotFound', `${describeRef(ref)} not found`);
    return found;
  }

  find<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return this.run('get', ref.kind, () => {
      const { req, after } = this.req('get', ref);
      // A kind no one serves is NotFound, which find answers as undefined (as KubeClient's does).
      const live = this.cluster.kindInfo(ref.apiVersion, ref.kind) === undefined ? undefined : (this.cluster.resolve(ref), this.cluster.get(ref));
      this.after(after, req);
      if (live !== undefined && nestsDeeperThan(live, MAX_OBJECT_NESTING)) {
        throw new BinnacleError('terminal', 'KUBE_OBJECT_TOO_DEEP', `get ${describeRef(ref)}: the object nests deeper than ${MAX_OBJECT_NESTING} levels, which Binnacle does not read (the API server keeps up to 10,000); make it shallower`);
      }
      return live === undefined ? undefined : (structuredClone(live) as T);
    });
  }

  list<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts: ListOptions = {}): Promise<KubeList<T>> {
    return this.run('list', kind, () => {
      const { req, after } = this.req('list', { apiVersion, kind, namespace: opts.namespace }, opts.labelSelector === undefined ? {} : { labelSelector: opts.labelSelector });
      if (this.cluster.kindInfo(apiVersion, kind) === undefined) throw new KubeApiError(404, 'NotFound', `no ${kind} in ${apiVersion}`);
      const group = parseApiVersion(apiVersion).group;
      const items = [...this.cluster.objects.values()]
        .filter((o) => o.kind === kind && parseApiVersion(o.apiVersion).group === group && (opts.namespace === undefined || opts.namespace === '' || o.metadata.namespace === opts.namespace))
        .filter((o) => selects(opts.labelSelector, o.metadata.labels) && selectsFields(opts.fieldSelector, o))
        .sort((a, b) => `${a.metadata.namespace ?? ''}/${a.metadata.name ?? ''}`.localeCompare(`${b.metadata.namespace ?? ''}/${b.metadata.name ?? ''}`))
        .map((o) => structuredClone({ ...o, apiVersion }) as T);
      this.after(after, req);
      // As KubeClient's list: an object too deep to read is left out and named.
      const refused = items.filter((o) => nestsDeeperThan(o, MAX_OBJECT_NESTING));
      const readable = items.filter((o) => !refused.includes(o));
      return { apiVersion, kind: `${kind}List`, metadata: { resourceVersion: String(this.cluster.resourceVersion) }, items: readable, ...(refused.length === 0 ? {} : { refused: refused.map(stubOf) }) };
    });
  }

  apply<T extends KubeObject = KubeObject>(obj: KubeObject, opts: ApplyOptions = {}): Promise<T> {
    return this.run(opts.dryRun === true ? 'dry-run' : 'apply', obj.kind, () => {
      const verb: FakeVerb = opts.dryRun === true ? 'dry-run' : opts.subresource === 'status' ? 'status' : 'apply';
      const ref = { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
      const { req, after } = this.req(verb, ref);
      const info = this.cluster.resolve({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace });
      const name = obj.metadata.name ?? '';
      if (this.cluster.rejectNames.has(name)) throw new KubeApiError(422, 'Invalid', `${obj.kind} "${name}" is invalid: spec: Invalid value`);
      const scoped = info.namespaced ? obj : { ...obj, metadata: { ...obj.metadata, namespace: undefined } };
      const live = this.cluster.objects.get(this.cluster.keyOf(scoped));
      if (opts.subresource === 'status' && live === undefined) throw new KubeApiError(404, 'NotFound', `${describeRef({ ...ref, apiVersion: obj.apiVersion, name })} not found`);
      if (this.cluster.immutableNames.has(name) && live !== undefined && JSON.stringify(live.spec) !== JSON.stringify(obj.spec)) {
        throw new KubeApiError(422, 'Invalid', `${obj.kind} "${name}" is invalid: spec.selector: Invalid value: field is immutable`);
      }
      this.applyMayCreate(req, live, opts);
      if (live === undefined && info.namespaced && obj.metadata.namespace !== undefined) this.namespaceMustAccept(obj.metadata.namespace);
      if (this.cluster.unavailableNames.has(name) && opts.dryRun !== true) throw new KubeApiError(503, 'ServiceUnavailable', `apply ${obj.kind} ${name}: storage is (re)initializing`);
      const manager = opts.fieldManager ?? FIELD_MANAGER;
      const next = this.cluster.serverSideApply(live, info.namespaced ? obj : { ...obj, metadata: { ...obj.metadata, namespace: undefined } }, manager, opts.force === true, opts.subresource);
      if (opts.dryRun === true) return next as T;
      const stored = this.put(next, live);
      if (opts.subresource !== 'status') {
        this.cluster.writes.push(`apply ${describeRef({ ...ref, apiVersion: obj.apiVersion, name })}${opts.force === true ? ' (force)' : ''}${opts.fieldManager === undefined ? '' : ` as ${opts.fieldManager}`}`);
        this.cluster.applied.push({ obj: structuredClone(obj), ...(opts.fieldManager === undefined ? {} : { fieldManager: opts.fieldManager }), identity: this.identity });
      } else {
        this.cluster.statusApplied.push({ obj: structuredClone(obj), ...(opts.fieldManager === undefined ? {} : { fieldManager: opts.fieldManager }), identity: this.identity });
      }
      this.after(after, req);
      return stored as T;
    });
  }

  applyStatus<T extends KubeObject = KubeObject>(obj: KubeObject, opts: { fieldManager?: string; force?: boolean } = {}): Promise<T> {
    return this.apply<T>(obj, { ...opts, subresource: 'status' });
  }

  create<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T> {
    return this.run('create', obj.kind, () => {
      const ref = { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
      const { req, after } = this.req('create', ref);
      const info = this.cluster.resolve({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace });
      if (REVIEW_KINDS.has(obj.kind)) {
        const answer = this.cluster.answerReview(structuredClone(obj), this);
        this.after(after, req);
        return answer as T;
      }
      const named = obj.metadata.name === undefined && obj.metadata.generateName !== undefined ? { ...obj, metadata: { ...obj.metadata, name: `${obj.metadata.generateName}${this.cluster.nextResourceVersion()}` } } : obj;
      const scoped = info.namespaced ? named : { ...named, metadata: { ...named.metadata, namespace: undefined } };
      if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(scoped.metadata.name ?? '')) throw new KubeApiError(422, 'Invalid', `${obj.kind} "${scoped.metadata.name ?? ''}" is invalid: metadata.name: a lowercase RFC 1123 subdomain is required`);
      if (this.cluster.objects.has(this.cluster.keyOf(scoped))) throw new KubeApiError(409, 'AlreadyExists', `${obj.kind} "${scoped.metadata.name ?? ''}" already exists`);
      if (info.namespaced && scoped.metadata.namespace !== undefined) this.namespaceMustAccept(scoped.metadata.namespace);
      const { managedFields: _mf, ...meta } = scoped.metadata;
      const stored = this.put(this.cluster.ownChanges({ apiVersion: scoped.apiVersion, kind: scoped.kind, metadata: {} }, { ...scoped, metadata: meta }, this.identity, undefined), undefined);
      this.cluster.writes.push(`create ${describeRef({ ...ref, name: scoped.metadata.name ?? '' })}`);
      this.after(after, req);
      return stored as T;
    });
  }

  update<T extends KubeObject = KubeObject>(obj: KubeObject, subresource?: 'status'): Promise<T> {
    return this.run('update', obj.kind, () => {
      const ref = { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
      const { req, after } = this.req(subresource === 'status' ? 'status' : 'update', ref);
      this.cluster.resolve({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace });
      const live = this.cluster.objects.get(this.cluster.keyOf(obj));
      if (live === undefined) throw new KubeApiError(404, 'NotFound', `${obj.kind} "${obj.metadata.name ?? ''}" not found`);
      const rv = obj.metadata.resourceVersion;
      if (rv !== undefined && rv !== '' && rv !== live.metadata.resourceVersion) throw faults.conflict();
      let next: KubeObject = subresource === 'status' ? { ...live, status: obj.status } : { ...obj, status: live.status };
      next = this.cluster.ownChanges(live, next, this.identity, subresource);
      const stored = this.finishWrite(next, live);
      if (subresource !== 'status') this.cluster.writes.push(`update ${describeRef({ ...ref, name: obj.metadata.name ?? '' })}`);
      this.after(after, req);
      return stored as T;
    });
  }

  updateStatus<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T> {
    return this.update<T>(obj, 'status');
  }

  patch<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, type: 'merge' | 'json' | 'strategic' = 'merge', opts: PatchOptions & { subresource?: 'status' } = {}): Promise<T> {
    const subresource = opts.subresource;
    return this.run('patch', ref.kind, () => {
      const { req, after } = this.req(subresource === 'status' ? 'status' : 'patch', ref);
      this.cluster.resolve(ref);
      const live = this.cluster.get(ref);
      if (live === undefined) throw new KubeApiError(404, 'NotFound', `${describeRef(ref)} not found`);
      if (type === 'json') throw new KubeApiError(415, 'UnsupportedMediaType', 'the fake cluster takes merge patches');
      const rv = isRecord(patch) && isRecord(patch.metadata) ? patch.metadata.resourceVersion : undefined;
      if (typeof rv === 'string' && rv !== '' && rv !== live.metadata.resourceVersion) throw faults.conflict();
      // A uid in a patch that is not the object's: the API server refuses it as a change of an immutable field.
      const uid = isRecord(patch) && isRecord(patch.metadata) ? patch.metadata.uid : undefined;
      if (typeof uid === 'string' && uid !== '' && uid !== live.metadata.uid) throw new KubeApiError(422, 'Invalid', `${ref.kind}.apps "${ref.name}" is invalid: metadata.uid: Invalid value: "${uid}": field is immutable`, { name: ref.name, kind: ref.kind, causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: "${uid}": field is immutable`, field: 'metadata.uid' }] });
      const merged = mergePatch(live, patch) as KubeObject;
      const next = subresource === 'status' ? { ...live, status: merged.status } : { ...merged, status: live.status };
      const stored = this.finishWrite(this.cluster.ownChanges(live, next, opts.fieldManager ?? this.identity, subresource), live);
      if (subresource !== 'status') this.cluster.writes.push(`patch ${describeRef(ref)}`);
      this.cluster.patched.push({ ref: { ...ref }, patch: structuredClone(patch), type, ...(subresource === undefined ? {} : { subresource }), identity: this.identity });
      this.after(after, req);
      return stored as T;
    });
  }

  patchStatus<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: unknown, type: 'merge' | 'json' = 'merge'): Promise<T> {
    return this.patch<T>(ref, patch, type, { subresource: 'status' });
  }

  delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    return this.run('delete', ref.kind, () => {
      const { req, after } = this.req('delete', ref, opts.propagationPolicy === undefined ? {} : { propagation: opts.propagationPolicy });
      this.cluster.resolve(ref);
      const live = this.cluster.get(ref);
      if (live === undefined) {
        this.after(after, req);
        return false;
      }
      if (opts.preconditions?.uid !== undefined && opts.preconditions.uid !== live.metadata.uid) throw faults.conflict();
      this.cluster.deleteObject(live);
      this.cluster.writes.push(`delete ${describeRef(ref)}${this.cluster.heldNames.has(ref.name) ? ' (held)' : ''}`);
      this.after(after, req);
      return true;
    });
  }

  async *watch<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, opts: WatchOptions = {}): AsyncGenerator<WatchEvent<T>> {
    this.req('watch', { apiVersion, kind, namespace: opts.namespace }, { ...(opts.resourceVersion === undefined ? {} : { resourceVersion: opts.resourceVersion }), ...(opts.labelSelector === undefined ? {} : { labelSelector: opts.labelSelector }) });
    if (this.cluster.kindInfo(apiVersion, kind) === undefined) throw new KubeApiError(404, 'NotFound', `the server could not find the requested resource (no ${kind} in ${apiVersion})`);
    for await (const ev of this.cluster.watchStream(apiVersion, kind, opts)) yield ev as WatchEvent<T>;
  }

  /** A Namespace being deleted takes nothing new, as the API server's admission refuses it (nor one that does not exist, with requireNamespaces). */
  private namespaceMustAccept(namespace: string): void {
    const ns = this.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
    if (ns === undefined && this.cluster.requireNamespaces) throw new KubeApiError(404, 'NotFound', `namespaces "${namespace}" not found`);
    if (ns?.metadata.deletionTimestamp !== undefined) throw new KubeApiError(403, 'Forbidden', `unable to create new content in namespace ${namespace} because it is being terminated`);
  }

  private put(next: KubeObject, live: KubeObject | undefined): KubeObject {
    return this.finishWrite(next, live);
  }

  /** Stores a write; an object being deleted whose last finalizer went is removed. */
  private finishWrite(next: KubeObject, live: KubeObject | undefined): KubeObject {
    const stored = this.cluster.put(next);
    if (live !== undefined && stored.metadata.deletionTimestamp !== undefined && (stored.metadata.finalizers ?? []).length === 0) {
      this.cluster.drop(stored);
      this.cluster.settle();
    }
    return structuredClone(stored);
  }

  /** Serves one request: after the cluster's latency, when it has one (else at once, in this tick). */
  private run<T>(verb: FakeVerb, kind: string, fn: () => T): Promise<T> {
    const serve = (): Promise<T> => {
      try {
        return Promise.resolve(fn());
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    const latency = this.cluster.latency;
    return latency === undefined ? serve() : latency(verb, kind).then(serve);
  }
}
