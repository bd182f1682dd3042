/**
 * `binnacle cluster up --openshift`: a control plane of this test's own gets OpenShift's APIs
 * from the pinned github.com/openshift/api module, with a ClusterVersion reporting 4.16.0. An
 * operator that ships a Route (and an ImageStream) installs with them applied, not skipped as on
 * a plain cluster; and `olm.maxOpenShiftVersion` is held against the ClusterVersion: a bundle
 * that supports OpenShift only up to 4.15 is refused, naming the rule, one up to 4.16 installs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../../src/api/types.js';
import { publishPackages } from '../../src/publish/packages.js';
import { clusterDown, clusterUp, type UpResult } from '../../src/cluster/index.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { adminInstaller, eventually, uniqueName } from './env.js';
import { managerLogger } from './manager-log.js';
import { CORPUS } from './operators.js';

const logger = pino({ level: process.env.BINNACLE_E2E_LOG ?? 'silent' });
const clusterName = `${process.env.BINNACLE_E2E_CLUSTER ?? 'e2e'}-openshift`;
let up: UpResult;
let client: KubeClient;
let manager: RunningManager;
let dataDir: string;

before(async () => {
  up = await clusterUp({ name: clusterName, logger, openshift: { version: '4.16.0' }, timeoutMs: 240_000, progress: () => undefined });
  client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-openshift-'));
  manager = await startManager({ client, logger: managerLogger('openshift'), dataDir, healthTimeoutMs: 120_000, workers: 2 });
});

after(async () => {
  await manager?.stop();
  client?.close();
  await clusterDown({ name: clusterName, logger });
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

async function installer(ns: string): Promise<void> {
  await adminInstaller(client, ns);
}

describe('cluster up --openshift', () => {
  test("OpenShift's APIs are served, with the singletons operators read", async () => {
    assert.equal(up.openshiftVersion, '4.16.0');
    for (const [apiVersion, kind] of [
      ['config.openshift.io/v1', 'ClusterVersion'],
      ['config.openshift.io/v1', 'Infrastructure'],
      ['config.openshift.io/v1', 'Proxy'],
      ['route.openshift.io/v1', 'Route'],
      ['security.openshift.io/v1', 'SecurityContextConstraints'],
      ['image.openshift.io/v1', 'ImageStream'],
      ['build.openshift.io/v1', 'BuildConfig'],
      ['console.openshift.io/v1', 'ConsoleYAMLSample'],
      ['console.openshift.io/v1', 'ConsolePlugin'],
    ] as const) {
      await client.resourceFor(apiVersion, kind);
    }
    const cv = await client.get({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', name: 'version' });
    assert.equal((cv.status as { desired?: { version?: string } }).desired?.version, '4.16.0');
    const crd = await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'routes.route.openshift.io' });
    assert.match(crd.metadata.annotations?.['binnacle.dev/source'] ?? '', /^github\.com\/openshift\/api@v0\.0\.0-/);
    // The schemas are OpenShift's: a Route without spec.to is refused by the API server.
    await assert.rejects(client.apply({ apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'bad', namespace: 'default' }, spec: { host: 'x.example.com' } }), /to/);
  });

  test('an operator that ships a Route installs with it applied', async () => {
    const ns = uniqueName('routed');
    await installer(ns);
    const labels = { app: 'routed' };
    const objects: KubeObject[] = [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'routed', namespace: ns },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'registry.example/routed:1', ports: [{ containerPort: 8080 }] }] } } },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'routed', namespace: ns }, spec: { selector: labels, ports: [{ port: 8080, targetPort: 8080 }] } },
      { apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'routed', namespace: ns }, spec: { to: { kind: 'Service', name: 'routed' }, port: { targetPort: 8080 }, tls: { termination: 'edge' } } },
      { apiVersion: 'image.openshift.io/v1', kind: 'ImageStream', metadata: { name: 'routed', namespace: ns }, spec: { lookupPolicy: { local: true } } },
    ];
    await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'routed-bundle', namespace: ns }, data: { 'objects.yaml': objects.map((o) => stringify(o)).join('---\n') } });
    const name = uniqueName('routed');
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'BundleDeployment',
      metadata: { name },
      spec: { source: { type: 'configMaps', configMaps: [{ namespace: ns, name: 'routed-bundle', path: 'manifests' }] }, format: 'plain', installNamespace: ns, serviceAccount: { name: 'installer' } },
    });
    const bd = await eventually(
      `${name} installed`,
      async () => {
        const b = await client.get<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
        return b.status?.observedGeneration === b.metadata.generation && findCondition(b.status?.conditions, 'Installed')?.status === 'True' ? b : undefined;
      },
      180_000,
      500,
    );
    assert.equal(findCondition(bd.status?.conditions, 'OptionalObjectsSkipped')?.status ?? 'False', 'False', 'nothing was skipped as not served');
    const route = await client.get({ apiVersion: 'route.openshift.io/v1', kind: 'Route', namespace: ns, name: 'routed' });
    assert.equal((route.spec as { to?: { name?: string } }).to?.name, 'routed');
    await client.get({ apiVersion: 'image.openshift.io/v1', kind: 'ImageStream', namespace: ns, name: 'routed' });
    await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
    await eventually('BundleDeployment gone', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'BundleDeployment', name })) === undefined ? true : undefined), 120_000);
    assert.equal(await client.find({ apiVersion: 'route.openshift.io/v1', kind: 'Route', namespace: ns, name: 'routed' }), undefined, 'the Route goes with its bundle');
  });

  test('olm.maxOpenShiftVersion is held against the ClusterVersion', async () => {
    const catalogName = uniqueName('ocp');
    const maxOcp: Record<string, string> = { '0.1.0': '4.15', '0.0.6': '4.16' };
    const versionOf = (b: { properties: { type: string; value: unknown }[] }): string | undefined =>
      (b.properties.find((p) => p.type === 'olm.package')?.value as { version?: string } | undefined)?.version;
    const published = await publishPackages({
      packages: [join(CORPUS, 'poison-pill-operator')],
      registry: up.registry,
      repository: catalogName,
      select: (cfg) => new Set(cfg.bundles.filter((b) => maxOcp[versionOf(b) ?? ''] !== undefined).map((b) => b.name)),
      transform: (cfg) => {
        for (const b of cfg.bundles) {
          const max = maxOcp[versionOf(b) ?? ''];
          if (max !== undefined) b.properties.push({ type: 'olm.maxOpenShiftVersion', value: max });
        }
      },
    });
    await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
    const ns = uniqueName('ocp');
    await installer(ns);
    const name = uniqueName('ocp');
    const selector = { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } };
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'ClusterExtension',
      metadata: { name },
      spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version: '0.1.0', selector } } },
    });
    const refused = await eventually(
      'resolution refused for OpenShift 4.16',
      async () => {
        const ce = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
        const p = findCondition(ce.status?.conditions, 'Progressing');
        return ce.status?.observedGeneration === ce.metadata.generation && p?.status === 'True' && p.message.includes('resolution failed') ? ce : undefined;
      },
      180_000,
      500,
    );
    const why = `${findCondition(refused.status?.conditions, 'Progressing')?.message ?? ''}\n${refused.status?.resolution?.explanation ?? ''}`;
    assert.match(why, /maxOpenShiftVersion|OpenShift 4\.15/);
    assert.match(why, /4\.16/);

    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.0.6' } } } });
    await eventually(
      'installed at 0.0.6',
      async () => {
        const ce = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
        return ce.status?.observedGeneration === ce.metadata.generation && findCondition(ce.status?.conditions, 'Installed')?.status === 'True' && ce.status?.install?.bundle.version === '0.0.6' ? ce : undefined;
      },
      240_000,
      500,
    );
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
    await eventually('extension gone', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name })) === undefined ? true : undefined), 120_000);
  });
});
