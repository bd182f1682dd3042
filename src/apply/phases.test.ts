import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { applyOrder, deleteOrder, groupByPhase, identityOf, phaseOf } from './phases.js';

const o = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: namespace === undefined ? { name } : { name, namespace },
});

const mixed: KubeObject[] = [
  o('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'vwh'),
  o('v1', 'Service', 'svc', 'ns'),
  o('apps/v1', 'Deployment', 'b', 'ns'),
  o('apps/v1', 'Deployment', 'a', 'ns'),
  o('example.com/v1', 'Widget', 'w', 'ns'),
  o('v1', 'ConfigMap', 'cm', 'ns'),
  o('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com'),
  o('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'crb'),
  o('v1', 'ServiceAccount', 'sa', 'ns'),
  o('apiregistration.k8s.io/v1', 'APIService', 'v1.example.com'),
  o('v1', 'Namespace', 'ns'),
  o('batch/v1', 'Job', 'j', 'ns'),
];

test('phaseOf puts each kind in its phase, and unknown kinds after config', () => {
  assert.equal(phaseOf({ apiVersion: 'v1', kind: 'Namespace' }), 'namespaces');
  assert.equal(phaseOf({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' }), 'rbac');
  assert.equal(phaseOf({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }), 'crds');
  assert.equal(phaseOf({ apiVersion: 'v1', kind: 'Secret' }), 'config');
  assert.equal(phaseOf({ apiVersion: 'apps/v1', kind: 'StatefulSet' }), 'workloads');
  assert.equal(phaseOf({ apiVersion: 'v1', kind: 'Service' }), 'services');
  assert.equal(phaseOf({ apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService' }), 'webhooks');
  assert.equal(phaseOf({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' }), 'other');
  // A custom resource that happens to be called Deployment is not a workload.
  assert.equal(phaseOf({ apiVersion: 'example.com/v1', kind: 'Deployment' }), 'other');
});

test('applyOrder runs the phases in order and sorts within a phase', () => {
  const order = applyOrder(mixed).map((x) => `${x.kind}/${x.metadata.name ?? ''}`);
  assert.deepEqual(order, [
    'Namespace/ns',
    'ClusterRoleBinding/crb',
    'ServiceAccount/sa',
    'CustomResourceDefinition/widgets.example.com',
    'ConfigMap/cm',
    'Widget/w',
    'Deployment/a',
    'Deployment/b',
    'Job/j',
    'Service/svc',
    'APIService/v1.example.com',
    'ValidatingWebhookConfiguration/vwh',
  ]);
});

test('groupByPhase leaves out empty phases and keeps every object', () => {
  const groups = groupByPhase(mixed);
  assert.deepEqual(groups.map((g) => g.phase), ['namespaces', 'rbac', 'crds', 'config', 'other', 'workloads', 'services', 'webhooks']);
  assert.equal(groups.flatMap((g) => g.objects).length, mixed.length);
  assert.deepEqual(groupByPhase([o('v1', 'ConfigMap', 'x', 'n')]).map((g) => g.phase), ['config']);
});

test('deleteOrder reverses apply order but deletes CRDs last of all', () => {
  const order = deleteOrder(mixed).map((x) => x.kind);
  assert.equal(order[0], 'ValidatingWebhookConfiguration');
  assert.equal(order.at(-1), 'CustomResourceDefinition');
  assert.ok(order.indexOf('Widget') < order.indexOf('CustomResourceDefinition'));
  assert.ok(order.indexOf('Deployment') < order.indexOf('ServiceAccount'));
});

test('identityOf ignores the API version but not group, namespace or name', () => {
  assert.equal(identityOf(o('apps/v1', 'Deployment', 'a', 'n')), identityOf(o('apps/v1beta1', 'Deployment', 'a', 'n')));
  assert.notEqual(identityOf(o('apps/v1', 'Deployment', 'a', 'n')), identityOf(o('apps/v1', 'Deployment', 'a', 'm')));
  assert.notEqual(identityOf(o('apps/v1', 'Deployment', 'a', 'n')), identityOf(o('example.com/v1', 'Deployment', 'a', 'n')));
});
