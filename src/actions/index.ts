/**
 * What a person asks for directly, outside any reconcile: as Helm's `pkg/action`, one function
 * per operation, called by the CLI and the console without starting a controller.
 *
 * - `plan`: what installing or changing an extension would do, writing nothing.
 * - `release-history`: an extension's releases, and rolling one back (preview, then act).
 * - `approve`: approving the plan an extension or HelmOperator awaits approval of (issue 31 §1).
 * - `platform-protection`: the admission policy that keeps a PlatformOperator's extensions
 *   (the manager installs it; `binnacle uninstall` asks it first).
 */
export { plan, changedPaths, deletions, type Plan, type PlanRequest, type BundlePlan, type ObjectPlan, type ObjectAction } from './plan.js';
export { extensionHistory, releaseOf, rollbackExtension, rollbackPreview, type ExtensionHistory, type ReleaseHistory, type RollbackPreview } from './release-history.js';
export { approvePlan, planSummary, type ApproveRequest, type ApproveResult, type ApprovableKind } from './approve.js';
export { ensurePlatformProtection, platformOwner, refuseIfPlatformOwned, PROTECTION_POLICY_NAME, PLATFORM_OWNER_KIND } from './platform-protection.js';
