/**
 * Binnacle inside a cluster: the manifests `install-self` applies (least-privilege RBAC for the
 * manager, which installs through each extension's ServiceAccount), and install, status and
 * uninstall, each idempotent.
 */
export { selfManifests, managerClusterRules, DEFAULT_SELF_NAMESPACE, DEFAULT_SELF_IMAGE, MANAGER_NAME, CATALOG_SERVICE, type SelfOptions } from './manifests.js';
export { installSelf, statusSelf, uninstallSelf, installedExtensions, type InstallSelfResult, type SelfStatus, type UninstallSelfResult } from './install.js';
