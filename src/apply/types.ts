/** The applier's public contract: what a caller asks for and what it gets back. */
import type { ConflictPolicy, DriftMode, DriftSpec, WaitStrategy } from '../api/types.js';

export type { WaitStrategy };
import type { ClusterClient } from '../kube/ports.js';
import type { KubeObject, ObjectRef } from '../kube/types.js';

/** The client the release engine's operations use: read, write and discovery, as the release's identity. */
export type ApplierClient = ClusterClient;

export type { ObjectRef } from '../kube/types.js';

/** Who owns the objects: the API object (e.g. a ClusterExtension) on whose behalf we apply. */
export interface Owner {
  kind: string;
  name: string;
  /** The owner object's UID and apiVersion, when it is an object: its trusted history is keyed by them (release-records.ts). */
  uid?: string;
  apiVersion?: string;
  /**
   * A namespaced owner's namespace (a Helm operator's custom resource). Part of its identity:
   * two same-named owners in two namespaces never hold each other's objects.
   */
  namespace?: string;
}

/** Where the Helm-compatible release records live. */
export interface ReleaseRef {
  name: string;
  namespace: string;
}

export interface ChartInfo {
  name: string;
  version: string;
  appVersion?: string;
  description?: string;
}

/** Helm's hook events (helm.sh/helm/v3/pkg/release.HookEvent). */
export type HookEvent =
  | 'pre-install'
  | 'post-install'
  | 'pre-delete'
  | 'post-delete'
  | 'pre-upgrade'
  | 'post-upgrade'
  | 'pre-rollback'
  | 'post-rollback'
  | 'test';

export type HookDeletePolicy = 'hook-succeeded' | 'hook-failed' | 'before-hook-creation';

/**
 * A hook as Helm records it in a release (helm.sh/helm/v3/pkg/release.Hook): an object the
 * applier creates at a lifecycle event, waits for, and deletes per its policies. The record
 * is kept whole so the stored release stays Helm's own. The one declaration: Helm's engine
 * answers it (src/helm) and the applier runs and stores it.
 */
export interface ReleaseHook {
  name: string;
  kind: string;
  path: string;
  manifest: string;
  events: string[];
  last_run: { started_at: string; completed_at: string; phase: string };
  weight: number;
  delete_policies?: string[] | null;
  output_log_policies?: string[] | null;
  [k: string]: unknown;
}

/**
 * What a Helm chart release stores beyond the objects: Helm's chart object (metadata,
 * templates, values, schema, files), its rendered manifest and hooks, and the notes. With
 * it, release records are real Helm releases (`helm get values|manifest`, `helm rollback`).
 */
export interface ReleaseContent {
  chart: Record<string, unknown>;
  /** Helm's manifest, stored as Helm rendered it. */
  manifest: string;
  hooks: ReleaseHook[];
  notes?: string;
}

/** One field the manifest sets whose live value differs; `manifest`/`live` left out when absent (or `hidden`). */
export interface FieldDrift {
  path: string;
  manifest?: unknown;
  live?: unknown;
  /** A Secret's data: the values are not shown. */
  hidden?: boolean;
}

export interface ObjectDrift {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** missing: not on the cluster; changed: fields differ; unreadable: the person may not read it (or reading failed). */
  state: 'missing' | 'changed' | 'unreadable';
  fields: FieldDrift[];
  message?: string;
}

/** What a run found of drift (a repair of the deployed revision only): repaired, or (Warn) only reported. */
export interface DriftReport {
  mode: DriftMode;
  drifted: ObjectDrift[];
}

/** How an operation on a release runs: for whom, where, and with which of Helm's options. */
export interface OperationRequest {
  owner: Owner;
  release: ReleaseRef;
  /** Run no hooks for this operation (helm's --no-hooks). */
  disableHooks?: boolean;
  /** Set as controller owner of the namespaced objects in the release namespace (a Helm operator's CR). */
  ownerReference?: { apiVersion: string; kind: string; name: string; uid: string };
  /**
   * Take over objects that exist but are not ours: `true` any of them (Helm 4's
   * `--take-ownership`); `unowned` only those no release, owner label or controller holds
   * (a HelmOperator's `takeOwnership`: its releases share their namespaces with others); a
   * controller, only those it controls (the objects OLM v1's operator-controller installed for
   * the same ClusterExtension, moved over without a reinstall).
   */
  adopt?: boolean | 'unowned' | AdoptControlledBy;
  /** Fields other managers hold (default `Force`): see ConflictPolicy. */
  conflictPolicy?: ConflictPolicy;
  /** `None`: a changed CRD is applied without the upgrade safety check (OLM v1's enforcement None). */
  crdUpgradeSafety?: 'Strict' | 'None';
  /**
   * Replace what cannot be updated (helm's `--force`, helm-operator's upgrade-force): an object
   * whose change the API server refuses as immutable (a Deployment's selector, a Job's
   * template) is deleted and created again. Never for kinds that hold data (CRDs, Namespaces, PersistentVolumes and their claims).
   */
  force?: boolean;
  /** Roll back to the last deployed revision when an upgrade fails; default true. */
  autoRollback?: boolean;
  /**
   * The owner's metadata.generation this request was made at, recorded with the revision: inputs
   * that failed are tried again once the owner's spec has changed since (decide.ts).
   */
  generation?: number;
  /** That rollback replaces what cannot be updated, as `force` does (helm-operator's rollback-force). */
  rollbackForce?: boolean;
  /** How long to wait for health; default 5 minutes. */
  healthTimeoutMs?: number;
  /** Wait for every object to become healthy before calling the revision deployed; default true. */
  waitForHealth?: boolean;
  /** How health is judged when waited for: Helm 4's `watcher` (kstatus, the default), `legacy` or `hookOnly` (health.ts). */
  waitStrategy?: WaitStrategy;
  /**
   * Keep a failed first install for debugging. By default it is removed (objects and release
   * records), as `helm install --atomic` does; the result says what failed.
   */
  keepFailedInstall?: boolean;
  /** Drift rules (default: repair every field the manifest sets). */
  drift?: DriftSpec;
  /**
   * Objects as a watch of the release's kinds holds them (a Helm operator's dependent informers,
   * a BundleDeployment's), by reference; undefined when the watch does not hold it. A repair, and
   * an upgrade's objects that are as the deployed revision applied them, are judged from these
   * instead of reading each; what the watch does not hold is read. Only reads are saved: whatever
   * differs is still written, as the release's identity.
   */
  watched?: (ref: ObjectRef) => KubeObject | undefined;
  /**
   * What the release may hold: the problems with `objects`, none when all are allowed (a Helm
   * operator kind's scope). Every object an operation writes passes it: a render's objects and
   * hooks, a repair's recorded manifest, a rollback's earlier revision and its hooks, the delete
   * hooks of an uninstall.
   */
  confine?: ConfineCheck;
}

/** An install or upgrade: a request with what the new revision is made of. */
export interface ApplyRequest extends OperationRequest {
  objects: KubeObject[];
  /**
   * A Helm chart's release content. The stored manifest is `content.manifest`; `objects` may
   * hold more (CRDs from the chart's crds/ folder), which are applied but, as in Helm, never
   * pruned or deleted with the release.
   */
  content?: ReleaseContent;
  /**
   * What the objects were made from (chart digest, values, options); the digest of the objects,
   * chart and values themselves when not given. The release decision (decide.ts) compares it
   * with the recorded revisions'.
   */
  inputDigest?: string;
  chart?: ChartInfo;
  values?: Record<string, unknown>;
  /**
   * The values the owner gave itself (a Helm operator's custom resource's spec), apart from what
   * its operator layers on (valuesFrom, overrideValues), which `values` includes: recorded with the
   * revision, so that `binnacle helm rollback` writes back the resource's own part.
   */
  ownerValues?: Record<string, unknown>;
}

/** The problems with objects a release may not hold (ApplyRequest.confine); empty when all are allowed. */
export type ConfineCheck = (objects: readonly KubeObject[]) => Promise<string[]>;

/** A field the object's schema does not declare, dropped before applying (as OLM's create/update drops it). */
export interface DroppedField {
  object: ObjectRef;
  /** Where in the object, e.g. `spec.template.spec.containers[name="manager"].env[name="A"].resources`. */
  path: string;
  /** The schema that does not declare it: `/openapi/v3 apis/apps/v1`, `CustomResourceDefinition x.example.com`. */
  schema: string;
  /** Not dropped but renamed to the declared field it names but for case (`apigroups` → `apiGroups`). */
  renamedTo?: string;
}

/** An object not applied: the cluster does not serve its API, and the operator works without it. */
export interface SkippedObject {
  object: ObjectRef;
  reason: string;
}

export type ApplyStatus = 'deployed' | 'failed' | 'rolled-back';

export interface ObjectHealth {
  ref: ObjectRef;
  healthy: boolean;
  reason: string;
}

export interface HealthReport {
  healthy: boolean;
  objects: ObjectHealth[];
}

export interface ApplyResult {
  /** The revision that now describes the cluster (the rollback revision after an automatic rollback). */
  revision: number;
  status: ApplyStatus;
  applied: ObjectRef[];
  pruned: ObjectRef[];
  health: HealthReport;
  message: string;
  /** Fields dropped because their schema does not declare them (set by `apply`). */
  droppedFields?: DroppedField[];
  /** Objects not applied because their optional API is not served (set by `apply`); not recorded in the revision. */
  skipped?: SkippedObject[];
  /** A failed first install was removed (unless kept): what was deleted. The release has no revisions left. */
  removed?: ObjectRef[];
  /** Set when the run re-applied (or, in Warn mode, only compared) the deployed revision; absent with mode Off. */
  drift?: DriftReport;
}

/** Helm's release states, as `helm history` prints them. */
export type ReleaseStatus =
  | 'unknown'
  | 'deployed'
  | 'uninstalled'
  | 'superseded'
  | 'failed'
  | 'uninstalling'
  | 'pending-install'
  | 'pending-upgrade'
  | 'pending-rollback';

/** One revision of a release, decoded from its revision record (a Helm release Secret). */
export interface ReleaseRevision {
  name: string;
  namespace: string;
  revision: number;
  status: ReleaseStatus;
  description: string;
  firstDeployed: string;
  lastDeployed: string;
  chart: ChartInfo;
  config: Record<string, unknown>;
  /** The YAML stream of the objects this revision applied. */
  manifest: string;
  /** The owner recorded with the revision, when Binnacle wrote it. */
  owner: Owner | undefined;
  /** The request's inputDigest, when the revision was made from one. */
  inputDigest?: string;
  /** The owner's metadata.generation the revision was made at, when the request said. */
  ownerGeneration?: number;
  /** The owner's own values, when the request said (ApplyRequest.ownerValues). */
  ownerValues?: Record<string, unknown>;
  /** A chart release's content (a release the `helm` CLI made has one too). */
  content?: ReleaseContent;
  /**
   * Moved into the trusted history from Helm's records in the release namespace, which Binnacle
   * did not keep apart (release-records.ts): its objects were checked (owner, scope, live), its
   * fields were not, so nothing is ever applied again from its record (decide.ts).
   */
  movedOver?: boolean;
}

/**
 * Objects controlled by this object (a controller ownerReference with its uid) and labelled as its
 * by `ownerLabels`: what another installer made for the same owner, taken over as they are.
 */
export interface AdoptControlledBy {
  controlledBy: { apiVersion: string; kind: string; name: string; uid: string };
  /** Labels the controller's installer put on each of its objects (OLM v1's owner-kind and owner-name). */
  ownerLabels: Record<string, string>;
}
