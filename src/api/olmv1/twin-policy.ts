/**
 * Only Binnacle's manager makes twins. A `binnacle.dev` ClusterExtension that carries the twin
 * label and a controller reference to an OLM v1 ClusterExtension is trusted as that object's twin
 * (twin.ts): it takes over what operator-controller installed, and OLM v1's ambiguity rules read
 * it. The API server does not check owner references, so whoever may create `binnacle.dev`
 * ClusterExtensions could write both. This ValidatingAdmissionPolicy (`Deny`; installed by the
 * manager at every start, whether or not it serves OLM v1's API: a twin's standing is read either
 * way) refuses a CREATE or UPDATE of a `binnacle.dev` ClusterExtension that adds or changes the
 * twin label or an owner reference to an OLM v1 object, or that changes an existing twin's spec
 * or its binnacle.dev labels and annotations (an approval, adoptExisting, a conflict policy: the
 * twin would keep its standing with them), or, while the manager serves OLM v1's API, a DELETE of
 * a twin (it goes with its OLM v1 object), unless the manager itself asks (kube/admission-policy.ts:
 * its identity, from the API server); the garbage collector may delete a twin. Taking an owner
 * reference away gains nothing and is let through (the garbage collector does, when orphaning).
 */
import type { Logger } from 'pino';
import { celHasLabel, celNotExempt, celString, celStringList, GARBAGE_COLLECTOR_IDENTITIES, installExemptingPolicy, policyGround, policyWithBinding, type PolicyGround } from '../../kube/admission-policy.js';
import type { Discovery, ObjectWriter } from '../../kube/ports.js';
import type { KubeObject } from '../../kube/types.js';
import { GROUP } from '../types.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION, OLMV1_GROUP } from './types.js';

export const TWIN_POLICY_NAME = 'binnacle-olmv1-twins';

/** The expressions of the policy, built in one place so that tests can read them. */
export function twinPolicyExpressions(exemptUsers: readonly string[]): { notExempt: string; labelKept: string; referencesKept: string; twinKept: string; twinNotDeleted: string; message: string; twinMessage: string; deleteMessage: string } {
  const label = celString(LABEL_OLMV1_TWIN_OF);
  const olmv1Ref = `r.apiVersion.startsWith(${celString(`${OLMV1_GROUP}/`)})`;
  const ours = celString(`${GROUP}/`);
  /** Every binnacle.dev/ key of metadata.`field` is on both objects with one value (CEL; both objects present). */
  const prefixedKept = (field: 'labels' | 'annotations'): string =>
    `(!has(oldObject.metadata.${field}) || oldObject.metadata.${field}.all(k, !k.startsWith(${ours}) || (has(object.metadata.${field}) && k in object.metadata.${field} && object.metadata.${field}[k] == oldObject.metadata.${field}[k]))) && ` +
    `(!has(object.metadata.${field}) || object.metadata.${field}.all(k, !k.startsWith(${ours}) || (has(oldObject.metadata.${field}) && k in oldObject.metadata.${field})))`;
  // The first three read `object`, which a DELETE has not (null): they hold for it.
  return {
    notExempt: celNotExempt(exemptUsers),
    // Unset, or set as it was (oldObject is null on CREATE).
    labelKept: `object == null || !${celHasLabel('object', LABEL_OLMV1_TWIN_OF)} || (oldObject != null && ${celHasLabel('oldObject', LABEL_OLMV1_TWIN_OF)} && object.metadata.labels[${label}] == oldObject.metadata.labels[${label}])`,
    // Every owner reference to an OLM v1 object was there before, the same in every field.
    referencesKept: `object == null || !has(object.metadata.ownerReferences) || object.metadata.ownerReferences.all(r, !(${olmv1Ref}) || (oldObject != null && has(oldObject.metadata.ownerReferences) && oldObject.metadata.ownerReferences.exists(o, o == r)))`,
    // An existing twin is the manager's: its spec and binnacle.dev labels and annotations (an
    // approval, adoptExisting, a conflict policy) change only through the OLM v1 object.
    twinKept: `object == null || oldObject == null || !${celHasLabel('oldObject', LABEL_OLMV1_TWIN_OF)} || (object.spec == oldObject.spec && ${prefixedKept('labels')} && ${prefixedKept('annotations')})`,
    // A twin (label and a controller reference to an OLM v1 object) goes with its OLM v1 object:
    // deleted by the garbage collector, or by the manager. A person deleting it would have its
    // operator uninstalled, and the manager make it again from the OLM v1 object.
    twinNotDeleted:
      `object != null || oldObject == null || !${celHasLabel('oldObject', LABEL_OLMV1_TWIN_OF)} || oldObject.metadata.labels[${label}] == '' || !has(oldObject.metadata.ownerReferences) || ` +
      // The twin as twin.ts reads one: the label names the UID of its controller, an OLM v1 ClusterExtension.
      `!oldObject.metadata.ownerReferences.exists(r, r.apiVersion == ${celString(OLMV1_API_VERSION)} && r.kind == 'ClusterExtension' && has(r.controller) && r.controller && r.uid == oldObject.metadata.labels[${label}]) || ` +
      `request.userInfo.username in ${celStringList(GARBAGE_COLLECTOR_IDENTITIES)}`,
    message:
      `'ClusterExtension ' + object.metadata.name + ': only Binnacle\\'s manager makes an OLM v1 ClusterExtension\\'s twin; the label ${LABEL_OLMV1_TWIN_OF} and owner references to ${OLMV1_GROUP} objects cannot be added or changed. ` +
      `To install through OLM v1\\'s API, create an ${OLMV1_GROUP}/v1 ClusterExtension: Binnacle makes its twin'`,
    twinMessage:
      `'ClusterExtension ' + object.metadata.name + ' is the twin Binnacle\\'s manager keeps of an OLM v1 ClusterExtension: its spec and its ${GROUP}/ labels and annotations are the manager\\'s. ` +
      `Change the ${OLMV1_GROUP}/v1 ClusterExtension ' + object.metadata.name + ' instead (kubectl edit clusterextensions.${OLMV1_GROUP} ' + object.metadata.name + '; binnacle upgrade, rollback and approve write it)'`,
    deleteMessage:
      `'ClusterExtension ' + oldObject.metadata.name + ' is the twin Binnacle\\'s manager keeps of an OLM v1 ClusterExtension: it goes with it. ` +
      `Delete the ${OLMV1_GROUP}/v1 ClusterExtension ' + oldObject.metadata.name + ' instead (kubectl delete clusterextensions.${OLMV1_GROUP} ' + oldObject.metadata.name + '; binnacle uninstall does)'`,
  };
}

/**
 * The ValidatingAdmissionPolicy and its `Deny` binding; `exemptUsers` may do anything. A twin's
 * deletion is refused only where `refuseDeletes` (the manager serves OLM v1's API): otherwise no
 * manager removes its finalizer from the OLM v1 object, and deleting the twin is the way out.
 */
export function twinPolicy(exemptUsers: readonly string[], refuseDeletes = true): KubeObject[] {
  const x = twinPolicyExpressions(exemptUsers);
  return policyWithBinding(
    TWIN_POLICY_NAME,
    {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [GROUP], apiVersions: ['*'], operations: ['CREATE', 'UPDATE', ...(refuseDeletes ? ['DELETE'] : [])], resources: ['clusterextensions'] }] },
      matchConditions: [{ name: 'not-binnacle', expression: x.notExempt }],
      validations: [
        { expression: x.labelKept, messageExpression: x.message, reason: 'Forbidden' },
        { expression: x.referencesKept, messageExpression: x.message, reason: 'Forbidden' },
        { expression: x.twinKept, messageExpression: x.twinMessage, reason: 'Forbidden' },
        ...(refuseDeletes ? [{ expression: x.twinNotDeleted, messageExpression: x.deleteMessage, reason: 'Forbidden' }] : []),
      ],
    },
    ['Deny'],
  );
}

/**
 * Installs (or updates) the policy, exempting this client's identity (`ground`, asked of the API
 * server when not given), refusing a twin's deletion where `servesOlmv1`. Answers the exempt
 * identities, or undefined where the API server serves no ValidatingAdmissionPolicy.
 */
export async function ensureTwinPolicy(client: Pick<ObjectWriter, 'create' | 'apply'> & Pick<Discovery, 'resourceFor'>, logger: Logger, ground?: PolicyGround, servesOlmv1 = true): Promise<string[] | undefined> {
  const { serves, identity } = ground ?? (await policyGround(client));
  if (!serves || identity === undefined) {
    logger.warn('the API server serves no ValidatingAdmissionPolicy: whoever may create binnacle.dev ClusterExtensions can make one that reads as an OLM v1 object’s twin');
    return undefined;
  }
  const exempt = await installExemptingPolicy(client, [identity], (users) => twinPolicy(users, servesOlmv1));
  logger.info({ exempt }, 'only the manager makes OLM v1 ClusterExtensions’ twins');
  return exempt;
}
