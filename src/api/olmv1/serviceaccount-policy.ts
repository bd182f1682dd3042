/**
 * OLM v1's deprecated `spec.serviceAccount` (operator-controller v1.11.0): operator-controller
 * ignores it and installs everything as its own cluster-admin identity; its chart ships a
 * ValidatingAdmissionPolicy `clusterextension-serviceaccount-deprecated` bound with `Warn`, so an
 * apply that sets it prints a warning (helm/olmv1/templates/validatingadmissionpolicy*-clusterextension-serviceaccount-deprecated.yml).
 *
 * Binnacle's default differs (docs/trust-model.md): the named ServiceAccount *is* the identity the
 * install acts as, any ServiceAccount of `spec.namespace`, weaker or stronger than the default
 * installer (an admission policy that lets non-admins create OLM v1 extensions must pin it too:
 * upstream's do not, as upstream ignores it). Ignoring it would silently give every extension that
 * names one the default installer's power instead. So:
 *
 * - `Use` (the default): the ServiceAccount is used, and the policy warns in Binnacle's words
 *   (deprecated by OLM v1, still honoured here);
 * - `Ignore` (the manager's `--olmv1-service-account=ignore`, an admin's explicit choice for OLM v1
 *   parity): the ServiceAccount is ignored, the default installer (`--olmv1-installer`) is used, and
 *   the policy warns in operator-controller's exact words.
 *
 * Either way the warning comes from the API server (no webhook), and nothing is refused.
 */
import { policyWithBinding } from '../../kube/admission-policy.js';
import type { KubeObject } from '../../kube/types.js';
import { OLMV1_GROUP } from './types.js';

export type ServiceAccountMode = 'Use' | 'Ignore';

export const SERVICEACCOUNT_POLICY_NAME = 'clusterextension-serviceaccount-deprecated';

/** The flag that chooses the mode, as messages name it. */
export const OLMV1_SERVICE_ACCOUNT_FLAG = '--olmv1-service-account';

/** Parses the flag's value (`use` or `ignore`, any case); undefined when it is neither. */
export function parseServiceAccountMode(value: string): ServiceAccountMode | undefined {
  const v = value.trim().toLowerCase();
  return v === 'use' ? 'Use' : v === 'ignore' ? 'Ignore' : undefined;
}

/** operator-controller v1.11.0's message, verbatim (install.feature:587 matches it). */
export const OLMV1_SERVICEACCOUNT_DEPRECATED_MESSAGE =
  "spec.serviceAccount is deprecated, ignored, and will be removed in a future release. The operator-controller's cluster-admin service account is used for all cluster interactions.";

/** Binnacle's, when it uses the ServiceAccount. */
export const BINNACLE_SERVICEACCOUNT_DEPRECATED_MESSAGE =
  'spec.serviceAccount is deprecated by OLM v1 (operator-controller ignores it and will remove it). Binnacle installs this ClusterExtension as the named ServiceAccount; without one, as the default installer the cluster admin configured (docs/from-olm-v1.md).';

/** The policy's expression, OLM's: true (no warning) when no ServiceAccount is named. */
export const SERVICEACCOUNT_UNSET_EXPRESSION = "!has(object.spec.serviceAccount) || !has(object.spec.serviceAccount.name) || object.spec.serviceAccount.name == ''";

/** The ValidatingAdmissionPolicy and its `Warn` binding, as OLM's chart ships them, worded for `mode`. */
export function serviceAccountPolicy(mode: ServiceAccountMode): KubeObject[] {
  const message = mode === 'Ignore' ? OLMV1_SERVICEACCOUNT_DEPRECATED_MESSAGE : BINNACLE_SERVICEACCOUNT_DEPRECATED_MESSAGE;
  return policyWithBinding(
    SERVICEACCOUNT_POLICY_NAME,
    {
      failurePolicy: 'Ignore',
      matchConstraints: { resourceRules: [{ apiGroups: [OLMV1_GROUP], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['clusterextensions'] }] },
      validations: [{ expression: SERVICEACCOUNT_UNSET_EXPRESSION, message }],
    },
    ['Warn'],
  );
}
