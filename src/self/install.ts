/**
 * `install-self`, `status-self` and `uninstall-self`: the manager inside the cluster.
 *
 * Every step is idempotent. Install applies every object (server-side apply) and says for each
 * whether it was created, changed or already right, so a half-installed state (an interrupted
 * install, an object deleted by hand) is named and repaired by running it again. It keeps a
 * record of the set it applied (record.ts) and prunes what an earlier set had and this one
 * lacks, keeping a CRD that still has custom resources. Status judges the installation by its
 * record (this binary's manifests when there is none) and names what is missing. Uninstall
 * refuses while extensions are installed unless forced; forced, it deletes them first and gives
 * the running manager time to uninstall them, then removes what the record lists.
 */
import { API_VERSION, FINALIZER_CLEANUP } from '../api/types.js';
import type { Discovery, ObjectReader, ObjectWriter } from '../kube/ports.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { objectKey, type KubeObject } from '../kube/types.js';
import { formatDuration, pollUntil } from '../util/deadline.js';
import { BinnacleError } from '../util/errors.js';
import { catalogCertificateExpiry, catalogTls, CATALOG_TLS_SECRET, type CatalogTls } from './catalog-tls.js';
import { TWIN_POLICY_NAME } from '../api/olmv1/twin-policy.js';
import { olmv1TwinOf } from '../api/olmv1/twin.js';
import { OLMV1_API_VERSION, withoutManagerFinalizers, OLMV1_GROUP } from '../api/olmv1/types.js';
import { platformOwner } from '../actions/platform-protection.js';
import { ANNOTATION_RELEASE_VERSION, CATALOG_SERVICE, DEFAULT_SELF_NAMESPACE, MANAGER_NAME, PROTECTION_POLICY, SELF_LABELS, selfManifests, type SelfOptions } from './manifests.js';
import { fakeNodesWarning, nodeKinds, placeOnRealNodes } from './nodes.js';
import { deleteOrder, objectId, parseRecord, planPrune, recordConfigMap, recordedObject, recordLabel, RECORD_LABEL, RECORD_NAME, type InstallRecord, type RecordedObject } from './record.js';
import { waitCrdsEstablished } from '../kube/crd-established.js';
import { LEADER_LEASE_NAME } from '../kube/leader-election.js';
import { switchUnion, unionSwitchPatch } from '../apply/union-switch.js';

/** What install, status and uninstall need of a cluster client. */
export type SelfClient = Pick<ObjectReader, 'find' | 'list'> & Pick<ObjectWriter, 'apply' | 'delete' | 'patch'> & Pick<Discovery, 'invalidateDiscovery'>;

/**
 * What install did to each object: applied (`created`, `configured`, `unchanged`), left to its
 * owner (`skipped`), or, for an object of an earlier set this one lacks, `pruned` or `kept`.
 */
export type ObjectState = 'created' | 'configured' | 'unchanged' | 'skipped' | 'pruned' | 'kept';

export interface SelfObjectResult {
  kind: string;
  name: string;
  namespace?: string;
  state: ObjectState;
  note?: string;
}

export interface InstallSelfResult {
  namespace: string;
  image: string;
  /** The release installed (`--version`); absent for this binary's own manifests. */
  version?: string;
  /** The release that was installed before (from the record), when it was one. */
  previousVersion?: string;
  /** Each object of the set, then each of an earlier set this one lacks (`pruned`, `kept`, `skipped`). */
  objects: SelfObjectResult[];
  /** Objects that were missing although others were there: the half-installed state repaired. */
  repaired: string[];
  /** Why the manager will not really run on this cluster's nodes (kwok's fake ones only). */
  warning?: string;
}

function label(o: Pick<KubeObject, 'kind' | 'metadata'>): string {
  return `${o.kind} ${o.metadata.namespace === undefined ? '' : `${o.metadata.namespace}/`}${o.metadata.name ?? ''}`;
}

function ref(o: KubeObject): { apiVersion: string; kind: string; name: string; namespace?: string } {
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '', ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) };
}

/** Whether OLM (or anyone but Binnacle) owns a CRD Binnacle would otherwise install. */
function ownedByOthers(live: KubeObject | undefined, obj: Pick<RecordedObject, 'kind' | 'name'>): boolean {
  // OLM v1's CRDs (which the manager installs, controllers/crds.ts) are never install-self's to
  // change or delete: deleting them would delete every OLM v1 ClusterExtension and ClusterCatalog.
  if (obj.kind === 'CustomResourceDefinition' && obj.name.endsWith('.olm.operatorframework.io')) return true;
  return obj.kind === 'CustomResourceDefinition' && !obj.name.endsWith('.binnacle.dev') && live !== undefined && live.metadata.labels?.['app.kubernetes.io/part-of'] !== 'binnacle';
}

/** What to install: this binary's manifests (`selfManifests`), or a release's (`fetchSelfVersion`). */
export interface InstallSelfOptions extends SelfOptions {
  timeoutMs?: number;
  /** A released installation's objects and version, instead of this binary's manifests. */
  release?: { version: string; objects: KubeObject[] };
}

/**
 * Objects of the installation that are being deleted (an uninstall-self still finishing):
 * applying them now would be undone by their deletion. Waits until they are gone.
 */
async function waitTerminating(client: SelfClient, objects: readonly KubeObject[], timeoutMs: number): Promise<void> {
  const terminating = async (): Promise<string[]> => {
    const found: string[] = [];
    for (const obj of objects) if ((await client.find(ref(obj)))?.metadata.deletionTimestamp !== undefined) found.push(label(obj));
    return found;
  };
  const gone = await pollUntil(terminating, (left) => left.length === 0, { timeoutMs, intervalMs: 500 });
  if (!gone.done) {
    const left = gone.value;
    throw new BinnacleError(
      'transient',
      'SELF_TERMINATING',
      `${left.join(', ')} ${left.length === 1 ? 'is' : 'are'} still being deleted after ${formatDuration(timeoutMs)} (an uninstall-self not finished?): see what holds ${left.length === 1 ? 'it' : 'them'} (finalizers) with \`kubectl get KIND NAME -o yaml\`, then run install-self again`,
    );
  }
}

/** The manager container's image in a set of installation objects. */
function imageOf(objects: readonly KubeObject[]): string {
  const deployment = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === MANAGER_NAME);
  return (deployment?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)?.template?.spec?.containers?.[0]?.image ?? '';
}

/** Every install record in the cluster: normally one, in the manager's namespace; more after a move between namespaces. */
async function readRecords(client: SelfClient): Promise<InstallRecord[]> {
  const cms = await client.list('v1', 'ConfigMap', { labelSelector: `${RECORD_LABEL}=true` });
  return cms.items.filter((cm) => cm.metadata.name === RECORD_NAME).map(parseRecord);
}

/** The kinds any install-self has applied: where an installation older than records may have left objects. */
const SELF_KINDS: readonly { apiVersion: string; kind: string }[] = [
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
];

/**
 * An installation made before records (or whose record was deleted): what carries install-self's
 * `managed-by` label, in the kinds of this set and those install-self has ever applied, as one
 * record, so that an upgrade from it prunes what the new set dropped (`kubectl apply --prune -l`).
 */
async function unrecordedInstall(client: SelfClient, objects: readonly KubeObject[]): Promise<InstallRecord[]> {
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const k of [...SELF_KINDS, ...objects]) kinds.set(`${k.apiVersion}/${k.kind}`, { apiVersion: k.apiVersion, kind: k.kind });
  const selector = `app.kubernetes.io/managed-by=${SELF_LABELS['app.kubernetes.io/managed-by']}`;
  const found: RecordedObject[] = [];
  for (const k of kinds.values()) {
    const list = await client.list(k.apiVersion, k.kind, { labelSelector: selector }).catch((err: unknown) => {
      if (isNotFound(err)) return { items: [] as KubeObject[] }; // a kind the cluster does not serve
      throw err;
    });
    for (const x of list.items) if (x.metadata.deletionTimestamp === undefined) found.push(recordedObject({ ...x, apiVersion: k.apiVersion, kind: k.kind }));
  }
  if (found.length === 0) return [];
  return [{ namespace: found.find((x) => x.kind === 'Namespace')?.name ?? '', image: '', phase: 'installed', objects: found, prune: [] }];
}

/** The record in `namespace`, if there is one. */
async function readRecord(client: SelfClient, namespace: string): Promise<InstallRecord | undefined> {
  const cm = await client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: RECORD_NAME });
  return cm === undefined ? undefined : parseRecord(cm);
}

/** The custom resources of a live CRD, in every namespace; none when its kind is not served. */
async function customResources(client: SelfClient, crd: KubeObject): Promise<KubeObject[]> {
  const spec = crd.spec as { group?: string; names?: { kind?: string }; versions?: { name: string; served?: boolean; storage?: boolean }[] } | undefined;
  const version = spec?.versions?.find((v) => v.storage === true) ?? spec?.versions?.find((v) => v.served !== false);
  if (spec?.group === undefined || spec.names?.kind === undefined || version === undefined) return [];
  try {
    return (await client.list(`${spec.group}/${version.name}`, spec.names.kind)).items;
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

function row(o: RecordedObject, state: ObjectState, note?: string): SelfObjectResult {
  return { kind: o.kind, name: o.name, ...(o.namespace === undefined ? {} : { namespace: o.namespace }), state, ...(note === undefined ? {} : { note }) };
}

/**
 * Removes objects of an earlier set, in order; keeps a CRD that still has custom resources
 * (deleting it would delete them) and what is no longer labelled Binnacle's. Answers a row per
 * object still there, and those kept for a later install to prune.
 */
async function pruneObjects(client: SelfClient, objects: readonly RecordedObject[], forWhat: string): Promise<{ rows: SelfObjectResult[]; kept: RecordedObject[] }> {
  const rows: SelfObjectResult[] = [];
  const kept: RecordedObject[] = [];
  for (const o of objects) {
    const live = await client.find(o);
    if (live === undefined) continue;
    if (live.metadata.labels?.['app.kubernetes.io/part-of'] !== SELF_LABELS['app.kubernetes.io/part-of']) {
      rows.push(row(o, 'skipped', `not in ${forWhat}, but no longer labelled app.kubernetes.io/part-of=binnacle: left as it is`));
      continue;
    }
    if (live.metadata.deletionTimestamp !== undefined) {
      rows.push(row(o, 'pruned', `not in ${forWhat}; already being deleted`));
      continue;
    }
    if (o.kind === 'CustomResourceDefinition') {
      const crs = await customResources(client, live);
      if (crs.length > 0) {
        const names = crs.slice(0, 3).map((x) => `${x.kind} ${objectKey(x.metadata)}`);
        kept.push(o);
        rows.push(
          row(o, 'kept', `not in ${forWhat}, but ${crs.length} custom resource(s) remain (${names.join(', ')}${crs.length > 3 ? ', …' : ''}): deleting the CRD would delete them; delete them yourself, then run install-self again to remove it`),
        );
        continue;
      }
    }
    await client.delete(o);
    rows.push(row(o, 'pruned', `not in ${forWhat}`));
  }
  return { rows, kept };
}

async function applyOne(client: SelfClient, obj: KubeObject, again = true): Promise<SelfObjectResult> {
  const live = await client.find(ref(obj));
  if (ownedByOthers(live, recordedObject(obj))) return { kind: obj.kind, name: obj.metadata.name ?? '', state: 'skipped', note: 'installed by someone else (OLM?); left as it is' };
  // An install made before the manager's Recreate has the rollingUpdate the API server filled in.
  const strategy = unionSwitchPatch(live, obj);
  if (strategy !== undefined) {
    try {
      await switchUnion(client, obj, strategy);
    } catch (err) {
      // Made again since it was read (or written in between): read it once more and decide anew.
      if (again && isConflict(err)) return applyOne(client, obj, false);
      throw err;
    }
  }
  const applied = await client.apply(obj, { force: true });
  const state: ObjectState = live === undefined ? 'created' : live.metadata.resourceVersion === applied.metadata.resourceVersion ? 'unchanged' : 'configured';
  return row(recordedObject(obj), state);
}

/** The release's objects or this binary's manifests, placed on the real nodes of a cluster that also has fake ones. */
async function objectsToInstall(client: SelfClient, o: InstallSelfOptions): Promise<{ objects: KubeObject[]; warning: string | undefined }> {
  const kinds = nodeKinds((await client.list('v1', 'Node')).items);
  const wanted = o.release?.objects ?? selfManifests(o);
  return { objects: kinds.real > 0 && kinds.fake > 0 ? placeOnRealNodes(wanted) : wanted, warning: fakeNodesWarning(kinds) };
}

/** Objects created again while others were there: a repaired installation (a fresh install repairs nothing). */
function repairedOf(results: readonly SelfObjectResult[]): string[] {
  const created = results.filter((r) => r.state === 'created');
  return created.length > 0 && created.length < results.length ? created.map((r) => recordLabel(r)) : [];
}

/** Whether the manager's Pod mounts the catalog certificate's Secret (a release made before it did not). */
function mountsCatalogTls(objects: readonly KubeObject[]): boolean {
  const deployment = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === MANAGER_NAME) as { spec?: { template?: { spec?: { volumes?: { secret?: { secretName?: string } }[] } } } } | undefined;
  return (deployment?.spec?.template?.spec?.volumes ?? []).some((v) => v.secret?.secretName === CATALOG_TLS_SECRET);
}

/**
 * `objects` with the catalog certificate's Secret before the manager's Deployment, which mounts
 * it (catalog-tls.ts). Made before anything changes: a Secret of that name that someone else
 * left unusable stops the install here.
 */
async function withCatalogTls(client: SelfClient, objects: KubeObject[], namespace: string): Promise<{ objects: KubeObject[]; tls?: CatalogTls }> {
  if (!mountsCatalogTls(objects)) return { objects };
  const tls = await catalogTls(client, namespace, CATALOG_SERVICE, SELF_LABELS);
  if (tls.secret === undefined) return { objects, tls };
  const at = objects.findIndex((x) => x.kind === 'Deployment');
  return { objects: at < 0 ? [...objects, tls.secret] : [...objects.slice(0, at), tls.secret, ...objects.slice(at)], tls };
}

/** Says in the results what became of the catalog certificate (someone else's: a row of its own). */
function noteCatalogTls(results: SelfObjectResult[], tls: CatalogTls, namespace: string): void {
  const until = `valid until ${tls.notAfter.toISOString()}`;
  const secretRow = results.find((r) => r.kind === 'Secret' && r.name === CATALOG_TLS_SECRET);
  if (secretRow !== undefined) secretRow.note = `the catalog Service's certificate, ${tls.state === 'issued' ? 'issued now' : 'kept'}, ${until}`;
  else results.push(row({ apiVersion: 'v1', kind: 'Secret', namespace, name: CATALOG_TLS_SECRET }, 'skipped', `the catalog Service's certificate, someone else's, used as it is, ${until}`));
}

export async function installSelf(client: SelfClient, o: InstallSelfOptions = {}): Promise<InstallSelfResult> {
  const { objects: placed, warning } = await objectsToInstall(client, o);
  const timeoutMs = o.timeoutMs ?? 60_000;
  const namespace = placed.find((x) => x.kind === 'Namespace')?.metadata.name ?? o.namespace ?? DEFAULT_SELF_NAMESPACE;
  const { objects, tls } = await withCatalogTls(client, placed, namespace);
  const image = imageOf(objects);
  const version = o.release?.version;
  const forWhat = version === undefined ? `the manifests of this binary (image ${image})` : `release ${version}`;
  await waitTerminating(client, objects, timeoutMs);
  const recorded = await readRecords(client);
  const previous = recorded.length > 0 ? recorded : await unrecordedInstall(client, objects);
  const toPrune = planPrune(previous, objects.map(recordedObject), namespace);
  const record = (phase: InstallRecord['phase'], prune: RecordedObject[]): KubeObject =>
    recordConfigMap({ namespace, ...(version === undefined ? {} : { version }), image, phase, objects: objects.map(recordedObject), prune });
  const results: SelfObjectResult[] = [];
  // The namespace first: the record lives there, and says what this install is about to do
  // before anything else changes, so an interrupted install is seen and finished by the next.
  for (const obj of objects.filter((x) => x.kind === 'Namespace')) results.push(await applyOne(client, obj));
  await client.apply(record('pending', toPrune), { force: true });
  for (const obj of objects.filter((x) => x.kind !== 'Namespace')) results.push(await applyOne(client, obj));
  if (tls !== undefined) noteCatalogTls(results, tls, namespace);
  await waitCrdsEstablished(client, objects.filter((x) => x.kind === 'CustomResourceDefinition').map((x) => x.metadata.name ?? ''), { timeoutMs });
  client.invalidateDiscovery(API_VERSION);
  const repaired = repairedOf(results);
  const pruned = await pruneObjects(client, toPrune, forWhat);
  await client.apply(record('installed', pruned.kept), { force: true });
  // A record left in another namespace (the installation moved): its objects were pruned above.
  for (const r of previous) if (r.namespace !== namespace) await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: r.namespace, name: RECORD_NAME });
  const previousVersion = previous.find((r) => r.namespace === namespace)?.version;
  return {
    namespace,
    image,
    ...(version === undefined ? {} : { version }),
    ...(previousVersion === undefined ? {} : { previousVersion }),
    objects: [...results, ...pruned.rows],
    repaired,
    ...(warning === undefined ? {} : { warning }),
  };
}

export interface SelfStatus {
  namespace: string;
  /**
   * 'installed', 'not-installed' or 'partial': some objects missing, or the last install did not
   * finish (`unfinished`); run install-self to repair.
   */
  state: 'installed' | 'not-installed' | 'partial';
  /** What the installation is judged by: its record, or (no record: an install older than records) this binary's manifests. */
  source: 'record' | 'binary';
  objects: { kind: string; name: string; namespace?: string; present: boolean }[];
  missing: string[];
  /** The last install stopped before it finished (its record is still pending). */
  unfinished: boolean;
  /** Objects of an earlier set still there, which the next install prunes (a CRD kept for its custom resources). */
  leftovers: string[];
  image?: string;
  /** The release installed (`install-self --version`), from the record or the Deployment's annotation. */
  version?: string;
  /** The Deployment's Available condition, and its replicas ready. */
  available: boolean;
  readyReplicas: number;
  /** Who holds the leader-election Lease. */
  leader?: string;
  extensions: string[];
  /** The catalog Service's certificate (catalog-tls.ts): when it expires, and whether install-self is due to renew it. */
  catalogCertificate?: { notAfter: string; renewDue: boolean };
}

/** Who holds the manager's leader-election Lease, if anyone. */
async function leaderOf(client: SelfClient, ns: string): Promise<string | undefined> {
  const lease = await client.find({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: LEADER_LEASE_NAME }).catch(() => undefined);
  const holder = (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
  return holder === '' ? undefined : holder;
}

/** The manager Deployment's image and, when installed from a release, its version. */
function deploymentFacts(deployment: KubeObject | undefined): { image?: string; version?: string } {
  const image = (deployment?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)?.template?.spec?.containers?.[0]?.image;
  const version = deployment?.metadata.annotations?.[ANNOTATION_RELEASE_VERSION];
  return { ...(image === undefined ? {} : { image }), ...(version === undefined ? {} : { version }) };
}

/** Which of the expected objects are there (and not being deleted); the manager Deployment as it is. */
async function presence(client: SelfClient, expected: readonly RecordedObject[]): Promise<{ objects: SelfStatus['objects']; deployment: KubeObject | undefined }> {
  const objects: SelfStatus['objects'] = [];
  let deployment: KubeObject | undefined;
  for (const obj of expected) {
    const live = await client.find(obj);
    if (obj.kind === 'Deployment' && obj.name === MANAGER_NAME) deployment = live;
    objects.push({ kind: obj.kind, name: obj.name, ...(obj.namespace === undefined ? {} : { namespace: obj.namespace }), present: live !== undefined && live.metadata.deletionTimestamp === undefined });
  }
  return { objects, deployment };
}

function installState(missing: number, expected: number, unfinished: boolean): SelfStatus['state'] {
  if (missing === expected) return 'not-installed';
  return missing === 0 && !unfinished ? 'installed' : 'partial';
}

/** The manager Deployment's Available condition and its ready replicas. */
function deploymentReadiness(deployment: KubeObject | undefined): Pick<SelfStatus, 'available' | 'readyReplicas'> {
  const st = deployment?.status as { readyReplicas?: number; conditions?: { type: string; status: string }[] } | undefined;
  return { available: (st?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True'), readyReplicas: st?.readyReplicas ?? 0 };
}

export async function statusSelf(client: SelfClient, o: SelfOptions = {}): Promise<SelfStatus> {
  const ns = o.namespace ?? DEFAULT_SELF_NAMESPACE;
  const record = await readRecord(client, ns);
  const { objects, deployment } = await presence(client, record?.objects ?? selfManifests(o).map(recordedObject));
  const leftovers: string[] = [];
  for (const obj of record?.prune ?? []) if ((await client.find(obj)) !== undefined) leftovers.push(recordLabel(obj));
  const missing = objects.filter((x) => !x.present).map(recordLabel);
  const unfinished = record?.phase === 'pending';
  const state = installState(missing.length, objects.length, unfinished);
  const facts = deploymentFacts(deployment);
  const image = facts.image;
  const version = record === undefined ? facts.version : record.version;
  const leader = await leaderOf(client, ns);
  const catalogCertificate = await catalogCertificateExpiry(client, ns);
  return {
    namespace: ns,
    state,
    source: record === undefined ? 'binary' : 'record',
    objects,
    missing,
    unfinished,
    leftovers,
    ...(image === undefined ? {} : { image }),
    ...(version === undefined ? {} : { version }),
    ...deploymentReadiness(deployment),
    ...(leader === undefined ? {} : { leader }),
    extensions: await installedExtensions(client),
    ...(catalogCertificate === undefined ? {} : { catalogCertificate }),
  };
}

/** Names of the ClusterExtensions (and PlatformOperators) in the cluster; none when Binnacle's APIs are not served. */
export async function installedExtensions(client: SelfClient): Promise<string[]> {
  const out: string[] = [];
  for (const kind of ['PlatformOperator', 'ClusterExtension', 'HelmOperator']) {
    try {
      for (const x of (await client.list(API_VERSION, kind)).items) out.push(`${kind} ${objectKey(x.metadata)}`);
    } catch (err) {
      // The client says an unserved kind as a 404 (KubeApiError): branch on that, never on the message.
      if (!isNotFound(err)) throw err;
    }
  }
  return out;
}

export interface UninstallSelfResult {
  deleted: string[];
  /** Extensions removed with --force (the manager uninstalled them unless `orphaned`). */
  extensions: string[];
  /** Binnacle objects whose finalizers were removed because no manager finished them in time. */
  orphaned: string[];
  /** Deleted objects still present when the timeout ran out (finalizers still running). */
  terminating: string[];
}

/** OLM v1's ClusterExtensions Binnacle's manager handles: its finalizer on them, or a twin of them (its label naming their UID). */
function handledOlmv1Extensions(olmv1: readonly KubeObject[], twinUids: ReadonlySet<string>): KubeObject[] {
  return olmv1.filter((x) => (x.metadata.finalizers ?? []).includes(FINALIZER_CLEANUP) || twinUids.has(x.metadata.uid ?? ''));
}

/** Deletes every extension, gives a running manager time to uninstall them, then drops what finalizers are left; answers those. */
async function removeExtensions(client: SelfClient, timeoutMs: number): Promise<string[]> {
  const orphaned: string[] = [];
  const list = async (apiVersion: string, kind: string): Promise<KubeObject[]> => (await client.list(apiVersion, kind).catch(() => ({ items: [] as KubeObject[] }))).items;
  // Extensions first, while the manager runs: it uninstalls what they installed. An OLM v1
  // ClusterExtension the manager handles is deleted (the manager deletes its twin, which uninstalls);
  // its twin, and a PlatformOperator's extension, go with what owns them: the admission policies
  // refuse anyone but the manager and the garbage collector deleting those.
  const twins = (await list(API_VERSION, 'ClusterExtension')).filter((x) => olmv1TwinOf(x) !== undefined);
  const olmv1 = handledOlmv1Extensions(await list(OLMV1_API_VERSION, 'ClusterExtension'), new Set(twins.map((x) => olmv1TwinOf(x) ?? '')));
  for (const x of olmv1) {
    // That very object: one made again since under the name is not deleted for it (a 409).
    await client.delete({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: x.metadata.name ?? '' }, { preconditions: { uid: x.metadata.uid ?? '' } }).catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
  }
  for (const kind of ['PlatformOperator', 'ClusterExtension', 'HelmOperator']) {
    for (const x of await list(API_VERSION, kind)) {
      if (olmv1TwinOf(x) !== undefined || (kind === 'ClusterExtension' && platformOwner(x) !== undefined)) continue;
      await client.delete({ apiVersion: API_VERSION, kind, name: x.metadata.name ?? '' });
    }
  }
  // The extensions go at once; what they installed goes with their BundleDeployments; the OLM v1 objects once their twins are gone.
  const olmv1Left = async (): Promise<KubeObject[]> => {
    const uids = new Set(olmv1.map((x) => x.metadata.uid));
    return (await list(OLMV1_API_VERSION, 'ClusterExtension')).filter((x) => uids.has(x.metadata.uid));
  };
  const remaining = async (): Promise<number> => (await installedExtensions(client)).length + (await list(API_VERSION, 'BundleDeployment')).length + (await olmv1Left()).length;
  await pollUntil(remaining, (n) => n === 0, { timeoutMs, intervalMs: 1000 });
  // Whatever is left has no manager to finish it: drop the finalizers so the APIs can go.
  for (const kind of ['PlatformOperator', 'ClusterExtension', 'HelmOperator', 'BundleDeployment', 'ClusterCatalog']) {
    for (const x of await list(API_VERSION, kind)) {
      if ((x.metadata.finalizers ?? []).length === 0) continue;
      await client.patch({ apiVersion: API_VERSION, kind, name: x.metadata.name ?? '' }, { metadata: { finalizers: null } });
      orphaned.push(`${kind} ${x.metadata.name ?? ''}`);
    }
  }
  orphaned.push(...(await dropManagerFinalizers(client, await olmv1Left())));
  return orphaned;
}

/** On OLM v1 objects, only the finalizers Binnacle's manager would have removed (OLM v1's CRDs stay, and may be another's); answers those changed. */
async function dropManagerFinalizers(client: SelfClient, olmv1: readonly KubeObject[]): Promise<string[]> {
  const changed: string[] = [];
  for (const x of olmv1) {
    const finalizers = x.metadata.finalizers ?? [];
    const kept = withoutManagerFinalizers(finalizers);
    if (kept.length === finalizers.length) continue;
    // Against the version read: one written since (the manager finishing it) is left as it is.
    const patched = await client.patch({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: x.metadata.name ?? '' }, { metadata: { finalizers: kept, resourceVersion: x.metadata.resourceVersion } }).then(
      () => true,
      (err: unknown) => {
        if (isConflict(err) || isNotFound(err)) return false;
        throw err;
      },
    );
    if (patched) changed.push(`ClusterExtension.${OLMV1_GROUP} ${x.metadata.name ?? ''}`);
  }
  return changed;
}

/** The manager first (so it stops reconciling), then the policies it made that deny, the rest, the record (when there is one), the namespace last. */
function uninstallSequence(objects: readonly RecordedObject[], recordNamespace: string | undefined): RecordedObject[] {
  const ordered = deleteOrder(objects);
  const policies: RecordedObject[] = [PROTECTION_POLICY, TWIN_POLICY_NAME].flatMap((name) => ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy'].map((kind) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name })));
  return [
    ...ordered.filter((x) => x.kind === 'Deployment'),
    ...policies,
    ...ordered.filter((x) => x.kind !== 'Deployment' && x.kind !== 'Namespace'),
    ...(recordNamespace === undefined ? [] : [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: recordNamespace, name: RECORD_NAME }]),
    ...ordered.filter((x) => x.kind === 'Namespace'),
  ];
}

/** Drops the finalizers of the CRD's custom resources; answers those it changed. */
async function releaseCustomResources(client: SelfClient, crd: KubeObject): Promise<string[]> {
  const orphaned: string[] = [];
  for (const x of await customResources(client, crd)) {
    if ((x.metadata.finalizers ?? []).length === 0) continue;
    await client.patch({ apiVersion: x.apiVersion, kind: x.kind, name: x.metadata.name ?? '', ...(x.metadata.namespace === undefined ? {} : { namespace: x.metadata.namespace }) }, { metadata: { finalizers: null } });
    orphaned.push(`${x.kind} ${objectKey(x.metadata)}`);
  }
  return orphaned;
}

export async function uninstallSelf(client: SelfClient, o: SelfOptions & { force?: boolean; timeoutMs?: number } = {}): Promise<UninstallSelfResult> {
  const ns = o.namespace ?? DEFAULT_SELF_NAMESPACE;
  const extensions = await installedExtensions(client);
  if (extensions.length > 0 && o.force !== true) {
    throw new BinnacleError(
      'input',
      'SELF_EXTENSIONS_INSTALLED',
      `refusing to uninstall Binnacle while extensions are installed:\n${extensions.map((e) => `  ${e}`).join('\n')}\nremove them first (\`binnacle uninstall PACKAGE\` or kubectl delete), or run \`binnacle uninstall-self --force\` to uninstall them and Binnacle together`,
    );
  }
  // What the install recorded (its set, and what it had yet to prune); without a record (an
  // install older than records), this binary's manifests.
  const record = await readRecord(client, ns);
  const objects = new Map<string, RecordedObject>();
  for (const x of record === undefined ? selfManifests(o).map(recordedObject) : [...record.objects, ...record.prune]) if (!objects.has(objectId(x))) objects.set(objectId(x), x);
  const orphaned = extensions.length > 0 ? await removeExtensions(client, o.timeoutMs ?? 120_000) : [];
  const deleted: string[] = [];
  const gone: RecordedObject[] = [];
  for (const obj of uninstallSequence([...objects.values()], record === undefined ? undefined : ns)) {
    const live = await client.find(obj).catch(() => undefined);
    if (live === undefined || ownedByOthers(live, obj)) continue;
    // Custom resources left without a manager would keep their finalizers and hold the CRD.
    if (obj.kind === 'CustomResourceDefinition') orphaned.push(...(await releaseCustomResources(client, live)));
    await client.delete(obj);
    deleted.push(recordLabel(obj));
    gone.push(obj);
  }
  // As `kubectl delete` does, return once they are gone: a CRD goes only after its custom
  // resources, a namespace after its contents.
  let present = gone;
  const stillPresent = async (): Promise<RecordedObject[]> => {
    const found: RecordedObject[] = [];
    for (const obj of present) if ((await client.find(obj).catch(() => obj)) !== undefined) found.push(obj);
    present = found;
    return found;
  };
  const left = (await pollUntil(stillPresent, (objs) => objs.length === 0, { timeoutMs: o.timeoutMs ?? 120_000, intervalMs: 500 })).value;
  return { deleted, extensions, orphaned, terminating: left.map(recordLabel) };
}
