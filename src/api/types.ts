/**
 * Binnacle's APIs (group `binnacle.dev`, version `v1alpha1`) as TypeScript types. Specs are
 * checked at the boundary by `validate.ts`; controllers only see checked values.
 */
import type { CatalogSelector } from './catalog-selector.js';
import type { Condition, KubeObject, ObjectRef } from '../kube/types.js';
import type { ApprovalMode, PendingPlan } from './approval.js';

export const GROUP = 'binnacle.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

// --- ClusterCatalog -------------------------------------------------------------

/** `verify`: pull only what a `*.pub` key of the Secret signed (cosign's storage); see src/source/verify.ts. */
export interface VerifySpec {
  provider?: 'cosign';
  secretRef: { namespace: string; name: string };
}

export interface ClusterCatalogSpec {
  /**
   * An FBC image, or ConfigMaps whose keys are FBC files (`binnacle run bundle DIR`: no registry;
   * re-read when the catalog's annotations change or every poll interval).
   */
  source:
    | { type: 'Image'; image: { ref: string; pollIntervalMinutes?: number; insecure?: boolean }; verify?: VerifySpec }
    | { type: 'ConfigMaps'; configMaps: { namespace: string; name: string }[]; pollIntervalMinutes?: number; image?: undefined; verify?: VerifySpec };
  /** Higher wins when two catalogs offer the same bundle. */
  priority?: number;
  availabilityMode?: 'Available' | 'Unavailable';
}

export interface ClusterCatalogStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  /** For ConfigMaps, `image.ref` is `configmaps://<namespace>/<names>@<digest of the FBC files>`. */
  resolvedSource?: { type: 'Image' | 'ConfigMaps'; image: { ref: string } };
  urls?: { base: string };
  lastUnpacked?: string;
}

export interface ClusterCatalog extends KubeObject {
  spec: ClusterCatalogSpec;
  status?: ClusterCatalogStatus;
}

// --- drift rules (spec.drift of a BundleDeployment, a ClusterExtension and a HelmOperator) ----

/** Repair drift (the default), only report it (a `Drifted` condition and an Event), or neither. */
export type DriftMode = 'Repair' | 'Warn' | 'Off';

/** Fields left to other writers (an autoscaler, a CA injector, a webhook): JSON pointers (RFC 6901), on every object or only on those `target` names. */
export interface DriftIgnoreRule {
  paths: string[];
  target?: { group?: string; kind?: string; name?: string; namespace?: string; labelSelector?: { matchLabels?: Record<string, string> } };
}

/** As Flux helm-controller's `driftDetection`: ignored fields are neither repaired nor reported, but an upgrade that changes one applies it. */
/**
 * What an apply does with a field another field manager holds with another value (server-side
 * apply's conflicts): `Force` takes it (Helm 4's `--force-conflicts`; Binnacle's default, the
 * release being the source of truth for every field its manifest sets that the drift rules do
 * not leave to others), `Fail` refuses the change, naming the manager and the fields, and
 * changes nothing.
 */
export type ConflictPolicy = 'Force' | 'Fail';

/** Helm 4's wait strategies (`helm --wait=…`): which rules judge a release's health (apply/health.ts). */
export type WaitStrategy = 'watcher' | 'legacy' | 'hookOnly';

/** Which rendered objects a post-render patch applies to (Kustomize's patch target): every field given must match. */
export interface PostRenderPatchTarget {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  /** Equality terms (`k=v`) and existence terms (`k`), comma-separated. */
  labelSelector?: string;
}

/** One post-renderer, as Flux's HelmRelease `postRenderers[]`: Kustomize-style patches (apply/post-render.ts). */
export interface PostRenderer {
  kustomize?: {
    patches?: {
      /** YAML: a list of JSON Patch (RFC 6902) operations, or an object applied as a merge patch (RFC 7386). */
      patch: string;
      target?: PostRenderPatchTarget;
    }[];
  };
}

export interface DriftSpec {
  mode?: DriftMode;
  ignore?: DriftIgnoreRule[];
}

// --- BundleDeployment -------------------------------------------------------------

export type BundleFormat = 'registry+v1' | 'plain' | 'helm';

export interface BundleSourceSpec {
  type: 'image' | 'git' | 'http' | 'configMaps' | 'local';
  image?: { ref: string; pullSecret?: { namespace: string; name: string }; insecure?: boolean };
  /** `secret`: a basic-auth Secret (username, password), read as the installing ServiceAccount; never userinfo in the URL. */
  git?: { repository: string; ref: { branch?: string; tag?: string; commit?: string }; directory?: string; secret?: { namespace: string; name: string } };
  http?: { url: string; sha256?: string; secret?: { namespace: string; name: string } };
  configMaps?: { namespace: string; name: string; path?: string }[];
  local?: { path: string };
  /** Verify the image's signature before unpacking (keys read as the installing ServiceAccount). */
  verify?: VerifySpec;
}

/** How much one release may hold (apply/limits.ts has the defaults and ceilings). */
export interface ReleaseLimits {
  /** Objects a render may hold (manifest, CRDs and hooks together). */
  maxObjects?: number;
  /** Bytes a render's manifest may have (CRDs and hooks included). */
  maxManifestBytes?: number;
}

/** Whether a changed CRD is checked for upgrade safety before it is applied (OLM v1's enforcement). */
export type CrdUpgradeSafety = 'Strict' | 'None';

export interface BundleDeploymentSpec {
  source: BundleSourceSpec;
  /** How much the release may hold; defaults in apply/limits.ts. */
  limits?: ReleaseLimits;
  format: BundleFormat;
  installNamespace: string;
  watchNamespace?: string;
  /** Several watched namespaces (MultiNamespace install mode); wins over watchNamespace. */
  watchNamespaces?: string[];
  /** Deployment overrides (env, resources, tolerations, …), as OLM's Subscription config. */
  config?: Record<string, unknown>;
  /**
   * OLM v1's registry+v1 bundle configuration (`config.inline` of an `olm.operatorframework.io/v1`
   * ClusterExtension: `watchNamespace`, `deploymentConfig`), checked against the bundle's install
   * modes with OLM v1's rules (bundle/bundle-config.ts): no default watch namespace is picked.
   * Set (even `{}`), it replaces watchNamespace, watchNamespaces and config.
   */
  bundleConfig?: Record<string, unknown>;
  /**
   * The `olm.operatorframework.io/v1` ClusterExtension this bundle is installed for (its twin's
   * main BundleDeployment): every object rendered then carries OLM v1's owner labels
   * `olm.operatorframework.io/owner-kind: ClusterExtension` and `…/owner-name: <this>`, for
   * tools that look for them. Informational only: ownership stays Binnacle's own labels
   * (apply/ownership.ts), which nothing here changes.
   */
  olmv1Owner?: string;
  /**
   * That ClusterExtension's uid, as its twin records it: the bundle takes over, in place, only
   * the objects whose controller ownerReference is that very ClusterExtension (moving over from
   * operator-controller, docs/from-olm-v1.md). Not part of the render (nor its digest).
   */
  olmv1OwnerUID?: string;
  /** The ServiceAccount whose permissions the install uses; in installNamespace unless `namespace` names another. */
  serviceAccount?: { name: string; namespace?: string };
  /** Take over objects that exist but belong to no one (or someone else), as helm --take-ownership. */
  adoptExisting?: boolean;
  /** Fields other field managers hold: `Force` (default) takes them, `Fail` refuses the change (ConflictPolicy). */
  conflictPolicy?: ConflictPolicy;
  /** How health is judged before the release is called installed (Helm 4's --wait strategies; default watcher). */
  waitStrategy?: WaitStrategy;
  /** Format helm: patches of the render, as a HelmOperator's (HelmOperatorSpec.postRenderers); in the input digest. */
  postRenderers?: PostRenderer[];
  /**
   * `None` skips the CRD upgrade safety check of a CRD the release changes (OLM v1's
   * `install.preflight.crdUpgradeSafety.enforcement`); `Strict`, the default, refuses an unsafe change.
   */
  crdUpgradeSafety?: CrdUpgradeSafety;
  /** Roll back a failed upgrade to the last good revision (default true). */
  autoRollback?: boolean;
  /**
   * Keep a failed first install for debugging. By default it is removed, objects and release
   * records, as `helm install --atomic` does; the status says what failed.
   */
  keepFailedInstall?: boolean;
  /** Helm release name for the records (default: the BundleDeployment's name). */
  releaseName?: string;
  /** Format `helm`: the chart's values. */
  values?: Record<string, unknown>;
  /** Format `helm`: what to do with the chart's crds/ (default Create, as `helm install`). */
  crdPolicy?: 'Skip' | 'Create' | 'CreateReplace';
  /** Format `helm`: run no hooks. */
  disableHooks?: boolean;
  drift?: DriftSpec;
}

export interface BundleDeploymentStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  resolvedSource?: Record<string, unknown>;
  contentDigest?: string;
  revision?: number;
  appliedObjects?: ObjectRef[];
  /** What was applied differently from the bundle, as OLM would: fields the schemas do not declare, dropped. */
  warnings?: ApplyWarning[];
}

/** A field of a bundle's object that its schema does not declare, dropped when applying it. */
export interface ApplyWarning {
  /** The object, as `Kind namespace/name`. */
  object: string;
  /** The dropped field, e.g. `spec.template.spec.containers[name="manager"].env[name="A"].resources`. */
  field: string;
  message: string;
}

export interface BundleDeployment extends KubeObject {
  spec: BundleDeploymentSpec;
  status?: BundleDeploymentStatus;
}

// --- ClusterExtension -------------------------------------------------------------

export type UpgradeConstraintPolicy = 'CatalogProvided' | 'SelfCertified';

export interface ClusterExtensionSpec {
  /** Install namespace. */
  namespace: string;
  /** In the install namespace unless `namespace` names another (a PlatformOperator's shared installer). */
  serviceAccount: { name: string; namespace?: string };
  source: {
    sourceType: 'Catalog';
    catalog: {
      packageName: string;
      version?: string;
      channels?: string[];
      /** Which ClusterCatalogs take part (all when unset): a label selector (api/catalog-selector.ts). */
      selector?: CatalogSelector;
      upgradeConstraintPolicy?: UpgradeConstraintPolicy;
    };
  };
  install?: {
    watchNamespace?: string;
    /** Several watched namespaces (MultiNamespace install mode); wins over watchNamespace. */
    watchNamespaces?: string[];
    config?: Record<string, unknown>;
    /** Passed to its main BundleDeployment (BundleDeploymentSpec.bundleConfig): OLM v1's inline configuration and rules. */
    bundleConfig?: Record<string, unknown>;
    adoptExisting?: boolean;
    /** Passed to its BundleDeployments (BundleDeploymentSpec.conflictPolicy). */
    conflictPolicy?: ConflictPolicy;
    /** Passed to its BundleDeployments (BundleDeploymentSpec.waitStrategy). */
    waitStrategy?: WaitStrategy;
    /** Passed to its BundleDeployments (BundleDeploymentSpec.crdUpgradeSafety). */
    crdUpgradeSafety?: CrdUpgradeSafety;
    autoRollback?: boolean;
    /** Keep a failed first install for debugging instead of removing it. */
    keepFailedInstall?: boolean;
    approval?: ApprovalMode;
  };
  /** How many resolutions `status.history` keeps (default 10). */
  resolutionHistoryLimit?: number;
  /** Passed to its BundleDeployments. */
  drift?: DriftSpec;
  /** `Manual`: a new bundle version waits for its plan's approval (`approval.ts`); `install.approval` asks the same of a first install. */
  upgradeApproval?: ApprovalMode;
  /** Verify each chosen bundle image's signature: copied to its BundleDeployments' `spec.source.verify`. */
  verify?: VerifySpec;
}

/** Why a resolution was recorded: first one, spec changed, catalog content changed, or what is installed changed. */
export type ResolutionTrigger = 'Initial' | 'SpecChanged' | 'CatalogChanged' | 'DependencyChanged';

/** One resolution of a ClusterExtension, as `status.history` keeps it. */
export interface ResolutionRecord {
  /** When it was first seen (RFC 3339). */
  time: string;
  reason: ResolutionTrigger;
  /** The extension's generation it resolved. */
  generation: number;
  /** The catalogs it read, each with the digest of the content. */
  catalogs: { name: string; digest: string }[];
  /** The bundles chosen for this extension, dependencies included, in install order. */
  bundles: { package: string; version: string; name: string }[];
  outcome: 'Resolved' | 'Failed';
  message?: string;
}

export interface ClusterExtensionStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  /** Where it is installed: the BundleDeployment (and its namespace, which a taken-over dependency keeps). */
  install?: { bundle: { name: string; version: string; package: string; image: string; catalog: string }; bundleDeployment?: string; namespace?: string };
  /** Every bundle of the resolution set, dependencies included, in install order. */
  resolution?: {
    bundles: { name: string; package: string; version: string; image: string; catalog: string }[];
    explanation?: string;
    notices?: string[];
    /** The last resolution failed because no bundle of the requested package matches the request (channels, version range, an upgrade edge from the installed one). */
    requestUnmatched?: boolean;
    /** The last resolution was refused because these catalogs, of the same priority, offer the chosen bundle (the twin of an OLM v1 ClusterExtension only). */
    ambiguousCatalogs?: string[];
  };
  /** The last resolutions, newest last (`spec.resolutionHistoryLimit`). */
  history?: ResolutionRecord[];
  pendingPlan?: PendingPlan;
}

export interface ClusterExtension extends KubeObject {
  spec: ClusterExtensionSpec;
  status?: ClusterExtensionStatus;
}

// --- PlatformOperator -------------------------------------------------------------

export interface PlatformOperatorSpec {
  packages: { name: string; channel?: string; version?: string; namespace?: string }[];
  serviceAccount?: { name: string; namespace: string };
}

/**
 * Where one of a PlatformOperator's packages stands: `Healthy`; on its way (`Installing`,
 * `Upgrading`, `Removing`); held back by its operator (`UpgradeBlocked`); in trouble (`Failed`,
 * `Unhealthy`); or `Removed` from the list and uninstalled.
 */
export type PlatformPackageReason = 'Healthy' | 'Installing' | 'Upgrading' | 'UpgradeBlocked' | 'Failed' | 'Unhealthy' | 'Removing' | 'Removed';

export interface PlatformPackageStatus {
  name: string;
  /** The ClusterExtension that installs it. */
  extension?: string;
  installed: boolean;
  healthy: boolean;
  version?: string;
  reason: PlatformPackageReason;
  message?: string;
}

export interface PlatformOperatorStatus {
  /** `Available` (every package installed and healthy) aggregates the packages; also `Progressing`, `Degraded`, `Upgradeable`. */
  conditions?: Condition[];
  observedGeneration?: number;
  packages?: PlatformPackageStatus[];
}

export interface PlatformOperator extends KubeObject {
  spec: PlatformOperatorSpec;
  status?: PlatformOperatorStatus;
}

/** Labels that tie objects to what made them. */
export const LABEL_OWNER_KIND = 'binnacle.dev/owner-kind';
export const LABEL_OWNER_NAME = 'binnacle.dev/owner-name';
/** Groups the BundleDeployments of one ClusterExtension's resolution. */
export const LABEL_RESOLUTION_SET = 'binnacle.dev/resolution-set';
export const LABEL_PACKAGE = 'binnacle.dev/package';
export const FINALIZER_CLEANUP = 'binnacle.dev/cleanup';
/**
 * Who needs a BundleDeployment: one label per ClusterExtension, `needed-by.binnacle.dev/<name>`,
 * valued `requested` (its own package) or `dependency`. A shared dependency stays while any
 * extension needs it. See `src/installed`.
 */
export const LABEL_NEEDED_BY_PREFIX = 'needed-by.binnacle.dev/';
/** What a ClusterExtension's BundleDeployment installs, as the resolution chose it. */
export const ANNOTATION_BUNDLE_NAME = 'binnacle.dev/bundle-name';
export const ANNOTATION_BUNDLE_VERSION = 'binnacle.dev/bundle-version';
export const ANNOTATION_CATALOG = 'binnacle.dev/catalog';
/** The APIs the bundle provides (`group/version/Kind`, comma-separated): its facts once no catalog offers it. */
export const ANNOTATION_PROVIDES = 'binnacle.dev/provides';

// --- HelmOperator -------------------------------------------------------------

/** Where a Helm operator's chart comes from; `version` is a range (Helm's --version). */
export interface HelmChartSourceSpec {
  oci?: { ref: string; insecure?: boolean };
  repository?: { url: string; name: string };
  version?: string;
  /** How often to look for a newer version in range; default 10. */
  pollIntervalMinutes?: number;
  /** Verify an OCI chart's signature before it is loaded (keys read by the manager). */
  verify?: VerifySpec;
}

export interface HelmOperatorKindSpec {
  group: string;
  version: string;
  kind: string;
  plural?: string;
  /** A subchart that serves this kind (dependency names or aliases, `a/b`); the chart itself when absent. */
  chart?: string;
  /** Dotted keys → values set over each CR's spec; `${ENV}` is expanded. */
  overrideValues?: Record<string, string>;
  valuesFrom?: { kind: 'ConfigMap' | 'Secret'; name: string; valuesKey?: string; targetPath?: string; optional?: boolean }[];
  watchDependentResources?: boolean;
  /** Go duration, e.g. `1m`. */
  reconcilePeriod?: string;
  /** The least period a CR's reconcile-period annotation may ask for (Go duration); default `1m`. */
  minReconcilePeriod?: string;
  /** Reconciles of this kind at once; default DEFAULT_HELM_RECONCILES (16, or the number of CPUs when more). */
  maxConcurrentReconciles?: number;
  selector?: { matchLabels?: Record<string, string> };
  crdPolicy?: 'Skip' | 'Create' | 'CreateReplace';
}

export interface HelmOperatorSpec {
  chart: HelmChartSourceSpec;
  kinds: HelmOperatorKindSpec[];
  /**
   * Who each release is rendered, looked up, applied and uninstalled as: the ServiceAccount
   * `name` in each custom resource's own namespace; with `namespace`, that one ServiceAccount
   * for every CR wherever it is (an explicit cluster-wide opt-in for platform teams). Without
   * it no CR is served: releases never act as the manager.
   */
  serviceAccount?: { name: string; namespace?: string };
  /** What a release may hold beyond namespaced objects in its CR's own namespace (the identity's RBAC still applies). */
  allowedObjects?: {
    /** Further namespaces a release may write to. */
    namespaces?: string[];
    /** Cluster-scoped kinds a release may hold: `Kind.group`, or `Kind` for the core group. */
    clusterScopedKinds?: string[];
  };
  /** What deleting the HelmOperator does to its CRs: `Uninstall` their releases (default), or `Orphan` them (CRs and objects stay, unmanaged). */
  deletionPolicy?: 'Uninstall' | 'Orphan';
  /** Fields other field managers hold, for every release it serves: `Force` (default) or `Fail` (ConflictPolicy). */
  conflictPolicy?: ConflictPolicy;
  /**
   * Releases take over objects that exist and that no release, owner label or controller holds
   * (helm --take-ownership, narrowed: a CR's release never takes another release's objects).
   */
  takeOwnership?: boolean;
  /**
   * Patches applied to every release's rendered objects after Helm's render and before the scope
   * check, as Flux's postRenderers (the operator owner's, never a CR author's); part of each
   * release's input digest, so a change upgrades every release.
   */
  postRenderers?: PostRenderer[];
  /** For the releases of every custom resource it serves. */
  drift?: DriftSpec;
  /** How much each custom resource's release may hold (the operator owner's say, never the CR author's). */
  limits?: ReleaseLimits;
  /** `Manual`: a new chart version in range waits for its plan's approval (`approval.ts`). */
  upgradeApproval?: ApprovalMode;
}

export interface HelmOperatorStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  chart?: { name: string; version: string; digest: string };
  kinds?: { kind: string; crd: string; schema: string; warnings?: number }[];
  pendingPlan?: PendingPlan;
}

export interface HelmOperator extends KubeObject {
  spec: HelmOperatorSpec;
  status?: HelmOperatorStatus;
}
