/**
 * ClusterCatalog on the local control plane: a catalog image built and pushed by Binnacle is
 * pulled (pinned by digest), unpacked and served over HTTP; new content pushed under the same
 * tag is picked up (here on a refresh request rather than waiting a poll interval) and an
 * installed operator upgrades to what it newly allows; a broken image leaves the last good
 * content served and says why.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import semver from 'semver';
import { publishPackages } from '../../src/publish/packages.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import { buildImage, pushImage } from '../../src/oci/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition } from '../../src/kube/types.js';
import { API_VERSION, type ClusterCatalog, type ClusterExtension } from '../../src/api/types.js';
import type { DeclarativeConfig } from '../../src/declcfg/index.js';
import { adminInstaller, e2eClient, e2eRegistry, eventually, uniqueName } from './env.js';
import { CORPUS } from './extensions.js';
import { managerLogger } from './manager-log.js';

let client: KubeClient;
let manager: RunningManager;
let dataDir: string;
const repo = uniqueName('cat');
const name = uniqueName('cat');
const ns = uniqueName('cat');
const ce = uniqueName('pp');
const tag = (): string => `${e2eRegistry()}/${repo}/catalog:latest`;

/** Keeps only bundles up to `max`, as an older catalog would have. */
function upTo(max: string) {
  return (cfg: DeclarativeConfig): void => {
    const keep = new Set(
      cfg.bundles
        .filter((b) => {
          const v = (b.properties.find((p) => p.type === 'olm.package')?.value as { version: string } | undefined)?.version ?? '0.0.0';
          return semver.lte(v, max);
        })
        .map((b) => b.name),
    );
    cfg.bundles = cfg.bundles.filter((b) => keep.has(b.name));
    for (const ch of cfg.channels) ch.entries = ch.entries.filter((e) => keep.has(e.name)).map((e) => (e.replaces !== undefined && !keep.has(e.replaces) ? { ...e, replaces: undefined } : e));
  };
}

async function catalog(): Promise<ClusterCatalog> {
  return client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name });
}

async function refresh(): Promise<void> {
  await client.patch({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name }, { metadata: { annotations: { 'binnacle.dev/refresh-requested-at': new Date().toISOString() } } });
}

async function servedNames(): Promise<string[]> {
  const base = (await catalog()).status?.urls?.base ?? '';
  const res = await fetch(`${base}/api/v1/metas?schema=olm.bundle`);
  assert.equal(res.status, 200);
  return (await res.text()).trim().split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { name: string }).name).sort();
}

before(async () => {
  client = await e2eClient();
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-catalog-'));
  manager = await startManager({ client, logger: managerLogger('catalog'), dataDir, healthTimeoutMs: 60_000 });
});

after(async () => {
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce });
  await eventually('extension gone', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce })) === undefined ? true : undefined), 120_000).catch(() => undefined);
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name });
  await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${ns}-installer` });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  await manager.stop();
  client.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('a catalog image is served by digest, new content under the same tag is picked up and upgrades follow, a broken image keeps the last good content', async () => {
  const pkg = join(CORPUS, 'poison-pill-operator');
  const first = await publishPackages({ packages: [pkg], registry: e2eRegistry(), repository: repo, catalogTag: tag(), transform: upTo('0.0.6') });
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name }, spec: { source: { type: 'Image', image: { ref: tag() } }, priority: 5 } });
  const served = await eventually('catalog Serving', async () => {
    const c = await catalog();
    return findCondition(c.status?.conditions, 'Serving')?.status === 'True' ? c : undefined;
  });
  assert.equal(served.status?.resolvedSource?.image.ref, first.catalog, 'pinned to the digest it pulled');
  assert.ok(!(await servedNames()).includes('poison-pill.v0.1.0'));
  assert.ok((await servedNames()).includes('poison-pill.v0.0.6'));

  // Install from it: the head of the old content.
  await adminInstaller(client, ns);
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: ce },
    spec: { namespace: ns, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': name } } } } },
  });
  const installedAt = (version: string) =>
    eventually(`${ce} at ${version}`, async () => {
      const x = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ce });
      return x.status?.install?.bundle.version === version && findCondition(x.status.conditions, 'Progressing')?.status === 'False' ? x : undefined;
    }, 180_000, 500);
  await installedAt('0.0.6');

  // New content under the same tag: picked up, and the operator upgrades to the new head by itself.
  const second = await publishPackages({ packages: [pkg], registry: e2eRegistry(), repository: repo, catalogTag: tag() });
  assert.notEqual(second.catalog, first.catalog);
  await refresh();
  await eventually('new digest served', async () => ((await catalog()).status?.resolvedSource?.image.ref === second.catalog ? true : undefined));
  assert.ok((await servedNames()).includes('poison-pill.v0.1.0'));
  await installedAt('0.1.0');

  // A broken image under the tag: refused with the reason; the last good content stays served.
  const work = await mkdtemp(join(tmpdir(), 'binnacle-bad-catalog-'));
  try {
    await writeFile(join(work, 'catalog.json'), JSON.stringify({ schema: 'olm.package', defaultChannel: 'stable' }));
    const bad = await buildImage({ layers: [{ dir: work, prefix: '/configs' }], labels: { 'operators.operatorframework.io.index.configs.v1': '/configs' } });
    await pushImage(bad, tag());
    await rm(bad.layoutDir, { recursive: true, force: true });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  await refresh();
  const refused = await eventually('bad content refused', async () => {
    const c = await catalog();
    const p = findCondition(c.status?.conditions, 'Progressing');
    return p?.status === 'True' && p.reason === 'InvalidCatalog' ? c : undefined;
  });
  assert.match(findCondition(refused.status?.conditions, 'Progressing')?.message ?? '', /name/);
  assert.equal(findCondition(refused.status?.conditions, 'Serving')?.status, 'True');
  assert.equal(refused.status?.resolvedSource?.image.ref, second.catalog, 'still pinned to the last good digest');
  assert.ok((await servedNames()).includes('poison-pill.v0.1.0'), 'last good content still served');
});
