/**
 * Binnacle inside a cluster: the manifests `install-self` applies (least-privilege RBAC for the
 * manager, which installs through each extension's ServiceAccount), and install, status and
 * uninstall, each idempotent, going by the record of what was installed (a ConfigMap beside the
 * manager; an install prunes what the set it replaces had and it lacks); releases
 * (`release-self`, `install-self --version`): a version's rendered manifests published as an
 * OCI artifact beside the image, pulled and checked before the same install path applies them.
 */
export { selfManifests, managerClusterRules, DEFAULT_SELF_NAMESPACE, DEFAULT_SELF_IMAGE, MANAGER_NAME, CATALOG_SERVICE, type SelfOptions } from './manifests.js';
export { installSelf, statusSelf, uninstallSelf, installedExtensions, type InstallSelfOptions, type InstallSelfResult, type SelfClient, type SelfStatus, type UninstallSelfResult } from './install.js';
export { planPrune, parseRecord, recordConfigMap, RECORD_NAME, RECORD_LABEL, type InstallRecord, type RecordedObject } from './record.js';
export {
  publishSelfVersion,
  pushSelfVersion,
  fetchSelfVersion,
  selfVersionManifests,
  selfVersionRepository,
  validateReleaseObjects,
  sortReleaseTags,
  DEFAULT_RELEASE_REPO,
  RELEASE_REPO_ENV,
  RELEASE_MEDIA_TYPE,
  type SelfVersion,
  type ReleaseConfig,
  type PublishedSelfVersion,
} from './release.js';
