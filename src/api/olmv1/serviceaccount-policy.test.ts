import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { extensionTwinSpec } from './convert.js';
import { OLMV1_SERVICEACCOUNT_DEPRECATED_MESSAGE, parseServiceAccountMode, serviceAccountPolicy, SERVICEACCOUNT_POLICY_NAME, SERVICEACCOUNT_UNSET_EXPRESSION } from './serviceaccount-policy.js';
import { OLMV1_API_VERSION, type Olmv1ClusterExtension } from './types.js';

const installer = { namespace: 'olmv1-system', name: 'installer' };
function v1(serviceAccount?: string): Olmv1ClusterExtension {
  return {
    apiVersion: OLMV1_API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: 'ext', uid: 'u' },
    spec: { namespace: 'team', ...(serviceAccount === undefined ? {} : { serviceAccount: { name: serviceAccount } }), source: { sourceType: 'Catalog', catalog: { packageName: 'p' } } },
  };
}

describe("OLM v1's deprecated spec.serviceAccount", () => {
  test("Use (the default): the named ServiceAccount is the identity (it can only narrow the install); none named, the default installer", () => {
    const named = extensionTwinSpec(v1('some-sa'), installer);
    assert.ok(named.ok);
    assert.deepEqual(named.spec.serviceAccount, { name: 'some-sa' });
    const none = extensionTwinSpec(v1(), installer, 'Use');
    assert.ok(none.ok);
    assert.deepEqual(none.spec.serviceAccount, installer);
  });

  test('Ignore (an explicit choice of OLM v1 parity): the field is ignored and the default installer acts, as operator-controller ignores it', () => {
    const named = extensionTwinSpec(v1('some-sa'), installer, 'Ignore');
    assert.ok(named.ok);
    assert.deepEqual(named.spec.serviceAccount, installer);
  });

  test('Ignore never falls back to the manager: with no default installer nothing is installed, as before', () => {
    const r = extensionTwinSpec(v1('some-sa'), undefined, 'Ignore');
    assert.ok(!r.ok);
    assert.equal(r.reason, 'Blocked');
  });

  test("the warning policy is OLM's chart's (name, match, expression, Warn binding), worded for the mode", () => {
    const [policy, binding] = serviceAccountPolicy('Ignore');
    assert.equal(policy?.metadata.name, SERVICEACCOUNT_POLICY_NAME);
    assert.equal(binding?.metadata.name, SERVICEACCOUNT_POLICY_NAME);
    assert.deepEqual(binding?.spec, { policyName: SERVICEACCOUNT_POLICY_NAME, validationActions: ['Warn'] });
    const spec = policy?.spec as { failurePolicy: string; matchConstraints: unknown; validations: { expression: string; message: string }[] };
    assert.equal(spec.failurePolicy, 'Ignore');
    assert.deepEqual(spec.matchConstraints, { resourceRules: [{ apiGroups: ['olm.operatorframework.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['clusterextensions'] }] });
    assert.deepEqual(spec.validations, [{ expression: SERVICEACCOUNT_UNSET_EXPRESSION, message: OLMV1_SERVICEACCOUNT_DEPRECATED_MESSAGE }]);
    // install.feature:587's text, after the API server's "Validation failed for … with binding …: " prefix.
    assert.equal(OLMV1_SERVICEACCOUNT_DEPRECATED_MESSAGE, "spec.serviceAccount is deprecated, ignored, and will be removed in a future release. The operator-controller's cluster-admin service account is used for all cluster interactions.");
    const use = (serviceAccountPolicy('Use')[0]?.spec as { validations: { message: string }[] }).validations[0]?.message ?? '';
    assert.doesNotMatch(use, /ignored|cluster-admin/, 'in Use mode the warning does not claim the field is ignored');
    assert.match(use, /installs this ClusterExtension as the named ServiceAccount/);
  });

  test('the flag takes use or ignore', () => {
    assert.equal(parseServiceAccountMode('use'), 'Use');
    assert.equal(parseServiceAccountMode('Ignore'), 'Ignore');
    assert.equal(parseServiceAccountMode('escalate'), undefined);
  });
});
