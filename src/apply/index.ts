/**
 * The applier of the install engine: takes the Kubernetes objects a bundle rendered into and
 * applies them to a cluster in phases (namespaces, RBAC, CRDs, config, workloads, Services,
 * webhooks) with server-side apply under Binnacle's field manager. It refuses to take over
 * objects another owner holds and unsafe CRD changes before touching anything, prunes what a
 * new revision drops, waits for health, and records every revision as a Helm v3 release
 * Secret so `helm list` / `helm history` see it; failed upgrades roll back to the last good
 * revision. Talks only to the API server, through `src/kube`'s KubeClient.
 *
 * Before all that it is as lenient as OLM: objects of optional APIs the cluster does not serve
 * are skipped, and fields the server's OpenAPI schemas do not declare are dropped, both
 * reported; a failed first install is removed unless kept for debugging.
 */
export { Applier, type ApplierClient, type ApplierOptions } from './applier.js';
export { ApplyRefusedError } from './errors.js';
export { checkCrdUpgrade } from './crd-safety.js';
export { OPTIONAL_APIS, optionalApi, type OptionalApi } from './optional-kinds.js';
export { pruneUnknownFields, type PruneOptions, type PruneResult } from './prune-unknown-fields.js';
export {
  objectHealth,
  endpointsHealth,
  webhookServices,
  probeOnce,
  waitForHealthy,
  unhealthySummary,
  type Verdict,
  type ProbeOptions,
} from './health.js';
export {
  OWNER_KIND_LABEL,
  OWNER_NAME_LABEL,
  OWNER_NAMESPACE_LABEL,
  ownerLabels,
  ownerName,
  MANAGED_BY_LABEL,
  HELM_RELEASE_NAME_ANNOTATION,
  HELM_RELEASE_NAMESPACE_ANNOTATION,
  isOwnedBy,
  keptByResourcePolicy,
  RESOURCE_POLICY_ANNOTATION,
  describeOwner,
  stampOwnership,
} from './ownership.js';
export { PHASES, phaseOf, groupByPhase, applyOrder, deleteOrder, type Phase } from './phases.js';
export { decodeRelease, encodeRelease, releaseSecretName, revisionFromSecret, parseManifest, toManifest, RELEASE_SECRET_TYPE } from './release.js';
export { ReleaseStore } from './release-store.js';
export { driftMode, driftSpecProblems, DRIFT_HANDOVER_MANAGER, DRIFT_MODES } from './drift-policy.js';
export type {
  ApplyRequest,
  ApplyResult,
  ApplyStatus,
  ChartInfo,
  ConfineCheck,
  DriftReport,
  DroppedField,
  FieldDrift,
  HealthReport,
  ObjectDrift,
  ObjectHealth,
  ObjectRef,
  Owner,
  ReleaseRef,
  ReleaseRevision,
  ReleaseStatus,
  SkippedObject,
} from './types.js';
export { scopeProblems, qualifiedKind, type ReleaseScope, type ScopeOf } from './scope.js';
export { redactSecrets } from './redact-manifest.js';
