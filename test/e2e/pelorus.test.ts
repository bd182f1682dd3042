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
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { generateBundle, loadBundleDir, providedApis, type RegistryV1Bundle } from '../../src/bundle/index.js';
import { filesOfConfigMap } from '../../src/helm/bundle/index.js';
import { objectsOf } from '../../src/helm/bundle/render.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { eventually, serviceAccountKubeconfig, uniqueName } from './env.js';
import { CORPUS, OperatorHarness } from './operators.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BINNACLE = join(ROOT, 'bin', 'binnacle.js');
const PELORUS = join(ROOT, '..', 'shared', 'corpus', 'charts', 'pelorus__pelorus');
const VERSION = '2.0.13';
const GROUP = 'pelorus.helm.binnacle.dev';
const STAND_IN = 'grafana-v1beta1-apis';

interface Gvk {
  group: string;
  version: string;
  kind: string;
}
const gvkKey = (g: Gvk): string => `${g.group}/${g.version}/${g.kind}`;

interface HelmCr extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Parameters<typeof findCondition>[0]; deployedRelease?: { name: string; manifest: string } };
}

let work: string;
let h: OperatorHarness;
let pelorus: RegistryV1Bundle;
let operator: ChildProcess | undefined;
let operatorLog = '';
const ns = uniqueName('pelorus');
const appNs = uniqueName('pelorus-app');
const extension = uniqueName('pelorus');

/** What the newest bundle of a corpus package provides. */
async function corpusProvides(pkg: string, version: string): Promise<Set<string>> {
  const b = await loadBundleDir(join(CORPUS, pkg, version), { packageName: pkg });
  return new Set(providedApis(b).map(gvkKey));
}

/**
 * A package that provides `gvks` and does nothing else: CRDs whose schemas keep every field,
 * and a Deployment, through the bundle writer.
 */
async function standInPackage(dir: string, gvks: readonly Gvk[]): Promise<void> {
  const input = join(dir, 'input');
  await mkdir(input, { recursive: true });
  const crds = gvks.map((g) => {
    const plural = `${g.kind.toLowerCase()}s`;
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${g.group}` },
      spec: {
        group: g.group,
        names: { kind: g.kind, listKind: `${g.kind}List`, plural, singular: g.kind.toLowerCase() },
        scope: 'Namespaced',
        versions: [{ name: g.version, served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }, subresources: { status: {} } }],
      },
    };
  });
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${STAND_IN}-controller` },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: STAND_IN } },
      template: { metadata: { labels: { app: STAND_IN } }, spec: { containers: [{ name: 'controller', image: 'registry.invalid/stand-in:5.0.0' }] } },
    },
  };
  await writeFile(join(input, 'objects.yaml'), [...crds, deployment].map((o) => stringify(o)).join('---\n'));
  await generateBundle({ inputDir: input, outputDir: join(dir, STAND_IN, '5.0.0'), packageName: STAND_IN, version: '5.0.0', channels: ['stable'] });
  await rm(input, { recursive: true, force: true });
}

async function deployed(kind: string, namespace: string, name: string, timeoutMs = 300_000): Promise<HelmCr> {
  try {
    return await eventually(
      `${kind} ${namespace}/${name} Deployed`,
      async () => {
        const cr = await h.client.get<HelmCr>({ apiVersion: `${GROUP}/v1alpha1`, kind, namespace, name });
        return findCondition(cr.status?.conditions, 'Deployed')?.status === 'True' ? cr : undefined;
      },
      timeoutMs,
      1000,
    );
  } catch (err) {
    const cr = await h.client.find<HelmCr>({ apiVersion: `${GROUP}/v1alpha1`, kind, namespace, name });
    throw new Error(`${String(err)}\nstatus: ${JSON.stringify(cr?.status?.conditions)}\noperator log (tail):\n${operatorLog.slice(-6000)}`, { cause: err });
  }
}

/** The kinds of `objects` that exist in the cluster, and those that do not. */
async function liveKinds(objects: readonly KubeObject[], namespace: string): Promise<{ kinds: Set<string>; missing: string[] }> {
  const kinds = new Set<string>();
  const missing: string[] = [];
  for (const o of objects) {
    const live = await h.client.find({ apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace ?? namespace, name: o.metadata.name ?? '' });
    if (live === undefined) missing.push(`${o.kind} ${o.metadata.name ?? ''}`);
    else kinds.add(o.kind);
  }
  return { kinds, missing };
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-pelorus-'));
  const pkgDir = join(work, 'pelorus');
  await run(process.execPath, [BINNACLE, 'helm', 'bundle', PELORUS, '--kind', 'Pelorus', '--kind', 'Exporter=charts/exporters', '--version', VERSION, '--output-dir', join(pkgDir, VERSION)], { cwd: ROOT });
  pelorus = await loadBundleDir(join(pkgDir, VERSION));
  const required = pelorus.dependencies.filter((d) => d.type === 'olm.gvk').map((d) => d.value as Gvk);
  await standInPackage(work, required.filter((g) => g.group === 'grafana.integreatly.org'));
  h = await OperatorHarness.start({ packages: ['prometheus', 'grafana-operator', pkgDir, join(work, STAND_IN)], prefix: 'pelorus' });
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

    const examples = JSON.parse(pelorus.csv.annotations['alm-examples'] ?? '[]') as HelmCr[];
    const sample = examples.find((e) => e.kind === 'Pelorus');
    assert.ok(sample !== undefined);
    await h.client.create({ ...sample, metadata: { ...sample.metadata, namespace: appNs } });
    const cr = await deployed('Pelorus', appNs, sample.metadata.name ?? '');

    // Every object of the release exists, but for those whose API the cluster does not serve,
    // which the CR's status names.
    const manifest = objectsOf(cr.status?.deployedRelease?.manifest ?? '');
    assert.ok(manifest.length > 10, `${manifest.length} objects`);
    const openshift = (o: KubeObject): boolean => ['route.openshift.io', 'image.openshift.io'].includes(o.apiVersion.split('/')[0] ?? '');
    const unserved = manifest.filter(openshift);
    assert.ok(unserved.some((o) => o.kind === 'Route') && unserved.some((o) => o.kind === 'ImageStream'), 'the chart has Routes and ImageStreams');
    const skipped = findCondition(cr.status?.conditions, 'OptionalObjectsSkipped');
    assert.equal(skipped?.status, 'True', JSON.stringify(cr.status?.conditions));
    for (const o of unserved) assert.ok((skipped?.message ?? '').includes(`${o.kind} ${o.metadata.name ?? ''} (the cluster does not serve`), `${o.kind} ${o.metadata.name ?? ''} reported`);
    const { kinds, missing } = await liveKinds(manifest.filter((o) => !openshift(o)), appNs);
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
