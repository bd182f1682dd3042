/**
 * Bringing operator-controller's release history over to Binnacle (`binnacle olmv1
 * import-history`), a step of moving a cluster from OLM v1 (docs/from-olm-v1.md). For each
 * `olm.operatorframework.io/v1` ClusterExtension, its revisions in operator-controller's chunked
 * store (apply/release-chunked.ts) are written as Helm's own records of the release Binnacle will
 * keep for it (the BundleDeployment its twin makes: `<extension>-<package>`), in the install
 * namespace, labelled as that BundleDeployment's. Other Helm records of that release there,
 * labelled as that BundleDeployment's, are removed (Binnacle has no history of it yet, so they
 * were planted); records of that name that are not (a release `helm install` made, another
 * owner's) skip the extension unless `--replace-foreign` says to write over them. Nothing else is written: the manager moves
 * such records into its trusted history at that BundleDeployment's first reconcile, each checked
 * (its owner, no hooks, every object live and the take-over's own), as any Helm record from before
 * Binnacle (docs/trust-model.md "Moving over"). Run it as an admin, before Binnacle's manager
 * first reconciles the extension; an extension Binnacle already keeps a history of is skipped.
 */
import { bundleDeploymentName } from '../api/names.js';
import { OLMV1_API_VERSION, OLMV1_IMPORTED_HISTORY_ANNOTATION, type Olmv1ClusterExtension } from '../api/olmv1/types.js';
import { API_VERSION } from '../api/types.js';
import { CHUNKED_CHUNK_TYPE, CHUNKED_INDEX_TYPE, revisionDigest, revisionFromChunked } from '../apply/release-chunked.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../apply/ownership.js';
import { ReleaseStore, type MirrorRecords } from '../apply/release-store.js';
import type { ReleaseRevision } from '../apply/types.js';
import { isNotFound } from '../kube/errors.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError, errorMessage } from '../util/errors.js';

/** operator-controller's system namespace in its own manifests. */
export const OLMV1_SYSTEM_NAMESPACE = 'olmv1-system';
const OPERATOR_CONTROLLER_OWNER = 'operator-controller';

export interface ImportedHistory {
  /** The OLM v1 ClusterExtension. */
  extension: string;
  /** The Helm release Binnacle keeps for it (its BundleDeployment's name), in `namespace`. */
  release: string;
  namespace: string;
  /** Revisions written (or, with dryRun, that would be). */
  imported: { revision: number; status: string; chart: string }[];
  /** Revisions already there as Helm records of that release, as operator-controller's say: left as they are. */
  present: number[];
  /** Revisions there that said something else: written over with operator-controller's. */
  replaced: number[];
  /** Helm records of that release that are not operator-controller's (planted, or a revision it no longer has): deleted, by Secret name. */
  removed: string[];
  /** Records not taken, and why (naming the Secret). */
  refused: { secret: string; reason: string }[];
  /** Why nothing of this extension was looked at. */
  skipped?: string;
  /** Helm records of the release's name not labelled as its BundleDeployment's, which skipped it (without replaceForeign). */
  foreign?: string[];
}

export interface ImportOptions {
  /** Where operator-controller kept its records (its system namespace). */
  fromNamespace?: string;
  /** Only this ClusterExtension. */
  extension?: string;
  dryRun?: boolean;
  /**
   * Write operator-controller's records over Helm records of the release that are not labelled
   * as its BundleDeployment's (a release `helm install` made under that name, another owner's).
   * Without it such an extension is skipped, naming them: Binnacle's manager would refuse that
   * release as someone else's too, and writing over it loses that release's history.
   */
  replaceForeign?: boolean;
  now?: () => Date;
}

export async function importOlmv1History(client: ObjectReader & Pick<ObjectWriter, 'create' | 'update' | 'delete' | 'patch'>, opts: ImportOptions = {}): Promise<ImportedHistory[]> {
  const from = opts.fromNamespace ?? OLMV1_SYSTEM_NAMESPACE;
  const all = await client.list<Olmv1ClusterExtension>(OLMV1_API_VERSION, 'ClusterExtension').catch((err: unknown) => {
    if (isNotFound(err)) throw new BinnacleError('input', 'OLMV1_NOT_SERVED', `the cluster serves no ${OLMV1_API_VERSION} ClusterExtension: nothing of OLM v1 to bring over`);
    throw err;
  });
  const extensions = all.items.filter((ce) => opts.extension === undefined || ce.metadata.name === opts.extension);
  const secrets = (await client.list('v1', 'Secret', { namespace: from, labelSelector: `owner=${OPERATOR_CONTROLLER_OWNER}` })).items;
  const indexes = secrets.filter((s) => s.type === CHUNKED_INDEX_TYPE && s.metadata.labels?.type === 'index');
  const chunks = new Map(secrets.filter((s) => s.type === CHUNKED_CHUNK_TYPE).map((s) => [s.metadata.name ?? '', s]));
  const store = new ReleaseStore(client, opts.now);
  const out: ImportedHistory[] = [];
  for (const ce of extensions) {
    try {
      out.push(await importOne(client, store, ce, indexes, chunks, { dryRun: opts.dryRun === true, replaceForeign: opts.replaceForeign === true }));
    } catch (err) {
      // One extension's failure (a write refused) does not hide what was done for the others.
      out.push({ extension: ce.metadata.name ?? '', release: '', namespace: ce.spec.namespace, imported: [], present: [], replaced: [], removed: [], refused: [], skipped: `failed: ${errorMessage(err)}` });
    }
  }
  return out;
}

async function importOne(
  client: ObjectReader & Pick<ObjectWriter, 'patch'>,
  store: ReleaseStore,
  ce: Olmv1ClusterExtension,
  indexes: readonly KubeObject[],
  chunks: ReadonlyMap<string, KubeObject>,
  { dryRun, replaceForeign }: { dryRun: boolean; replaceForeign: boolean },
): Promise<ImportedHistory> {
  const extension = ce.metadata.name ?? '';
  const namespace = ce.spec.namespace;
  const pkg = ce.spec.source.catalog?.packageName;
  const release = pkg === undefined ? '' : bundleDeploymentName(extension, pkg);
  const result: ImportedHistory = { extension, release, namespace, imported: [], present: [], replaced: [], removed: [], refused: [] };
  if (pkg === undefined) return { ...result, skipped: 'spec.source.catalog.packageName is not set: no bundle of a catalog to keep a release of' };
  const kept = await keptRevision(client, release);
  if (kept !== undefined) return { ...result, skipped: `Binnacle already keeps the history of BundleDeployment ${release} (revision ${kept}): operator-controller's records can only be brought over before its first install` };
  const theirs = await operatorControllerRevisions(ce, indexes, chunks, result.refused);
  // The release's Helm records become exactly operator-controller's: Binnacle has no history of
  // it yet, so any other record there was planted (whoever may write Secrets in the namespace)
  // and would be moved into the history with the rest.
  const ref = { namespace, name: release };
  const mirror = await store.records(ref);
  const foreign = replaceForeign ? undefined : foreignRecords(mirror, ref);
  if (foreign !== undefined) return { ...result, ...foreign };
  const there = await store.read(ref);
  const wanted = new Set(theirs.map((r) => r.revision));
  const existing = new Map(there.revisions.map((r) => [r.revision, r]));
  const others = [...[...mirror.byRevision].filter(([v]) => !wanted.has(v)).map(([, m]) => m.secret), ...mirror.strays];
  result.removed.push(...(await removeRecords(store, others, dryRun)));
  for (const rev of theirs) {
    const moved: ReleaseRevision = { ...rev, name: release, owner: { kind: 'BundleDeployment', name: release } };
    const before = existing.get(rev.revision);
    if (before !== undefined && revisionDigest(before) === revisionDigest(moved)) {
      result.present.push(rev.revision);
      continue;
    }
    if (before !== undefined || mirror.byRevision.has(rev.revision)) result.replaced.push(rev.revision);
    else result.imported.push({ revision: rev.revision, status: rev.status, chart: `${rev.chart.name}-${rev.chart.version}` });
    if (!dryRun) await store.put(moved);
  }
  // The pin the manager checks these records against before it moves them into its history: on
  // the ClusterExtension, which only cluster admins write (a record planted later is not pinned).
  const pins = Object.fromEntries(theirs.map((r) => [String(r.revision), revisionDigest({ ...r, name: release, owner: { kind: 'BundleDeployment', name: release } })]));
  if (!dryRun && theirs.length > 0) await client.patch({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: extension }, { metadata: { annotations: { [OLMV1_IMPORTED_HISTORY_ANNOTATION]: JSON.stringify(pins) } } }, 'merge');
  return result;
}

/** Deletes each record as it was read (or, dry, only names it); answers their names. */
async function removeRecords(store: ReleaseStore, records: readonly KubeObject[], dryRun: boolean): Promise<string[]> {
  for (const s of dryRun ? [] : records) {
    try {
      await store.deleteRecord(s);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return records.map((s) => s.metadata.name ?? '');
}

/** Helm records of the release not labelled as its BundleDeployment's, and why they skip it; undefined when there are none. */
function foreignRecords(mirror: MirrorRecords, { namespace, name }: { namespace: string; name: string }): { skipped: string; foreign: string[] } | undefined {
  const names = [...[...mirror.byRevision.values()].map((m) => m.secret), ...mirror.strays]
    .filter((s) => !labelledAs(s, name))
    .map((s) => s.metadata.name ?? '')
    .sort();
  if (names.length === 0) return undefined;
  const listed = `${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}`;
  const skipped = `Helm records of release ${namespace}/${name} that are not BundleDeployment ${name}'s are there (${listed}): a release \`helm install\` made under that name, or another owner's, which Binnacle's manager would refuse to take over too; nothing written. Remove them, or pass --replace-foreign to write operator-controller's records over them`;
  return { skipped, foreign: names };
}

/** Whether a Helm record's labels name BundleDeployment `name` as its owner (as the records this writes are). */
function labelledAs(secret: KubeObject, name: string): boolean {
  const l = secret.metadata.labels ?? {};
  return l[OWNER_KIND_LABEL] === 'BundleDeployment' && l[OWNER_NAME_LABEL] === name && l[OWNER_NAMESPACE_LABEL] === undefined;
}

/** operator-controller's revisions of `ce`'s release, oldest first; what cannot be taken is added to `refused`. */
async function operatorControllerRevisions(ce: Olmv1ClusterExtension, indexes: readonly KubeObject[], chunks: ReadonlyMap<string, KubeObject>, refused: ImportedHistory['refused']): Promise<ReleaseRevision[]> {
  const extension = ce.metadata.name ?? '';
  const mine = indexes.filter((s) => s.metadata.labels?.name === extension).sort((a, b) => (Number(a.metadata.labels?.version) || 0) - (Number(b.metadata.labels?.version) || 0));
  const out: ReleaseRevision[] = [];
  for (const index of mine) {
    const secret = `${index.metadata.namespace ?? ''}/${index.metadata.name ?? ''}`;
    if (!controlledByExtension(index, ce)) {
      refused.push({ secret, reason: `its controller owner reference is not ClusterExtension ${extension} (uid ${ce.metadata.uid ?? ''}): not this extension's record` });
      continue;
    }
    try {
      const rev = await revisionFromChunked(index, chunks);
      if (rev.name !== extension || rev.namespace !== ce.spec.namespace) refused.push({ secret, reason: `it is release ${rev.namespace}/${rev.name}, not ${ce.spec.namespace}/${extension}` });
      else out.push(rev);
    } catch (err) {
      refused.push({ secret, reason: errorMessage(err) });
    }
  }
  return out;
}

/** The revision Binnacle's BundleDeployment `name` has installed, if any (none before Binnacle's CRDs exist). */
async function keptRevision(client: ObjectReader, name: string): Promise<number | undefined> {
  const bd = await client.find({ apiVersion: API_VERSION, kind: 'BundleDeployment', name }).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  const kept = (bd?.status as { revision?: unknown } | undefined)?.revision;
  return typeof kept === 'number' && kept > 0 ? kept : undefined;
}

/** Whether `index` is a record operator-controller kept for this very ClusterExtension (its controller, uid included). */
function controlledByExtension(index: KubeObject, ce: Olmv1ClusterExtension): boolean {
  const controller = index.metadata.ownerReferences?.find((r) => r.controller === true);
  return controller?.kind === 'ClusterExtension' && controller.name === ce.metadata.name && controller.uid === ce.metadata.uid;
}
