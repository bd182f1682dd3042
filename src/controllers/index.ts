/**
 * The controllers, one reconciler per API, each an ordered list of named steps over typed
 * state (`common`), assembled with informers and work queues by the manager (`manager`):
 *
 * - ClusterCatalog (`cluster-catalog`): pull → unpack → validate → store → serve (`catalog-registry`).
 * - ClusterExtension (`cluster-extension`): resolve against served catalogs, the cluster's facts
 *   (src/installed/cluster-facts) and everything installed (src/installed) → one BundleDeployment per bundle
 *   of its set, shared with other extensions that need it (`extension-changes`), under the
 *   installed-state Lease → report, with the last resolutions (`resolution-history`). A bundle is
 *   not replaced while its operator's OperatorCondition says `Upgradeable=False` (`operator-conditions`).
 * - BundleDeployment (`bundle-deployment`): unpack (src/source) → render (src/render) → check the
 *   ServiceAccount's permissions (src/apply/preflight-permissions) → apply (src/apply) → report health.
 * - PlatformOperator (`platform-operator`): a ClusterExtension per required package, protected by an
 *   admission policy (src/actions/platform-protection); per-package health and aggregated conditions
 *   (`platform-health`), also as an OpenShift ClusterOperator (`cluster-operator`).
 *
 * What a person asks for directly (a plan, a history, a rollback) is in src/actions, which the
 * CLI and the console call without starting a controller. Reconcilers write only status and
 * finalizers of the objects they reconcile.
 */
export { startManager, type ManagerOptions, type RunningManager } from './manager.js';
export { ensureCrds } from './crds.js';
export { CatalogRegistry, type ServedCatalog } from './catalog-registry.js';
export { ClusterCatalogReconciler } from './cluster-catalog.js';
export { ClusterExtensionReconciler } from './cluster-extension.js';
export { BundleDeploymentReconciler } from './bundle-deployment.js';
export { PlatformOperatorReconciler, platformExtensionName } from './platform-operator.js';
export { upgradeBlockers, upgradeVerdict, type UpgradeBlocker } from './operator-conditions.js';
export { RENDERERS, type BundleRenderer, type RenderedBundle } from '../render/index.js';
