/**
 * The pieces Binnacle's admission policies share: CEL literals, the manager's identity, and the
 * policy installed exempting the starting manager's identities alone; over the one fake cluster.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCluster } from './fake-cluster.test-helper.js';
import type { KubeObject } from './types.js';
import { ADMISSION_API, celString, celStringList, clientIdentity, installExemptingPolicy, policyWithBinding, servesAdmissionPolicies } from './admission-policy.js';

describe('CEL literals', () => {
  it('quotes and escapes strings the way CEL reads them', () => {
    assert.equal(celString('system:serviceaccount:binnacle-system:manager'), '"system:serviceaccount:binnacle-system:manager"');
    assert.equal(celString('a"b\\c\nd'), '"a\\"b\\\\c\\nd"');
    assert.equal(celStringList(['a', 'b"']), '["a", "b\\""]');
    assert.equal(celStringList([]), '[]');
  });
});

/** A policy and its binding exempting `exempt`, as a policy module builds them. */
const build = (exempt: readonly string[]): KubeObject[] => policyWithBinding('p', { matchConditions: [{ name: 'x', expression: celStringList(exempt) }] }, ['Deny']);

const exemptOf = (cluster: FakeCluster): unknown => (cluster.get({ apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', name: 'p' })?.spec as { matchConditions: { expression: string }[] }).matchConditions[0]?.expression;

describe('installExemptingPolicy', () => {
  it('exempts the starting manager’s identities alone: one that ran a manager before is not kept', async () => {
    const cluster = new FakeCluster();
    assert.deepEqual(await installExemptingPolicy(cluster.client(), ['manager-a', 'gc', 'manager-a'], build), ['gc', 'manager-a']);
    assert.equal(exemptOf(cluster), '["gc", "manager-a"]');
    assert.deepEqual(await installExemptingPolicy(cluster.client(), ['manager-b'], build), ['manager-b']);
    assert.equal(exemptOf(cluster), '["manager-b"]');
    const binding = cluster.get({ apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicyBinding', name: 'p' });
    assert.deepEqual(binding?.spec, { policyName: 'p', validationActions: ['Deny'] });
    assert.equal(binding?.metadata.labels?.['app.kubernetes.io/part-of'], 'binnacle');
  });
});

describe('clientIdentity and servesAdmissionPolicies', () => {
  it('the identity is the API server’s word; an API server without the kind serves none', async () => {
    const cluster = new FakeCluster();
    assert.equal(await clientIdentity(cluster.client({ user: 'system:serviceaccount:ops:binnacle' })), 'system:serviceaccount:ops:binnacle');
    assert.equal(await servesAdmissionPolicies(cluster.client()), true);
    cluster.unknownKinds.add('ValidatingAdmissionPolicy');
    assert.equal(await servesAdmissionPolicies(cluster.client()), false);
  });
});
