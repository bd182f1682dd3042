/**
 * OLM's OperatorCondition API (`operators.coreos.com`, served as `v2` and `v1`): the one object
 * an installed operator may write to tell its lifecycle manager about itself, chiefly
 * `Upgradeable=False` to hold back its own upgrade. Binnacle serves the same CRD as OLM (and
 * leaves OLM's in place when it is already there), so operators built with operator-lib's
 * `conditions` package run unchanged.
 */
import type { Condition, KubeObject } from '../kube/types.js';

export const OPERATOR_CONDITION_GROUP = 'operators.coreos.com';
export const OPERATOR_CONDITION_API_VERSION = `${OPERATOR_CONDITION_GROUP}/v2`;
export const OPERATOR_CONDITION_KIND = 'OperatorCondition';
export const OPERATOR_CONDITION_RESOURCE = 'operatorconditions';
/** The environment variable OLM injects into an operator's Deployments: the condition's name. */
export const OPERATOR_CONDITION_ENV = 'OPERATOR_CONDITION_NAME';
/** The condition type that holds back upgrades when False. */
export const UPGRADEABLE = 'Upgradeable';

export interface OperatorConditionSpec {
  /** ServiceAccounts that may write the condition (OLM: those of the CSV's Deployments). */
  serviceAccounts?: string[];
  /** The CSV's Deployments, which get `OPERATOR_CONDITION_NAME`. */
  deployments?: string[];
  /** Set by a cluster admin; wins over what the operator reports. */
  overrides?: Condition[];
  /** Written by the operator (v2; operator-lib's `conditions` package). */
  conditions?: Condition[];
}

export interface OperatorCondition extends KubeObject {
  spec?: OperatorConditionSpec;
  /** v1 operators write their conditions here. */
  status?: { conditions?: Condition[] };
}

type Schema = Record<string, unknown>;

const condition: Schema = {
  type: 'object',
  required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
  properties: {
    lastTransitionTime: { type: 'string', format: 'date-time' },
    message: { type: 'string', maxLength: 32768 },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    reason: { type: 'string', maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    type: { type: 'string', maxLength: 316, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$' },
  },
};
const conditions: Schema = { type: 'array', items: condition };
const strings: Schema = { type: 'array', items: { type: 'string' } };

function version(name: string, storage: boolean, spec: Schema): Schema {
  return {
    name,
    served: true,
    storage,
    subresources: { status: {} },
    schema: {
      openAPIV3Schema: {
        type: 'object',
        description: 'OperatorCondition conveys information to the lifecycle manager about the state of an operator.',
        required: ['metadata'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          spec: { type: 'object', properties: spec },
          status: { type: 'object', properties: { conditions } },
        },
      },
    },
  };
}

/** OLM's CRD, the same shape: v2 (storage) adds `spec.conditions` to v1. */
export const OPERATOR_CONDITION_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${OPERATOR_CONDITION_RESOURCE}.${OPERATOR_CONDITION_GROUP}`, labels: { 'app.kubernetes.io/part-of': 'binnacle' } },
  spec: {
    group: OPERATOR_CONDITION_GROUP,
    scope: 'Namespaced',
    names: { kind: OPERATOR_CONDITION_KIND, listKind: 'OperatorConditionList', plural: OPERATOR_CONDITION_RESOURCE, singular: 'operatorcondition', shortNames: ['condition'], categories: ['olm'] },
    versions: [
      version('v1', false, { deployments: strings, overrides: conditions, serviceAccounts: strings }),
      version('v2', true, { conditions, deployments: strings, overrides: conditions, serviceAccounts: strings }),
    ],
  },
};
