import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { requiredApis } from './dependencies.js';
import { containerImages, relatedImages } from './images.js';
import { allows, APPLY_VERBS, mergeRules, operatorRbac, type OperatorRbac, type RbacInput } from './rbac.js';
import type { RenderedObject } from './render.js';
import { resourceFor } from './resources.js';
import { simpleLowerBound } from './csv-base.js';

const obj = (apiVersion: string, kind: string, name: string, extra: Record<string, unknown> = {}, namespace?: string): RenderedObject => ({
  chart: 'demo',
  object: { apiVersion, kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }) }, ...extra },
});

const NS = 'release-ns';
const own = [{ group: 'demo.example.com', plural: 'demos' }];

/** The operator's RBAC for the objects rendered in NS, its own kinds `own`, and the chart's CRDs. */
const rbacFor = (objects: RenderedObject[], chartCrds: RbacInput['chartCrds'] = []): OperatorRbac => operatorRbac({ namespace: NS, chartCrds, own, objects });

describe('operatorRbac', () => {
  test('namespaced kinds become permissions, cluster-scoped kinds and objects pinned elsewhere cluster permissions', () => {
    const r = rbacFor([
      obj('apps/v1', 'Deployment', 'web'),
      obj('networking.k8s.io/v1', 'Ingress', 'web'),
      obj('v1', 'ConfigMap', 'cfg', {}, NS),
      obj('v1', 'Secret', 'elsewhere', {}, 'kube-system'),
      obj('scheduling.k8s.io/v1', 'PriorityClass', 'high'),
      obj('v1', 'Namespace', 'extra'),
    ]);
    for (const verb of APPLY_VERBS) {
      assert.ok(allows(r.permissions, 'apps', 'deployments', verb), verb);
      assert.ok(allows(r.permissions, 'networking.k8s.io', 'ingresses', verb), verb);
      assert.ok(allows(r.permissions, '', 'configmaps', verb), verb);
      assert.ok(allows(r.clusterPermissions, 'scheduling.k8s.io', 'priorityclasses', verb), verb);
      assert.ok(allows(r.clusterPermissions, '', 'namespaces', verb), verb);
      assert.ok(allows(r.clusterPermissions, '', 'secrets', verb), verb);
    }
    assert.ok(!allows(r.permissions, 'scheduling.k8s.io', 'priorityclasses', 'create'));
    assert.deepEqual(r.guessed, []);
  });

  test("the operator's own needs: its kinds with status and finalizers, release Secrets, Events, leader-election Leases cluster-wide", () => {
    const r = rbacFor([]);
    assert.ok(allows(r.permissions, 'demo.example.com', 'demos', 'watch'));
    assert.ok(allows(r.permissions, 'demo.example.com', 'demos/status', 'patch'));
    assert.ok(allows(r.permissions, 'demo.example.com', 'demos/finalizers', 'update'));
    assert.ok(allows(r.permissions, '', 'secrets', 'create') && allows(r.permissions, '', 'secrets', 'delete'));
    assert.ok(allows(r.permissions, '', 'configmaps', 'list'));
    assert.ok(allows(r.permissions, '', 'events', 'create'));
    assert.ok(allows(r.clusterPermissions, 'coordination.k8s.io', 'leases', 'update'));
  });

  test("a rendered role's rules are held by the operator; a binding to a role the chart does not define needs bind on that name only", () => {
    const r = rbacFor([
      obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'reader', { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }, { nonResourceURLs: ['/metrics'], verbs: ['get'] }] }),
      obj('rbac.authorization.k8s.io/v1', 'Role', 'local', { rules: [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['get'] }] }),
      obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'reader', { roleRef: { kind: 'ClusterRole', name: 'reader' } }),
      obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'puller', { roleRef: { kind: 'ClusterRole', name: 'system:image-puller' } }),
      obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'auth', { roleRef: { kind: 'ClusterRole', name: 'system:auth-delegator' } }),
    ]);
    assert.ok(allows(r.clusterPermissions, '', 'pods', 'list'));
    assert.ok(r.clusterPermissions.some((x) => x.nonResourceURLs?.includes('/metrics') === true));
    assert.ok(allows(r.permissions, 'batch', 'jobs', 'get'));
    assert.ok(allows(r.permissions, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'system:image-puller'));
    assert.ok(!allows(r.permissions, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'cluster-admin'));
    assert.ok(allows(r.clusterPermissions, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'system:auth-delegator'));
    assert.ok(!allows(r.clusterPermissions, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'reader'), 'its own roles need no bind');
  });

  test("the chart's own CRDs give their kinds' plural and scope, and the operator may create the CRDs; other custom kinds are guessed", () => {
    const r = rbacFor([obj('x.example.com/v1', 'Mouse', 'm'), obj('monitoring.coreos.com/v1', 'ServiceMonitor', 'sm')], [{ group: 'x.example.com', kind: 'Mouse', plural: 'mice', namespaced: false, versions: ['v1'] }]);
    assert.ok(allows(r.clusterPermissions, 'x.example.com', 'mice', 'create'));
    assert.ok(allows(r.clusterPermissions, 'apiextensions.k8s.io', 'customresourcedefinitions', 'create'));
    assert.ok(allows(r.permissions, 'monitoring.coreos.com', 'servicemonitors', 'patch'));
    assert.deepEqual(r.guessed, ['monitoring.coreos.com/ServiceMonitor']);
  });

  test('rules merge by group and verbs, duplicates go, and the order is fixed', () => {
    const merged = mergeRules([
      { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'create'] },
      { apiGroups: [''], resources: ['services'], verbs: ['create', 'get'] },
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['create', 'get'] },
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'create'] },
    ]);
    assert.deepEqual(merged, [
      { apiGroups: [''], resources: ['services'], verbs: ['create', 'get'] },
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: ['create', 'get'] },
    ]);
  });
});

describe('resources, dependencies, images, kube versions', () => {
  test('built-in kinds come from the table (old extensions too), others are guessed', () => {
    assert.deepEqual(resourceFor('networking.k8s.io', 'NetworkPolicy', new Map()), { group: 'networking.k8s.io', resource: 'networkpolicies', namespaced: true, source: 'builtin' });
    assert.equal(resourceFor('extensions', 'Ingress', new Map()).resource, 'ingresses');
    assert.equal(resourceFor('storage.k8s.io', 'StorageClass', new Map()).namespaced, false);
    assert.deepEqual(resourceFor('example.com', 'Policy', new Map()), { group: 'example.com', resource: 'policies', namespaced: true, source: 'guessed' });
  });

  test('dependencies: custom kinds the chart creates, not built-in, platform, optional, its own CRDs or own kinds', () => {
    const r = requiredApis(
      [
        obj('apps/v1', 'Deployment', 'd'),
        obj('monitoring.coreos.com/v1', 'Prometheus', 'p'),
        obj('monitoring.coreos.com/v1', 'ServiceMonitor', 'sm'),
        obj('route.openshift.io/v1', 'Route', 'r'),
        obj('x.example.com/v1', 'Mouse', 'm'),
        obj('demo.example.com/v1', 'Demo', 'nested'),
        obj('cert-manager.io/v1', 'Certificate', 'c'),
        obj('cert-manager.io/v1', 'Certificate', 'c2'),
      ],
      [{ group: 'x.example.com', kind: 'Mouse', plural: 'mice', namespaced: true, versions: ['v1'] }],
      [{ group: 'demo.example.com', version: 'v1', kind: 'Demo' }],
    );
    assert.deepEqual(r.required, [
      { group: 'cert-manager.io', version: 'v1', kind: 'Certificate' },
      { group: 'monitoring.coreos.com', version: 'v1', kind: 'Prometheus' },
    ]);
    assert.deepEqual(r.notRequired.map((n) => `${n.group}/${n.kind}`), ['monitoring.coreos.com/ServiceMonitor', 'route.openshift.io/Route']);
    assert.match(r.notRequired[1]?.reason ?? '', /OpenShift/);
  });

  test('images of containers anywhere (workloads and custom resources), named uniquely after the operator', () => {
    const images = containerImages([
      obj('apps/v1', 'Deployment', 'd', { spec: { template: { spec: { initContainers: [{ image: 'busybox:1' }], containers: [{ image: 'quay.io/a/app:1' }, { image: 'docker.io/b/app:2' }] } } } }).object,
      obj('monitoring.coreos.com/v1', 'Prometheus', 'p', { spec: { containers: [{ name: 'proxy', image: 'quay.io/x/oauth-proxy:v4' }] } }).object,
      obj('batch/v1', 'CronJob', 'c', { spec: { jobTemplate: { spec: { template: { spec: { containers: [{ image: 'busybox:1' }] } } } } } }).object,
    ]);
    assert.deepEqual(images, ['busybox:1', 'docker.io/b/app:2', 'quay.io/a/app:1', 'quay.io/x/oauth-proxy:v4']);
    assert.deepEqual(relatedImages({ name: 'helm-operator', image: 'op:1' }, images).map((i) => i.name), ['helm-operator', 'busybox', 'app', 'app-2', 'oauth-proxy']);
  });

  test("minKubeVersion only from a simple lower bound in Chart.yaml's kubeVersion", () => {
    assert.equal(simpleLowerBound('>=1.19.0-0'), '1.19.0');
    assert.equal(simpleLowerBound('>= 1.21'), '1.21.0');
    assert.equal(simpleLowerBound('>=v1.23.4'), '1.23.4');
    assert.equal(simpleLowerBound('>=1.19.0 <1.30.0'), undefined);
    assert.equal(simpleLowerBound('^1.20.0'), undefined);
    assert.equal(simpleLowerBound('>=1.18 || >=2.0'), undefined);
    assert.equal(simpleLowerBound(undefined), undefined);
  });
});
