/**
 * Binnacle's APIs (group `binnacle.dev`, version `v1alpha1`): ClusterCatalog, BundleDeployment,
 * ClusterExtension and PlatformOperator — their TypeScript types (`types`), their CRDs with
 * structural schemas, printer columns and short names (`crds`), and the rules for names
 * Binnacle derives from them (`names`). The controllers in `src/controllers` reconcile them.
 * Also OLM's OperatorCondition (`operator-condition`), which Binnacle serves for the operators it installs,
 * and the app-team ClusterRole with its escalation check (`app-team-role`). OLM v1's own CRDs
 * (`olm.operatorframework.io/v1`), vendored unchanged from operator-controller, load from `olmv1/crds`.
 */
export * from './types.js';
export { ALL_CRDS, CLUSTER_CATALOG_CRD, BUNDLE_DEPLOYMENT_CRD, CLUSTER_EXTENSION_CRD, PLATFORM_OPERATOR_CRD, HELM_OPERATOR_CRD } from './crds.js';
export { boundedName, bundleDeploymentName, MAX_DERIVED_NAME } from './names.js';
export { matchesSelector } from './catalog-selector.js';
export * from './operator-condition.js';
export { APP_TEAM_ROLE, APP_TEAM_BASE_ROLE, AGGREGATE_TO_APP_TEAM, escalationProblems, appTeamRoles, helmKindsAppTeamRole, type RoleLike, type PolicyRule } from './app-team-role.js';
export { OLMV1_GROUP, OLMV1_VERSION } from './olmv1/types.js';
export { OLMV1_CRD_VARIANT, loadOlmv1Crd, loadOlmv1Crds, type Olmv1CrdVariant, type Olmv1Kind } from './olmv1/crds.js';
