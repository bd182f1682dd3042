import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { CLUSTER_EXTENSION_CRD } from '../api/crds.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { BinnacleError } from '../util/errors.js';
import { balanced } from '../kube/admission-policy.test-helper.js';
import { ensurePlatformProtection, platformOwner, protectionExpressions, protectionPolicy, PROTECTION_POLICY_NAME, refuseIfPlatformOwned } from './platform-protection.js';

const logger = pino({ level: 'silent' });

describe('protectionExpressions', () => {
  const x = protectionExpressions(['binnacle-admin', 'system:serviceaccount:kube-system:generic-garbage-collector']);

  it('exempts exactly the identities given', () => {
    assert.equal(x.notExempt, '!(request.userInfo.username in ["binnacle-admin", "system:serviceaccount:kube-system:generic-garbage-collector"])');
  });

  it('recognises a PlatformOperator by controller reference or by Binnacle’s owner label, on the object as it was', () => {
    assert.match(x.ownedByPlatformOperator, /oldObject\.metadata\.ownerReferences\.exists\(r, r\.kind == "PlatformOperator" && r\.apiVersion\.startsWith\("binnacle\.dev\/"\)\)/);
    assert.match(x.ownedByPlatformOperator, /oldObject\.metadata\.labels\["binnacle\.dev\/owner-kind"\] == "PlatformOperator"/);
    assert.doesNotMatch(x.ownedByPlatformOperator, /(^|[^d])object\./, 'DELETE has no new object: only oldObject is read');
  });

  it('refuses DELETE, and UPDATE that changes the spec or the ownership', () => {
    assert.equal(x.deleteAllowed, "request.operation != 'DELETE'");
    assert.match(x.updateAllowed, /^request\.operation != 'UPDATE' \|\| \(object\.spec == oldObject\.spec && /);
    assert.match(x.updateAllowed, /object\.metadata\.ownerReferences == oldObject\.metadata\.ownerReferences/);
    for (const key of ['binnacle.dev/owner-kind', 'binnacle.dev/owner-name']) {
      assert.ok(x.updateAllowed.includes(`object.metadata.labels["${key}"] == oldObject.metadata.labels["${key}"]`), key);
    }
  });

  it('explains how to remove or change the extension instead, naming the PlatformOperator and the package', () => {
    assert.match(x.deleteMessage, /cannot be removed directly/);
    assert.match(x.updateMessage, /cannot be changed directly/);
    assert.match(x.deleteMessage, /remove package ' \+ variables\.packageName \+ ' from spec\.packages of PlatformOperator ' \+ variables\.platformOperator/);
    assert.match(x.deleteMessage, /kubectl edit platformoperator ' \+ variables\.platformOperator/);
  });

  it('assembles every expression whole', () => {
    for (const [name, expr] of Object.entries(x)) assert.ok(balanced(expr), `${name}: ${expr}`);
  });

  it('keeps identities with quotes inside their literal', () => {
    const odd = protectionExpressions(['evil") || true || ("']);
    assert.equal(odd.notExempt, '!(request.userInfo.username in ["evil\\") || true || (\\""])');
    assert.ok(balanced(odd.notExempt));
  });
});

describe('protectionPolicy', () => {
  it('is a policy on UPDATE and DELETE of clusterextensions with its Deny binding', () => {
    const [policy, binding] = protectionPolicy(['b', 'a', 'a']);
    assert.equal(policy?.kind, 'ValidatingAdmissionPolicy');
    assert.equal(policy?.apiVersion, 'admissionregistration.k8s.io/v1');
    const spec = policy?.spec as {
      failurePolicy: string;
      matchConstraints: { resourceRules: unknown[] };
      matchConditions: { name: string; expression: string }[];
      variables: { name: string }[];
      validations: { reason: string }[];
    };
    assert.equal(spec.failurePolicy, 'Fail');
    assert.deepEqual(spec.matchConstraints.resourceRules, [{ apiGroups: ['binnacle.dev'], apiVersions: ['*'], operations: ['UPDATE', 'DELETE'], resources: ['clusterextensions'] }]);
    assert.equal(spec.matchConditions[1]?.expression, '!(request.userInfo.username in ["a", "b"])', 'sorted, without duplicates');
    assert.deepEqual(spec.variables.map((v) => v.name), ['platformOperator', 'packageName']);
    // Variable names must be CEL identifiers, and none of CEL's reserved words (`package` is one).
    const reserved = new Set(['as', 'break', 'const', 'continue', 'else', 'false', 'for', 'function', 'if', 'import', 'in', 'let', 'loop', 'package', 'namespace', 'null', 'return', 'true', 'var', 'void', 'while']);
    for (const v of spec.variables) assert.ok(/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.name) && !reserved.has(v.name), v.name);
    assert.deepEqual(spec.validations.map((v) => v.reason), ['Forbidden', 'Forbidden']);
    assert.deepEqual(binding?.spec, { policyName: PROTECTION_POLICY_NAME, validationActions: ['Deny'] });
  });
});

describe('platformOwner', () => {
  it('reads the controller reference first, then the labels', () => {
    const ref = { apiVersion: 'binnacle.dev/v1alpha1', kind: 'PlatformOperator', name: 'core', uid: 'u' };
    assert.equal(platformOwner({ metadata: { ownerReferences: [ref] } }), 'core');
    assert.equal(platformOwner({ metadata: { labels: { 'binnacle.dev/owner-kind': 'PlatformOperator', 'binnacle.dev/owner-name': 'base' } } }), 'base');
    assert.equal(platformOwner({ metadata: { labels: { 'binnacle.dev/owner-kind': 'ClusterExtension', 'binnacle.dev/owner-name': 'x' } } }), undefined);
    assert.equal(platformOwner({ metadata: { ownerReferences: [{ ...ref, apiVersion: 'other.io/v1' }] } }), undefined);
  });
});

describe('ensurePlatformProtection', () => {
  /** A cluster whose API server serves ValidatingAdmissionPolicy or not; the client is `user`. */
  function fakeClient(opts: { served: boolean; user: string }): { client: FakeClient; applied: () => string[] } {
    const cluster = new FakeCluster();
    if (!opts.served) cluster.unknownKinds.add('ValidatingAdmissionPolicy');
    return { client: cluster.client({ user: opts.user }), applied: () => cluster.writes.filter((w) => w.startsWith('apply ')) };
  }

  it('exempts the identity the API server reports for the manager, and the garbage collector', async () => {
    const { client, applied } = fakeClient({ served: true, user: 'system:serviceaccount:binnacle-system:binnacle-manager' });
    const exempt = await ensurePlatformProtection(client, logger);
    assert.deepEqual(exempt, ['system:kube-controller-manager', 'system:serviceaccount:binnacle-system:binnacle-manager', 'system:serviceaccount:kube-system:generic-garbage-collector']);
    assert.deepEqual(applied(), [`apply ValidatingAdmissionPolicy ${PROTECTION_POLICY_NAME} (force)`, `apply ValidatingAdmissionPolicyBinding ${PROTECTION_POLICY_NAME} (force)`]);
    assert.match(JSON.stringify(client.cluster.applied[0]?.obj), /binnacle-system:binnacle-manager/);
  });

  it('installs nothing where the API server has no ValidatingAdmissionPolicy', async () => {
    const { client, applied } = fakeClient({ served: false, user: 'x' });
    assert.equal(await ensurePlatformProtection(client, logger), undefined);
    assert.deepEqual(applied(), []);
  });
});

describe('refuseIfPlatformOwned', () => {
  /** A cluster holding `obj` (with the ClusterExtension CRD), read as admin. */
  const finder = (obj: KubeObject | undefined): FakeClient => new FakeCluster({ objects: [CLUSTER_EXTENSION_CRD, ...(obj === undefined ? [] : [obj])] }).client();
  const ce = (labels: Record<string, string>): KubeObject => ({
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'ClusterExtension',
    metadata: { name: 'core-flux', labels },
    spec: { source: { catalog: { packageName: 'flux' } } },
  });

  it('refuses a PlatformOperator’s extension with a stable code, saying how to remove it instead', async () => {
    await assert.rejects(refuseIfPlatformOwned(finder(ce({ 'binnacle.dev/owner-kind': 'PlatformOperator', 'binnacle.dev/owner-name': 'core' })), 'core-flux'), (err: unknown) => {
      assert.ok(err instanceof BinnacleError);
      assert.equal(err.code, 'EXTENSION_PROTECTED');
      assert.match(err.message, /installed by PlatformOperator core/);
      assert.match(err.message, /remove package flux from spec\.packages of PlatformOperator core \(kubectl edit platformoperator core\)/);
      return true;
    });
  });

  it('lets other extensions, and missing ones, through', async () => {
    await refuseIfPlatformOwned(finder(ce({})), 'core-flux');
    await refuseIfPlatformOwned(finder(undefined), 'core-flux');
  });
});
