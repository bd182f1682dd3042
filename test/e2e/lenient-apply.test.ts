/**
 * Applying what OLM would apply, on the local control plane: a bundle with a ServiceMonitor
 * installs on a cluster without the Prometheus operator (the monitor skipped and named), and
 * the monitor is applied once the corpus Prometheus operator is installed; fields a schema does
 * not declare (`env[].resources`, `ports[].failureThreshold`, `rules[].apigroups`) are dropped
 * or corrected with a warning on the BundleDeployment and an Event; a failed first install is
 * removed, leaving only the status, unless it is kept for debugging.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { API_VERSION, type BundleDeployment } from '../../src/api/types.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { eventually, uniqueName } from './env.js';
import { OperatorHarness } from './operators.js';

const SKIPPED = 'OptionalObjectsSkipped';

let h: OperatorHarness;
let client: KubeClient;
const ns = uniqueName('lenient');
const bundles: string[] = [];

/** A plain bundle whose manifests live in a ConfigMap, installed by a BundleDeployment. */
async function installPlain(name: string, objects: KubeObject[], extra: Partial<BundleDeployment['spec']> = {}): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-bundle`, namespace: ns }, data: { 'objects.yaml': objects.map((o) => stringify(o)).join('---\n') } });
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name },
    spec: {
      source: { type: 'configMaps', configMaps: [{ namespace: ns, name: `${name}-bundle`, path: 'manifests' }] },
      format: 'plain',
      installNamespace: ns,
      serviceAccount: { name: 'installer' },
      ...extra,
    },
  });
  bundles.push(name);
}

async function bundleDeployment(name: string): Promise<BundleDeployment> {
  return client.get<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
}

/** Waits until the BundleDeployment acted on its generation and says Installed=`want`, settled or retrying. */
async function installed(name: string, want: 'True' | 'False', timeoutMs = 120_000): Promise<BundleDeployment> {
  try {
    return await eventually(
      `${name} Installed=${want}`,
      async () => {
        const bd = await bundleDeployment(name);
        const cond = findCondition(bd.status?.conditions, 'Installed');
        const progressing = findCondition(bd.status?.conditions, 'Progressing');
        const settled = want === 'True' ? progressing?.status === 'False' : cond?.reason === 'Failed';
        return bd.status?.observedGeneration === bd.metadata.generation && cond?.status === want && settled ? bd : undefined;
      },
      timeoutMs,
      500,
    );
  } catch (err) {
    const bd = await client.find<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
    const conds = (bd?.status?.conditions ?? []).map((c) => `  ${c.type}=${c.status} ${c.reason}: ${c.message}`).join('\n');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${conds}`, { cause: err });
  }
}

/** Events Binnacle recorded about a BundleDeployment. */
async function eventsOf(name: string): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await client.list<KubeObject & { type: string; reason: string; message: string }>('v1', 'Event', { namespace: 'default', fieldSelector: `involvedObject.kind=BundleDeployment,involvedObject.name=${name}` });
  return list.items;
}

/** The Helm release records of `release` in the test namespace. */
async function releaseSecrets(release: string): Promise<KubeObject[]> {
  return (await client.list('v1', 'Secret', { namespace: ns, labelSelector: `owner=helm,name=${release}` })).items;
}

function deployment(name: string, container: Record<string, unknown>, podSpec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'manager', image: 'registry.example/op:1', ...container }], ...podSpec } },
    },
  };
}

before(async () => {
  h = await OperatorHarness.start({ packages: ['prometheus'], prefix: 'lenient', healthTimeoutMs: 30_000 });
  client = h.client;
  await h.serviceAccount(ns, 'installer', true);
});

after(async () => {
  for (const name of bundles) await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name }).catch(() => undefined);
  await eventually('test BundleDeployments gone', async () => {
    for (const name of bundles) if ((await client.find({ apiVersion: API_VERSION, kind: 'BundleDeployment', name })) !== undefined) return undefined;
    return true;
  }, 120_000).catch(() => undefined);
  await h.stop();
});

describe('lenient apply', () => {
  test('a ServiceMonitor is skipped on a cluster without the Prometheus operator, and applied once the operator is installed', async () => {
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'servicemonitors.monitoring.coreos.com' };
    assert.equal(await client.find(crd), undefined, 'the cluster starts without the Prometheus operator CRDs');
    const name = 'lenient-monitored';
    const monitor: KubeObject = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'op-metrics', namespace: ns },
      spec: { selector: { matchLabels: { app: 'op' } }, endpoints: [{ port: 'metrics', interval: '30s' }] },
    };
    const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'op-metrics', namespace: ns, labels: { app: 'op' } }, spec: { selector: { app: 'op' }, ports: [{ name: 'metrics', port: 8080 }] } };
    await installPlain(name, [deployment('op', { ports: [{ name: 'metrics', containerPort: 8080 }] }), service, monitor]);

    const bd = await installed(name, 'True');
    const skipped = findCondition(bd.status?.conditions, SKIPPED);
    assert.equal(skipped?.status, 'True');
    assert.equal(skipped.reason, 'APINotServed');
    assert.match(skipped.message, new RegExp(`ServiceMonitor ${ns}/op-metrics \\(the cluster does not serve monitoring\\.coreos\\.com/v1 ServiceMonitor: .*Prometheus operator`));
    assert.ok(!(bd.status?.appliedObjects ?? []).some((r) => r.kind === 'ServiceMonitor'), 'a skipped object is not recorded as applied');
    assert.deepEqual((bd.status?.appliedObjects ?? []).map((r) => r.kind).sort(), ['Deployment', 'Service']);
    assert.ok((await eventsOf(name)).some((e) => e.reason === SKIPPED && e.message.includes(`ServiceMonitor ${ns}/op-metrics`)), 'an Event names the skipped object');
    const revision = bd.status?.revision;
    assert.equal(revision, 1);

    // The Prometheus operator from the corpus brings the ServiceMonitor API.
    await h.serviceAccount(`${ns}-prom`, 'installer', true);
    await h.createExtension(`${ns}-prom`, `${ns}-prom`, { packageName: 'prometheus' });
    await h.installedAt(`${ns}-prom`, '0.47.0');
    assert.ok((await client.find(crd)) !== undefined);

    // Level-triggered: the BundleDeployment notices and applies the monitor. Its revision recorded
    // it (deferred), and the inputs did not change: the release decision repairs revision 1, which
    // applies what is now served; no new revision (a new one would need a render of the same inputs).
    const applied = await eventually(
      'the ServiceMonitor applied',
      async () => {
        const now = await bundleDeployment(name);
        const live = await client.find({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', namespace: ns, name: 'op-metrics' }).catch(() => undefined);
        return live !== undefined && findCondition(now.status?.conditions, SKIPPED) === undefined && findCondition(now.status?.conditions, 'Installed')?.status === 'True' ? now : undefined;
      },
      120_000,
      1000,
    );
    assert.equal(applied.status?.revision, 1);
    assert.ok((applied.status?.appliedObjects ?? []).some((r) => r.kind === 'ServiceMonitor' && r.name === 'op-metrics'));
    const live = await client.get({ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', namespace: ns, name: 'op-metrics' });
    assert.equal(live.metadata.labels?.['binnacle.dev/owner-name'], name);
  });

  test('a Deployment with env[].resources and ports[].failureThreshold and a Role with rules[].apigroups install, with warnings and Events', async () => {
    const name = 'lenient-fields';
    const dep = deployment('fields', {
      env: [{ name: 'LOG_LEVEL', value: 'debug', resources: { limits: { cpu: '100m' } } }],
      ports: [{ name: 'http', containerPort: 8081, protocol: 'TCP', failureThreshold: 3 }],
    });
    const role: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'fields', namespace: ns },
      rules: [
        { apigroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      ],
    };
    await installPlain(name, [dep, role]);
    const bd = await installed(name, 'True');
    assert.equal(findCondition(bd.status?.conditions, 'Healthy')?.status, 'True');
    assert.deepEqual(
      (bd.status?.warnings ?? []).map((w) => `${w.object} ${w.field}`),
      [
        `Deployment ${ns}/fields spec.template.spec.containers[name="manager"].env[name="LOG_LEVEL"].resources`,
        `Deployment ${ns}/fields spec.template.spec.containers[name="manager"].ports[containerPort=8081,protocol="TCP"].failureThreshold`,
        `Role ${ns}/fields rules[0].apigroups`,
      ],
    );
    assert.match(bd.status?.warnings?.[0]?.message ?? '', /not declared by its schema \(\/openapi\/v3 apis\/apps\/v1\); dropped/);
    assert.match(bd.status?.warnings?.[2]?.message ?? '', /applied as apiGroups/);

    const events = await eventsOf(name);
    assert.ok(events.some((e) => e.type === 'Warning' && e.reason === 'UnknownFieldDropped' && e.message.includes('env[name="LOG_LEVEL"].resources')), 'an Event for the dropped field');
    assert.ok(events.some((e) => e.type === 'Warning' && e.reason === 'FieldNameCaseCorrected' && e.message.includes('rules[0].apigroups')), 'an Event for the corrected one');

    // The rest was applied: the container keeps its env and port, the Role grants what was meant.
    const live = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'fields' });
    const container = (live.spec as { template: { spec: { containers: { env: unknown[]; ports: { containerPort: number }[] }[] } } }).template.spec.containers[0];
    assert.deepEqual(container?.env, [{ name: 'LOG_LEVEL', value: 'debug' }]);
    assert.equal(container?.ports[0]?.containerPort, 8081);
    const liveRole = await client.get({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespace: ns, name: 'fields' });
    assert.deepEqual((liveRole.rules as { apiGroups: string[] }[]).map((r) => r.apiGroups), [['apps'], ['']]);
    // Nothing new on the next reconcile: no repeated Events.
    const count = (await eventsOf(name)).length;
    await client.apply({ apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name }, spec: { ...bd.spec, autoRollback: true } });
    await installed(name, 'True');
    assert.equal((await eventsOf(name)).length, count);
  });

  test('a failed first install is removed, leaving only the status', async () => {
    const name = 'lenient-failed';
    // No node matches: the Deployment never becomes available.
    await installPlain(name, [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'failed-config', namespace: ns }, data: { a: '1' } },
      deployment('failed', {}, { nodeSelector: { 'binnacle.dev/no-such-node': 'true' } }),
    ]);
    const bd = await installed(name, 'False', 180_000);
    const cond = findCondition(bd.status?.conditions, 'Installed');
    assert.match(cond?.message ?? '', /^install failed: not healthy after 30000 ms: Deployment .*failed: .*; removed the failed install \(2 objects and its release records/);
    assert.equal(bd.status?.revision, undefined, 'no revision is left');
    assert.deepEqual(bd.status?.appliedObjects, []);
    assert.equal(await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'failed' }), undefined);
    assert.equal(await client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'failed-config' }), undefined);
    assert.deepEqual(await releaseSecrets(name), []);
  });

  test('a failed first install is kept for debugging when asked', async () => {
    const name = 'lenient-kept';
    await installPlain(name, [deployment('kept', {}, { nodeSelector: { 'binnacle.dev/no-such-node': 'true' } })], { keepFailedInstall: true });
    const bd = await installed(name, 'False', 180_000);
    const cond = findCondition(bd.status?.conditions, 'Installed');
    assert.match(cond?.message ?? '', /not healthy after 30000 ms: Deployment .*kept/);
    assert.doesNotMatch(cond?.message ?? '', /removed/);
    assert.equal(bd.status?.revision, 1);
    assert.ok((await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'kept' })) !== undefined, 'the failed Deployment is still there');
    const records = await releaseSecrets(name);
    assert.deepEqual(records.map((s) => s.metadata.labels?.status), ['failed']);
  });
});
