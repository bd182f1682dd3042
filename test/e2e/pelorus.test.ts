/**
 * The Pelorus chart as an operator, end to end on the local control plane:
 * 1. `binnacle helm bundle` turns the chart (with its `exporters` subchart) into a registry+v1
 *    bundle that requires Prometheus and Grafana APIs;
 * 2. it is published as one catalog with the corpus Prometheus and Grafana operators, and a
 *    ClusterExtension for Pelorus installs it with the operators it depends on;
 * 3. the operator's own entry point (`binnacle helm-operator run`, with the watches.yaml and
 *    charts from the bundle's ConfigMap) runs as a local process (the cluster's Pods are kwok's
 *    fakes), authenticated as the operator's ServiceAccount, so it has exactly the RBAC the
 *    bundle's CSV granted; a `Pelorus` and an `Exporter` become Deployed, the chart's objects
 *    exist, and the OpenShift objects this cluster cannot serve are reported, not fatal.
 *
 * The corpus (community operators of 2021) has grafana-operator 3.x, which serves
 * `integreatly.org/v1alpha1`; this Pelorus chart creates `grafana.integreatly.org/v1beta1`
 * resources (grafana-operator 5). The test checks both facts, and publishes beside them a
 * stand-in package that provides exactly the Grafana APIs the bundle requires and nothing
 * else, so the install resolves as it would with grafana-operator 5 in the catalog.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { RegistryV1Bundle } from '../../src/bundle/index.js';
import { filesOfConfigMap } from '../../src/publish/helm-bundle/index.js';
import { objectsOf } from '../../src/publish/helm-bundle/render.js';
import { findCondition } from '../../src/kube/types.js';
import { eventually, serviceAccountKubeconfig, uniqueName } from './env.js';
import { OperatorHarness } from './operators.js';
import { corpusProvides, deployedCr, gvkKey, liveKinds, openShiftOnly, pelorusSample, PELORUS_GROUP as GROUP, PELORUS_VERSION as VERSION, STAND_IN, writePelorusPackages, type Gvk, type HelmCr } from './pelorus-package.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BINNACLE = join(ROOT, 'bin', 'binnacle.js');

let work: string;
let h: OperatorHarness;
let pelorus: RegistryV1Bundle;
let operator: ChildProcess | undefined;
let operatorLog = '';
const ns = uniqueName('pelorus');
const appNs = uniqueName('pelorus-app');
const extension = uniqueName('pelorus');

function deployed(kind: string, namespace: string, name: string, timeoutMs = 300_000): Promise<HelmCr> {
  return deployedCr(h.client, kind, namespace, name, timeoutMs, () => Promise.resolve(`operator log (tail):\n${operatorLog.slice(-6000)}`));
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-pelorus-'));
  const written = await writePelorusPackages(work);
  pelorus = written.bundle;
  // The corpus Grafana operator too: the first test shows why the stand-in is there.
  h = await OperatorHarness.start({ packages: [...written.packages, 'grafana-operator'], prefix: 'pelorus' });
  await h.serviceAccount(ns, 'installer', true);
  await h.client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: appNs } });
  h.cleanup.push(() => h.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: appNs }));
});

after(async () => {
  if (operator !== undefined && operator.exitCode === null) {
    const exited = new Promise((resolve) => operator?.once('exit', resolve));
    operator.kill('SIGTERM');
    await exited;
  }
  await h.stop();
  await rm(work, { recursive: true, force: true });
});

describe('Pelorus: from a chart to an installed operator', () => {
  test("the corpus Prometheus operator provides the Prometheus API Pelorus needs; the corpus Grafana operator's APIs are an older group", async () => {
    const required = pelorus.dependencies.filter((d) => d.type === 'olm.gvk').map((d) => gvkKey(d.value as Gvk));
    assert.deepEqual(required, ['grafana.integreatly.org/v1beta1/Grafana', 'grafana.integreatly.org/v1beta1/GrafanaDashboard', 'grafana.integreatly.org/v1beta1/GrafanaDatasource', 'monitoring.coreos.com/v1/Prometheus']);
    const prometheus = await corpusProvides('prometheus', '0.47.0');
    assert.ok(prometheus.has('monitoring.coreos.com/v1/Prometheus'));
    const grafana = await corpusProvides('grafana-operator', '3.10.2');
    assert.ok(grafana.has('integreatly.org/v1alpha1/Grafana'), [...grafana].join(', '));
    for (const g of required.filter((r) => r.startsWith('grafana.'))) assert.ok(!grafana.has(g), `${g} is not served by grafana-operator 3.10.2`);
  });

  test('a ClusterExtension installs Pelorus with the operators it depends on, from the catalog', async () => {
    await h.createExtension(extension, ns, { packageName: 'pelorus' });
    const ce = await h.installedAt(extension, VERSION, 420_000);
    const packages = (ce.status?.resolution?.bundles ?? []).map((b) => b.package).sort();
    assert.deepEqual(packages, [STAND_IN, 'pelorus', 'prometheus']);
    for (const crd of [`peloruses.${GROUP}`, `exporters.${GROUP}`, 'prometheuses.monitoring.coreos.com', 'grafanas.grafana.integreatly.org']) {
      await h.client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd });
    }
    assert.ok(await h.deploymentAvailable(ns, 'pelorus-controller-manager'), 'the operator Deployment (a kwok Pod)');
    const cm = await h.client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'pelorus-helm-charts' });
    assert.ok(Object.keys((cm.binaryData as Record<string, string> | undefined) ?? {}).includes('pelorus.tgz'));
  });

  test("the operator's entry point, as its ServiceAccount, deploys a Pelorus; OpenShift objects are reported, not fatal", async () => {
    // What the operator's Pod would mount at /opt/helm, from the installed ConfigMap.
    const cm = await h.client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'pelorus-helm-charts' });
    const opt = join(work, 'opt-helm');
    for (const [rel, data] of filesOfConfigMap(cm)) {
      await mkdir(dirname(join(opt, rel)), { recursive: true });
      await writeFile(join(opt, rel), data);
    }
    const dep = await h.client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'pelorus-controller-manager' });
    const podSpec = (dep.spec as { template: { metadata: { annotations?: Record<string, string> }; spec: { serviceAccountName: string; containers: { args: string[] }[] } } }).template;
    const watchNamespace = podSpec.metadata.annotations?.['olm.targetNamespaces'] ?? '';
    const kubeconfig = join(work, 'operator.kubeconfig');
    await serviceAccountKubeconfig(ns, podSpec.spec.serviceAccountName, kubeconfig);
    // The container's own arguments, with $(POD_NAMESPACE) expanded and the mount moved here.
    const args = (podSpec.spec.containers[0]?.args ?? []).map((a) => a.replace('$(POD_NAMESPACE)', ns).replace('/opt/helm', opt));
    assert.deepEqual(args.slice(0, 2), ['helm-operator', 'run']);
    // helm-operator run serves probes on :8081 and metrics on :8080 by default, as operator-sdk's; not on a shared test host.
    operator = spawn(process.execPath, [BINNACLE, ...args, '--kubeconfig', kubeconfig, '--metrics-bind-address=0', '--health-probe-bind-address=0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WATCH_NAMESPACE: watchNamespace, POD_NAMESPACE: ns, BINNACLE_LOG_LEVEL: 'info' } });
    operator.stdout?.on('data', (d: Buffer) => (operatorLog += d.toString()));
    operator.stderr?.on('data', (d: Buffer) => (operatorLog += d.toString()));

    const sample = pelorusSample(pelorus);
    await h.client.create({ ...sample, metadata: { ...sample.metadata, namespace: appNs } });
    const cr = await deployed('Pelorus', appNs, sample.metadata.name ?? '');

    // Every object of the release exists, but for those whose API the cluster does not serve,
    // which the CR's status names.
    const manifest = objectsOf(cr.status?.deployedRelease?.manifest ?? '');
    assert.ok(manifest.length > 10, `${manifest.length} objects`);
    const unserved = manifest.filter(openShiftOnly);
    assert.ok(unserved.some((o) => o.kind === 'Route') && unserved.some((o) => o.kind === 'ImageStream'), 'the chart has Routes and ImageStreams');
    const skipped = findCondition(cr.status?.conditions, 'OptionalObjectsSkipped');
    assert.equal(skipped?.status, 'True', JSON.stringify(cr.status?.conditions));
    for (const o of unserved) assert.ok((skipped?.message ?? '').includes(`${o.kind} ${o.metadata.name ?? ''} (the cluster does not serve`), `${o.kind} ${o.metadata.name ?? ''} reported`);
    const { kinds, missing } = await liveKinds(h.client, manifest.filter((o) => !openShiftOnly(o)), appNs);
    assert.deepEqual(missing, []);
    for (const k of ['Prometheus', 'Grafana', 'GrafanaDashboard', 'Deployment', 'ClusterRole', 'RoleBinding', 'Secret']) assert.ok(kinds.has(k), `a ${k} was applied (${[...kinds].join(', ')})`);
    // A real Helm release, in the CR's namespace.
    const records = await h.client.list('v1', 'Secret', { namespace: appNs, labelSelector: `owner=helm,name=${sample.metadata.name ?? ''}` });
    assert.equal(records.items.length, 1);
  });

  test('a subchart kind is served too: an Exporter deploys the exporters chart on its own', async () => {
    const spec = { instances: [{ app_name: 'webhook-exporter', exporter_type: 'webhook' }] };
    await h.client.create({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Exporter', metadata: { name: 'webhooks', namespace: ns }, spec });
    await deployed('Exporter', ns, 'webhooks');
    await h.client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'webhook-exporter' });
  });

  test('deleting the custom resources uninstalls their releases', async () => {
    await h.client.delete({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pelorus', namespace: appNs, name: 'pelorus-sample' });
    await h.client.delete({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Exporter', namespace: ns, name: 'webhooks' });
    await eventually(
      'releases uninstalled',
      async () => {
        const left = [
          ...(await h.client.list(`${GROUP}/v1alpha1`, 'Pelorus', { namespace: appNs })).items,
          ...(await h.client.list(`${GROUP}/v1alpha1`, 'Exporter', { namespace: ns })).items,
          ...(await h.client.list('apps/v1', 'Deployment', { namespace: appNs })).items,
        ];
        return left.length === 0 ? true : undefined;
      },
      180_000,
      1000,
    );
    assert.equal((await h.client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'webhook-exporter' })) === undefined, true);
  });
});
