import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPTIONAL_APIS, optionalApi } from './optional-kinds.js';

test('monitoring, console, VPA, route and image-stream kinds are optional in any version', () => {
  for (const [apiVersion, kind] of [
    ['monitoring.coreos.com/v1', 'ServiceMonitor'],
    ['monitoring.coreos.com/v1', 'PrometheusRule'],
    ['monitoring.coreos.com/v1', 'PodMonitor'],
    ['monitoring.coreos.com/v1alpha1', 'AlertmanagerConfig'],
    ['console.openshift.io/v1', 'ConsoleYAMLSample'],
    ['console.openshift.io/v1', 'ConsoleQuickStart'],
    ['console.openshift.io/v1', 'ConsoleCLIDownload'],
    ['console.openshift.io/v1', 'ConsoleLink'],
    ['console.openshift.io/v1alpha1', 'ConsolePlugin'],
    ['autoscaling.k8s.io/v1', 'VerticalPodAutoscaler'],
    ['route.openshift.io/v1', 'Route'],
    ['image.openshift.io/v1', 'ImageStream'],
  ] as const) {
    assert.ok(optionalApi(apiVersion, kind) !== undefined, `${apiVersion} ${kind}`);
  }
});

test('what an operator may need is never optional', () => {
  for (const [apiVersion, kind] of [
    // The Prometheus operator's own workloads: a bundle that ships one wants it to run.
    ['monitoring.coreos.com/v1', 'Prometheus'],
    ['monitoring.coreos.com/v1', 'Alertmanager'],
    ['apps/v1', 'Deployment'],
    ['v1', 'ServiceMonitor'],
    ['autoscaling/v2', 'HorizontalPodAutoscaler'],
    ['config.openshift.io/v1', 'ClusterVersion'],
    ['example.com/v1', 'ConsoleLink'],
  ] as const) {
    assert.equal(optionalApi(apiVersion, kind), undefined, `${apiVersion} ${kind}`);
  }
});

test('each group is listed once, with a reason and kinds', () => {
  const groups = OPTIONAL_APIS.map((a) => a.group);
  assert.equal(new Set(groups).size, groups.length);
  for (const a of OPTIONAL_APIS) {
    assert.ok(a.kinds.length > 0, a.group);
    assert.equal(new Set(a.kinds).size, a.kinds.length, a.group);
    assert.match(a.reason, /does not run/, a.group);
  }
});
