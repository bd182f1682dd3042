/**
 * Only Binnacle's manager makes twins (twin-policy.ts): the policy's expressions evaluated with a
 * conformance-tested CEL (@bufbuild/cel) over the requests a tenant could send, and the policy
 * installed beside another manager's identity; the API server's own answer is the e2e's
 * (test/e2e/olmv1-api.test.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { pino } from 'pino';
import { FakeCluster } from '../../kube/fake-cluster.test-helper.js';
import { balanced } from '../../kube/admission-policy.test-helper.js';
import { ensureTwinPolicy, twinPolicy, twinPolicyExpressions, TWIN_POLICY_NAME } from './twin-policy.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION } from './types.js';
import { olmv1TwinOf } from './twin.js';

const UID = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const x = twinPolicyExpressions(['system:serviceaccount:binnacle-system:binnacle-manager']);
const ENV = celEnv({});

function evaluate(expr: string, vars: Record<string, unknown>): unknown {
  const r = plan(ENV, parse(expr))(vars as Parameters<ReturnType<typeof plan>>[0]);
  if (isCelError(r)) throw new Error(`${expr}: ${String(r)}`);
  return r;
}

type Meta = { name: string; labels?: Record<string, string>; ownerReferences?: Record<string, unknown>[] };
const ref = (uid: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: 'op', uid, controller: true, blockOwnerDeletion: true, ...extra });
const ce = (labels?: Record<string, string>, ownerReferences?: Record<string, unknown>[]): { metadata: Meta; spec: unknown } => ({
  metadata: { name: 'op', ...(labels === undefined ? {} : { labels }), ...(ownerReferences === undefined ? {} : { ownerReferences }) },
  spec: { namespace: 'ops' },
});

/** Whether the policy lets the request through (every validation true), as `user`. */
function admitted(object: unknown, oldObject: unknown, user = 'mallory'): boolean {
  const request = { userInfo: { username: user } };
  if (evaluate(x.notExempt, { request }) !== true) return true;
  return [x.labelKept, x.referencesKept, x.twinKept, x.twinNotDeleted].every((e) => evaluate(e, { object, oldObject, request }) === true);
}

const twin = ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID)]);

describe('the twin policy', () => {
  it('refuses a tenant who creates a binnacle.dev ClusterExtension with the twin label, an OLM v1 owner reference, or both', () => {
    assert.equal(admitted(twin, null), false, 'both');
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: UID }), null), false, 'the label alone');
    assert.equal(admitted(ce(undefined, [ref(UID)]), null), false, 'the reference alone');
    assert.equal(admitted(ce(undefined, [ref(UID, { apiVersion: 'olm.operatorframework.io/v2' })]), null), false, 'another OLM version');
    assert.equal(admitted(ce({ other: 'x' }, [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: OTHER }]), null), true, 'other labels and references');
    assert.equal(admitted(ce(), null), true, 'a plain one');
  });

  it('refuses a tenant who adds or changes them on an existing one; the garbage collector orphaning it goes through', () => {
    assert.equal(admitted(twin, ce()), false, 'made a twin');
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: OTHER }, [ref(UID)]), twin), false, 'label pointed elsewhere');
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(OTHER)]), twin), false, 'reference pointed elsewhere');
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID, { controller: false })]), twin), false, 'a field of the reference changed');
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID), ref(OTHER)]), twin), false, 'a second reference added');
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: UID }), twin), true, 'the reference removed (the garbage collector orphaning)');
    assert.equal(admitted(ce(undefined, [ref(UID)]), twin), false, 'the label removed');
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID)]), ce(undefined, [ref(UID)])), false, 'the label put back by a tenant');
  });

  it("refuses a tenant's change to an existing twin's spec or binnacle.dev labels and annotations; other metadata goes through", () => {
    const withSpec = (spec: unknown, labels: Record<string, string> = {}, annotations?: Record<string, string>): unknown => ({ metadata: { ...twin.metadata, labels: { ...twin.metadata.labels, ...labels }, ...(annotations === undefined ? {} : { annotations }) }, spec });
    const before = withSpec({ namespace: 'ops' }, {}, { 'example.com/note': 'a', 'binnacle.dev/upgrade-approval': 'Manual' });
    const refused: [string, unknown][] = [
      ['a spec change (adoptExisting)', withSpec({ namespace: 'ops', install: { adoptExisting: true } }, {}, { 'example.com/note': 'a', 'binnacle.dev/upgrade-approval': 'Manual' })],
      ['an approval planted', withSpec({ namespace: 'ops' }, {}, { 'example.com/note': 'a', 'binnacle.dev/upgrade-approval': 'Manual', 'binnacle.dev/approved-plan': 'x' })],
      ['a binnacle.dev annotation changed', withSpec({ namespace: 'ops' }, {}, { 'example.com/note': 'a', 'binnacle.dev/upgrade-approval': 'Automatic' })],
      ['a binnacle.dev annotation removed', withSpec({ namespace: 'ops' }, {}, { 'example.com/note': 'a' })],
      ['a binnacle.dev label added', withSpec({ namespace: 'ops' }, { 'binnacle.dev/owner-kind': 'PlatformOperator' }, { 'example.com/note': 'a', 'binnacle.dev/upgrade-approval': 'Manual' })],
    ];
    for (const [what, object] of refused) assert.equal(admitted(object, before), false, what);
    assert.equal(admitted(withSpec({ namespace: 'ops' }, { team: 'x' }, { 'example.com/note': 'b', 'binnacle.dev/upgrade-approval': 'Manual' }), before), true, 'other labels and annotations');
    assert.equal(admitted(withSpec({ namespace: 'ops', install: { adoptExisting: true } }), withSpec({ namespace: 'ops' }), 'system:serviceaccount:binnacle-system:binnacle-manager'), true, 'the manager');
    const plain = ce({ team: 'x' });
    assert.equal(admitted({ ...plain, spec: { namespace: 'elsewhere' } }, plain), true, "a plain extension's spec is its writer's");
  });

  it('refuses a tenant who deletes a twin (its operator would be uninstalled, then made again); the garbage collector and the manager may', () => {
    assert.equal(admitted(null, twin), false, 'a tenant deleting a twin');
    assert.equal(admitted(null, twin, 'system:serviceaccount:kube-system:generic-garbage-collector'), true, 'the garbage collector, with its own credentials');
    assert.equal(admitted(null, twin, 'system:kube-controller-manager'), true, 'the garbage collector, with the controller manager’s');
    assert.equal(admitted(null, twin, 'system:serviceaccount:binnacle-system:binnacle-manager'), true, 'the manager');
    assert.equal(admitted(null, ce({ team: 'x' })), true, 'a plain extension is its writer’s');
    assert.equal(admitted(null, ce({ [LABEL_OLMV1_TWIN_OF]: UID })), true, 'the label alone is no twin');
    assert.equal(admitted(null, ce(undefined, [ref(UID)])), true, 'a reference without the label is no twin');
    assert.equal(admitted(null, ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID, { controller: false })])), true, 'nor is one whose reference is not its controller');
    // As twin.ts reads a twin (olmv1TwinOf): the label names its controller's UID, an OLM v1 ClusterExtension.
    assert.equal(admitted(null, ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(OTHER)])), true, 'the label naming another UID');
    assert.equal(admitted(null, ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID, { apiVersion: 'olm.operatorframework.io/v2' })])), true, 'another OLM version');
    assert.equal(admitted(null, ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID, { kind: 'ClusterCatalog' })])), true, 'another kind');
    assert.equal(
      evaluate(x.deleteMessage, { oldObject: twin }),
      "ClusterExtension op is the twin Binnacle's manager keeps of an OLM v1 ClusterExtension: it goes with it. Delete the olm.operatorframework.io/v1 ClusterExtension op instead (kubectl delete clusterextensions.olm.operatorframework.io op; binnacle uninstall does)",
    );
  });

  it('refuses a tenant’s DELETE exactly where twin.ts reads a twin (the policy and olmv1TwinOf decide alike)', () => {
    const cases = [
      ce(),
      ce({ [LABEL_OLMV1_TWIN_OF]: UID }),
      ce(undefined, [ref(UID)]),
      twin,
      ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(OTHER)]),
      ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID, { controller: false })]),
      ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID, { apiVersion: 'olm.operatorframework.io/v2' })]),
      ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(UID, { kind: 'ClusterCatalog' })]),
      ce({ [LABEL_OLMV1_TWIN_OF]: UID }, [ref(OTHER), ref(UID)]),
      ce({ [LABEL_OLMV1_TWIN_OF]: '' }, [ref('')]),
    ];
    for (const obj of cases) {
      const asTwin = olmv1TwinOf({ kind: 'ClusterExtension', metadata: obj.metadata as Parameters<typeof olmv1TwinOf>[0]['metadata'] }) !== undefined;
      assert.equal(admitted(null, obj), !asTwin, JSON.stringify(obj.metadata));
    }
  });

  it('lets the manager do anything', () => {
    assert.equal(admitted(twin, null, 'system:serviceaccount:binnacle-system:binnacle-manager'), true);
    assert.equal(admitted(ce({ [LABEL_OLMV1_TWIN_OF]: OTHER }, [ref(OTHER)]), twin, 'system:serviceaccount:binnacle-system:binnacle-manager'), true);
  });

  it('is a Deny policy on CREATE, UPDATE and DELETE of binnacle.dev clusterextensions, every expression whole, its message naming the label and what to do', () => {
    const [policy, binding] = twinPolicy(['m']);
    assert.deepEqual((policy?.spec as { matchConstraints: unknown }).matchConstraints, { resourceRules: [{ apiGroups: ['binnacle.dev'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['clusterextensions'] }] });
    assert.equal((policy?.spec as { failurePolicy: string }).failurePolicy, 'Fail');
    assert.deepEqual(binding?.spec, { policyName: TWIN_POLICY_NAME, validationActions: ['Deny'] });
    for (const e of Object.values(x)) assert.ok(balanced(e), e);
    assert.equal((policy?.spec as { validations: unknown[] }).validations.length, 4);
    // Where the manager does not serve OLM v1's API, nothing would remove its finalizer from the OLM v1 object: deleting the twin stays the way out.
    const [notServing] = twinPolicy(['m'], false);
    assert.deepEqual((notServing?.spec as { matchConstraints: { resourceRules: { operations: string[] }[] } }).matchConstraints.resourceRules[0]?.operations, ['CREATE', 'UPDATE']);
    assert.equal((notServing?.spec as { validations: unknown[] }).validations.length, 3);
    const message = evaluate(x.message, { object: twin });
    assert.equal(evaluate(x.twinMessage, { object: twin }), "ClusterExtension op is the twin Binnacle's manager keeps of an OLM v1 ClusterExtension: its spec and its binnacle.dev/ labels and annotations are the manager's. Change the olm.operatorframework.io/v1 ClusterExtension op instead (kubectl edit clusterextensions.olm.operatorframework.io op; binnacle upgrade, rollback and approve write it)");
    assert.equal(message, `ClusterExtension op: only Binnacle's manager makes an OLM v1 ClusterExtension's twin; the label ${LABEL_OLMV1_TWIN_OF} and owner references to olm.operatorframework.io objects cannot be added or changed. To install through OLM v1's API, create an olm.operatorframework.io/v1 ClusterExtension: Binnacle makes its twin`);
  });
});

describe('ensureTwinPolicy', () => {
  const logger = pino({ level: 'silent' });
  it("exempts the starting manager's identity alone; installs nothing where the API server has no ValidatingAdmissionPolicy", async () => {
    const cluster = new FakeCluster();
    assert.deepEqual(await ensureTwinPolicy(cluster.client({ user: 'system:serviceaccount:a:binnacle-manager' }), logger), ['system:serviceaccount:a:binnacle-manager']);
    assert.deepEqual(await ensureTwinPolicy(cluster.client({ user: 'admin' }), logger), ['admin'], 'the manager before is not kept exempt');
    const policy = cluster.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', name: TWIN_POLICY_NAME });
    assert.match(JSON.stringify(policy?.spec), /\[\\"admin\\"\]/);
    const none = new FakeCluster();
    none.unknownKinds.add('ValidatingAdmissionPolicy');
    assert.equal(await ensureTwinPolicy(none.client(), logger), undefined);
    assert.deepEqual(none.writes, []);
  });
});
