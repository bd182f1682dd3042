/**
 * Only Binnacle's manager makes twins. A `binnacle.dev` ClusterExtension that carries the twin
 * label and a controller reference to an OLM v1 ClusterExtension is trusted as that object's twin
 * (twin.ts): it takes over what operator-controller installed, and OLM v1's ambiguity rules read
 * it. The API server does not check owner references, so whoever may create `binnacle.dev`
 * ClusterExtensions could write both. This ValidatingAdmissionPolicy (installed by the manager
 * with OLM v1's API, `Deny`) refuses a CREATE or UPDATE of a `binnacle.dev` ClusterExtension that
 * adds or changes the twin label or an owner reference to an OLM v1 object, unless the manager
 * itself asks (kube/admission-policy.ts: its identity, from the API server). Taking either away
 * gains nothing and is let through (the garbage collector does, when orphaning).
 */
import type { Logger } from 'pino';
import { celHasLabel, celNotExempt, celString, clientIdentity, installExemptingPolicy, policyWithBinding, servesAdmissionPolicies } from '../../kube/admission-policy.js';
import type { Discovery, ObjectReader, ObjectWriter } from '../../kube/ports.js';
import type { KubeObject } from '../../kube/types.js';
import { GROUP } from '../types.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_GROUP } from './types.js';

export const TWIN_POLICY_NAME = 'binnacle-olmv1-twins';

/** The expressions of the policy, built in one place so that tests can read them. */
export function twinPolicyExpressions(exemptUsers: readonly string[]): { notExempt: string; labelKept: string; referencesKept: string; message: string } {
  const label = celString(LABEL_OLMV1_TWIN_OF);
  const olmv1Ref = `r.apiVersion.startsWith(${celString(`${OLMV1_GROUP}/`)})`;
  return {
    notExempt: celNotExempt(exemptUsers),
    // Unset, or set as it was (oldObject is null on CREATE).
    labelKept: `!${celHasLabel('object', LABEL_OLMV1_TWIN_OF)} || (oldObject != null && ${celHasLabel('oldObject', LABEL_OLMV1_TWIN_OF)} && object.metadata.labels[${label}] == oldObject.metadata.labels[${label}])`,
    // Every owner reference to an OLM v1 object was there before, the same in every field.
    referencesKept: `!has(object.metadata.ownerReferences) || object.metadata.ownerReferences.all(r, !(${olmv1Ref}) || (oldObject != null && has(oldObject.metadata.ownerReferences) && oldObject.metadata.ownerReferences.exists(o, o == r)))`,
    message:
      `'ClusterExtension ' + object.metadata.name + ': only Binnacle\\'s manager makes an OLM v1 ClusterExtension\\'s twin; the label ${LABEL_OLMV1_TWIN_OF} and owner references to ${OLMV1_GROUP} objects cannot be added or changed. ` +
      `To install through OLM v1\\'s API, create an ${OLMV1_GROUP}/v1 ClusterExtension: Binnacle makes its twin'`,
  };
}

/** The ValidatingAdmissionPolicy and its `Deny` binding; `exemptUsers` may do anything. */
export function twinPolicy(exemptUsers: readonly string[]): KubeObject[] {
  const x = twinPolicyExpressions(exemptUsers);
  return policyWithBinding(
    TWIN_POLICY_NAME,
    {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [GROUP], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['clusterextensions'] }] },
      matchConditions: [{ name: 'not-binnacle', expression: x.notExempt }],
      validations: [
        { expression: x.labelKept, messageExpression: x.message, reason: 'Forbidden' },
        { expression: x.referencesKept, messageExpression: x.message, reason: 'Forbidden' },
      ],
    },
    ['Deny'],
  );
}

/**
 * Installs (or updates) the policy, exempting this client's identity (and those it already
 * exempts). Answers them, or undefined where the API server serves no ValidatingAdmissionPolicy.
 */
export async function ensureTwinPolicy(client: Pick<ObjectWriter, 'create' | 'apply'> & Pick<ObjectReader, 'find'> & Pick<Discovery, 'resourceFor'>, logger: Logger): Promise<string[] | undefined> {
  if (!(await servesAdmissionPolicies(client))) {
    logger.warn('the API server serves no ValidatingAdmissionPolicy: whoever may create binnacle.dev ClusterExtensions can make one that reads as an OLM v1 object’s twin');
    return undefined;
  }
  const exempt = await installExemptingPolicy(client, TWIN_POLICY_NAME, [await clientIdentity(client)], twinPolicy);
  logger.info({ exempt }, 'only the manager makes OLM v1 ClusterExtensions’ twins');
  return exempt;
}
