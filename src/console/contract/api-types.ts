/**
 * The console API's answers, one definition for both ends: the server (src/console) builds
 * them and the page (src/console/web, built for the browser) reads them. Types only, importing
 * nothing but other such modules, so the page's build and type check (src/console/web/tsconfig.json,
 * DOM and no Node) can take it in, as it does schema-form.ts.
 */
import type { SpecDescriptor } from './schema-form.js';
import type { PendingPlan } from '../../api/approval.js';

// --- catalogs (catalog-view.ts, graph.ts) ---------------------------------------------------

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

export interface PackageSummary {
  catalog: string;
  name: string;
  displayName: string;
  shortDescription: string;
  hasIcon: boolean;
  provider: string;
  categories: string[];
  capability: string;
  installModes: string[];
  keywords: string[];
  hasDependencies: boolean;
  defaultChannel: string;
  headVersion: string;
  deprecated: boolean;
}

/** GET packages. */
export interface PackageList {
  packages: PackageSummary[];
  catalogs: string[];
  warnings: string[];
}

export interface ChannelView {
  name: string;
  head: string | undefined;
  deprecation?: string | undefined;
  entries: { name: string; version: string; replaces?: string | undefined; skips?: string[] | undefined; skipRange?: string | undefined; deprecation?: string | undefined }[];
}

export interface BundleView {
  name: string;
  version: string;
  image: string;
  provides: Gvk[];
  requires: Gvk[];
  requiresPackages: { packageName: string; versionRange: string }[];
}

export interface PackageDetail extends PackageSummary {
  description: string;
  links: { name: string; url: string }[];
  maintainers: { name: string; email: string }[];
  ownedApis: { name: string; version: string; kind: string; displayName: string; description: string }[];
  packageDeprecation?: string | undefined;
  channels: ChannelView[];
  bundles: BundleView[];
}

/** GET catalogs/CATALOG/packages/NAME: the package, what of it is installed, each channel's upgrade graph. */
export interface PackagePage extends PackageDetail {
  installedBundle?: string | undefined;
  graphs: Record<string, GraphLayout>;
}

export type EdgeKind = 'replaces' | 'skips' | 'skipRange';

export interface GraphNode {
  id: string;
  version: string;
  x: number;
  y: number;
  width: number;
  height: number;
  head: boolean;
  installed: boolean;
  /** The installed version can upgrade to it, directly or in steps. */
  reachable: boolean;
  /** On the path the next upgrade takes (upgrade-path.ts), the installed version excluded. */
  onPath: boolean;
  deprecated: boolean;
}

export interface GraphEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  /** A step of the path the next upgrade takes. */
  onPath: boolean;
  points: { x: number; y: number }[];
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** The path the next upgrade takes, from the installed bundle (only with one installed in this channel). */
  upgradePath?: { bundles: string[]; problem?: string | undefined } | undefined;
}

// --- installed extensions (installed.ts) ----------------------------------------------------

/** A condition as the page shows it (the server may send more of it). */
export interface ConditionView {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** One word for how something is doing (health.ts decides it); Unknown when it reports nothing. */
export type Health = 'Healthy' | 'Progressing' | 'Failing' | 'Deleting' | 'Unknown';

/** How many are of each health: the roll-up. */
export type HealthCounts = Record<Health, number>;

export interface ExtensionSummary {
  name: string;
  package: string;
  namespace: string;
  serviceAccount: string;
  channels: string[];
  version: string;
  installed?: { name: string; version: string; package: string; catalog: string } | undefined;
  health: Health;
  message: string;
  conditions: ConditionView[];
}

export interface UnitView {
  bundleDeployment: string;
  package: string;
  version: string;
  namespace: string;
  state: string;
  role: string;
  neededBy: string[];
  revision?: number | undefined;
  conditions: ConditionView[];
}

/** One of the extension's resolutions (`status.history`), as the page shows it. */
export interface ResolutionView {
  time: string;
  reason: string;
  generation: number;
  outcome: string;
  bundles: { package: string; version: string; name: string }[];
  message?: string | undefined;
}

export interface ExtensionDetail extends ExtensionSummary {
  units: UnitView[];
  history?: ResolutionView[] | undefined;
  /** The upgrade (or install) awaiting approval under `upgradeApproval: Manual` (issue 31 §1). */
  pendingPlan?: PendingPlan | undefined;
}

export interface EventView {
  type: string;
  reason: string;
  message: string;
  object: string;
  count: number;
  last: string;
}

export interface UninstallPreview {
  /** BundleDeployments removed with it (no other extension needs them), with their objects. */
  removed: { bundleDeployment: string; package: string; objects: string[] }[];
  /** Shared dependencies that stay, and who keeps them. */
  kept: { bundleDeployment: string; package: string; neededBy: string[] }[];
}

// --- drift (src/apply/drift.ts, drift.ts) ---------------------------------------------------

/** A field the deployed manifest sets whose live value differs; a side left out is absent there. */
export interface FieldDriftView {
  path: string;
  manifest?: unknown;
  live?: unknown;
  /** A Secret's data: the values are not sent. */
  hidden?: boolean | undefined;
}

export interface ObjectDriftView {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
  /** missing: not on the cluster; changed: fields differ; unreadable: the person may not read it. */
  state: 'missing' | 'changed' | 'unreadable';
  fields: FieldDriftView[];
  message?: string | undefined;
}

/** One release's deployed revision against the live objects. */
export interface ReleaseDriftView {
  release: string;
  namespace: string;
  revision?: number | undefined;
  chart?: string | undefined;
  /** Objects of the manifest compared. */
  checked: number;
  drifted: ObjectDriftView[];
  /** Objects of optional APIs the cluster does not serve (not applied, so not compared). */
  skipped: string[];
  message?: string | undefined;
}

/** GET extensions/NAME/drift: each release of the extension's set. */
export interface ExtensionDrift {
  name: string;
  releases: (ReleaseDriftView & { bundleDeployment: string; package: string; neededBy: string })[];
}

// --- release timeline (release-timeline.ts) --------------------------------------------------

/** A hook's last run as Helm records it in the revision (`last_run`). */
export interface HookRunView {
  startedAt: string;
  completedAt: string;
  /** Running, Succeeded or Failed. */
  phase: string;
  /** False: a run of an earlier revision, copied with the hooks by a rollback (as Helm does). */
  ofThisRevision: boolean;
}

/**
 * What the cluster has of a hook Job. present: the Job this revision's run made, with its live
 * status; gone: deleted (by a delete policy or by hand) — the recorded run is all there is;
 * rerun: a later revision ran the hook again, so the Job of this name is that run's;
 * unreadable: the person may not read it (or its Events), `message` says what.
 */
/** A hook Job or Pod as the cluster has it now (or why not). */
export interface HookLiveView {
  state: 'present' | 'gone' | 'rerun' | 'unreadable';
  /** rerun: the revision whose run made the object of this name. */
  revision?: number | undefined;
  /** A Job's counts. */
  active?: number | undefined;
  succeeded?: number | undefined;
  failed?: number | undefined;
  /** A Pod's phase and its containers' states (init containers first), in kubectl's words. */
  phase?: string | undefined;
  containers?: { name: string; state: string }[] | undefined;
  conditions?: ConditionView[] | undefined;
  /** The last Warning Events of it and, for a Job, of its Pods; newest first. */
  warnings?: EventView[] | undefined;
  message?: string | undefined;
}

/** One hook of a revision (`helm get hooks`, without the manifest). */
export interface HookView {
  name: string;
  kind: string;
  /** The chart template it came from. */
  path: string;
  events: string[];
  weight: number;
  /** As recorded; Helm deletes a hook without one before creating it again (before-hook-creation). */
  deletePolicies: string[];
  /** Absent when the hook did not run in this revision. */
  lastRun?: HookRunView | undefined;
  /** Jobs and Pods: the object of this revision's run on the cluster. */
  live?: HookLiveView | undefined;
}

/** One revision (`helm history`), with its hooks in the order Helm runs them. */
export interface RevisionView {
  revision: number;
  status: string;
  /** When it was deployed (last_deployed). */
  deployed: string;
  chart: { name: string; version: string; appVersion?: string | undefined };
  description: string;
  hooks: HookView[];
}

/** GET crds/CRD/resources/NAME/timeline: a release's revisions, newest first. */
export interface ReleaseTimeline {
  release: string;
  namespace: string;
  revisions: RevisionView[];
}

/** GET extensions/NAME/timeline[?bundleDeployment=BD]: each release of the extension's set. */
export interface ExtensionTimeline {
  name: string;
  releases: (ReleaseTimeline & { bundleDeployment: string; package: string; neededBy: string })[];
}

/** POST plan: what installing or changing an extension would do (the page's view of src/actions/plan.ts's Plan). */
export interface PlanView {
  bundles: {
    bundle: { name: string; package: string; version: string; catalog: string };
    bundleDeployment: string;
    from?: string | undefined;
    objects: { action: string; kind: string; name: string; namespace?: string | undefined; changes?: string[] | undefined }[];
    crdSafety: { crd: string; safe: boolean; problems: { rule: string; message: string }[] }[];
    missingPermissions?: string[] | undefined;
  }[];
  warnings: string[];
}

// --- custom resources (resources.ts) --------------------------------------------------------

export interface ApiView {
  crd: string;
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** Who installed it: `package` for an extension's bundle, `helmOperator` for a Helm kind. */
  package?: string | undefined;
  helmOperator?: string | undefined;
  displayName?: string | undefined;
  description?: string | undefined;
}

/** The kinds one HelmOperator serves. */
export interface HelmOperatorApis {
  name: string;
  ready: string;
  chart: string;
  kinds: { kind: string; crd: string }[];
}

export interface ResourceSummary {
  name: string;
  namespace?: string | undefined;
  created: string;
  conditions: ConditionView[];
}

/** GET crds/CRD/resources/NAME/delete-preview: what deleting the custom resource deletes. */
export interface ResourceDeletePreview {
  kind: string;
  name: string;
  namespace?: string | undefined;
  /** Finalizers on it: their controllers finish before it goes. */
  finalizers: string[];
  /** What a SelfSubjectAccessReview says of deleting it as the person; undefined when it could not be asked. */
  mayDelete?: boolean | undefined;
  /** A Helm operator's custom resource is a release: it is uninstalled, its objects deleted, with the resource. */
  release?: {
    name: string;
    namespace: string;
    revision?: number | undefined;
    chart?: string | undefined;
    /** The deployed manifest's objects ("Kind namespace/name"). */
    objects: string[];
    /** Where the manifest was read: the release records (Secrets) or the resource's status.deployedRelease. */
    from: 'release' | 'status' | 'none';
    warning?: string | undefined;
  } | undefined;
}

export interface CrdView extends ApiView {
  /** The `openAPIV3Schema` of `version`. */
  schema: unknown;
  descriptors: SpecDescriptor[];
  /** The CSV's example of this kind (`alm-examples`), if it has one. */
  example?: Record<string, unknown> | undefined;
  items: ResourceSummary[];
  warnings: string[];
}

// --- inventory (inventory.ts) ---------------------------------------------------------------

/** A custom resource of an operator's API; for a Helm operator, one release. */
export interface InventoryResource {
  kind: string;
  crd: string;
  name: string;
  namespace?: string | undefined;
  health: Health;
  message: string;
}

/** An OLM operator (ClusterExtension) or a Helm operator (HelmOperator) with the custom resources of its APIs. */
export interface InventoryOperator {
  type: 'ClusterExtension' | 'HelmOperator';
  name: string;
  /** The package (ClusterExtension) or chart (HelmOperator). */
  source: string;
  version: string;
  health: Health;
  message: string;
  /** The CRDs of its APIs (whether or not it has resources), so the page can follow them. */
  crds: string[];
  resources: InventoryResource[];
  /** The operator and its resources, counted by health. */
  counts: HealthCounts;
}

/** GET inventory: everything operators installed, with the roll-up. */
export interface Inventory {
  operators: InventoryOperator[];
  counts: HealthCounts;
  /** What could not be read (a list the person may not do), so the counts leave it out. */
  warnings: string[];
}

// --- live updates (watch.ts) ------------------------------------------------------------------

/** The kinds GET /api/watch?kinds= can follow. */
export type LiveKind = 'ClusterExtension' | 'BundleDeployment' | 'ClusterCatalog' | 'HelmOperator';

/** A CRD's custom resources, as the stream's events name them (`crd/NAME`); no LiveKind has a slash. */
export type LiveCrdKind = `crd/${string}`;

/** What a stream's event is about: one of Binnacle's kinds, or the custom resources of a CRD. */
export type LiveEventKind = LiveKind | LiveCrdKind;

export const liveKindOfCrd = (crd: string): LiveCrdKind => `crd/${crd}`;

/** The most CRDs one GET /api/watch?crds= may follow: each is a watch the API server keeps open. */
export const MAX_LIVE_CRDS = 20;

/**
 * One event of the live stream (`event: kube`): a change (no object: the page reads it again),
 * SYNCED when a kind's watch has started, RELISTED after the watch had to start over (410 Gone:
 * changes may have been missed), FORBIDDEN when the person may not list or watch the kind, or
 * get its CRD (its stream ends), ERROR when the watch failed and is being retried.
 */
export type LiveEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; kind: LiveEventKind; name: string; namespace?: string; resourceVersion: string }
  | { type: 'SYNCED' | 'RELISTED'; kind: LiveEventKind; resourceVersion: string }
  | { type: 'FORBIDDEN' | 'ERROR'; kind: LiveEventKind; message: string };
