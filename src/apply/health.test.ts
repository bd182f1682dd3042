import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { endpointsHealth, objectHealth, probeOnce, waitForHealthy, webhookServices } from './health.js';

const obj = (apiVersion: string, kind: string, rest: Partial<KubeObject> & { generation?: number } = {}): KubeObject => {
  const { generation, ...fields } = rest;
  return { apiVersion, kind, metadata: { name: 'x', namespace: 'ns', ...(generation === undefined ? {} : { generation }) }, ...fields };
};
const cond = (type: string, status: string, reason = '', message = ''): Record<string, string> => ({ type, status, reason, message });

test('Deployment: healthy only when observed, updated and available', () => {
  const dep = (status: Record<string, unknown>, replicas = 2): KubeObject => obj('apps/v1', 'Deployment', { generation: 3, spec: { replicas }, status });
  const good = { observedGeneration: 3, replicas: 2, updatedReplicas: 2, availableReplicas: 2, conditions: [cond('Available', 'True')] };
  assert.deepEqual(objectHealth(dep(good)), { healthy: true, reason: '2 of 2 replicas available' });
  assert.match(objectHealth(dep({ ...good, observedGeneration: 2 })).reason, /observe generation 3/);
  assert.equal(objectHealth(dep({ ...good, observedGeneration: 2 })).healthy, false);
  assert.deepEqual(objectHealth(dep({ ...good, updatedReplicas: 1 })), { healthy: false, reason: '1 of 2 replicas updated' });
  assert.deepEqual(objectHealth(dep({ ...good, replicas: 3 })), { healthy: false, reason: '1 old replicas pending termination' });
  assert.deepEqual(objectHealth(dep({ ...good, availableReplicas: 0 })), { healthy: false, reason: '0 of 2 replicas available' });
  const stuck = objectHealth(dep({ ...good, conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'too slow')] }));
  assert.deepEqual(stuck, { healthy: false, reason: 'rollout stuck: ProgressDeadlineExceeded: too slow' });
  const refused = objectHealth(dep({ ...good, updatedReplicas: 0, conditions: [cond('ReplicaFailure', 'True', 'FailedCreate', 'pods "x-1" is forbidden: no PriorityClass with name critical was found')] }));
  assert.deepEqual(refused, { healthy: false, reason: 'pods cannot be created: FailedCreate: pods "x-1" is forbidden: no PriorityClass with name critical was found' });
  // spec.replicas defaults to 1
  const one = obj('apps/v1', 'Deployment', { generation: 1, spec: {}, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 } });
  assert.equal(objectHealth(one).healthy, true);
  assert.equal(objectHealth(obj('apps/v1', 'Deployment', { generation: 1, spec: {} })).healthy, false, 'no status yet');
});

test('StatefulSet and DaemonSet rolled out', () => {
  const sts = (status: Record<string, unknown>): KubeObject => obj('apps/v1', 'StatefulSet', { generation: 1, spec: { replicas: 2 }, status: { observedGeneration: 1, ...status } });
  assert.equal(objectHealth(sts({ readyReplicas: 2, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r1' })).healthy, true);
  assert.deepEqual(objectHealth(sts({ readyReplicas: 2, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r2' })), { healthy: false, reason: 'rolling out revision r2' });
  assert.deepEqual(objectHealth(sts({ readyReplicas: 1, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r1' })), { healthy: false, reason: '1 of 2 replicas ready' });
  const ds = (status: Record<string, unknown>): KubeObject => obj('apps/v1', 'DaemonSet', { generation: 2, status: { observedGeneration: 2, ...status } });
  assert.equal(objectHealth(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 })).healthy, true);
  assert.deepEqual(objectHealth(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3 })), { healthy: false, reason: '2 of 3 pods updated' });
  assert.deepEqual(objectHealth(ds({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 1 })), { healthy: false, reason: '1 of 3 pods available' });
});

test('CRD Established, APIService Available', () => {
  const crd = (conditions: unknown[]): KubeObject => obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', { status: { conditions } });
  assert.equal(objectHealth(crd([cond('Established', 'True')])).healthy, true);
  assert.deepEqual(objectHealth(crd([])), { healthy: false, reason: 'not yet Established' });
  assert.match(objectHealth(crd([cond('NamesAccepted', 'False', 'ListKindConflict', 'taken')])).reason, /names not accepted: ListKindConflict: taken/);
  const api = (conditions: unknown[]): KubeObject => obj('apiregistration.k8s.io/v1', 'APIService', { status: { conditions } });
  assert.equal(objectHealth(api([cond('Available', 'True')])).healthy, true);
  assert.deepEqual(objectHealth(api([cond('Available', 'False', 'ServiceNotFound', 'service/x in "ns" is not present')])), {
    healthy: false,
    reason: 'not Available: ServiceNotFound: service/x in "ns" is not present',
  });
});

test('Jobs complete, Pods ready, everything else healthy once applied', () => {
  assert.equal(objectHealth(obj('batch/v1', 'Job', { status: { conditions: [cond('Complete', 'True')] } })).healthy, true);
  assert.deepEqual(objectHealth(obj('batch/v1', 'Job', { status: { conditions: [cond('Failed', 'True', 'BackoffLimitExceeded')] } })), { healthy: false, reason: 'failed: BackoffLimitExceeded' });
  assert.equal(objectHealth(obj('batch/v1', 'Job', { status: {} })).healthy, false);
  assert.equal(objectHealth(obj('v1', 'Pod', { status: { phase: 'Running', conditions: [cond('Ready', 'True')] } })).healthy, true);
  assert.equal(objectHealth(obj('v1', 'Pod', { status: { phase: 'Succeeded' } })).healthy, true);
  assert.deepEqual(objectHealth(obj('v1', 'Pod', { status: { phase: 'Pending' } })), { healthy: false, reason: 'not Ready (phase Pending)' });
  assert.deepEqual(objectHealth(obj('v1', 'ConfigMap')), { healthy: true, reason: 'applied' });
  assert.deepEqual(objectHealth(obj('example.com/v1', 'Widget')), { healthy: true, reason: 'applied' });
});

test('webhook Services need ready endpoints; nil ready counts as ready', () => {
  const slice = (endpoints: unknown): KubeObject => ({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 's' }, endpoints });
  assert.equal(endpointsHealth([]).healthy, false);
  assert.equal(endpointsHealth([slice(null)]).healthy, false);
  assert.equal(endpointsHealth([slice([{ conditions: { ready: false } }])]).healthy, false);
  assert.deepEqual(endpointsHealth([slice([{ conditions: { ready: false } }]), slice([{ conditions: {} }, { conditions: { ready: true } }])]), { healthy: true, reason: '2 ready endpoints' });
});

test('webhookServices finds the Services webhooks, APIServices and conversion webhooks call', () => {
  const svcs = webhookServices([
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'm' }, webhooks: [{ clientConfig: { service: { name: 'a', namespace: 'ns' } } }, { clientConfig: { url: 'https://x' } }] },
    { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.x' }, spec: { service: { name: 'b', namespace: 'ns' } } },
    { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'c' }, spec: { conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { name: 'c', namespace: 'ns2' } } } } } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'd', namespace: 'ns' } },
  ]);
  assert.deepEqual([...svcs].sort(), ['ns/a', 'ns/b', 'ns2/c']);
});

test('probeOnce judges live objects, and checks endpoints only for webhook Services', async () => {
  const desired: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook', namespace: 'ns' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'plain', namespace: 'ns' } },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'v' }, webhooks: [{ clientConfig: { service: { name: 'hook', namespace: 'ns' } } }] },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'missing', namespace: 'ns' } },
  ];
  const cluster = new FakeCluster({ objects: desired.filter((d) => d.metadata.name !== 'missing') });
  const report = await probeOnce(cluster.client(), desired);
  assert.equal(report.healthy, false);
  assert.deepEqual(report.objects.map((o) => [o.ref.name, o.healthy, o.reason]), [
    ['hook', false, 'no ready endpoints behind this Service, which a webhook or APIService calls'],
    ['plain', true, 'applied'],
    ['v', true, 'applied'],
    ['missing', false, 'not found'],
  ]);
});

test('waitForHealthy returns the last report when the deadline passes, and early when healthy', async () => {
  const logger = pino({ level: 'silent' });
  const dep: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', generation: 1 }, spec: { replicas: 1 } };
  const cluster = new FakeCluster();
  // The Deployment's pods never become available; its status says so.
  cluster.unhealthyNames.add('d');
  cluster.put(dep);
  const started = Date.now();
  const timedOut = await waitForHealthy(cluster.client(), [dep], { timeoutMs: 120, intervalMs: 20, logger });
  assert.equal(timedOut.healthy, false);
  assert.ok(Date.now() - started >= 100);
  // Now they do: the Deployment controller writes the status again.
  cluster.unhealthyNames.delete('d');
  cluster.put(dep);
  const fine = await waitForHealthy(cluster.client(), [dep], { timeoutMs: 10_000, intervalMs: 20, logger });
  assert.equal(fine.healthy, true);
});

test('waitForHealthy reads again only what is not healthy yet, then everything once before it says healthy', async () => {
  const logger = pino({ level: 'silent' });
  const dep: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', generation: 1 }, spec: { replicas: 1 } };
  const maps: KubeObject[] = Array.from({ length: 20 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'ns' } }));
  const cluster = new FakeCluster();
  cluster.unhealthyNames.add('d');
  cluster.put(dep);
  for (const m of maps) cluster.put(m);
  const reads = (): { deployment: number; configMaps: number } => ({
    deployment: cluster.requests.filter((r) => r.endsWith(' Deployment')).length,
    configMaps: cluster.requests.filter((r) => r.endsWith(' ConfigMap')).length,
  });
  const waiting = waitForHealthy(cluster.client(), [...maps, dep], { timeoutMs: 10_000, intervalMs: 10, logger });
  // The Deployment becomes available after some polls.
  while (reads().deployment < 5) await new Promise((r) => setTimeout(r, 5));
  cluster.unhealthyNames.delete('d');
  cluster.put(dep);
  const report = await waiting;
  assert.equal(report.healthy, true);
  assert.equal(report.objects.length, 21);
  // Each ConfigMap read twice: the first poll and the last (all together); the Deployment at every poll.
  assert.equal(reads().configMaps, 40);
  assert.ok(reads().deployment >= 6, `the Deployment was read ${reads().deployment} times`);
});

test('waitForHealthy: an object that was healthy and is not when all are read together is waited for again', async () => {
  const logger = pino({ level: 'silent' });
  const a: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'a', namespace: 'ns', generation: 1 }, spec: { replicas: 1 } };
  const b: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'b', namespace: 'ns', generation: 1 }, spec: { replicas: 1 } };
  const cluster = new FakeCluster();
  cluster.unhealthyNames.add('b');
  cluster.put(a);
  cluster.put(b);
  const waiting = waitForHealthy(cluster.client(), [a, b], { timeoutMs: 300, intervalMs: 10, logger });
  // a was healthy at the first poll; it turns unhealthy as b turns healthy, and stays so.
  while (cluster.requests.filter((r) => r.endsWith(' Deployment')).length < 3) await new Promise((r) => setTimeout(r, 5));
  cluster.unhealthyNames.add('a');
  cluster.put(a);
  cluster.unhealthyNames.delete('b');
  cluster.put(b);
  const report = await waiting;
  assert.equal(report.healthy, false);
  assert.deepEqual(report.objects.map((o) => [o.ref.name, o.healthy]), [['a', false], ['b', true]]);
});

test('a kind without a health rule is healthy once applied, also when it is named like an object member', () => {
  for (const kind of ['ConfigMap', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    assert.deepEqual(objectHealth({ apiVersion: 'v1', kind, metadata: { name: 'x' } }), { healthy: true, reason: 'applied' }, kind);
  }
});

test("Helm 4's watcher (kstatus) beside legacy: claims, LoadBalancers, budgets, ReplicaSets and custom resources by the convention; legacy waits for none of them", () => {
  const claim = (phase: string): KubeObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, status: { phase } });
  const lb = (ingress: unknown[] | undefined): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { type: 'LoadBalancer' }, status: { loadBalancer: ingress === undefined ? {} : { ingress } } });
  const cr = (status: Record<string, unknown>, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', generation: 2, ...extra }, status });
  const cases: [string, KubeObject, boolean, RegExp][] = [
    ['a claim Pending', claim('Pending'), false, /not Bound \(phase Pending\)/],
    ['a claim Bound', claim('Bound'), true, /Bound/],
    ['a LoadBalancer without an address', lb(undefined), false, /load balancer/],
    ['a LoadBalancer with one', lb([{ ip: '10.0.0.1' }]), true, /ready/],
    ['a ClusterIP Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: {} }, true, /applied/],
    ['a budget short of pods', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'b' }, status: { currentHealthy: 1, desiredHealthy: 2 } }, false, /1 of 2 pods healthy/],
    ['a ReplicaSet not ready', { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'r' }, spec: { replicas: 2 }, status: { fullyLabeledReplicas: 2, availableReplicas: 2, readyReplicas: 1 } }, false, /1 of 2 replicas ready/],
    ['a custom resource its controller has not seen', cr({ observedGeneration: 1 }), false, /observe generation 2 \(observed 1\)/],
    ['a custom resource Stalled', cr({ observedGeneration: 2, conditions: [{ type: 'Stalled', status: 'True', reason: 'BadConfig', message: 'no such secret' }] }), false, /stalled: BadConfig: no such secret/],
    ['a custom resource Reconciling', cr({ observedGeneration: 2, conditions: [{ type: 'Reconciling', status: 'True', reason: 'Progressing' }] }), false, /reconciling: Progressing/],
    ['a custom resource being deleted', cr({}, { deletionTimestamp: '2026-12-03T00:00:00Z' }), false, /being deleted/],
    ['a custom resource with no status', cr({}), true, /applied/],
    ['a custom resource current', cr({ observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] }), true, /applied/],
  ];
  for (const [what, obj, healthy, reason] of cases) {
    const watcher = objectHealth(obj, 'watcher');
    assert.equal(watcher.healthy, healthy, `watcher: ${what}`);
    assert.match(watcher.reason, reason, `watcher: ${what}`);
    assert.equal(objectHealth(obj).healthy, healthy, `watcher is the default: ${what}`);
    // legacy (Binnacle's rules before Helm 4) waits for none of these kinds.
    assert.equal(objectHealth(obj, 'legacy').healthy, true, `legacy: ${what}`);
    assert.equal(objectHealth(obj, 'hookOnly').healthy, true, `hookOnly: ${what}`);
  }
  // Binnacle's stricter rules are kept under watcher: a Deployment whose pods the API server refuses says so.
  const refused: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', generation: 1 }, spec: { replicas: 1 }, status: { observedGeneration: 1, replicas: 0, conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'quota' }] } };
  for (const strategy of ['watcher', 'legacy'] as const) assert.match(objectHealth(refused, strategy).reason, /pods cannot be created: FailedCreate: quota/);
});
