import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadBundleDir } from './load.js';
import { convertRegistryV1 } from './convert.js';
import { addOperatorCondition, operatorConditionObjects, withConditionEnv } from './operator-condition.js';
import { isKubeObject, type KubeObject } from '../kube/types.js';
import type { RegistryV1Bundle } from './types.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');

async function webhookOperator(): Promise<RegistryV1Bundle> {
  return loadBundleDir(join(testdata, 'webhook-operator'));
}

function envOf(d: KubeObject): { container: string; env: { name: string; value?: string }[] }[] {
  const spec = d.spec as { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };
  return spec.template.spec.containers.map((c) => ({ container: c.name, env: c.env ?? [] }));
}

function deployment(name: string, containers: Record<string, unknown>[]): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'ops' }, spec: { template: { spec: { containers } } } };
}

describe('operatorConditionObjects', () => {
  it('names the condition, Role and RoleBinding after the CSV, in the install namespace', async () => {
    const bundle = await webhookOperator();
    const [cond, role, binding] = operatorConditionObjects(bundle, 'ops');
    assert.deepEqual(cond, {
      apiVersion: 'operators.coreos.com/v2',
      kind: 'OperatorCondition',
      metadata: { name: bundle.name, namespace: 'ops' },
      spec: { deployments: ['webhook-operator-controller'], serviceAccounts: ['webhook-operator'] },
    });
    assert.equal(role?.kind, 'Role');
    assert.deepEqual(role?.metadata, { name: bundle.name, namespace: 'ops' });
    assert.deepEqual(role?.rules, [
      { apiGroups: ['operators.coreos.com'], resources: ['operatorconditions'], resourceNames: [bundle.name], verbs: ['get', 'update', 'patch'] },
      { apiGroups: ['operators.coreos.com'], resources: ['operatorconditions/status'], resourceNames: [bundle.name], verbs: ['get', 'update', 'patch'] },
    ]);
    assert.equal(binding?.kind, 'RoleBinding');
    assert.deepEqual(binding?.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: bundle.name });
    assert.deepEqual(binding?.subjects, [{ kind: 'ServiceAccount', name: 'webhook-operator', namespace: 'ops' }]);
  });

  it('lists every Deployment and each distinct ServiceAccount, `default` when a pod names none', async () => {
    const bundle = await webhookOperator();
    const first = bundle.csv.deployments[0];
    assert.ok(first !== undefined);
    const noSa = structuredClone(first);
    noSa.name = 'a-second-deployment';
    const template = noSa.spec.template as { spec: Record<string, unknown> };
    delete template.spec.serviceAccountName;
    const twice: RegistryV1Bundle = { ...bundle, csv: { ...bundle.csv, deployments: [first, noSa] } };
    const [cond, , binding] = operatorConditionObjects(twice, 'ops');
    assert.deepEqual(cond?.spec, { deployments: ['a-second-deployment', 'webhook-operator-controller'], serviceAccounts: ['default', 'webhook-operator'] });
    assert.deepEqual((binding?.subjects as { name: string }[]).map((s) => s.name), ['default', 'webhook-operator']);
  });
});

describe('withConditionEnv', () => {
  it('adds OPERATOR_CONDITION_NAME to every container and keeps the other variables', () => {
    const d = deployment('op', [{ name: 'manager', env: [{ name: 'A', value: '1' }] }, { name: 'proxy' }]);
    const out = withConditionEnv(d, 'op.v1.0.0');
    assert.deepEqual(envOf(out), [
      { container: 'manager', env: [{ name: 'A', value: '1' }, { name: 'OPERATOR_CONDITION_NAME', value: 'op.v1.0.0' }] },
      { container: 'proxy', env: [{ name: 'OPERATOR_CONDITION_NAME', value: 'op.v1.0.0' }] },
    ]);
    assert.deepEqual(envOf(d)[1]?.env, [], 'the input is not changed');
  });

  it('replaces a value the bundle set, as OLM does', () => {
    const d = deployment('op', [{ name: 'manager', env: [{ name: 'OPERATOR_CONDITION_NAME', valueFrom: { fieldRef: { fieldPath: 'x' } } }] }]);
    assert.deepEqual(envOf(withConditionEnv(d, 'op.v2'))[0]?.env, [{ name: 'OPERATOR_CONDITION_NAME', value: 'op.v2' }]);
  });
});

describe('addOperatorCondition', () => {
  it('points the CSV Deployments at their condition and appends the condition with its RBAC', async () => {
    const bundle = await webhookOperator();
    const converted = convertRegistryV1(bundle, { installNamespace: 'ops', watchNamespaces: [''] }).objects.filter(isKubeObject);
    const out = addOperatorCondition(bundle, 'ops', converted);
    assert.equal(out.length, converted.length + 3);
    const dep = out.find((o) => o.kind === 'Deployment' && o.metadata.name === 'webhook-operator-controller');
    assert.ok(dep !== undefined);
    const manager = envOf(dep).find((c) => c.container === 'manager');
    assert.deepEqual(manager?.env.find((e) => e.name === 'OPERATOR_CONDITION_NAME'), { name: 'OPERATOR_CONDITION_NAME', value: bundle.name });
    assert.deepEqual(out.slice(-3).map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`), [
      `OperatorCondition/ops/${bundle.name}`,
      `Role/ops/${bundle.name}`,
      `RoleBinding/ops/${bundle.name}`,
    ]);
  });

  it('leaves Deployments that are not the CSV’s alone', async () => {
    const bundle = await webhookOperator();
    const other = deployment('not-from-the-csv', [{ name: 'x' }]);
    const out = addOperatorCondition(bundle, 'ops', [other]);
    assert.deepEqual(out[0], other);
  });
});
