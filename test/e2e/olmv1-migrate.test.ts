/**
 * Moving a cluster over from OLM v1 without a reinstall (issue 45 §3). operator-controller
 * installed a ClusterExtension and was stopped: its objects are as its Helm applier leaves them
 * (the bundle converted for the install namespace, OLM v1's owner labels, Helm's release marks,
 * the ClusterExtension as their controller) and the ClusterExtension keeps operator-controller's
 * cache finalizers, and OLM v1's CRDs are its chart's. The admin hands the CRDs over (one `kubectl
 * label`, as docs/from-olm-v1.md says); Binnacle's manager starts and takes the objects over in
 * place: the same uids (nothing deleted or re-created, so nothing the operator keeps is lost),
 * Binnacle's ownership marks on each, Installed in OLM v1's words; it then upgrades along the
 * catalog and uninstalls when the ClusterExtension is deleted, finalizers and all. An object in the
 * way that operator-controller did not make for this ClusterExtension is still refused (the unit
 * test in src/apply/conflict-policy.test.ts has those cases). operator-controller's release history
 * (its chunked Secrets in its namespace) comes along: `binnacle olmv1 import-history` writes it as
 * Helm records of the release Binnacle keeps, the manager moves them into its history (checked),
 * and `helm history` shows operator-controller's revision before Binnacle's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishPackages } from '../../src/publish/packages.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, isKubeObject, type KubeObject } from '../../src/kube/types.js';
import { API_VERSION } from '../../src/api/types.js';
import { OLMV1_API_VERSION, type Olmv1ClusterCatalog, type Olmv1ClusterExtension } from '../../src/api/olmv1/types.js';
import { convertRegistryV1, loadBundleDir } from '../../src/bundle/index.js';
import { bundleDeploymentName } from '../../src/api/names.js';
import { toManifest } from '../../src/apply/release.js';
import { chunkedRecordSecrets } from '../../src/apply/release-chunked.test-helper.js';
import { adminInstaller, adminInstallerObjects, binnacle, e2eClient, e2eKubeconfig, e2eRegistry, eventually, kubectl, startE2eManager, stopE2e, uniqueName } from './env.js';
import { conditionsLine, CORPUS, poisonPillTwoVersions } from './extensions.js';

let client: KubeClient;
let manager: RunningManager | undefined;
let work: string;
const catalogName = uniqueName('olmv1-mig-cat');
const ns = uniqueName('olmv1-mig');
const ceName = uniqueName('olmv1-mig-ce');
const ceRef = { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName };
const OLM_FINALIZERS = ['olm.operatorframework.io/cleanup-unpack-cache', 'olm.operatorframework.io/cleanup-contentmanager-cache'];
const OLMV1_CRDS = ['clusterextensions.olm.operatorframework.io', 'clustercatalogs.olm.operatorframework.io'];
const crdRef = (name: string): { apiVersion: string; kind: string; name: string } => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
const managerOptions = { olmv1: { installer: { namespace: ns, name: 'installer' } } };
/** Where operator-controller kept its release records (olmv1-system in its own manifests). */
const olmNs = uniqueName('olmv1-mig-system');
const run = promisify(execFile);

async function installedAt(version: string): Promise<Olmv1ClusterExtension> {
  let last = 'no ClusterExtension';
  return eventually(`${ceName} installed at ${version}`, async () => {
    const ce = await client.find<Olmv1ClusterExtension>(ceRef);
    last = conditionsLine(ce);
    const installed = findCondition(ce?.status?.conditions, 'Installed');
    return installed?.status === 'True' && ce?.status?.install?.bundle.version === version ? ce : undefined;
  }, 240_000, 500).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${last}`);
  });
}

/** The objects as operator-controller's Helm applier installed them for `ce` (release `ce` in `ns`). */
async function asOperatorControllerInstalled(ce: KubeObject): Promise<KubeObject[]> {
  const bundle = await loadBundleDir(join(CORPUS, 'poison-pill-operator', '0.0.5'));
  const { objects } = convertRegistryV1(bundle, { installNamespace: ns, watchNamespaces: [] });
  return objects.filter(isKubeObject).map((o) => ({
    ...o,
    metadata: {
      ...o.metadata,
      labels: { ...(o.metadata.labels ?? {}), 'olm.operatorframework.io/owner-kind': 'ClusterExtension', 'olm.operatorframework.io/owner-name': ceName, 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { ...(o.metadata.annotations ?? {}), 'meta.helm.sh/release-name': ceName, 'meta.helm.sh/release-namespace': ns },
      ownerReferences: [{ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName, uid: ce.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
  }));
}

const idOf = (o: KubeObject): string => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
const refOf = (o: KubeObject): { apiVersion: string; kind: string; namespace?: string; name: string } => ({ apiVersion: o.apiVersion, kind: o.kind, ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }), name: o.metadata.name ?? '' });

let installedByOlm: KubeObject[] = [];
const uidsBefore = new Map<string, string>();

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-olmv1-migrate-'));
  await adminInstaller(client, ns);
  const published = await publishPackages({ packages: [join(CORPUS, 'poison-pill-operator')], registry: e2eRegistry(), repository: catalogName, transform: poisonPillTwoVersions });
  // The manager once, for its CRDs and the catalog; then stopped, as the cluster ran operator-controller.
  manager = await startE2eManager('olmv1-migrate', client, work, managerOptions);
  await client.apply({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
  await eventually('catalog serving', async () => {
    const c = await client.find<Olmv1ClusterCatalog>({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', name: catalogName });
    return findCondition(c?.status?.conditions, 'Serving')?.status === 'True' ? true : undefined;
  }, 120_000);
  await manager.stop();
  manager = undefined;
  // OLM v1's CRDs as operator-controller's chart leaves them: not Binnacle's.
  for (const name of OLMV1_CRDS) await client.patch(crdRef(name), { metadata: { labels: { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/part-of': 'olm' }, annotations: { 'meta.helm.sh/release-name': 'olmv1', 'meta.helm.sh/release-namespace': 'olmv1-system' } } });

  // What operator-controller left: the ClusterExtension with its finalizers, and the installed objects.
  const ce = await client.create({
    ...ceRef,
    metadata: { name: ceName, finalizers: OLM_FINALIZERS },
    spec: { namespace: ns, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version: '0.0.5', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } },
  });
  installedByOlm = await asOperatorControllerInstalled(ce);
  const crdsFirst = [...installedByOlm].sort((a, b) => Number(b.kind === 'CustomResourceDefinition') - Number(a.kind === 'CustomResourceDefinition'));
  for (const o of crdsFirst) {
    const made = await client.create(o);
    uidsBefore.set(idOf(o), made.metadata.uid ?? '');
  }
  // Its release record: revision 1 of release <ce> in the install namespace, in its chunked store (a small chunk size, so it spans chunks).
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: olmNs } });
  const manifest = toManifest(installedByOlm.map((o) => ({ ...o, metadata: { ...o.metadata, ownerReferences: undefined } })));
  const record = { name: ceName, namespace: ns, version: 1, status: 'deployed' as const, description: 'Install complete', firstDeployed: '', lastDeployed: '', chart: { name: 'poison-pill-operator', version: '0.0.5' }, config: {}, manifest };
  for (const secret of chunkedRecordSecrets(record, { namespace: olmNs, extension: { name: ceName, uid: ce.metadata.uid ?? '' }, chunkSize: 4096 })) await client.create(secret);
});

after(async () => {
  for (const name of OLMV1_CRDS) await client.patch(crdRef(name), { metadata: { labels: { 'app.kubernetes.io/managed-by': 'binnacle-manager' } } }).catch(() => undefined);
  if (manager === undefined) manager = await startE2eManager('olmv1-migrate', client, work, managerOptions).catch(() => undefined);
  await client.delete(ceRef).catch(() => undefined);
  await eventually('the ClusterExtension gone', async () => ((await client.find(ceRef)) === undefined ? true : undefined), 180_000).catch(() => undefined);
  await stopE2e({ client, manager, work, remove: [{ apiVersion: 'v1', kind: 'Namespace', name: olmNs }, { apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', name: catalogName }, ...installedByOlm.filter((o) => o.metadata.namespace === undefined).map(refOf), ...adminInstallerObjects(ns)] });
});

test("Binnacle takes over what operator-controller installed, in place, then upgrades and uninstalls it", async () => {
  assert.ok(installedByOlm.some((o) => o.kind === 'Deployment') && installedByOlm.some((o) => o.kind === 'CustomResourceDefinition'), 'the bundle installs a Deployment and CRDs');
  // The hand-over docs/from-olm-v1.md gives, with kubectl: OLM v1's CRDs become the manager's to serve.
  await kubectl('label', 'crd', ...OLMV1_CRDS, 'app.kubernetes.io/managed-by=binnacle-manager', '--overwrite');
  // operator-controller's history, brought over before the manager first reconciles the extension.
  const imported = await binnacle('olmv1', 'import-history', ceName, '--from-namespace', olmNs);
  assert.equal(imported.code, 0, imported.out + imported.err);
  assert.match(imported.out, /brought over 1 \(deployed, poison-pill-operator-0\.0\.5\)/);
  manager = await startE2eManager('olmv1-migrate', client, work, managerOptions);
  const installed = await installedAt('0.0.5');
  assert.equal(findCondition(installed.status?.conditions, 'Installed')?.reason, 'Succeeded', conditionsLine(installed));
  const release = bundleDeploymentName(ceName, 'poison-pill-operator');
  const helmHistory = async (): Promise<string[]> => {
    const { stdout } = await run('helm', ['--kubeconfig', e2eKubeconfig(), 'history', release, '-n', ns, '-o', 'json']);
    return (JSON.parse(stdout) as { revision: number; status: string; chart: string }[]).map((r) => `${r.revision} ${r.status} ${r.chart}`);
  };
  assert.deepEqual(await helmHistory(), ['1 superseded poison-pill-operator-0.0.5', '2 deployed poison-pill-operator-0.0.5'], "operator-controller's revision, then Binnacle's take-over");

  // Taken over in place: every object operator-controller made is the same object, now Binnacle's.
  for (const o of installedByOlm) {
    const live = await client.find(refOf(o));
    assert.ok(live !== undefined, `${idOf(o)} is still there`);
    assert.equal(live.metadata.uid, uidsBefore.get(idOf(o)), `${idOf(o)} was not deleted or re-created`);
    assert.ok(live.metadata.labels?.['binnacle.dev/owner-kind'] !== undefined, `${idOf(o)} carries Binnacle's ownership marks`);
    assert.equal(live.metadata.labels?.['olm.operatorframework.io/owner-name'], ceName, `${idOf(o)} keeps OLM v1's owner labels`);
  }

  await client.patch(ceRef, { spec: { source: { catalog: { version: '0.0.6' } } } });
  await installedAt('0.0.6');
  assert.deepEqual((await helmHistory()).slice(1), ['2 superseded poison-pill-operator-0.0.5', '3 deployed poison-pill-operator-0.0.6']);
  const deployment = installedByOlm.find((o) => o.kind === 'Deployment');
  assert.ok(deployment !== undefined);
  assert.equal((await client.find(refOf(deployment)))?.metadata.uid, uidsBefore.get(idOf(deployment)), 'upgraded in place');

  // Deleting it uninstalls, and nothing holds it: operator-controller's cache finalizers go too.
  await client.delete(ceRef);
  await eventually('uninstalled', async () => {
    const left = [await client.find(ceRef), await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName })].filter((x) => x !== undefined);
    return left.length === 0 ? true : undefined;
  }, 180_000);
  assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: ns })).items.map((d) => d.metadata.name), [], 'the operator is gone');
});
