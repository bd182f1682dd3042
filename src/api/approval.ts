/**
 * Approving an upgrade from its plan (issue 31 §1), as OLM v0's InstallPlan `approval: Manual`
 * and `spec.approved` did, but naming what was approved: with `spec.upgradeApproval: Manual`
 * a ClusterExtension (or a HelmOperator) that could move to a newer bundle (or chart) stays
 * where it is and shows the plan in `status.pendingPlan`, with the plan's digest. Writing that
 * digest into the `binnacle.dev/approved-plan` annotation (`binnacle approve`, the console)
 * lets exactly that plan through; a newer plan supersedes it and needs its own approval.
 */

/** `Automatic`: new content is installed as soon as it is resolvable (the default). `Manual`: only once its plan is approved. */
export type ApprovalMode = 'Automatic' | 'Manual';
export const APPROVAL_MODES: readonly ApprovalMode[] = ['Automatic', 'Manual'];

/** The digest (`sha256:…`) of the plan an admin approves. */
export const ANNOTATION_APPROVED_PLAN = 'binnacle.dev/approved-plan';

/** One bundle (or the chart) the plan would change. */
export interface PlannedChange {
  name: string;
  package?: string;
  /** The version installed now; absent for a first install of it. */
  from?: string;
  to: string;
  /** The image (bundle) or chart reference, and the digest it was pulled by. */
  ref?: string;
  digest?: string;
}

/** What an upgrade would do, as `status.pendingPlan` shows it until it is approved. */
export interface PendingPlan {
  /** `sha256:…` over what the upgrade would do (chosen digests, rendered manifests, CRD-safety verdicts), not live drift. */
  digest: string;
  changes: PlannedChange[];
  /** The object diff against the cluster: counts, and the first created, changed and deleted objects. */
  objects?: { create: number; update: number; delete: number; unchanged: number; changed?: string[] };
  crdSafety?: { crd: string; safe: boolean; problems?: string[] }[];
  /** What the installing ServiceAccount lacks ("verb resource in namespace …"). */
  missingPermissions?: string[];
  /** The unapproved plan this one replaced. */
  supersedes?: string;
  /** When this plan was first shown (RFC 3339). */
  since: string;
  message: string;
}
