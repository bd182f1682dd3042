/**
 * The release engine's test world: the real Helm release and BundleDeployment reconcilers and
 * the real operations over the one fake cluster, a stand-in render (a pure function of the
 * spec), the checks made on every write a reconcile makes, and the invariants of a settled
 * release. The model-based test (release-engine.model.test.ts) drives it with random sequences;
 * the decision table (release-decision.table.test.ts) seeds histories into it.
 */
import { pino } from 'pino';
import { ReleaseRecords, revisionRecordSecret, RECORD_OWNER_UID_LABEL, parseManifest, toManifest, type RecordOwner } from '../apply/index.js';
import { RECORD_BOUNDS } from '../apply/release.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { HELM_RELEASE_NAME_ANNOTATION, OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../apply/ownership.js';
import { API_VERSION, FINALIZER_CLEANUP, type BundleDeployment } from '../api/types.js';
import { Crash, FakeCluster, WRITE_VERBS, type FakeRequest } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import type { ReleaseHook } from '../apply/types.js';
import type { ChartRender } from '../helm/chart-render.js';
import { BundleDeploymentReconciler, bundleInputDigest } from './bundle-deployment.js';
import { HelmReleaseReconciler, UNINSTALL_FINALIZER } from './helm-operator/helm-release.js';

export const logger = pino({ level: 'silent' });
export const SYSTEM = 'binnacle-system';
export const NS = 'team-a';
export const SA = 'system:serviceaccount:team-a:releaser';
export const MAX_HISTORY = 10;

export type Variant = 'A' | 'B' | 'C';

/** What a spec variant renders: the same Namespace and claim always (so deleting them is never right short of an uninstall), the rest varying. */
export function objectsOf(v: Variant, prefix: string): KubeObject[] {
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${prefix}-data` } },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${prefix}-claim`, namespace: NS }, spec: { resources: { requests: { storage: '1Gi' } } } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-config`, namespace: NS }, data: { variant: v } },
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `${prefix}-app`, namespace: NS }, spec: { replicas: 1, template: { spec: { containers: [{ name: 'app', image: `app:${v}` }] } } } },
  ];
  if (v === 'B') objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-only-b`, namespace: NS }, data: { b: '1' } });
  // B also renders the release's own namespace (a chart's `createNamespace`): the next A or C must not prune it.
  if (v === 'B') objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  if (v === 'C') objects.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${prefix}-only-c`, namespace: NS }, data: { c: 'MQ==' } });
  return objects;
}

/** The release's own namespace as an earlier revision of the release left it (with its marks): B renders it, A and C do not. */
export function releaseNamespace(subject: Subject): KubeObject {
  const helm = subject === helmSubject;
  const labels = { [OWNER_KIND_LABEL]: helm ? 'Pushgateway' : 'BundleDeployment', [OWNER_NAME_LABEL]: subject.prefix, ...(helm ? { 'binnacle.dev/owner-namespace': NS } : {}) };
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels, annotations: { [HELM_RELEASE_NAME_ANNOTATION]: subject.release.name, 'meta.helm.sh/release-namespace': NS } } };
}

/** Kept by design while its release lives and after (it holds the release's records and whatever else is there): never pruned, deleted only by an uninstall. */
export const RELEASE_NAMESPACE_ID = `Namespace//${NS}`;

/** Objects that hold data: deleted only by the uninstall of the release that made them. */
export const HOLDS_DATA = new Set(['Namespace', 'PersistentVolumeClaim']);

export const idOf = (o: { kind: string; metadata?: { name?: string; namespace?: string }; name?: string; namespace?: string }): string => `${o.kind}/${o.metadata?.namespace ?? o.namespace ?? ''}/${o.metadata?.name ?? o.name ?? ''}`;

/** One owner kind under test: how to create, change and delete its object, and to reconcile it. */
export interface Subject {
  name: string;
  prefix: string;
  /** Creates the owner (a new uid) with spec variant `v`. */
  create(w: World, v: Variant): void;
  setVariant(w: World, v: Variant): void;
  /** Marks the owner deleted (its finalizer holds it). */
  remove(w: World): void;
  exists(w: World): boolean;
  deleting(w: World): boolean;
  uid(w: World): string;
  reconcile(w: World): Promise<unknown>;
  deployed(w: World): boolean;
  /** Who acts for the release (its writes are checked against the scope). */
  identity: string;
  /** The Helm mirror's release name and namespace. */
  release: { name: string; namespace: string };
  /** Fresh reconcilers (a leader change: nothing of the old one's memory). */
  restart(w: World): void;
  /** The input digest the reconciler computes for spec variant `v`. */
  digestOf(w: World, v: Variant): string;
  /** The owner as its records name it. */
  recordOwner(w: World): RecordOwner;
}

export interface World {
  cluster: FakeCluster;
  records: ReleaseRecords;
  variant: Variant;
  helm?: HelmReleaseReconciler;
  bd?: BundleDeploymentReconciler;
  /** Problems seen along the way (checked at the end of each command). */
  violations: string[];
  crashes: Map<string, number>;
  reconciles: number;
  /** Whether the neighbour's ConfigMap (neighbourObject) is there: it must stay as the neighbour left it. */
  neighbour: boolean;
}

export const stats = { sequences: 0, commands: 0, reconciles: 0, crashes: new Map<string, number>() };

/**
 * The Helm chart's hook: a ConfigMap run before every install, upgrade and uninstall, deleted once it
 * succeeded (so its name is free between runs, and another release may take it: a hook must
 * then neither delete nor take over that release's object).
 */
export const HOOK_NAME = 'pg-hook';
export const HOOK_ID = `ConfigMap/${NS}/${HOOK_NAME}`;
const hook: ReleaseHook = { name: HOOK_NAME, kind: 'ConfigMap', path: 'pg/templates/hook.yaml', manifest: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${HOOK_NAME}\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade,pre-delete\n    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded\ndata:\n  ran: "yes"\n`, events: ['pre-install', 'pre-upgrade', 'pre-delete'], weight: 0, delete_policies: ['before-hook-creation', 'hook-succeeded'], last_run: { started_at: '', completed_at: '', phase: '' } };

/** The neighbour: another release's ConfigMap (release `gw` in the same namespace) with the hook's name. */
export function neighbourObject(): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: HOOK_NAME, namespace: NS, labels: { [OWNER_KIND_LABEL]: 'Pushgateway', [OWNER_NAME_LABEL]: 'gw', 'binnacle.dev/owner-namespace': NS }, annotations: { [HELM_RELEASE_NAME_ANNOTATION]: 'gw', 'meta.helm.sh/release-namespace': NS } }, data: { owner: 'gw' } };
}

export function rendered(v: Variant, prefix: string): ChartRender {
  const objects = objectsOf(v, prefix).map((o) => ({ ...o, metadata: { ...o.metadata } }));
  const manifest = toManifest(objects);
  return { objects, content: { chart: { metadata: { name: prefix, version: '1.0.0' }, templates: [{ name: 'templates/all.yaml', data: '' }] }, manifest, hooks: [{ ...hook }], notes: v }, chart: { name: prefix, version: '1.0.0' }, inputDigest: `d-${v}`, notes: v, values: {} };
}

export const helmSubject: Subject = {
  name: 'helm release',
  prefix: 'pg',
  identity: SA,
  release: { name: 'pg', namespace: NS },
  create(w, v) {
    w.variant = v;
    w.cluster.put({ apiVersion: 'example.com/v1', kind: 'Pushgateway', metadata: { name: 'pg', namespace: NS, uid: `pg-${w.cluster.resourceVersion}`, finalizers: [UNINSTALL_FINALIZER] }, spec: { variant: v } });
  },
  setVariant(w, v) {
    const cr = w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' });
    if (cr === undefined || cr.metadata.deletionTimestamp !== undefined) return;
    w.variant = v;
    w.cluster.put({ ...cr, spec: { variant: v } });
  },
  remove(w) {
    const cr = w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' });
    if (cr !== undefined && cr.metadata.deletionTimestamp === undefined) w.cluster.put({ ...cr, metadata: { ...cr.metadata, deletionTimestamp: '2026-12-02T00:00:00Z' } });
  },
  exists: (w) => w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' }) !== undefined,
  deleting: (w) => w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' })?.metadata.deletionTimestamp !== undefined,
  uid: (w) => w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' })?.metadata.uid ?? '',
  reconcile: (w) => (w.helm as HelmReleaseReconciler).reconcile({ key: `${NS}/pg`, namespace: NS, name: 'pg' }, { logger, signal: new AbortController().signal }),
  deployed(w) {
    const status = w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' })?.status as { conditions?: { type: string; status: string }[] } | undefined;
    return status?.conditions?.some((c) => c.type === 'Deployed' && c.status === 'True') === true;
  },
  digestOf: (_w, v) => `d-${v}`,
  recordOwner: (w) => ({ kind: 'Pushgateway', name: 'pg', namespace: NS, uid: helmSubject.uid(w), apiVersion: 'example.com/v1' }),
  restart(w) {
    w.helm = new HelmReleaseReconciler({
      client: w.cluster.client({ user: 'manager' }),
      kind: { group: 'example.com', version: 'v1', kind: 'Pushgateway', chart: () => ({ path: '/charts/pg', digest: 'sha256:c', version: '1.0.0' }), identity: { type: 'namespaceServiceAccount', name: 'releaser' }, scope: { clusterScopedKinds: ['Namespace'] } },
      engine: { records: w.records, pollIntervalMs: 1 },
      ports: {
        inputDigest: (input) => Promise.resolve(`d-${String(input.values.variant)}`),
        render: (input) => Promise.resolve(rendered(input.values.variant as Variant, 'pg')),
        event: () => Promise.resolve(),
      },
    });
  },
};

export const BD_REF = { apiVersion: API_VERSION, kind: 'BundleDeployment', name: 'op' };

export const bdSubject: Subject = {
  name: 'bundle deployment',
  prefix: 'op',
  identity: 'system:serviceaccount:team-a:installer',
  release: { name: 'op', namespace: NS },
  create(w, v) {
    w.variant = v;
    const bd: BundleDeployment = { apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name: 'op', uid: `op-${w.cluster.resourceVersion}`, finalizers: [FINALIZER_CLEANUP] }, spec: { source: { type: 'configMaps', configMaps: [{ namespace: NS, name: 'op-bundle' }] }, format: 'plain', installNamespace: NS, serviceAccount: { name: 'installer' }, values: { variant: v } } };
    w.cluster.put(bd);
  },
  setVariant(w, v) {
    const bd = w.cluster.get(BD_REF) as BundleDeployment | undefined;
    if (bd === undefined || bd.metadata.deletionTimestamp !== undefined) return;
    w.variant = v;
    w.cluster.put({ ...bd, spec: { ...bd.spec, values: { variant: v } } });
  },
  remove(w) {
    const bd = w.cluster.get(BD_REF);
    if (bd !== undefined && bd.metadata.deletionTimestamp === undefined) w.cluster.put({ ...bd, metadata: { ...bd.metadata, deletionTimestamp: '2026-12-02T00:00:00Z' } });
  },
  exists: (w) => w.cluster.get(BD_REF) !== undefined,
  deleting: (w) => w.cluster.get(BD_REF)?.metadata.deletionTimestamp !== undefined,
  uid: (w) => w.cluster.get(BD_REF)?.metadata.uid ?? '',
  reconcile: (w) => (w.bd as BundleDeploymentReconciler).reconcile({ key: 'op', name: 'op' }, { logger, signal: new AbortController().signal }),
  deployed(w) {
    const status = w.cluster.get(BD_REF)?.status as { conditions?: { type: string; status: string; reason?: string }[] } | undefined;
    return status?.conditions?.some((c) => c.type === 'Installed' && c.status === 'True' && c.reason === 'Succeeded') === true;
  },
  digestOf(w, v) {
    const bd = w.cluster.get(BD_REF) as BundleDeployment;
    return bundleInputDigest({ ...bd, spec: { ...bd.spec, values: { variant: v } } }, 'sha256:content', undefined);
  },
  recordOwner: (w) => ({ kind: 'BundleDeployment', name: 'op', uid: bdSubject.uid(w), apiVersion: API_VERSION }),
  restart(w) {
    let now = Date.parse('2026-12-02T00:00:00Z');
    w.bd = new BundleDeploymentReconciler({
      client: w.cluster.client({ user: 'manager' }),
      engine: { records: w.records, pollIntervalMs: 1 },
      cacheDir: '/nonexistent',
      healthTimeoutMs: 50,
      ports: {
        unpack: () => Promise.resolve({ dir: '/bundle', digest: 'sha256:content', resolved: { type: 'configMaps' } }),
        render: (_format, ctx) => Promise.resolve({ objects: objectsOf(ctx.spec.values?.variant as Variant, 'op'), chart: { name: 'op', version: '1.0.0' } }),
        webhookCerts: () => Promise.resolve(undefined),
        missingPermissions: () => Promise.resolve([]),
        recordEvent: () => Promise.resolve(),
        // A virtual clock: a failed install's minute passes at once.
        now: () => (now += 120_000),
      },
    });
  },
};

export function newWorld(subject: Subject): World {
  const cluster = new FakeCluster();
  cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM } });
  cluster.put(crdOf({ group: 'example.com', kind: 'Pushgateway', plural: 'pushgateways' }, {}));
  const bdCrd = crdOf({ group: 'binnacle.dev', kind: 'BundleDeployment', plural: 'bundledeployments' }, {});
  cluster.put({ ...bdCrd, spec: { ...(bdCrd.spec as object), scope: 'Cluster', versions: [{ name: 'v1alpha1', served: true, storage: true }] } });
  const records = new ReleaseRecords({ client: cluster.client({ user: 'manager' }), namespace: SYSTEM, logger });
  const w: World = { cluster, records, variant: 'A', violations: [], crashes: new Map(), reconciles: 0, neighbour: false };
  ensureReleaseNamespace(w, subject);
  subject.restart(w);
  return w;
}

/**
 * The release namespace and its ServiceAccounts, as an admin makes them: at the start, and again
 * after an uninstall of a revision that rendered the namespace deleted it (and all in it).
 */
export function ensureReleaseNamespace(w: World, subject: Subject): void {
  w.cluster.settle();
  if (w.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: NS }) !== undefined) return;
  w.cluster.put(releaseNamespace(subject));
  for (const sa of ['releaser', 'installer']) w.cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: NS, name: sa } });
}

/** Whether the release namespace is being deleted: the API server creates nothing in it then ("unable to create new content"). */
export function namespaceTerminating(w: World): boolean {
  return w.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: NS })?.metadata.deletionTimestamp !== undefined;
}

/** The objects of the release (by the owner's labels), by identity. */
export function ownedObjects(w: World, subject: Subject): Map<string, KubeObject> {
  const out = new Map<string, KubeObject>();
  for (const o of w.cluster.objects.values()) {
    if (o.metadata.labels?.[OWNER_NAME_LABEL] !== subject.prefix || o.metadata.annotations?.[HELM_RELEASE_NAME_ANNOTATION] !== subject.release.name) continue;
    if (o.kind === 'Secret' && (o.metadata.name ?? '').startsWith('sh.helm.release.')) continue;
    // A hook's object is not the release's (Helm neither prunes nor uninstalls it): one a crash left is not counted.
    if (idOf(o) === HOOK_ID) continue;
    out.set(idOf(o), o);
  }
  return out;
}

export function trustedRevisions(w: World, uid: string): { revision: number; status: string }[] {
  return w.cluster
    .all('Secret', SYSTEM)
    .filter((s) => s.metadata.labels?.[RECORD_OWNER_UID_LABEL] === uid)
    .map((s) => ({ revision: Number(s.metadata.labels?.version), status: s.metadata.labels?.status ?? '' }))
    .sort((a, b) => a.revision - b.revision);
}

/**
 * The largest buffer Buffer.concat makes until stop(): zlib ends every inflate (sync or not) with
 * one, so a record inflated whole shows here with its size; an inflate stopped at its bound makes none.
 */
function largestBufferDuring(): { stop: () => number } {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, and called with Buffer as this
  const concat = Buffer.concat;
  let largest = 0;
  const spy: typeof Buffer.concat = (list, totalLength) => {
    const out = concat.call(Buffer, list, totalLength);
    largest = Math.max(largest, out.length);
    return out;
  };
  Buffer.concat = spy;
  return {
    stop: () => {
      Buffer.concat = concat;
      return largest;
    },
  };
}

/** One reconcile, with what it may and may not do checked against the log of its requests. */
export async function reconcileOnce(w: World, subject: Subject): Promise<void> {
  if (!subject.exists(w)) return;
  const from = w.cluster.log.length;
  const desired = subject.deleting(w) ? new Set<string>() : new Set(objectsOf(w.variant, subject.prefix).map(idOf));
  const uninstalling = subject.deleting(w);
  w.reconciles++;
  const largest = largestBufferDuring();
  try {
    await subject.reconcile(w);
  } catch (err) {
    if (!(err instanceof Crash)) w.violations.push(`a reconcile threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  } finally {
    const bytes = largest.stop();
    // A planted record inflated whole (the gzip bomb) is the one way this world makes such a buffer.
    if (bytes > RECORD_BOUNDS.jsonBytes) w.violations.push(`a reconcile made one buffer of ${bytes} bytes, past the ${RECORD_BOUNDS.jsonBytes} a release record may inflate to`);
  }
  // A crash ended that process; the next reconcile is a new one's.
  w.cluster.restart();
  if (process.env.BINNACLE_MODEL_DEBUG === '1') {
    const owner = w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' }) ?? w.cluster.get(BD_REF);
    console.log(`after reconcile (spec ${w.variant}): ${JSON.stringify((owner?.status as { conditions?: unknown } | undefined)?.conditions ?? null)}`);
  }
  for (const r of w.cluster.log.slice(from)) checkWrite(w, subject, r, desired, uninstalling);
  checkNeighbour(w);
}

/** The other release's object that has the hook's name is never deleted or taken over. */
function checkNeighbour(w: World): void {
  if (w.neighbour) {
    const live = w.cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: HOOK_NAME });
    const nsGoing = w.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: NS })?.metadata.deletionTimestamp !== undefined || w.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: NS }) === undefined;
    // An uninstall of a release that rendered the namespace deletes it and all in it, by design.
    if (live === undefined && nsGoing) w.neighbour = false;
    else if (live === undefined) w.violations.push(`${HOOK_ID}, another release's, was deleted`);
    else if (live.metadata.labels?.[OWNER_NAME_LABEL] !== 'gw' || (live.data as Record<string, string> | undefined)?.owner !== 'gw' || (live.data as Record<string, string> | undefined)?.ran !== undefined) w.violations.push(`${HOOK_ID}, another release's, was taken over: ${JSON.stringify({ labels: live.metadata.labels, data: live.data })}`);
  }
}

export function checkWrite(w: World, subject: Subject, r: FakeRequest, desired: ReadonlySet<string>, uninstalling: boolean): void {
  if (!WRITE_VERBS.has(r.verb)) return;
  const id = `${r.kind}/${r.namespace}/${r.name}`;
  const inScope = r.namespace === NS || (r.kind === 'Namespace' && (r.name === `${subject.prefix}-data` || r.name === NS));
  if (r.identity === subject.identity) {
    if (!inScope) w.violations.push(`${subject.identity} wrote outside the release's scope: ${r.verb} ${id}`);
  } else if (r.identity === 'manager') {
    const own = (r.kind === 'Secret' && r.namespace === SYSTEM) || r.verb === 'status' || (r.verb === 'patch' && (r.kind === 'Pushgateway' || r.kind === 'BundleDeployment'));
    // A BundleDeployment's removal acts as Binnacle once its installing ServiceAccount is gone (its
    // namespace deleted, by this very uninstall when the release rendered it): only while
    // uninstalling, only what the release's scope holds (bundle-deployment.ts, removalClient).
    const saGone = w.cluster.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: NS, name: 'installer' }) === undefined;
    const fallback = subject === bdSubject && uninstalling && saGone && inScope;
    if (!own && !fallback) w.violations.push(`the manager itself wrote ${r.verb} ${id}`);
  }
  if (r.verb !== 'delete') return;
  if (desired.has(id)) w.violations.push(`deleted ${id}, which the spec at that moment holds`);
  if (HOLDS_DATA.has(r.kind) && !uninstalling) w.violations.push(`deleted ${id} (it holds data) outside the release's uninstall`);
}

/** Reconciles without faults until a reconcile changes nothing (a bounded number of times). */
export async function settle(w: World, subject: Subject): Promise<void> {
  w.cluster.clearFaults();
  if (w.neighbour) {
    w.cluster.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: HOOK_NAME });
    w.neighbour = false;
  }
  w.cluster.restart();
  for (let i = 0; i < 12; i++) {
    const before = w.cluster.countWrites();
    await reconcileOnce(w, subject);
    w.cluster.settle();
    const after = w.cluster.countWrites();
    if (JSON.stringify(before) === JSON.stringify(after)) return;
  }
  w.violations.push('did not settle within 12 reconciles');
}

/** The invariants once settled (see the top of this file). */
export function checkSettled(w: World, subject: Subject): void {
  const owned = ownedObjects(w, subject);
  owned.delete(RELEASE_NAMESPACE_ID);
  if (!subject.exists(w)) {
    if (owned.size > 0) w.violations.push(`the owner is gone but its objects stay: ${[...owned.keys()].join(', ')}`);
    // Records someone planted after the owner went are not Binnacle's to clean (named v97, v98, v99 and forged here).
    const mirror = w.cluster.all('Secret', NS).filter((s) => s.metadata.labels?.[OWNER_KIND_LABEL] !== undefined && s.metadata.labels[OWNER_NAME_LABEL] === subject.prefix && (s.metadata.name ?? '').startsWith('sh.helm.release.') && !/\.(v9[789]|forged)$/.test(s.metadata.name ?? ''));
    if (mirror.length > 0) w.violations.push(`the owner is gone but its Helm records stay: ${mirror.map((s) => s.metadata.name ?? '').join(', ')}`);
    return;
  }
  const want = objectsOf(w.variant, subject.prefix);
  for (const o of want) {
    const live = idOf(o) === RELEASE_NAMESPACE_ID ? w.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: NS }) : owned.get(idOf(o));
    if (live === undefined) {
      w.violations.push(`${idOf(o)} of the spec is missing`);
      continue;
    }
    // What the manifest sets is as it says (keys others added stay theirs, as server-side apply keeps them).
    const desired = (o.data ?? {}) as Record<string, unknown>;
    const got = (live.data ?? {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(desired)) if (got[k] !== v) w.violations.push(`${idOf(o)}: data.${k} is ${JSON.stringify(got[k])}, the spec says ${JSON.stringify(v)}`);
    if (o.kind === 'Deployment') {
      const image = (live.spec as { template?: { spec?: { containers?: { image?: string }[] } } }).template?.spec?.containers?.[0]?.image;
      if (image !== `app:${w.variant}`) w.violations.push(`${idOf(o)} runs ${String(image)}, the spec says app:${w.variant}`);
    }
  }
  const extra = [...owned.keys()].filter((id) => !want.some((o) => idOf(o) === id));
  if (extra.length > 0) w.violations.push(`objects the spec no longer holds stay: ${extra.join(', ')}`);
  if (!subject.deployed(w)) w.violations.push('not Deployed once settled');
  const history = trustedRevisions(w, subject.uid(w));
  const deployed = history.filter((r) => r.status === 'deployed');
  if (deployed.length !== 1) w.violations.push(`the history has ${deployed.length} deployed revisions: ${JSON.stringify(history)}`);
  if (history.length > MAX_HISTORY) w.violations.push(`the history holds ${history.length} revisions, above its limit of ${MAX_HISTORY}`);
  if (history.some((r) => r.status.startsWith('pending-'))) w.violations.push(`a revision stays pending once settled: ${JSON.stringify(history)}`);
  // The mirror as `helm history` reads it: by its labels, whatever the Secret's name.
  const mirror = w.cluster.all('Secret', NS).filter((s) => s.type === 'helm.sh/release.v1' && s.metadata.labels?.owner === 'helm' && s.metadata.labels.name === subject.release.name && s.metadata.labels[OWNER_NAME_LABEL] === subject.prefix);
  const mirrored = mirror.map((s) => ({ revision: Number(s.metadata.labels?.version), status: s.metadata.labels?.status ?? '' })).sort((a, b) => a.revision - b.revision);
  if (JSON.stringify(mirrored) !== JSON.stringify(history)) w.violations.push(`the Helm mirror ${JSON.stringify(mirrored)} differs from the history ${JSON.stringify(history)}`);
}

/**
 * A release the Binnacle before the trusted history left: Helm records in the release namespace
 * (with its owner labels) and the objects they name; the owner's status says it was deployed.
 */
export function leftByOldBinnacle(w: World, subject: Subject): void {
  subject.create(w, 'A');
  const owner = { kind: subject === helmSubject ? 'Pushgateway' : 'BundleDeployment', name: subject.prefix, ...(subject === helmSubject ? { namespace: NS } : {}) };
  const objects = objectsOf('A', subject.prefix);
  const { name, namespace } = subject.release;
  const manifest = toManifest(objects);
  const digest = subject === helmSubject ? 'd-A' : 'old-layout';
  w.cluster.put(revisionRecordSecret({ name, namespace, version: 1, status: 'deployed', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name, version: '1.0.0' }, config: {}, manifest, inputDigest: digest, content: { chart: { templates: [{ name: 'x', data: '' }] }, manifest, hooks: [] } }, owner, new Date(), 'created'));
  for (const o of parseManifest(manifest, 'old')) {
    const labels = { ...(o.metadata.labels ?? {}), [OWNER_KIND_LABEL]: owner.kind, [OWNER_NAME_LABEL]: owner.name, ...(owner.namespace === undefined ? {} : { 'binnacle.dev/owner-namespace': owner.namespace }) };
    w.cluster.put({ ...o, metadata: { ...o.metadata, labels, annotations: { [HELM_RELEASE_NAME_ANNOTATION]: name, 'meta.helm.sh/release-namespace': namespace } } });
  }
}

