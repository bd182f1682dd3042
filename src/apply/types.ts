/** The applier's public contract: what a caller asks for and what it gets back. */
import type { KubeObject, ObjectRef } from '../kube/types.js';

export type { ObjectRef } from '../kube/types.js';

/** Who owns the objects: the API object (e.g. a ClusterExtension) on whose behalf we apply. */
export interface Owner {
  kind: string;
  name: string;
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

export interface ApplyRequest {
  owner: Owner;
  release: ReleaseRef;
  objects: KubeObject[];
  chart?: ChartInfo;
  values?: Record<string, unknown>;
  /** Take over objects that exist but are not ours. */
  adopt?: boolean;
  /** Roll back to the last deployed revision when an upgrade fails; default true. */
  autoRollback?: boolean;
  /** How long to wait for health; default 5 minutes. */
  healthTimeoutMs?: number;
  /** Wait for every object to become healthy before calling the revision deployed; default true. */
  waitForHealth?: boolean;
  /**
   * Keep a failed first install for debugging. By default it is removed (objects and release
   * records), as `helm install --atomic` does; the result says what failed.
   */
  keepFailedInstall?: boolean;
}

/** A field the object's schema does not declare, dropped before applying (as OLM's create/update drops it). */
export interface DroppedField {
  object: ObjectRef;
  /** Where in the object, e.g. `spec.template.spec.containers[name=manager].env[name=A].resources`. */
  path: string;
  /** The schema that does not declare it: `/openapi/v3 apis/apps/v1`, `CustomResourceDefinition x.example.com`. */
  schema: string;
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

/** One revision of a release, decoded from its Helm release Secret. */
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
}
