import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { fieldDrift, quantityValue, releaseDrift } from './drift.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { toManifest } from './release.js';
import { ReleaseStore } from './release-store.js';
import type { ReleaseStatus } from './types.js';

const deployment = (containers: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'op', namespace: 'ops', labels: { app: 'op' } },
  spec: { replicas: 1, selector: { matchLabels: { app: 'op' } }, template: { metadata: { creationTimestamp: null, labels: { app: 'op' } }, spec: { containers, ...extra } } },
});

describe('fieldDrift: only what the manifest sets', () => {
  it('server defaults, server metadata and status are not drift', () => {
    const desired = deployment([{ name: 'manager', image: 'op:1', resources: { limits: { cpu: 0.5, memory: '1Gi' } }, securityContext: {} }], { hostNetwork: false });
    const live: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'op', namespace: 'ops', uid: 'u', resourceVersion: '9', generation: 3, creationTimestamp: 't', labels: { app: 'op', extra: 'added by someone' }, annotations: { 'deployment.kubernetes.io/revision': '1' } },
      spec: {
        replicas: 1,
        progressDeadlineSeconds: 600,
        selector: { matchLabels: { app: 'op' } },
        template: { metadata: { labels: { app: 'op' } }, spec: { restartPolicy: 'Always', containers: [{ name: 'manager', image: 'op:1', imagePullPolicy: 'IfNotPresent', resources: { limits: { cpu: '500m', memory: '1Gi' } }, terminationMessagePath: '/dev/termination-log' }] } },
      },
      status: { replicas: 1 },
    };
    assert.deepEqual(fieldDrift(desired, live), []);
  });

  it('a changed value, a removed field and an added list item are drift, with both values', () => {
    const desired = deployment([{ name: 'manager', image: 'op:1', args: ['--leader-elect'] }]);
    const live = deployment([{ name: 'manager', image: 'op:2' }, { name: 'sidecar', image: 'proxy:1' }]);
    (live.spec as { replicas: number }).replicas = 3;
    live.metadata.labels = {};
    assert.deepEqual(fieldDrift(desired, live), [
      { path: 'metadata.labels.app', manifest: 'op' },
      { path: 'spec.replicas', manifest: 1, live: 3 },
      { path: 'spec.template.spec.containers[name=manager].image', manifest: 'op:1', live: 'op:2' },
      { path: 'spec.template.spec.containers[name=manager].args', manifest: ['--leader-elect'] },
      { path: 'spec.template.spec.containers[name=sidecar]', live: { name: 'sidecar', image: 'proxy:1' } },
    ]);
  });

  it('lists without names are compared by position; keys with dots are quoted', () => {
    const desired: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { 'example.com/x': 'a' } }, data: { 'config.yaml': 'a: 1\n' }, list: ['a', 'b'] };
    const live: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { 'example.com/x': 'b' } }, data: { 'config.yaml': 'a: 2\n' }, list: ['a', 'c', 'd'] };
    assert.deepEqual(fieldDrift(desired, live), [
      { path: 'metadata.annotations["example.com/x"]', manifest: 'a', live: 'b' },
      { path: 'data["config.yaml"]', manifest: 'a: 1\n', live: 'a: 2\n' },
      { path: 'list[1]', manifest: 'b', live: 'c' },
      { path: 'list[2]', live: 'd' },
    ]);
  });

  it("a Secret's data is compared (stringData as the data it becomes) but never shown", () => {
    const desired: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { password: 'hunter2' }, data: { token: 'YQ==' } };
    const same: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { password: Buffer.from('hunter2').toString('base64'), token: 'YQ==' }, type: 'Opaque' };
    assert.deepEqual(fieldDrift(desired, same), []);
    const changed: KubeObject = { ...same, data: { password: 'b3RoZXI=' } };
    const drift = fieldDrift(desired, changed);
    assert.deepEqual(drift, [{ path: 'data.token', hidden: true }, { path: 'data.password', hidden: true }]);
    assert.ok(!JSON.stringify(drift).includes('hunter2') && !JSON.stringify(drift).includes('b3RoZXI='));
  });

  it("a zero value the server defaulted is drift only once someone else holds the field (the API server's managedFields)", () => {
    // operator-sdk's memcached chart: `imagePullPolicy: ""`, stored as IfNotPresent; the probe's `timeoutSeconds: 0`, as 1.
    const desired = deployment([{ name: 'manager', image: 'op:1', imagePullPolicy: '', livenessProbe: { timeoutSeconds: 0 } }]);
    const container = (fields: Record<string, unknown>) => ({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"manager"}': { '.': {}, 'f:name': {}, 'f:image': {}, ...fields } } } } } });
    const held = { 'f:imagePullPolicy': {}, 'f:livenessProbe': { 'f:timeoutSeconds': {} } };
    const live = (managedFields: unknown[], imagePullPolicy = 'IfNotPresent'): KubeObject => {
      const o = deployment([{ name: 'manager', image: 'op:1', imagePullPolicy, livenessProbe: { timeoutSeconds: 1, periodSeconds: 10 } }]);
      return { ...o, metadata: { ...o.metadata, managedFields } };
    };
    const binnacle = (fields: Record<string, unknown>, manager = 'binnacle') => ({ manager, operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: container(fields) });
    assert.deepEqual(fieldDrift(desired, live([binnacle(held)])), []);
    // kubectl edit took imagePullPolicy (an Update); the probe's timeout is still Binnacle's.
    const edited = live([binnacle({ 'f:livenessProbe': { 'f:timeoutSeconds': {} } }), { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: container({ 'f:imagePullPolicy': {} }) }], 'Always');
    assert.deepEqual(fieldDrift(desired, edited), [{ path: 'spec.template.spec.containers[name=manager].imagePullPolicy', manifest: '', live: 'Always' }]);
    // No managedFields to go by (an object not applied by server-side apply): compared as before.
    assert.equal(fieldDrift(desired, live([])).length, 2);
    // Another applier's configuration (OLM v1's ClusterObjectSet) when its manager is named.
    assert.equal(fieldDrift(desired, live([binnacle(held, 'olm.operatorframework.io')])).length, 2);
    assert.deepEqual(fieldDrift(desired, live([binnacle(held, 'olm.operatorframework.io')]), 'olm.operatorframework.io'), []);
    // A value the manifest sets that is not a zero value is compared as ever, whoever holds it.
    assert.equal(fieldDrift(deployment([{ name: 'manager', image: 'op:1', imagePullPolicy: 'Always' }]), live([binnacle(held)])).length, 1);
  });

  it('a zero value the server keeps as it is (privileged: false) is drift against another live value, even in a field Binnacle holds (it applied that value itself, from a failed revision)', () => {
    const desired = deployment([{ name: 'manager', image: 'op:1', securityContext: { privileged: false, allowPrivilegeEscalation: false }, env: [{ name: 'MODE', value: '' }] }]);
    const o = deployment([{ name: 'manager', image: 'op:1', securityContext: { privileged: true, allowPrivilegeEscalation: true }, env: [{ name: 'MODE', value: 'debug' }] }]);
    const fieldsV1 = { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"manager"}': { '.': {}, 'f:name': {}, 'f:image': {}, 'f:securityContext': { 'f:privileged': {}, 'f:allowPrivilegeEscalation': {} }, 'f:env': { 'k:{"name":"MODE"}': { '.': {}, 'f:name': {}, 'f:value': {} } } } } } } } };
    const live: KubeObject = { ...o, metadata: { ...o.metadata, managedFields: [{ manager: 'binnacle', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1 }] } };
    assert.deepEqual(
      fieldDrift(desired, live).map((d) => d.path),
      ['spec.template.spec.containers[name=manager].securityContext.privileged', 'spec.template.spec.containers[name=manager].securityContext.allowPrivilegeEscalation', 'spec.template.spec.containers[name=manager].env[name=MODE].value'],
    );
    // A custom resource's fields of the same names, and a ConfigMap's data, are no server default's.
    const cr = (t: number): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { timeoutSeconds: t, protocol: t === 0 ? '' : 'TCP', restartPolicy: t === 0 ? '' : 'Always' } });
    const crFields = { 'f:spec': { 'f:timeoutSeconds': {}, 'f:protocol': {}, 'f:restartPolicy': {} } };
    assert.deepEqual(fieldDrift(cr(0), { ...cr(1), metadata: { name: 'w', managedFields: [{ manager: 'binnacle', operation: 'Apply', apiVersion: 'example.com/v1', fieldsType: 'FieldsV1', fieldsV1: crFields }] } }).map((d) => d.path), ['spec.timeoutSeconds', 'spec.protocol', 'spec.restartPolicy']);
    const cm = (scheme: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { scheme, protocol: scheme === '' ? '' : 'TCP' } });
    assert.equal(fieldDrift(cm(''), { ...cm('HTTP'), metadata: { name: 'c', managedFields: [{ manager: 'binnacle', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:scheme': {}, 'f:protocol': {} } } }] } }).length, 2);
    // A defaulted field excused only to the value the server defaults it to.
    const pulled = deployment([{ name: 'manager', image: 'op:1', imagePullPolicy: 'Never' }]);
    const heldPull = { ...fieldsV1, 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"manager"}': { '.': {}, 'f:imagePullPolicy': {} } } } } } };
    assert.equal(fieldDrift(deployment([{ name: 'manager', image: 'op:1', imagePullPolicy: '' }]), { ...pulled, metadata: { ...pulled.metadata, managedFields: [{ manager: 'binnacle', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: heldPull }] } }).length, 1);
    // The pull policy's default follows the image: Always only for `latest` or an image with neither tag nor digest.
    // A failed revision's `Always` on a tagged image is drift against the manifest's "".
    const policy = (image: string, imagePullPolicy: string): number => {
      const o = deployment([{ name: 'manager', image, imagePullPolicy }]);
      return fieldDrift(deployment([{ name: 'manager', image, imagePullPolicy: '' }]), { ...o, metadata: { ...o.metadata, managedFields: [{ manager: 'binnacle', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: heldPull }] } }).length;
    };
    assert.deepEqual(
      [policy('op:1', 'Always'), policy('op:1', 'IfNotPresent'), policy('op', 'Always'), policy('op:latest', 'Always'), policy('op', 'IfNotPresent'), policy('registry:5000/op', 'Always'), policy('registry:5000/op:2', 'Always'), policy(`op@sha256:${'a'.repeat(64)}`, 'IfNotPresent'), policy(`op@sha256:${'a'.repeat(64)}`, 'Always')],
      [1, 0, 0, 0, 1, 0, 1, 0, 1],
    );
  });

  it('resource quantities compare by value', () => {
    assert.equal(quantityValue('500m'), 0.5);
    assert.equal(quantityValue('1Gi'), 2 ** 30);
    assert.equal(quantityValue('1e3'), 1000);
    assert.equal(quantityValue('lots'), undefined);
    const cm = (v: unknown): KubeObject => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { memory: v } } });
    assert.deepEqual(fieldDrift(cm('1024Mi'), cm('1Gi')), []);
    assert.equal(fieldDrift(cm('1Gi'), cm('2Gi')).length, 1);
  });
});

async function releaseIn(cluster: FakeCluster, manifest: KubeObject[], status: ReleaseStatus = 'deployed', revision = 1): Promise<void> {
  await new ReleaseStore(cluster.client()).create(
    {
      name: 'op',
      namespace: 'ops',
      version: revision,
      status,
      description: 'Install complete',
      firstDeployed: 't',
      lastDeployed: 't',
      chart: { name: 'op', version: '1.0.0' },
      config: {},
      manifest: toManifest(manifest),
    },
    { kind: 'BundleDeployment', name: 'op' },
  );
}

describe('releaseDrift', () => {
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: '1' } };
  const role: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'op-role' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] };
  const monitor: KubeObject = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'op' }, spec: {} };

  it('compares the deployed revision: the namespace it was applied in, missing objects, changed fields, unserved optional APIs apart', async () => {
    const cluster = new FakeCluster();
    cluster.unknownKinds.add('ServiceMonitor');
    await releaseIn(cluster, [cm, role, monitor, { ...cm, metadata: { name: 'gone' } }]);
    cluster.put({ ...cm, metadata: { name: 'cfg', namespace: 'ops' }, data: { a: '2' } });
    cluster.put({ ...role, metadata: { name: 'op-role', labels: { x: 'y' } } });
    const drift = await releaseDrift(cluster.client(), { name: 'op', namespace: 'ops' });
    assert.equal(drift.revision, 1);
    assert.equal(drift.chart, 'op-1.0.0');
    assert.equal(drift.checked, 3);
    assert.deepEqual(drift.skipped, ['ServiceMonitor op']);
    assert.deepEqual(drift.drifted, [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: 'ops', state: 'changed', fields: [{ path: 'data.a', manifest: '1', live: '2' }] },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', namespace: 'ops', state: 'missing', fields: [] },
    ]);
  });

  it('only the deployed revision counts; a release without one says so', async () => {
    const cluster = new FakeCluster();
    await releaseIn(cluster, [cm], 'failed');
    const none = await releaseDrift(cluster.client(), { name: 'op', namespace: 'ops' });
    assert.equal(none.revision, undefined);
    assert.match(none.message ?? '', /no deployed revision/);
    await releaseIn(cluster, [cm], 'superseded', 2);
    await releaseIn(cluster, [{ ...cm, data: { a: '3' } }], 'deployed', 3);
    cluster.put({ ...cm, metadata: { name: 'cfg', namespace: 'ops' }, data: { a: '3' } });
    const drift = await releaseDrift(cluster.client(), { name: 'op', namespace: 'ops' });
    assert.equal(drift.revision, 3);
    assert.deepEqual(drift.drifted, []);
  });

  it('an object the person may not read is unreadable, not missing', async () => {
    const cluster = new FakeCluster();
    await releaseIn(cluster, [cm]);
    cluster.authorize = (r) => !(r.identity === 'u' && r.verb === 'get' && r.kind === 'ConfigMap');
    const drift = await releaseDrift(cluster.client({ user: 'u' }), { name: 'op', namespace: 'ops' });
    assert.equal(drift.drifted[0]?.state, 'unreadable');
    assert.match(drift.drifted[0]?.message ?? '', /^forbidden: .*cannot get resource "configmaps"/);
  });
});
