/** The kinds the one fake cluster (fake-cluster.test-helper.ts) serves built in, as discovery names them. */

export interface KindInfo {
  group: string;
  versions: string[];
  plural: string;
  namespaced: boolean;
}

export const BUILTIN: readonly [string, string, string[], string, boolean][] = [
  // kind, group, versions, plural, namespaced
  ['Namespace', '', ['v1'], 'namespaces', false],
  ['ConfigMap', '', ['v1'], 'configmaps', true],
  ['Secret', '', ['v1'], 'secrets', true],
  ['Service', '', ['v1'], 'services', true],
  ['ServiceAccount', '', ['v1'], 'serviceaccounts', true],
  ['Pod', '', ['v1'], 'pods', true],
  ['PersistentVolumeClaim', '', ['v1'], 'persistentvolumeclaims', true],
  ['PersistentVolume', '', ['v1'], 'persistentvolumes', false],
  ['Endpoints', '', ['v1'], 'endpoints', true],
  ['EndpointSlice', 'discovery.k8s.io', ['v1'], 'endpointslices', true],
  ['Event', '', ['v1'], 'events', true],
  ['Node', '', ['v1'], 'nodes', false],
  ['Deployment', 'apps', ['v1'], 'deployments', true],
  ['StatefulSet', 'apps', ['v1'], 'statefulsets', true],
  ['DaemonSet', 'apps', ['v1'], 'daemonsets', true],
  ['ReplicaSet', 'apps', ['v1'], 'replicasets', true],
  ['Job', 'batch', ['v1'], 'jobs', true],
  ['CronJob', 'batch', ['v1'], 'cronjobs', true],
  ['Role', 'rbac.authorization.k8s.io', ['v1'], 'roles', true],
  ['RoleBinding', 'rbac.authorization.k8s.io', ['v1'], 'rolebindings', true],
  ['ClusterRole', 'rbac.authorization.k8s.io', ['v1'], 'clusterroles', false],
  ['ClusterRoleBinding', 'rbac.authorization.k8s.io', ['v1'], 'clusterrolebindings', false],
  ['CustomResourceDefinition', 'apiextensions.k8s.io', ['v1'], 'customresourcedefinitions', false],
  ['ValidatingWebhookConfiguration', 'admissionregistration.k8s.io', ['v1'], 'validatingwebhookconfigurations', false],
  ['MutatingWebhookConfiguration', 'admissionregistration.k8s.io', ['v1'], 'mutatingwebhookconfigurations', false],
  ['APIService', 'apiregistration.k8s.io', ['v1'], 'apiservices', false],
  ['NetworkPolicy', 'networking.k8s.io', ['v1'], 'networkpolicies', true],
  ['Ingress', 'networking.k8s.io', ['v1'], 'ingresses', true],
  ['PodDisruptionBudget', 'policy', ['v1'], 'poddisruptionbudgets', true],
  ['PriorityClass', 'scheduling.k8s.io', ['v1'], 'priorityclasses', false],
  ['Lease', 'coordination.k8s.io', ['v1'], 'leases', true],
  ['SubjectAccessReview', 'authorization.k8s.io', ['v1'], 'subjectaccessreviews', false],
  ['SelfSubjectAccessReview', 'authorization.k8s.io', ['v1'], 'selfsubjectaccessreviews', false],
  ['TokenReview', 'authentication.k8s.io', ['v1'], 'tokenreviews', false],
  ['SelfSubjectReview', 'authentication.k8s.io', ['v1'], 'selfsubjectreviews', false],
  ['ValidatingAdmissionPolicy', 'admissionregistration.k8s.io', ['v1'], 'validatingadmissionpolicies', false],
  ['ValidatingAdmissionPolicyBinding', 'admissionregistration.k8s.io', ['v1'], 'validatingadmissionpolicybindings', false],
  ['StorageClass', 'storage.k8s.io', ['v1'], 'storageclasses', false],
];
