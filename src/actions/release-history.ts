/**
 * An extension's history and the way back. Its last resolutions (`status.history`) beside the
 * Helm revisions of each BundleDeployment of its set — the records `helm history` reads — and
 * rollback: the version installed before the current one, pinned exactly under SelfCertified
 * (the resolver may then go down, which CatalogProvided forbids; an upgrade lifts the pin).
 * Before a rollback, `rollbackPreview` checks the older revision's CRDs against the live ones
 * with the applier's CRD upgrade-safety rules, so a stored version the older CRDs would leave
 * behind is said before anything changes, and so is what happens to custom resources that set
 * fields only the newer version declares (rollback-impact.ts). `binnacle history`, `binnacle rollback` and the
 * console all read and act through this module.
 */
import { API_VERSION, type BundleDeployment, type ClusterExtension, type ResolutionRecord } from '../api/types.js';
import { checkCrdUpgrade } from '../apply/crd-safety.js';
import { parseManifest } from '../apply/release.js';
import { ReleaseStore, type RefusedRecord } from '../apply/release-store.js';
import type { ReleaseRef, ReleaseRevision } from '../apply/types.js';
import { buildInstalledState, describeNeeds, unitsNeededBy, type InstalledUnit } from '../installed/index.js';
import type { ObjectReader, ObjectWriter } from '../kube/ports.js';
import { BinnacleError } from '../util/errors.js';
import { bundleDeploymentName } from '../api/names.js';
import { extensionSpecRef } from './extension-ref.js';
import { customResourcesImpact, type CustomResourcesImpact } from './rollback-impact.js';

export interface ReleaseHistory {
  bundleDeployment: string;
  package: string;
  release: string;
  namespace: string;
  neededBy: string;
  revisions: Omit<ReleaseRevision, 'manifest' | 'config' | 'content'>[];
  /** Helm records of the release that could not be read (over a bound, malformed): named, not history. */
  refused: RefusedRecord[];
}

export interface ExtensionHistory {
  name: string;
  package: string;
  resolutions: ResolutionRecord[];
  releases: ReleaseHistory[];
}

/** The Helm release a BundleDeployment of the set installs: its releaseName, else its own name, in its namespace. */
export function releaseOf(unit: Pick<InstalledUnit, 'bundleDeployment' | 'namespace' | 'object'>): ReleaseRef {
  return { name: unit.object.spec.releaseName ?? unit.bundleDeployment, namespace: unit.namespace };
}

/** What reading an extension's history takes: reads (the release records too); a rollback also patches the extension. */
export type HistoryClient = ObjectReader & ObjectWriter;

const ceRef = (name: string): { apiVersion: string; kind: string; name: string } => ({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });

/** Reads an extension's resolution history and the Helm revisions of its BundleDeployments. */
export async function extensionHistory(client: HistoryClient, name: string): Promise<ExtensionHistory> {
  const ce = await client.find<ClusterExtension>(ceRef(name));
  if (ce === undefined) throw new BinnacleError('input', 'NOT_FOUND', `ClusterExtension ${name} does not exist`);
  const [bds, ces] = await Promise.all([client.list<BundleDeployment>(API_VERSION, 'BundleDeployment'), client.list<ClusterExtension>(API_VERSION, 'ClusterExtension')]);
  const state = buildInstalledState(bds.items, ces.items);
  const store = new ReleaseStore(client);
  const releases: ReleaseHistory[] = [];
  for (const unit of unitsNeededBy(state, name)) {
    const { name: release } = releaseOf(unit);
    const read = await store.read(releaseOf(unit));
    const revisions = read.revisions.map(({ manifest: _m, config: _c, content: _x, ...rest }) => rest);
    releases.push({ bundleDeployment: unit.bundleDeployment, package: unit.package, release, namespace: unit.namespace, neededBy: describeNeeds(unit.needs), revisions, refused: read.refused });
  }
  return { name, package: ce.spec.source.catalog.packageName, resolutions: ce.status?.history ?? [], releases };
}

/** The revisions of the extension's own bundle (not its dependencies'), oldest first. */
async function ownRevisions(client: HistoryClient, ce: ClusterExtension): Promise<{ release: string; namespace: string; revisions: ReleaseRevision[] }> {
  const current = ce.status?.install?.bundle;
  const release = ce.status?.install?.bundleDeployment ?? bundleDeploymentName(ce.metadata.name ?? '', current?.package ?? ce.spec.source.catalog.packageName);
  const namespace = ce.status?.install?.namespace ?? ce.spec.namespace;
  return { release, namespace, revisions: await new ReleaseStore(client).history({ name: release, namespace }) };
}

/** A revision a rollback can go to: it was deployed once, at another version than the current one. */
function candidates(revisions: readonly ReleaseRevision[], currentVersion: string): ReleaseRevision[] {
  return revisions.filter((r) => (r.status === 'superseded' || r.status === 'deployed') && r.chart.version !== currentVersion);
}

export interface CrdLeftBehind {
  crd: string;
  /** The CRD upgrade-safety rule that refuses going back (e.g. crd.stored-version-removed). */
  rule: string;
  message: string;
}

export interface RollbackPreview {
  name: string;
  from: string;
  to: string;
  /** The Helm revision of the version rolled back to. */
  revision: number;
  release: string;
  namespace: string;
  /** CRD changes going back would make; those with rule crd.stored-version-removed would strand stored objects. */
  crdProblems: CrdLeftBehind[];
  /** True when a CRD's status.storedVersions holds a version the older CRDs do not have: data would be left behind. */
  dataAtRisk: boolean;
  /** Per CRD, the fields the older version does not declare and the custom resources that set them. */
  customResources: CustomResourcesImpact[];
}

interface Target {
  from: string;
  revision: ReleaseRevision;
  release: string;
  namespace: string;
}

/** The revision rolling `name` back to `toVersion` (default: the version before the current one) goes to. */
async function targetOf(client: HistoryClient, name: string, toVersion?: string): Promise<Target> {
  const ce = await client.get<ClusterExtension>(ceRef(name));
  const current = ce.status?.install?.bundle;
  if (current === undefined) throw new BinnacleError('input', 'NOTHING_INSTALLED', `${name} has nothing installed to roll back from`);
  const { release, namespace, revisions } = await ownRevisions(client, ce);
  const target = candidates(revisions, current.version).filter((r) => toVersion === undefined || r.chart.version === toVersion).at(-1);
  if (target === undefined) {
    const what = toVersion === undefined ? 'no earlier version in its history' : `no revision at version ${toVersion} to roll back to`;
    throw new BinnacleError('input', 'NO_EARLIER_VERSION', `${name} has ${what} (helm history ${release} -n ${namespace})`);
  }
  return { from: current.version, revision: target, release, namespace };
}

/**
 * What rolling `name` back to `toVersion` (default: the version installed before the current
 * one) would do to its CRDs: the older revision's CRDs against the live ones, by the same rules
 * the applier refuses an unsafe CRD change with.
 */
export async function rollbackPreview(client: HistoryClient, name: string, toVersion?: string): Promise<RollbackPreview> {
  const { from, revision, release, namespace } = await targetOf(client, name, toVersion);
  const crdProblems: CrdLeftBehind[] = [];
  const customResources: CustomResourcesImpact[] = [];
  for (const old of parseManifest(revision.manifest, `release ${namespace}/${release} revision ${revision.revision}`)) {
    if (old.kind !== 'CustomResourceDefinition') continue;
    const live = await client.find({ apiVersion: old.apiVersion, kind: old.kind, name: old.metadata.name ?? '' });
    if (live === undefined) continue;
    for (const p of checkCrdUpgrade(live, old).errors()) crdProblems.push({ crd: old.metadata.name ?? '', rule: p.rule, message: p.message });
    const impact = await customResourcesImpact(client, live, old);
    if (impact !== undefined) customResources.push(impact);
  }
  return { name, from, to: revision.chart.version, revision: revision.revision, release, namespace, crdProblems, dataAtRisk: crdProblems.some((p) => p.rule === 'crd.stored-version-removed'), customResources };
}

/**
 * Rolls `name` back: pins `toVersion` (default: the version before the current one) exactly,
 * under SelfCertified so the resolver may go down. The manager then installs it, refusing an
 * unsafe CRD change as for any other version.
 */
export async function rollbackExtension(client: HistoryClient, name: string, toVersion?: string): Promise<{ from: string; to: string }> {
  let from: string;
  let to: string;
  if (toVersion === undefined) {
    const t = await targetOf(client, name);
    from = t.from;
    to = t.revision.chart.version;
  } else {
    // An explicit version need not be in the history (the CLI's --to-version): any the catalog has.
    const current = (await client.get<ClusterExtension>(ceRef(name))).status?.install?.bundle;
    if (current === undefined) throw new BinnacleError('input', 'NOTHING_INSTALLED', `${name} has nothing installed to roll back from`);
    from = current.version;
    to = toVersion;
  }
  // The OLM v1 object, for an OLM v1 ClusterExtension's twin (extension-ref.ts).
  await client.patch(await extensionSpecRef(client, name), { spec: { source: { catalog: { version: to, upgradeConstraintPolicy: 'SelfCertified' } } } });
  return { from, to };
}
