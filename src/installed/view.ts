/**
 * The installed state: one view of every bundle installed in the cluster, rebuilt from the
 * BundleDeployments of all ClusterExtensions (and so of all PlatformOperators) each time it is
 * needed — never kept only in memory. Each unit is one package's BundleDeployment with its
 * version, provided APIs, the extension whose settings it was installed with (its holder), and
 * the extensions that need it.
 *
 * The resolver reads it as facts (`installedFacts`), so a dependency already installed meets a
 * new request, and an API keeps one owner.
 */
import {
  ANNOTATION_BUNDLE_NAME,
  ANNOTATION_BUNDLE_VERSION,
  ANNOTATION_CATALOG,
  ANNOTATION_PROVIDES,
  LABEL_OWNER_KIND,
  LABEL_OWNER_NAME,
  LABEL_PACKAGE,
  type BundleDeployment,
  type ClusterExtension,
} from '../api/types.js';
import { findCondition } from '../kube/types.js';
import type { InstalledBundle } from '../resolve/index.js';
import { describeNeeds, recordedNeeds, type Need } from './needs.js';

/** `installed`: its install succeeded; `pending`: not (yet); `deleting`: on its way out. */
export type UnitState = 'installed' | 'pending' | 'deleting';

export interface InstalledUnit {
  bundleDeployment: string;
  package: string;
  /** The version its BundleDeployment is set to install. */
  version: string;
  bundleName: string | undefined;
  catalog: string | undefined;
  /** Install namespace. */
  namespace: string;
  provides: string[];
  /** The extension whose settings it was installed with. */
  holder: string | undefined;
  /** Extensions that exist and need it, requested first. */
  needs: Need[];
  /** Needs recorded for extensions that no longer exist. */
  staleNeeds: Need[];
  state: UnitState;
  object: BundleDeployment;
}

/** What the view knows of an extension: enough to write ownerReferences and explain roles. */
export interface ExtensionRef {
  name: string;
  uid: string;
  package: string;
  deleting: boolean;
}

export interface InstalledState {
  units: InstalledUnit[];
  extensions: Map<string, ExtensionRef>;
  /** Inconsistencies found (e.g. one package in two BundleDeployments), for logs and status. */
  problems: string[];
}

function stateOf(bd: BundleDeployment): UnitState {
  if (bd.metadata.deletionTimestamp !== undefined) return 'deleting';
  return findCondition(bd.status?.conditions, 'Installed')?.status === 'True' ? 'installed' : 'pending';
}

function created(bd: BundleDeployment): string {
  return bd.metadata.creationTimestamp ?? '';
}

/** Builds the view. BundleDeployments that no resolution made (no package label) are not part of it. */
export function buildInstalledState(bundleDeployments: readonly BundleDeployment[], extensions: readonly ClusterExtension[]): InstalledState {
  const refs = new Map<string, ExtensionRef>();
  for (const ce of extensions) {
    const name = ce.metadata.name ?? '';
    refs.set(name, { name, uid: ce.metadata.uid ?? '', package: ce.spec.source.catalog.packageName, deleting: ce.metadata.deletionTimestamp !== undefined });
  }
  const units: InstalledUnit[] = [];
  const problems: string[] = [];
  const sorted = [...bundleDeployments].sort((a, b) => created(a).localeCompare(created(b)) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  for (const bd of sorted) {
    const labels = bd.metadata.labels ?? {};
    const annotations = bd.metadata.annotations ?? {};
    const pkg = labels[LABEL_PACKAGE];
    const version = annotations[ANNOTATION_BUNDLE_VERSION];
    if (pkg === undefined || pkg === '' || version === undefined || version === '') continue;
    const all = recordedNeeds(bd, (ext) => (refs.get(ext)?.package === pkg ? 'requested' : 'dependency'));
    const unit: InstalledUnit = {
      bundleDeployment: bd.metadata.name ?? '',
      package: pkg,
      version,
      bundleName: annotations[ANNOTATION_BUNDLE_NAME],
      catalog: annotations[ANNOTATION_CATALOG],
      namespace: bd.spec.installNamespace,
      provides: (annotations[ANNOTATION_PROVIDES] ?? '').split(',').filter((g) => g !== ''),
      holder: labels[LABEL_OWNER_KIND] === 'ClusterExtension' ? labels[LABEL_OWNER_NAME] : undefined,
      needs: all.filter((n) => refs.has(n.extension)),
      staleNeeds: all.filter((n) => !refs.has(n.extension)),
      state: stateOf(bd),
      object: bd,
    };
    const twin = unit.state === 'deleting' ? undefined : units.find((u) => u.package === pkg && u.state !== 'deleting');
    if (twin !== undefined) {
      problems.push(`package ${pkg} is in two BundleDeployments, ${twin.bundleDeployment} and ${unit.bundleDeployment}; ${unit.bundleDeployment} (the newer) is left out of resolution`);
      continue;
    }
    units.push(unit);
  }
  return { units, extensions: refs, problems };
}

/** The unit of a package that is not on its way out. */
export function unitOf(state: InstalledState, pkg: string): InstalledUnit | undefined {
  return state.units.find((u) => u.package === pkg && u.state !== 'deleting');
}

/** Every unit (deleting ones included) that records `extension` as needing it. */
export function unitsNeededBy(state: InstalledState, extension: string): InstalledUnit[] {
  return state.units.filter((u) => u.needs.some((n) => n.extension === extension));
}

/** The extension that requested `pkg` itself, if any. */
export function requesterOf(unit: InstalledUnit): string | undefined {
  return unit.needs.find((n) => n.role === 'requested')?.extension;
}

/**
 * Everything installed, as facts for one extension's resolution. Its own requested package,
 * while its first install has not succeeded, is left out: that choice is still open.
 */
export function installedFacts(state: InstalledState, forExtension: string): InstalledBundle[] {
  const out: InstalledBundle[] = [];
  for (const u of state.units) {
    if (u.state === 'deleting') continue;
    if (u.state === 'pending' && requesterOf(u) === forExtension) continue;
    const owner = u.needs.length > 0 ? describeNeeds(u.needs) : `BundleDeployment ${u.bundleDeployment}`;
    const fact: InstalledBundle = { package: u.package, version: u.version, owner, ...(u.bundleName === undefined ? {} : { bundleName: u.bundleName }) };
    if (u.provides.length > 0) fact.provides = u.provides;
    out.push(fact);
  }
  return out;
}
