import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_CONDITION_CRD, type OperatorCondition } from '../api/operator-condition.js';
import type { BundleDeployment } from '../api/types.js';
import { FakeCluster, type FakeClient } from '../kube/fake-cluster.test-helper.js';
import type { Condition } from '../kube/types.js';
import { replacedOperators, upgradeBlockers, upgradeVerdict } from './operator-conditions.js';

const T = '2024-01-01T00:00:00Z';
const cond = (status: Condition['status'], message = '', reason = 'Because'): Condition => ({ type: 'Upgradeable', status, reason, message, lastTransitionTime: T });

function oc(parts: { overrides?: Condition[]; conditions?: Condition[]; status?: Condition[] }): OperatorCondition {
  const o: OperatorCondition = { apiVersion: 'operators.coreos.com/v2', kind: 'OperatorCondition', metadata: { name: 'op.v1', namespace: 'ops' }, spec: {} };
  if (parts.overrides !== undefined) (o.spec ??= {}).overrides = parts.overrides;
  if (parts.conditions !== undefined) (o.spec ??= {}).conditions = parts.conditions;
  if (parts.status !== undefined) o.status = { conditions: parts.status };
  return o;
}

function bd(name: string, pkg: string, image: string, installed: Condition['status'] = 'True'): BundleDeployment {
  return {
    apiVersion: 'binnacle.dev/v1alpha1',
    kind: 'BundleDeployment',
    metadata: { name, labels: { 'binnacle.dev/package': pkg } },
    spec: { source: { type: 'image', image: { ref: image } }, format: 'registry+v1', installNamespace: 'ops' },
    status: { conditions: [{ type: 'Installed', status: installed, reason: 'x', message: '', lastTransitionTime: T }] },
  };
}

describe('upgradeVerdict', () => {
  it('is upgradeable when nobody says otherwise', () => {
    assert.deepEqual(upgradeVerdict(oc({})), { upgradeable: true });
    assert.deepEqual(upgradeVerdict(oc({ conditions: [{ ...cond('False'), type: 'Other' }] })), { upgradeable: true });
  });

  it('reads the operator’s spec.conditions (v2) and status.conditions (v1)', () => {
    assert.deepEqual(upgradeVerdict(oc({ conditions: [cond('False', 'migrating')] })), { upgradeable: false, source: 'spec', condition: cond('False', 'migrating') });
    assert.deepEqual(upgradeVerdict(oc({ status: [cond('False', 'busy')] })), { upgradeable: false, source: 'status', condition: cond('False', 'busy') });
  });

  it('lets what the operator wrote in spec win over an older status', () => {
    assert.deepEqual(upgradeVerdict(oc({ conditions: [cond('True')], status: [cond('False')] })), { upgradeable: true });
  });

  it('lets a cluster admin’s override win either way', () => {
    assert.deepEqual(upgradeVerdict(oc({ overrides: [cond('True')], conditions: [cond('False')] })), { upgradeable: true });
    const v = upgradeVerdict(oc({ overrides: [cond('False', 'freeze')], conditions: [cond('True')] }));
    assert.equal(v.upgradeable, false);
    assert.equal(v.upgradeable ? '' : v.source, 'override');
  });
});

describe('replacedOperators', () => {
  const chosen = [
    { package: 'a', name: 'a.v2', image: 'reg/a:2' },
    { package: 'b', name: 'b.v1', image: 'reg/b:1' },
  ];

  it('names installed bundles that the resolution would switch to another bundle', () => {
    const out = replacedOperators([bd('x-a', 'a', 'reg/a:1'), bd('x-b', 'b', 'reg/b:1')], chosen);
    assert.deepEqual(out, [{ package: 'a', namespace: 'ops', bundleDeployment: 'x-a', replacement: 'a.v2' }]);
  });

  it('ignores installs that did not succeed, and packages the resolution no longer has', () => {
    assert.deepEqual(replacedOperators([bd('x-a', 'a', 'reg/a:1', 'False'), bd('x-c', 'c', 'reg/c:1')], chosen), []);
  });
});

describe('upgradeBlockers', () => {
  /** The one fake cluster serving OperatorConditions, holding these as installed for BundleDeployment x-a (labelled so). */
  function cluster(items: OperatorCondition[]): FakeCluster {
    const labels = { 'binnacle.dev/owner-kind': 'BundleDeployment', 'binnacle.dev/owner-name': 'x-a' };
    return new FakeCluster({ objects: [OPERATOR_CONDITION_CRD, ...items.map((o) => ({ ...o, metadata: { ...o.metadata, labels } }))] });
  }
  const client = (items: OperatorCondition[]): FakeClient => cluster(items).client();

  it('finds the condition by the BundleDeployment that installed it and quotes the operator', async () => {
    const c = cluster([oc({ conditions: [cond('False', 'a storage migration is running')] })]);
    const out = await upgradeBlockers(c.client(), [{ package: 'a', namespace: 'ops', bundleDeployment: 'x-a', replacement: 'a.v2' }]);
    assert.deepEqual(c.log.map((r) => [r.verb, r.namespace, r.labelSelector]), [['list', 'ops', 'binnacle.dev/owner-kind=BundleDeployment,binnacle.dev/owner-name=x-a']]);
    assert.deepEqual(out, [
      { package: 'a', message: 'upgrade of a to a.v2 is held back: the operator (OperatorCondition ops/op.v1) says Upgradeable=False: a storage migration is running' },
    ]);
  });

  it('says when it is a cluster admin’s override, and falls back to the reason without a message', async () => {
    const out = await upgradeBlockers(client([oc({ overrides: [cond('False', '', 'Frozen')] })]), [{ package: 'a', namespace: 'ops', bundleDeployment: 'x-a' }]);
    assert.deepEqual(out.map((b) => b.message), ["upgrade of a is held back: a cluster admin's override in OperatorCondition ops/op.v1 says Upgradeable=False: Frozen"]);
  });

  it('has nothing to say when the condition allows it or the API is not served', async () => {
    assert.deepEqual(await upgradeBlockers(client([oc({ conditions: [cond('True')] })]), [{ package: 'a', namespace: 'ops', bundleDeployment: 'x-a' }]), []);
    const unserved = new FakeCluster().client();
    assert.deepEqual(await upgradeBlockers(unserved, [{ package: 'a', namespace: 'ops', bundleDeployment: 'x-a' }]), []);
  });
});
