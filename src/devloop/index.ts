/**
 * The operator developer's loop (issue 14): `run bundle` installs one bundle through the normal
 * path (ClusterCatalog → ClusterExtension → BundleDeployment, the manager doing the work), a
 * bundle directory shipped in ConfigMaps so no registry is needed; `run bundle-upgrade` moves it
 * along its upgrade edges; `cleanup` removes it, CRDs and their data only when asked, after
 * saying what goes; and when an install does not settle, `diagnose` says what is stuck. It talks
 * to the cluster through src/kube, builds catalogs with src/catalog and reads bundles with
 * src/bundle; the CLI calls it, and it never reaches into controller internals.
 */
export { readBundleInput, readIndexImage, type BundleInput } from './bundle-input.js';
export { runBundle, runBundleUpgrade, runBundleNames, missingUpgradeEdge, requireBinnacle, waitInstalled, LABEL_RUN_BUNDLE, type RunBundleOptions, type RunBundleResult } from './run-bundle.js';
export { planCleanup, describePlan, runCleanup, type CleanupPlan } from './cleanup.js';
export { diagnoseExtension, diagnoseWorkloads, settledAt } from './diagnose.js';
export { packConfigMaps, CONFIGMAP_BUDGET } from './configmaps.js';
