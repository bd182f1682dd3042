/**
 * OLM v1's API (`olm.operatorframework.io/v1`, operator-controller v1.11.0's experimental CRDs in
 * ./crds/) as TypeScript types: only the fields Binnacle reads or writes. The API server checks
 * these objects against the vendored schemas (CEL rules included), so a controller sees values
 * of these shapes; `convert.ts` still reads them defensively.
 */
import type { SelectorOperator } from '../catalog-selector.js';
import type { Condition, KubeObject } from '../../kube/types.js';
import { FINALIZER_CLEANUP, GROUP } from '../types.js';

// Here, not beside the CRDs (crds.ts): whatever names the group should not load the YAML parser.
export const OLMV1_GROUP = 'olm.operatorframework.io';
export const OLMV1_VERSION = 'v1';

export const OLMV1_API_VERSION = `${OLMV1_GROUP}/${OLMV1_VERSION}`;

/** catalogd labels every ClusterCatalog with its own name (its mutating webhook); selectors use it. */
export const LABEL_METADATA_NAME = `${OLMV1_GROUP}/metadata.name`;

/** operator-controller's (ClusterExtension) and catalogd's (ClusterCatalog) finalizers, for their local caches: where Binnacle serves the kind, its manager removes them with its own. */
const OLMV1_CACHE_FINALIZERS: ReadonlySet<string> = new Set(['olm.operatorframework.io/cleanup-unpack-cache', 'olm.operatorframework.io/cleanup-contentmanager-cache', 'olm.operatorframework.io/delete-server-cache']);

/** An OLM v1 object's finalizers without those Binnacle's manager takes off when it lets the object go (its own, and the caches' it took over). */
export function withoutManagerFinalizers(finalizers: readonly string[]): string[] {
  return finalizers.filter((f) => f !== FINALIZER_CLEANUP && !OLMV1_CACHE_FINALIZERS.has(f));
}

/**
 * The label on a `binnacle.dev` object that stands for an OLM v1 object of the same name and
 * kind (its twin, made and kept by controllers/cluster-*-olmv1.ts); valued the v1 object's UID.
 */
export const LABEL_OLMV1_TWIN_OF = `${GROUP}/olmv1-twin-of`;

/**
 * On an OLM v1 ClusterExtension (which only cluster admins write): the digests of the revisions
 * `binnacle olmv1 import-history` brought over from operator-controller, `{"<revision>":
 * "sha256:…"}`. Only a Helm record whose revision is pinned here moves into Binnacle's history
 * naming objects operator-controller made (docs/from-olm-v1.md): one planted beside it is not.
 */
export const OLMV1_IMPORTED_HISTORY_ANNOTATION = `${GROUP}/olmv1-imported-history`;

/**
 * Binnacle's extras on an OLM v1 ClusterExtension, without changing OLM v1's schema: annotations
 * (docs/from-olm-v1.md). Each maps onto the `binnacle.dev` field named beside it.
 */
export const OLMV1_EXTRA_ANNOTATIONS = {
  /** `Manual` | `Automatic` → spec.upgradeApproval. */
  upgradeApproval: `${GROUP}/upgrade-approval`,
  /** `Manual` | `Automatic` → spec.install.approval. */
  installApproval: `${GROUP}/install-approval`,
  /** `Repair` | `Warn` | `Off` → spec.drift.mode. */
  drift: `${GROUP}/drift`,
  /** `<namespace>/<secret>` of cosign public keys → spec.verify. */
  verifySecret: `${GROUP}/verify-secret`,
  /** A whole number → spec.resolutionHistoryLimit. */
  historyLimit: `${GROUP}/resolution-history-limit`,
} as const;

// --- ClusterExtension (api/v1/clusterextension_types.go) ------------------------------------

export interface Olmv1LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: SelectorOperator; values?: string[] }[];
}

export interface Olmv1ClusterExtensionSpec {
  namespace: string;
  /** Deprecated in v1.11 and ignored by operator-controller; Binnacle installs as it when given. */
  serviceAccount?: { name?: string };
  source: {
    sourceType: 'Catalog';
    catalog?: {
      packageName: string;
      version?: string;
      channels?: string[];
      selector?: Olmv1LabelSelector;
      upgradeConstraintPolicy?: 'CatalogProvided' | 'SelfCertified';
    };
  };
  install?: { preflight?: { crdUpgradeSafety?: { enforcement?: 'None' | 'Strict' } } };
  /** Experimental: `configType: Inline` with `inline` (registry+v1: watchNamespace, deploymentConfig). */
  config?: { configType?: 'Inline'; inline?: Record<string, unknown> };
  /** Experimental: 10-720. */
  progressDeadlineMinutes?: number;
}

export interface Olmv1ClusterExtensionStatus {
  conditions?: Condition[];
  install?: { bundle: { name: string; version: string; release?: string } };
  activeRevisions?: { name: string; conditions?: Condition[] }[];
}

export interface Olmv1ClusterExtension extends KubeObject {
  spec: Olmv1ClusterExtensionSpec;
  status?: Olmv1ClusterExtensionStatus;
}

// --- ClusterCatalog (api/v1/clustercatalog_types.go) ----------------------------------------

export interface Olmv1ClusterCatalogSpec {
  source: { type: 'Image'; image?: { ref: string; pollIntervalMinutes?: number } };
  priority?: number;
  availabilityMode?: 'Available' | 'Unavailable';
}

export interface Olmv1ClusterCatalogStatus {
  conditions?: Condition[];
  resolvedSource?: { type: 'Image'; image: { ref: string } };
  urls?: { base: string };
  lastUnpacked?: string;
}

export interface Olmv1ClusterCatalog extends KubeObject {
  spec: Olmv1ClusterCatalogSpec;
  status?: Olmv1ClusterCatalogStatus;
}

/** api/v1/common_types.go: the reasons OLM v1 sets, as constants (never free text). */
export const OLMV1_REASONS = {
  Succeeded: 'Succeeded',
  Retrying: 'Retrying',
  Blocked: 'Blocked',
  InvalidConfiguration: 'InvalidConfiguration',
  RollingOut: 'RollingOut',
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  Failed: 'Failed',
  Absent: 'Absent',
  Deprecated: 'Deprecated',
  NotDeprecated: 'NotDeprecated',
  DeprecationStatusUnknown: 'DeprecationStatusUnknown',
  Available: 'Available',
  Unavailable: 'Unavailable',
  UserSpecifiedUnavailable: 'UserSpecifiedUnavailable',
} as const;
