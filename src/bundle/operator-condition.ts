/**
 * The render step that gives an installed registry+v1 operator its OperatorCondition, as OLM's
 * operatorcondition controllers do: an `OperatorCondition` named after the CSV in the install
 * namespace (listing the CSV's Deployments and their ServiceAccounts), a Role and RoleBinding
 * that let those ServiceAccounts get/update/patch that one object, and `OPERATOR_CONDITION_NAME`
 * in every container of the CSV's Deployments. Pure: objects in, objects out.
 */
import {
  OPERATOR_CONDITION_API_VERSION,
  OPERATOR_CONDITION_ENV,
  OPERATOR_CONDITION_GROUP,
  OPERATOR_CONDITION_KIND,
  OPERATOR_CONDITION_RESOURCE,
} from '../api/operator-condition.js';
import type { KubeObject } from '../kube/types.js';
import { isRecord } from '../util/object.js';
import type { RegistryV1Bundle } from './types.js';

/** The ServiceAccount a CSV Deployment's pods run as (`default` when none is named). */
function podServiceAccount(spec: Record<string, unknown>): string {
  const template = isRecord(spec.template) ? spec.template : {};
  const pod = isRecord(template.spec) ? template.spec : {};
  return typeof pod.serviceAccountName === 'string' && pod.serviceAccountName !== '' ? pod.serviceAccountName : 'default';
}

/** The OperatorCondition and the RBAC that lets the operator write it. */
export function operatorConditionObjects(bundle: RegistryV1Bundle, namespace: string): KubeObject[] {
  const name = bundle.name;
  const deployments = bundle.csv.deployments.map((d) => d.name).sort();
  const serviceAccounts = [...new Set(bundle.csv.deployments.map((d) => podServiceAccount(d.spec)))].sort();
  const rbac = 'rbac.authorization.k8s.io';
  return [
    {
      apiVersion: OPERATOR_CONDITION_API_VERSION,
      kind: OPERATOR_CONDITION_KIND,
      metadata: { name, namespace },
      spec: { deployments, serviceAccounts },
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name, namespace },
      rules: [
        { apiGroups: [OPERATOR_CONDITION_GROUP], resources: [OPERATOR_CONDITION_RESOURCE], resourceNames: [name], verbs: ['get', 'update', 'patch'] },
        { apiGroups: [OPERATOR_CONDITION_GROUP], resources: [`${OPERATOR_CONDITION_RESOURCE}/status`], resourceNames: [name], verbs: ['get', 'update', 'patch'] },
      ],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name, namespace },
      roleRef: { apiGroup: rbac, kind: 'Role', name },
      subjects: serviceAccounts.map((sa) => ({ kind: 'ServiceAccount', name: sa, namespace })),
    },
  ];
}

/** A copy of `deployment` whose every container has `OPERATOR_CONDITION_NAME=<condition>`. */
export function withConditionEnv(deployment: KubeObject, condition: string): KubeObject {
  const copy = structuredClone(deployment);
  const spec = isRecord(copy.spec) ? copy.spec : {};
  const template = isRecord(spec.template) ? spec.template : {};
  const pod = isRecord(template.spec) ? template.spec : {};
  const containers = Array.isArray(pod.containers) ? pod.containers.filter(isRecord) : [];
  for (const c of containers) {
    const env = Array.isArray(c.env) ? c.env.filter(isRecord) : [];
    const existing = env.find((e) => e.name === OPERATOR_CONDITION_ENV);
    // As OLM: the variable names this install's condition, whatever the bundle or an override set.
    if (existing !== undefined) {
      delete existing.valueFrom;
      existing.value = condition;
    } else {
      env.push({ name: OPERATOR_CONDITION_ENV, value: condition });
    }
    c.env = env;
  }
  return copy;
}

/**
 * The render step: `objects` (a converted registry+v1 bundle) with the CSV's Deployments
 * pointed at their OperatorCondition, followed by the condition and its RBAC.
 */
export function addOperatorCondition(bundle: RegistryV1Bundle, namespace: string, objects: readonly KubeObject[]): KubeObject[] {
  if (bundle.name === '' || bundle.csv.deployments.length === 0) return [...objects];
  const owned = new Set(bundle.csv.deployments.map((d) => d.name));
  const pointed = objects.map((o) =>
    o.kind === 'Deployment' && o.apiVersion === 'apps/v1' && owned.has(o.metadata.name ?? '') && (o.metadata.namespace ?? namespace) === namespace ? withConditionEnv(o, bundle.name) : o,
  );
  return [...pointed, ...operatorConditionObjects(bundle, namespace)];
}
