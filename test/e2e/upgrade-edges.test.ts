/**
 * Upgrade edges on the cluster: a catalog whose channel links versions only by `skips` and
 * `skipRange` (no `replaces`). Under CatalogProvided an installed operator moves along a
 * `skips` edge, and along a `skipRange` edge straight past a version, and to nothing else.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishPackages } from '../../src/publish/packages.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition } from '../../src/kube/types.js';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import type { DeclarativeConfig } from '../../src/declcfg/index.js';
import { adminInstaller, adminInstallerObjects, e2eClient, e2eRegistry, eventually, stopE2e, uniqueName } from './env.js';
import { CORPUS } from './extensions.js';
import { managerLogger } from './manager-log.js';

let client: KubeClient;
let manager: RunningManager;
let dataDir: string;
const catalogName = uniqueName('edges');
const ns = uniqueName('edges');

/** alpha: 0.0.5; 0.0.6 skips 0.0.5; 0.1.0 skips 0.0.6 and has skipRange >=0.0.5 <0.1.0. */
function skipEdgesOnly(cfg: DeclarativeConfig): void {
  const keep = new Set(['poison-pill.v0.0.5', 'poison-pill.v0.0.6', 'poison-pill.v0.1.0']);
  cfg.bundles = cfg.bundles.filter((b) => keep.has(b.name));
  for (const ch of cfg.channels) {
    ch.entries = [
      { name: 'poison-pill.v0.0.5' },
      { name: 'poison-pill.v0.0.6', skips: ['poison-pill.v0.0.5'] },
      { name: 'poison-pill.v0.1.0', skips: ['poison-pill.v0.0.6'], skipRange: '>=0.0.5 <0.1.0' },
    ];
  }
}

async function extension(name: string): Promise<ClusterExtension | undefined> {
  return client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
}

async function settledAt(name: string, version: string): Promise<void> {
  let last = 'no ClusterExtension';
  await eventually(`${name} at ${version}`, async () => {
    const ce = await extension(name);
    if (ce !== undefined) last = `installed ${ce.status?.install?.bundle.version ?? 'nothing'}; ${(ce.status?.conditions ?? []).map((c) => `${c.type}=${c.status} (${c.reason}): ${c.message}`).join('; ')}`;
    const ok = ce?.status?.observedGeneration === ce?.metadata.generation && findCondition(ce?.status?.conditions, 'Progressing')?.status === 'False' && ce?.status?.install?.bundle.version === version;
    return ok ? true : undefined;
  }, 180_000, 500).catch((err: unknown) => {
    // Say where it stood: a timeout alone does not tell a resolution problem from an unhealthy install.
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${last}`);
  });
}

async function create(name: string, version: string): Promise<void> {
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name },
    spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version, selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } },
  });
}

/**
 * An earlier file's uninstall leaves the package's CRDs for the API server to delete, which it
 * does in its own time (its finalizer deletes their custom resources first, retrying with
 * backoff). Until they are gone the first install here waits on them ("being deleted; applying
 * once it is gone"): a clean-clone run once timed out so. So the tests start once none is being
 * deleted, and say what holds one that stays.
 */
async function noCrdBeingDeleted(group: string): Promise<void> {
  let held = '';
  await eventually(`no CustomResourceDefinition of ${group} being deleted`, async () => {
    const crds = await client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    const going = crds.items.filter((c) => (c.spec as { group?: string }).group === group && c.metadata.deletionTimestamp !== undefined);
    held = going
      .map((c) => `${c.metadata.name ?? ''} (finalizers ${(c.metadata.finalizers ?? []).join(', ')}; ${((c.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions ?? []).map((x) => `${x.type}=${x.status} ${x.reason ?? ''}: ${x.message ?? ''}`).join('; ')})`)
      .join(', ');
    return going.length === 0 ? true : undefined;
  }, 300_000, 1000).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; still being deleted: ${held}`);
  });
}

async function remove(name: string): Promise<void> {
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
  await eventually(`${name} removed`, async () => ((await extension(name)) === undefined ? true : undefined), 120_000);
}

before(async () => {
  client = await e2eClient();
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-edges-'));
  const published = await publishPackages({ packages: [join(CORPUS, 'poison-pill-operator')], registry: e2eRegistry(), repository: catalogName, transform: skipEdgesOnly });
  manager = await startManager({ client, logger: managerLogger('upgrade-edges'), dataDir, healthTimeoutMs: 60_000 });
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
  await adminInstaller(client, ns);
  await noCrdBeingDeleted('poison-pill.medik8s.io');
});

after(async () => {
  await stopE2e({ client, manager, work: dataDir, remove: [{ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName }, ...adminInstallerObjects(ns)] });
});

test('an upgrade follows a skips edge', async () => {
  const name = uniqueName('skips');
  await create(name, '0.0.5');
  await settledAt(name, '0.0.5');
  // <0.1.0 leaves only 0.0.6, which skips 0.0.5.
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '<0.1.0' } } } });
  await settledAt(name, '0.0.6');
  await remove(name);
});

test('an upgrade follows a skipRange edge past a version, and a version with no edge is refused', async () => {
  const name = uniqueName('range');
  await create(name, '0.0.5');
  await settledAt(name, '0.0.5');
  // 0.1.0 does not skip 0.0.5, but its skipRange covers it: one step, past 0.0.6.
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.1.0' } } } });
  await settledAt(name, '0.1.0');
  // Back to 0.0.6: nothing leads there from 0.1.0 under CatalogProvided.
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.0.6' } } } });
  const refused = await eventually('refused', async () => {
    const ce = await extension(name);
    const p = findCondition(ce?.status?.conditions, 'Progressing');
    return ce?.status?.observedGeneration === ce?.metadata.generation && p?.status === 'True' && p.message.includes('resolution failed') ? ce : undefined;
  });
  assert.equal(refused.status?.install?.bundle.version, '0.1.0', 'the installed version stays');
  assert.match(refused.status?.resolution?.explanation ?? '', /0\.1\.0/);
  await remove(name);
});
