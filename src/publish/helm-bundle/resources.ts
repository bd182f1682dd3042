/**
 * What RBAC needs to know about a kind a chart renders: its API group, its resource name
 * (the plural RBAC rules name) and whether it is namespaced. Kubernetes' built-in kinds come
 * from a small table; a CRD the chart itself ships answers for its own kinds; any other
 * custom kind gets the plural `pluralForKind` guesses and is taken as namespaced (a custom
 * resource a chart creates is almost always namespaced; the guess is reported).
 */
import { pluralForKind } from '../../helm/schema/index.js';

export interface ResourceInfo {
  group: string;
  resource: string;
  namespaced: boolean;
  /** How it was found: the built-in table, a CRD of the chart, or a guess. */
  source: 'builtin' | 'chart-crd' | 'guessed';
}

/** `group/Kind` → [resource, namespaced] for the built-in kinds charts render. */
const BUILTIN: Record<string, readonly [string, boolean]> = {
  '/Binding': ['bindings', true],
  '/ConfigMap': ['configmaps', true],
  '/Endpoints': ['endpoints', true],
  '/Event': ['events', true],
  '/LimitRange': ['limitranges', true],
  '/Namespace': ['namespaces', false],
  '/Node': ['nodes', false],
  '/PersistentVolume': ['persistentvolumes', false],
  '/PersistentVolumeClaim': ['persistentvolumeclaims', true],
  '/Pod': ['pods', true],
  '/PodTemplate': ['podtemplates', true],
  '/ReplicationController': ['replicationcontrollers', true],
  '/ResourceQuota': ['resourcequotas', true],
  '/Secret': ['secrets', true],
  '/Service': ['services', true],
  '/ServiceAccount': ['serviceaccounts', true],
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': ['mutatingwebhookconfigurations', false],
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': ['validatingadmissionpolicies', false],
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': ['validatingadmissionpolicybindings', false],
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': ['validatingwebhookconfigurations', false],
  'apiextensions.k8s.io/CustomResourceDefinition': ['customresourcedefinitions', false],
  'apiregistration.k8s.io/APIService': ['apiservices', false],
  'apps/ControllerRevision': ['controllerrevisions', true],
  'apps/DaemonSet': ['daemonsets', true],
  'apps/Deployment': ['deployments', true],
  'apps/ReplicaSet': ['replicasets', true],
  'apps/StatefulSet': ['statefulsets', true],
  'autoscaling/HorizontalPodAutoscaler': ['horizontalpodautoscalers', true],
  'batch/CronJob': ['cronjobs', true],
  'batch/Job': ['jobs', true],
  'certificates.k8s.io/CertificateSigningRequest': ['certificatesigningrequests', false],
  'coordination.k8s.io/Lease': ['leases', true],
  'discovery.k8s.io/EndpointSlice': ['endpointslices', true],
  'events.k8s.io/Event': ['events', true],
  'flowcontrol.apiserver.k8s.io/FlowSchema': ['flowschemas', false],
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration': ['prioritylevelconfigurations', false],
  'networking.k8s.io/Ingress': ['ingresses', true],
  'networking.k8s.io/IngressClass': ['ingressclasses', false],
  'networking.k8s.io/NetworkPolicy': ['networkpolicies', true],
  'node.k8s.io/RuntimeClass': ['runtimeclasses', false],
  'policy/PodDisruptionBudget': ['poddisruptionbudgets', true],
  'policy/PodSecurityPolicy': ['podsecuritypolicies', false],
  'rbac.authorization.k8s.io/ClusterRole': ['clusterroles', false],
  'rbac.authorization.k8s.io/ClusterRoleBinding': ['clusterrolebindings', false],
  'rbac.authorization.k8s.io/Role': ['roles', true],
  'rbac.authorization.k8s.io/RoleBinding': ['rolebindings', true],
  'scheduling.k8s.io/PriorityClass': ['priorityclasses', false],
  'storage.k8s.io/CSIDriver': ['csidrivers', false],
  'storage.k8s.io/CSINode': ['csinodes', false],
  'storage.k8s.io/CSIStorageCapacity': ['csistoragecapacities', true],
  'storage.k8s.io/StorageClass': ['storageclasses', false],
  'storage.k8s.io/VolumeAttachment': ['volumeattachments', false],
  'storage.k8s.io/VolumeAttributesClass': ['volumeattributesclasses', false],
};

/**
 * API groups Kubernetes itself serves (no CRD, no operator behind them). `extensions` is the
 * old home of Deployments and Ingresses; charts for old clusters still name it.
 */
export const BUILTIN_GROUPS: ReadonlySet<string> = new Set([
  ...Object.keys(BUILTIN).map((k) => k.slice(0, k.indexOf('/'))),
  'authentication.k8s.io',
  'authorization.k8s.io',
  'extensions',
  'internal.apiserver.k8s.io',
  'resource.k8s.io',
  'storagemigration.k8s.io',
]);

/** A kind a CRD declares: from the chart's own CRDs. */
export interface CrdKind {
  group: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  versions: string[];
}

/** The resource of `group`/`kind`: the built-in table, then the chart's CRDs, then a guess. */
export function resourceFor(group: string, kind: string, chartCrds: ReadonlyMap<string, CrdKind>): ResourceInfo {
  const builtin = BUILTIN[`${group}/${kind}`];
  if (builtin !== undefined) return { group, resource: builtin[0], namespaced: builtin[1], source: 'builtin' };
  // `extensions` held what apps and networking.k8s.io hold now.
  if (group === 'extensions') {
    const moved = BUILTIN[`apps/${kind}`] ?? BUILTIN[`networking.k8s.io/${kind}`] ?? BUILTIN[`policy/${kind}`];
    if (moved !== undefined) return { group, resource: moved[0], namespaced: moved[1], source: 'builtin' };
  }
  const crd = chartCrds.get(`${group}/${kind}`);
  if (crd !== undefined) return { group, resource: crd.plural, namespaced: crd.namespaced, source: 'chart-crd' };
  return { group, resource: pluralForKind(kind), namespaced: true, source: 'guessed' };
}
