/**
 * Apply order. Objects go in phases so that what a later object needs already exists:
 * namespaces, then identities and RBAC, then CRDs (which must be Established before any
 * custom resource), config, everything else, workloads, Services, and last the webhooks
 * and APIServices that route API traffic to those workloads. Uninstall goes backwards.
 */
import type { KubeObject } from '../kube/types.js';
import { parseApiVersion } from '../kube/types.js';

export type Phase = 'namespaces' | 'rbac' | 'crds' | 'config' | 'other' | 'workloads' | 'services' | 'webhooks';

export const PHASES: readonly Phase[] = ['namespaces', 'rbac', 'crds', 'config', 'other', 'workloads', 'services', 'webhooks'];

const KIND_PHASE: Readonly<Record<string, Phase>> = {
  Namespace: 'namespaces',
  ServiceAccount: 'rbac',
  Role: 'rbac',
  ClusterRole: 'rbac',
  RoleBinding: 'rbac',
  ClusterRoleBinding: 'rbac',
  CustomResourceDefinition: 'crds',
  ConfigMap: 'config',
  Secret: 'config',
  PriorityClass: 'config',
  ResourceQuota: 'config',
  LimitRange: 'config',
  StorageClass: 'config',
  PersistentVolume: 'config',
  PersistentVolumeClaim: 'config',
  NetworkPolicy: 'config',
  PodDisruptionBudget: 'config',
  Deployment: 'workloads',
  StatefulSet: 'workloads',
  DaemonSet: 'workloads',
  ReplicaSet: 'workloads',
  Job: 'workloads',
  CronJob: 'workloads',
  Pod: 'workloads',
  Service: 'services',
  ValidatingWebhookConfiguration: 'webhooks',
  MutatingWebhookConfiguration: 'webhooks',
  ValidatingAdmissionPolicy: 'webhooks',
  ValidatingAdmissionPolicyBinding: 'webhooks',
  APIService: 'webhooks',
};

/** Kinds whose group is not the core or a built-in one are custom resources: phase `other`. */
const BUILTIN_GROUPS = new Set([
  '',
  'apps',
  'batch',
  'rbac.authorization.k8s.io',
  'apiextensions.k8s.io',
  'admissionregistration.k8s.io',
  'apiregistration.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'networking.k8s.io',
  'policy',
]);

export function phaseOf(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): Phase {
  const { group } = parseApiVersion(obj.apiVersion);
  if (!BUILTIN_GROUPS.has(group)) return 'other';
  return KIND_PHASE[obj.kind] ?? 'other';
}

/** `group/Kind/namespace/name`: an object's identity across API versions. */
export function identityOf(obj: { apiVersion: string; kind: string; metadata?: { name?: string; namespace?: string }; name?: string; namespace?: string | undefined }): string {
  const name = obj.metadata?.name ?? obj.name ?? '';
  const namespace = obj.metadata?.namespace ?? obj.namespace ?? '';
  return `${parseApiVersion(obj.apiVersion).group}/${obj.kind}/${namespace}/${name}`;
}

function sortKey(obj: KubeObject): string {
  return `${obj.kind}\u0000${obj.metadata.namespace ?? ''}\u0000${obj.metadata.name ?? ''}`;
}

export interface PhaseGroup {
  phase: Phase;
  objects: KubeObject[];
}

/** Objects grouped by phase in apply order; within a phase sorted by kind, namespace, name (stable). */
export function groupByPhase(objects: readonly KubeObject[]): PhaseGroup[] {
  const groups: PhaseGroup[] = [];
  for (const phase of PHASES) {
    const members = objects.filter((o) => phaseOf(o) === phase);
    if (members.length === 0) continue;
    groups.push({ phase, objects: [...members].sort((a, b) => compare(sortKey(a), sortKey(b))) });
  }
  return groups;
}

/** Every object in apply order. */
export function applyOrder(objects: readonly KubeObject[]): KubeObject[] {
  return groupByPhase(objects).flatMap((g) => g.objects);
}

/**
 * Every object in delete order: the reverse of apply order, except that CRDs go last of all,
 * so custom resources are removed while their controllers and RBAC still exist.
 */
export function deleteOrder(objects: readonly KubeObject[]): KubeObject[] {
  const reversed = applyOrder(objects).reverse();
  return [...reversed.filter((o) => phaseOf(o) !== 'crds'), ...reversed.filter((o) => phaseOf(o) === 'crds')];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
