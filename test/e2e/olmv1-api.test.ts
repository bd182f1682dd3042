/**
 * OLM v1's API served unchanged (issue 45 §1): a ClusterCatalog and a ClusterExtension written
 * as OLM v1's manifests (`olm.operatorframework.io/v1`, no serviceAccount: the manager's default
 * installer) install an operator from a catalog in the local registry; their status reads as
 * OLM v1's (catalogd's Serving/Progressing, `urls.base` answering `/api/v1/all`; Installed,
 * Progressing=True/Succeeded, `install.bundle`); `binnacle status` shows it; a new version
 * upgrades it; deleting it uninstalls.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishPackages } from '../../src/publish/packages.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition } from '../../src/kube/types.js';
import { API_VERSION } from '../../src/api/types.js';
import { OLMV1_API_VERSION, type Olmv1ClusterCatalog, type Olmv1ClusterExtension } from '../../src/api/olmv1/types.js';
import { adminInstaller, adminInstallerObjects, binnacle, e2eClient, e2eRegistry, eventually, startE2eManager, stopE2e, uniqueName } from './env.js';
import { conditionsLine, CORPUS, poisonPillTwoVersions } from './extensions.js';

let client: KubeClient;
let manager: RunningManager | undefined;
let work: string;
const catalogName = uniqueName('olmv1-cat');
const ns = uniqueName('olmv1');
const ceName = uniqueName('olmv1-ce');

async function v1Extension(): Promise<Olmv1ClusterExtension | undefined> {
  return client.find<Olmv1ClusterExtension>({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName });
}

/** Installed at `version` in OLM v1's words: Installed=True/Succeeded, Progressing=True/Succeeded at the latest generation, install.bundle. */
async function installedAt(version: string): Promise<Olmv1ClusterExtension> {
  let last = 'no ClusterExtension';
  return eventually(`${ceName} installed at ${version}`, async () => {
    const ce = await v1Extension();
    last = `install ${JSON.stringify(ce?.status?.install)}; ${conditionsLine(ce)}`;
    const installed = findCondition(ce?.status?.conditions, 'Installed');
    const progressing = findCondition(ce?.status?.conditions, 'Progressing');
    const ok = installed?.status === 'True' && installed.reason === 'Succeeded' && progressing?.status === 'True' && progressing.reason === 'Succeeded' && progressing.observedGeneration === ce?.metadata.generation && ce?.status?.install?.bundle.version === version;
    return ok ? ce : undefined;
  }, 240_000, 500).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${last}`);
  });
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-olmv1-'));
  await adminInstaller(client, ns);
  const published = await publishPackages({ packages: [join(CORPUS, 'poison-pill-operator')], registry: e2eRegistry(), repository: catalogName, transform: poisonPillTwoVersions });
  // The admin's default installer for OLM v1 ClusterExtensions that name no ServiceAccount.
  manager = await startE2eManager('olmv1-api', client, work, { olmv1: { installer: { namespace: ns, name: 'installer' } } });
  // OLM v1's manifest, as written for operator-controller.
  await client.apply({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
});

after(async () => {
  await client.delete({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName }).catch(() => undefined);
  await eventually('the OLM v1 ClusterExtension gone', async () => ((await v1Extension()) === undefined ? true : undefined), 180_000).catch(() => undefined);
  await stopE2e({ client, manager, work, remove: [{ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', name: catalogName }, ...adminInstallerObjects(ns)] });
});

test('an OLM v1 ClusterCatalog is served with catalogd status and HTTP paths', async () => {
  const catalog = await eventually('catalog serving', async () => {
    const c = await client.find<Olmv1ClusterCatalog>({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', name: catalogName });
    const serving = findCondition(c?.status?.conditions, 'Serving');
    return serving?.status === 'True' && serving.reason === 'Available' ? c : undefined;
  }, 120_000);
  assert.equal(findCondition(catalog.status?.conditions, 'Progressing')?.reason, 'Succeeded');
  assert.equal(catalog.metadata.labels?.['olm.operatorframework.io/metadata.name'], catalogName);
  assert.match(catalog.status?.resolvedSource?.image.ref ?? '', /@sha256:[0-9a-f]{64}$/);
  assert.ok(catalog.status?.lastUnpacked !== undefined);
  const base = catalog.status?.urls?.base ?? '';
  assert.match(base, new RegExp(`/catalogs/${catalogName}$`));
  const all = await fetch(`${base}/api/v1/all`);
  assert.equal(all.status, 200);
  assert.match(await all.text(), /"name":"poison-pill-operator"/);
  const metas = await fetch(`${base}/api/v1/metas?schema=olm.bundle`);
  assert.equal((await metas.text()).trim().split('\n').length, 2);
});

test('an OLM v1 ClusterExtension installs, reads as OLM v1, shows in binnacle status, upgrades and uninstalls', async () => {
  // OLM v1's manifest: no serviceAccount (deprecated in v1.11); the manager's --olmv1-installer installs.
  await client.apply({
    apiVersion: OLMV1_API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: ceName },
    spec: { namespace: ns, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version: '0.0.5', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } },
  });
  const installed = await installedAt('0.0.5');
  assert.deepEqual(installed.status?.install, { bundle: { name: 'poison-pill.v0.0.5', version: '0.0.5' } });
  assert.match(findCondition(installed.status?.conditions, 'Installed')?.message ?? '', /^Installed bundle .+ successfully$/);
  for (const type of ['Deprecated', 'PackageDeprecated', 'ChannelDeprecated', 'BundleDeprecated']) assert.equal(findCondition(installed.status?.conditions, type)?.reason, 'NotDeprecated', type);
  assert.equal(installed.status?.activeRevisions?.length, 1);

  const status = await binnacle('status', ceName);
  assert.equal(status.code, 0, status.err);
  assert.match(status.out, /Installed:\s+poison-pill\.v0\.0\.5/);
  assert.match(status.out, /API:\s+olm\.operatorframework\.io\/v1 ClusterExtension/);

  await client.patch({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName }, { spec: { source: { catalog: { version: '0.0.6' } } } });
  await installedAt('0.0.6');

  await client.delete({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName });
  await eventually('uninstalled', async () => {
    const left = [await v1Extension(), await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName })].filter((x) => x !== undefined);
    const bds = (await client.list(API_VERSION, 'BundleDeployment')).items.filter((bd) => bd.metadata.labels?.[`needed-by.binnacle.dev/${ceName}`] !== undefined);
    return left.length === 0 && bds.length === 0 ? true : undefined;
  }, 180_000);
  const deployments = (await client.list('apps/v1', 'Deployment', { namespace: ns })).items;
  assert.deepEqual(deployments.map((d) => d.metadata.name), [], 'the operator is gone');
});
