/**
 * The release engine, shaped as Helm's `pkg/action`: one pure decision (decide.ts: from a
 * release's history and the digest of its inputs, whether to install, upgrade, repair, keep,
 * roll back or refuse) and one operation per module over one shared configuration
 * (action-config.ts): install and upgrade (install.ts), repair (repair.ts), rollback
 * (rollback.ts), uninstall (uninstall.ts), each built from preflight (preflight.ts: ownership,
 * CRD upgrade safety, a server dry run; refusing before anything changes) and rollout
 * (rollout.ts: phases, pruning, health, hooks, records). run.ts carries out a decision.
 *
 * The history the engine acts on is kept where only it writes (release-records.ts), mirrored as
 * Helm's own records in the release namespace (release-store.ts) so `helm list|history|get`
 * work; every record is decoded within bounds (release.ts). As lenient as OLM: objects of
 * optional APIs the cluster does not serve are skipped, undeclared fields dropped, both said.
 * Talks only to the API server, through `src/kube`'s narrow ports.
 */
export { actionConfig, type ActionConfig, type ActionConfigOptions } from './action-config.js';
export { decideRelease, needsRender, type ReleaseDecision, type ReleaseInputs } from './decide.js';
export { installOrUpgrade, DEFAULT_HEALTH_TIMEOUT_MS } from './install.js';
export { repair } from './repair.js';
export { rollback, rollbackTo } from './rollback.js';
export { uninstall, type UninstallOptions } from './uninstall.js';
export { runDecision, applyRelease, requestDigest } from './run.js';
export { HELM_AT_WORK_MS, ReleaseRecords, TrustedHistory, type MigrationCheck, type MirrorDrift, type RecordOwner, type TrustedRead, RECORD_OWNER_UID_LABEL } from './release-records.js';
export { ApplyRefusedError, ObjectTerminatingError } from './errors.js';
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
  controlledBy,
  keptByResourcePolicy,
  RESOURCE_POLICY_ANNOTATION,
  describeOwner,
  stampOwnership,
} from './ownership.js';
export { PHASES, phaseOf, groupByPhase, applyOrder, deleteOrder, type Phase } from './phases.js';
export { RECORD_BOUNDS, decodeRevisionRecord, encodeRevisionRecord, revisionRecordSecret, revisionRecordSecretName, revisionFromSecret, parseManifest, toManifest, RELEASE_SECRET_TYPE } from './release.js';
export { ReleaseStore, type HistoryStore, type HistoryRead, type RefusedRecord } from './release-store.js';
export { driftMode, driftSpecProblems, DRIFT_HANDOVER_MANAGER, DRIFT_MODES } from './drift-policy.js';
export type {
  AdoptControlledBy,
  ApplierClient,
  ApplyRequest,
  OperationRequest,
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
