/**
 * The pieces Binnacle's admission policies share: CEL literals, the manager's identity, and the
 * exempt identities recorded on the policy so that managers of several identities add theirs
 * instead of taking the others' away; over the one fake cluster.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCluster } from './fake-cluster.test-helper.js';
import type { KubeObject } from './types.js';
import { ADMISSION_API, celString, celStringList, clientIdentity, EXEMPT_IDENTITIES_ANNOTATION, installExemptingPolicy, servesAdmissionPolicies } from './admission-policy.js';

describe('CEL literals', () => {
  it('quotes and escapes strings the way CEL reads them', () => {
    assert.equal(celString('system:serviceaccount:binnacle-system:manager'), '"system:serviceaccount:binnacle-system:manager"');
    assert.equal(celString('a"b\\c\nd'), '"a\\"b\\\\c\\nd"');
    assert.equal(celStringList(['a', 'b"']), '["a", "b\\""]');
    assert.equal(celStringList([]), '[]');
  });
});

/** A policy and its binding exempting `exempt`, as a policy module builds them. */
const build = (exempt: readonly string[]): KubeObject[] => [
  { apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p', labels: { a: 'b' } }, spec: { matchConditions: [{ name: 'x', expression: celStringList(exempt) }] } },
  { apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'p' }, spec: { policyName: 'p', validationActions: ['Deny'] } },
];

const exemptOf = (cluster: FakeCluster): unknown => {
  const p = cluster.get({ apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', name: 'p' });
  return [JSON.parse(p?.metadata.annotations?.[EXEMPT_IDENTITIES_ANNOTATION] ?? 'null'), (p?.spec as { matchConditions: { expression: string }[] }).matchConditions[0]?.expression];
};

describe('installExemptingPolicy', () => {
  it('a second manager of another identity adds its own to those the policy exempts; the first is kept', async () => {
    const cluster = new FakeCluster();
    assert.deepEqual(await installExemptingPolicy(cluster.client(), 'p', ['manager-a'], build), ['manager-a']);
    assert.deepEqual(exemptOf(cluster), [['manager-a'], '["manager-a"]']);
    assert.deepEqual(await installExemptingPolicy(cluster.client(), 'p', ['manager-b'], build), ['manager-a', 'manager-b']);
    assert.deepEqual(exemptOf(cluster), [['manager-a', 'manager-b'], '["manager-a", "manager-b"]']);
    // Starting again adds nothing twice; the binding is installed beside it.
    assert.deepEqual(await installExemptingPolicy(cluster.client(), 'p', ['manager-a'], build), ['manager-a', 'manager-b']);
    assert.ok(cluster.get({ apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicyBinding', name: 'p' }) !== undefined);
    assert.equal(cluster.get({ apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', name: 'p' })?.metadata.labels?.a, 'b', "the policy's own metadata kept");
  });

  it('a record that is not a list of names is read as none: only this manager is exempt', async () => {
    for (const planted of ['not json', '{"a":1}', '[1, "", "ok"]']) {
      const cluster = new FakeCluster({ objects: [{ apiVersion: ADMISSION_API, kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p', annotations: { [EXEMPT_IDENTITIES_ANNOTATION]: planted } }, spec: {} }] });
      const got = await installExemptingPolicy(cluster.client(), 'p', ['manager-a'], build);
      assert.deepEqual(got, planted.startsWith('[') ? ['manager-a', 'ok'] : ['manager-a'], planted);
    }
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
