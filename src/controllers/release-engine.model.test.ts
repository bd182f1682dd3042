/**
 * The release engine under random histories (fast-check's model-based testing, checked as
 * Jepsen checks a history): the real Helm release and BundleDeployment reconcilers and the real
 * operations over the one fake cluster, driven by random sequences of spec changes (reverts
 * among them), crashes at the n-th write of a reconcile (each create, update, patch, apply and
 * delete of records and objects, before or after it lands), leader changes, objects edited or
 * deleted by someone else, Helm records deleted, rewritten or planted, deletions and
 * re-creations of the owner, and releases left by the Binnacle before the trusted history. Only
 * the render is a stand-in (a pure function of the spec), so a sequence runs in milliseconds.
 *
 * Checked along the way: no reconcile throws anything but the injected crash; nothing is
 * written outside the release's scope; no object the spec asked for at that moment is deleted,
 * and a Namespace or PersistentVolumeClaim only by the release's uninstall. Checked once the
 * sequence settles (reconciled without faults until nothing changes): the live objects are the
 * spec's, Deployed (Installed) is true and the history agrees, the history stays within its
 * limit, the Helm mirror matches it; a deleted owner left nothing behind.
 *
 * CI runs a fixed seed (BINNACLE_MODEL_SEED, default 20261202) and BINNACLE_MODEL_RUNS sequences
 * (default 300), and prints how many crashes it injected at each write site. `npm run model`
 * runs 100,000 with a fresh seed, prints it, and shrinks any failure to the shortest sequence,
 * which is then kept below as a regression case.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { ReleaseRecords, releaseSecret, RECORD_OWNER_UID_LABEL, parseManifest, toManifest } from '../apply/index.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { HELM_RELEASE_NAME_ANNOTATION, OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../apply/ownership.js';
import { API_VERSION, FINALIZER_CLEANUP, type BundleDeployment } from '../api/types.js';
import { Crash, FakeCluster, faults, WRITE_VERBS, type FakeRequest } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import type { ChartRelease } from '../helm/chart-release.js';
import { BundleDeploymentReconciler } from './bundle-deployment.js';
import { HelmReleaseReconciler, UNINSTALL_FINALIZER } from './helm-release.js';

const logger = pino({ level: 'silent' });
const SYSTEM = 'binnacle-system';
const NS = 'team-a';
const SA = 'system:serviceaccount:team-a:releaser';
const SEED = Number(process.env.BINNACLE_MODEL_SEED ?? '20261202');
const RUNS = Number(process.env.BINNACLE_MODEL_RUNS ?? '300');
const MAX_HISTORY = 10;

type Variant = 'A' | 'B' | 'C';

/** What a spec variant renders: the same Namespace and claim always (so deleting them is never right short of an uninstall), the rest varying. */
function objectsOf(v: Variant, prefix: string): KubeObject[] {
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${prefix}-data` } },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${prefix}-claim`, namespace: NS }, spec: { resources: { requests: { storage: '1Gi' } } } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-config`, namespace: NS }, data: { variant: v } },
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `${prefix}-app`, namespace: NS }, spec: { replicas: 1, template: { spec: { containers: [{ name: 'app', image: `app:${v}` }] } } } },
  ];
  if (v === 'B') objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-only-b`, namespace: NS }, data: { b: '1' } });
  if (v === 'C') objects.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${prefix}-only-c`, namespace: NS }, data: { c: 'MQ==' } });
  return objects;
}

/** Objects that hold data: deleted only by the uninstall of the release that made them. */
const HOLDS_DATA = new Set(['Namespace', 'PersistentVolumeClaim']);

const idOf = (o: { kind: string; metadata?: { name?: string; namespace?: string }; name?: string; namespace?: string }): string => `${o.kind}/${o.metadata?.namespace ?? o.namespace ?? ''}/${o.metadata?.name ?? o.name ?? ''}`;

/** One owner kind under test: how to create, change and delete its object, and to reconcile it. */
interface Subject {
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
}

interface World {
  cluster: FakeCluster;
  records: ReleaseRecords;
  variant: Variant;
  helm?: HelmReleaseReconciler;
  bd?: BundleDeploymentReconciler;
  /** Problems seen along the way (checked at the end of each command). */
  violations: string[];
  crashes: Map<string, number>;
  reconciles: number;
}

const stats = { sequences: 0, commands: 0, reconciles: 0, crashes: new Map<string, number>() };

function rendered(v: Variant, prefix: string): ChartRelease {
  const objects = objectsOf(v, prefix).map((o) => ({ ...o, metadata: { ...o.metadata } }));
  const manifest = toManifest(objects);
  return { objects, content: { chart: { metadata: { name: prefix, version: '1.0.0' }, templates: [{ name: 'templates/all.yaml', data: '' }] }, manifest, hooks: [], notes: v }, chart: { name: prefix, version: '1.0.0' }, inputDigest: `d-${v}`, notes: v, values: {} };
}

const helmSubject: Subject = {
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

const BD_REF = { apiVersion: API_VERSION, kind: 'BundleDeployment', name: 'op' };

const bdSubject: Subject = {
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

function newWorld(subject: Subject): World {
  const cluster = new FakeCluster();
  for (const ns of [NS, SYSTEM]) cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  cluster.put(crdOf({ group: 'example.com', kind: 'Pushgateway', plural: 'pushgateways' }, {}));
  const bdCrd = crdOf({ group: 'binnacle.dev', kind: 'BundleDeployment', plural: 'bundledeployments' }, {});
  cluster.put({ ...bdCrd, spec: { ...(bdCrd.spec as object), scope: 'Cluster', versions: [{ name: 'v1alpha1', served: true, storage: true }] } });
  for (const sa of ['releaser', 'installer']) cluster.put({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { namespace: NS, name: sa } });
  const records = new ReleaseRecords({ client: cluster.client({ user: 'manager' }), namespace: SYSTEM, logger });
  const w: World = { cluster, records, variant: 'A', violations: [], crashes: new Map(), reconciles: 0 };
  subject.restart(w);
  return w;
}

/** The objects of the release (by the owner's labels), by identity. */
function ownedObjects(w: World, subject: Subject): Map<string, KubeObject> {
  const out = new Map<string, KubeObject>();
  for (const o of w.cluster.objects.values()) {
    if (o.metadata.labels?.[OWNER_NAME_LABEL] !== subject.prefix || o.metadata.annotations?.[HELM_RELEASE_NAME_ANNOTATION] !== subject.release.name) continue;
    if (o.kind === 'Secret' && (o.metadata.name ?? '').startsWith('sh.helm.release.')) continue;
    out.set(idOf(o), o);
  }
  return out;
}

function trustedRevisions(w: World, uid: string): { revision: number; status: string }[] {
  return w.cluster
    .all('Secret', SYSTEM)
    .filter((s) => s.metadata.labels?.[RECORD_OWNER_UID_LABEL] === uid)
    .map((s) => ({ revision: Number(s.metadata.labels?.version), status: s.metadata.labels?.status ?? '' }))
    .sort((a, b) => a.revision - b.revision);
}

/** One reconcile, with what it may and may not do checked against the log of its requests. */
async function reconcileOnce(w: World, subject: Subject): Promise<void> {
  if (!subject.exists(w)) return;
  const from = w.cluster.log.length;
  const desired = subject.deleting(w) ? new Set<string>() : new Set(objectsOf(w.variant, subject.prefix).map(idOf));
  const uninstalling = subject.deleting(w);
  w.reconciles++;
  try {
    await subject.reconcile(w);
  } catch (err) {
    if (!(err instanceof Crash)) w.violations.push(`a reconcile threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  }
  // A crash ended that process; the next reconcile is a new one's.
  w.cluster.restart();
  if (process.env.BINNACLE_MODEL_DEBUG === '1') {
    const owner = w.cluster.get({ apiVersion: 'example.com/v1', kind: 'Pushgateway', namespace: NS, name: 'pg' }) ?? w.cluster.get(BD_REF);
    console.log(`after reconcile (spec ${w.variant}): ${JSON.stringify((owner?.status as { conditions?: unknown } | undefined)?.conditions ?? null)}`);
  }
  for (const r of w.cluster.log.slice(from)) checkWrite(w, subject, r, desired, uninstalling);
}

function checkWrite(w: World, subject: Subject, r: FakeRequest, desired: ReadonlySet<string>, uninstalling: boolean): void {
  if (!WRITE_VERBS.has(r.verb)) return;
  const id = `${r.kind}/${r.namespace}/${r.name}`;
  if (r.identity === subject.identity) {
    const inScope = r.namespace === NS || (r.kind === 'Namespace' && r.name === `${subject.prefix}-data`);
    if (!inScope) w.violations.push(`${subject.identity} wrote outside the release's scope: ${r.verb} ${id}`);
  } else if (r.identity === 'manager') {
    const own = (r.kind === 'Secret' && r.namespace === SYSTEM) || r.verb === 'status' || (r.verb === 'patch' && (r.kind === 'Pushgateway' || r.kind === 'BundleDeployment'));
    if (!own) w.violations.push(`the manager itself wrote ${r.verb} ${id}`);
  }
  if (r.verb !== 'delete') return;
  if (desired.has(id)) w.violations.push(`deleted ${id}, which the spec at that moment holds`);
  if (HOLDS_DATA.has(r.kind) && !uninstalling) w.violations.push(`deleted ${id} (it holds data) outside the release's uninstall`);
}

/** Reconciles without faults until a reconcile changes nothing (a bounded number of times). */
async function settle(w: World, subject: Subject): Promise<void> {
  w.cluster.clearFaults();
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
function checkSettled(w: World, subject: Subject): void {
  const owned = ownedObjects(w, subject);
  if (!subject.exists(w)) {
    if (owned.size > 0) w.violations.push(`the owner is gone but its objects stay: ${[...owned.keys()].join(', ')}`);
    // Records someone planted after the owner went are not Binnacle's to clean (revisions 98 and 99 here).
    const mirror = w.cluster.all('Secret', NS).filter((s) => s.metadata.labels?.[OWNER_KIND_LABEL] !== undefined && s.metadata.labels[OWNER_NAME_LABEL] === subject.prefix && (s.metadata.name ?? '').startsWith('sh.helm.release.') && !['98', '99'].includes(s.metadata.labels.version ?? ''));
    if (mirror.length > 0) w.violations.push(`the owner is gone but its Helm records stay: ${mirror.map((s) => s.metadata.name ?? '').join(', ')}`);
    return;
  }
  const want = objectsOf(w.variant, subject.prefix);
  for (const o of want) {
    const live = owned.get(idOf(o));
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
  const mirror = w.cluster.all('Secret', NS).filter((s) => (s.metadata.name ?? '').startsWith(`sh.helm.release.v1.${subject.release.name}.`) && s.metadata.labels?.[OWNER_NAME_LABEL] === subject.prefix);
  const mirrored = mirror.map((s) => ({ revision: Number(s.metadata.labels?.version), status: s.metadata.labels?.status ?? '' })).sort((a, b) => a.revision - b.revision);
  if (JSON.stringify(mirrored) !== JSON.stringify(history)) w.violations.push(`the Helm mirror ${JSON.stringify(mirrored)} differs from the history ${JSON.stringify(history)}`);
}

// --- commands ------------------------------------------------------------------------------

type Cmd = fc.AsyncCommand<{ variant: Variant }, World>;

const variants = fc.constantFrom<Variant>('A', 'B', 'C');

class SetSpec implements Cmd {
  constructor(
    private readonly subject: Subject,
    private readonly v: Variant,
  ) {}
  check = (): boolean => true;
  async run(m: { variant: Variant }, w: World): Promise<void> {
    this.subject.setVariant(w, this.v);
    m.variant = w.variant;
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => `spec ${this.v}`;
}

/** Arms a crash at the n-th write from now (whichever reconcile makes it), before or after it lands. */
class CrashAt implements Cmd {
  constructor(
    private readonly nth: number,
    private readonly when: 'before' | 'after',
  ) {}
  check = (): boolean => true;
  run(_m: { variant: Variant }, w: World): Promise<void> {
    let writes = 0;
    w.cluster.inject({
      // Binnacle's writes only: someone else's edit is not Binnacle's process crashing.
      match: (r) => WRITE_VERBS.has(r.verb) && r.identity !== 'kubectl' && ++writes === this.nth,
      when: this.when,
      error: (r) => {
        const site = `${this.when} ${r.verb} ${r.kind}${r.namespace === SYSTEM ? ' (trusted record)' : r.kind === 'Secret' && r.name.startsWith('sh.helm.') ? ' (Helm mirror)' : ''}`;
        w.crashes.set(site, (w.crashes.get(site) ?? 0) + 1);
        return faults.crash(r);
      },
    });
    return Promise.resolve();
  }
  toString = (): string => `crash ${this.when} write ${this.nth}`;
}

class LeaderChange implements Cmd {
  constructor(private readonly subject: Subject) {}
  check = (): boolean => true;
  async run(_m: { variant: Variant }, w: World): Promise<void> {
    this.subject.restart(w);
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => 'leader change';
}

class EditLive implements Cmd {
  constructor(
    private readonly subject: Subject,
    private readonly which: number,
    private readonly how: 'edit' | 'delete',
  ) {}
  check = (): boolean => true;
  async run(_m: { variant: Variant }, w: World): Promise<void> {
    const owned = [...ownedObjects(w, this.subject).values()].filter((o) => o.kind !== 'Namespace');
    const target = owned[this.which % Math.max(owned.length, 1)];
    if (target !== undefined) {
      const ref = { apiVersion: target.apiVersion, kind: target.kind, namespace: target.metadata.namespace, name: target.metadata.name ?? '' };
      const someone = w.cluster.client({ user: 'kubectl' });
      if (this.how === 'delete') await someone.delete(ref);
      else if (target.kind === 'ConfigMap' || target.kind === 'Secret') await someone.patch(ref, { data: Object.fromEntries(Object.keys(target.data ?? {}).map((k) => [k, 'ZWRpdGVk'])) });
      else await someone.patch(ref, { metadata: { labels: { edited: 'yes' } }, spec: { replicas: 7 } });
    }
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => `${this.how} live object ${this.which}`;
}

class TamperMirror implements Cmd {
  constructor(
    private readonly subject: Subject,
    private readonly how: 'delete' | 'rewrite' | 'plant' | 'bomb',
  ) {}
  check = (): boolean => true;
  async run(_m: { variant: Variant }, w: World): Promise<void> {
    const { name, namespace } = this.subject.release;
    const mirror = w.cluster.all('Secret', namespace).filter((s) => (s.metadata.name ?? '').startsWith(`sh.helm.release.v1.${name}.`));
    const owner = { kind: this.subject === helmSubject ? 'Pushgateway' : 'BundleDeployment', name: this.subject.prefix, ...(this.subject === helmSubject ? { namespace: NS } : {}) };
    const last = mirror.at(-1);
    if (this.how === 'delete' && last !== undefined) w.cluster.remove({ apiVersion: 'v1', kind: 'Secret', namespace, name: last.metadata.name ?? '' });
    if (this.how === 'rewrite' && last !== undefined) w.cluster.put({ ...last, data: { release: 'aGFuZCBlZGl0' } });
    if (this.how === 'plant') {
      // A forged revision that would apply a ClusterRoleBinding and run a delete hook in kube-system.
      const forged = releaseSecret(
        { name, namespace, version: 99, status: 'deployed', description: 'forged', firstDeployed: '', lastDeployed: '', chart: { name, version: '1.0.0' }, config: {}, manifest: '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: evil\n', inputDigest: `d-${w.variant}`, content: { chart: { templates: [{ name: 'x', data: '' }] }, manifest: '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: evil\n', hooks: [{ name: 'x', kind: 'ConfigMap', path: 'x', manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  namespace: kube-system\n', events: ['pre-delete'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 }] } },
        owner,
        new Date(),
        'created',
      );
      w.cluster.put(forged);
    }
    if (this.how === 'bomb') {
      const { gzipSync } = await import('node:zlib');
      const bomb = gzipSync(Buffer.alloc(48 * 1024 * 1024, 0x20)).toString('base64');
      const labels = { [OWNER_KIND_LABEL]: owner.kind, [OWNER_NAME_LABEL]: owner.name, ...(owner.namespace === undefined ? {} : { 'binnacle.dev/owner-namespace': owner.namespace }), owner: 'helm', name, version: '98', status: 'deployed' };
      w.cluster.put({ apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1', metadata: { namespace, name: `sh.helm.release.v1.${name}.v98`, labels }, data: { release: Buffer.from(bomb).toString('base64') } });
    }
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => `${this.how} Helm record`;
}

class DeleteOwner implements Cmd {
  constructor(private readonly subject: Subject) {}
  check = (): boolean => true;
  async run(_m: { variant: Variant }, w: World): Promise<void> {
    this.subject.remove(w);
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => 'delete owner';
}

class CreateOwner implements Cmd {
  constructor(
    private readonly subject: Subject,
    private readonly v: Variant,
  ) {}
  check = (): boolean => true;
  async run(m: { variant: Variant }, w: World): Promise<void> {
    if (!this.subject.exists(w)) {
      this.subject.create(w, this.v);
      m.variant = this.v;
    }
    await reconcileOnce(w, this.subject);
  }
  toString = (): string => `create owner ${this.v}`;
}

function commands(subject: Subject): fc.Arbitrary<Cmd>[] {
  return [
    variants.map((v) => new SetSpec(subject, v)),
    fc.tuple(fc.integer({ min: 1, max: 16 }), fc.constantFrom<'before' | 'after'>('before', 'after')).map(([n, when]) => new CrashAt(n, when)),
    fc.tuple(fc.integer({ min: 1, max: 16 }), fc.constantFrom<'before' | 'after'>('before', 'after')).map(([n, when]) => new CrashAt(n, when)),
    fc.constant(new LeaderChange(subject)),
    fc.tuple(fc.nat(10), fc.constantFrom<'edit' | 'delete'>('edit', 'delete')).map(([i, how]) => new EditLive(subject, i, how)),
    fc.constantFrom<'delete' | 'rewrite' | 'plant' | 'bomb'>('delete', 'rewrite', 'plant', 'plant').map((how) => new TamperMirror(subject, how)),
    fc.constant(new DeleteOwner(subject)),
    variants.map((v) => new CreateOwner(subject, v)),
  ];
}

/**
 * A release the Binnacle before the trusted history left: Helm records in the release namespace
 * (with its owner labels) and the objects they name; the owner's status says it was deployed.
 */
function leftByOldBinnacle(w: World, subject: Subject): void {
  subject.create(w, 'A');
  const owner = { kind: subject === helmSubject ? 'Pushgateway' : 'BundleDeployment', name: subject.prefix, ...(subject === helmSubject ? { namespace: NS } : {}) };
  const objects = objectsOf('A', subject.prefix);
  const { name, namespace } = subject.release;
  const manifest = toManifest(objects);
  const digest = subject === helmSubject ? 'd-A' : 'old-layout';
  w.cluster.put(releaseSecret({ name, namespace, version: 1, status: 'deployed', description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name, version: '1.0.0' }, config: {}, manifest, inputDigest: digest, content: { chart: { templates: [{ name: 'x', data: '' }] }, manifest, hooks: [] } }, owner, new Date(), 'created'));
  for (const o of parseManifest(manifest, 'old')) {
    const labels = { ...(o.metadata.labels ?? {}), [OWNER_KIND_LABEL]: owner.kind, [OWNER_NAME_LABEL]: owner.name, ...(owner.namespace === undefined ? {} : { 'binnacle.dev/owner-namespace': owner.namespace }) };
    w.cluster.put({ ...o, metadata: { ...o.metadata, labels, annotations: { [HELM_RELEASE_NAME_ANNOTATION]: name, 'meta.helm.sh/release-namespace': namespace } } });
  }
}

async function runModel(subject: Subject, seed: number, runs: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.boolean(), fc.commands(commands(subject), { maxCommands: 30, size: 'large' }), async (oldLayout, cmds) => {
      const w = newWorld(subject);
      if (oldLayout) leftByOldBinnacle(w, subject);
      else subject.create(w, 'A');
      await reconcileOnce(w, subject);
      await fc.asyncModelRun(() => ({ model: { variant: w.variant }, real: w }), cmds);
      await settle(w, subject);
      checkSettled(w, subject);
      stats.sequences++;
      stats.commands += [...cmds].length;
      stats.reconciles += w.reconciles;
      for (const [site, n] of w.crashes) stats.crashes.set(site, (stats.crashes.get(site) ?? 0) + n);
      if (w.violations.length > 0 && process.env.BINNACLE_MODEL_DEBUG === '1') console.log(w.cluster.log.filter((r) => WRITE_VERBS.has(r.verb)).map((r) => `${r.identity} ${r.verb} ${r.kind} ${r.namespace}/${r.name}`).join('\n'));
      assert.deepEqual(w.violations, [], `sequence ${[...cmds].map(String).join(', ')}`);
    }),
    { seed, numRuns: runs, endOnFailure: process.env.BINNACLE_MODEL_SHRINK === '0', includeErrorInReport: true, ...(process.env.BINNACLE_MODEL_PATH === undefined ? {} : { path: process.env.BINNACLE_MODEL_PATH }) },
  );
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name} under random changes, crashes and tampering keeps its invariants (seed ${SEED}, ${RUNS} sequences)`, { timeout: Math.max(600_000, RUNS * 2_000) }, async () => {
    const before = { ...stats, crashes: new Map(stats.crashes) };
    await runModel(subject, SEED, RUNS);
    const sites = [...stats.crashes].map(([site, n]) => [site, n - (before.crashes.get(site) ?? 0)] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
    console.log(`${subject.name}: ${stats.sequences - before.sequences} sequences, ${stats.commands - before.commands} commands, ${stats.reconciles - before.reconciles} reconciles; crashes injected by write site: ${sites.map(([s, n]) => `${s} ×${n}`).join(', ')}`);
    assert.ok(sites.length >= 8, `crashes reached ${sites.length} write sites`);
  });
}

/** Sequences the model once failed on, shrunk; each stays as a regression case. */
async function replay(subject: Subject, oldLayout: boolean, cmds: Cmd[]): Promise<string[]> {
  const w = newWorld(subject);
  if (oldLayout) leftByOldBinnacle(w, subject);
  else subject.create(w, 'A');
  await reconcileOnce(w, subject);
  await fc.asyncModelRun(() => ({ model: { variant: w.variant }, real: w }), cmds);
  await settle(w, subject);
  checkSettled(w, subject);
  if (w.violations.length > 0 && process.env.BINNACLE_MODEL_DEBUG === '1') console.log(w.cluster.log.filter((r) => WRITE_VERBS.has(r.verb)).map((r) => `${r.identity} ${r.verb} ${r.kind} ${r.namespace}/${r.name}`).join('\n'));
  return w.violations;
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: a re-created owner whose first installs crash, then reverted, keeps nothing of the crashed spec`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CrashAt(7, 'before'), new CrashAt(11, 'before'), new CreateOwner(subject, 'B'), new SetSpec(subject, 'A'), new CreateOwner(subject, 'A')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: an install that crashed on its first record write, then a spec changed away and back, deploys the spec`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CrashAt(3, 'before'), new CreateOwner(subject, 'B'), new SetSpec(subject, 'A'), new SetSpec(subject, 'B'), new EditLive(subject, 0, 'edit')]), []);
  });
}

for (const subject of [helmSubject, bdSubject]) {
  test(`the ${subject.name}: a Namespace applied just before a crash, then the owner deleted, is not left behind`, async () => {
    assert.deepEqual(await replay(subject, false, [new DeleteOwner(subject), new CrashAt(1, 'after'), new CreateOwner(subject, 'A'), new DeleteOwner(subject), new TamperMirror(subject, 'delete')]), []);
  });
}
