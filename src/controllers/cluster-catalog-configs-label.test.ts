/**
 * The catalog image's configs label (`operators.operatorframework.io.index.configs.v1`) is the
 * image author's: it names a directory inside the image, and nothing else is read. A label that
 * climbs out (`../`) to another image's tree in the shared cache, to a host directory, or to
 * /dev/zero is refused before anything is read, InvalidCatalog naming the label, its value and why.
 */
// test process: its own (its endless-read guard stops the process)
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { API_VERSION, FINALIZER_CLEANUP, type ClusterCatalog } from '../api/types.js';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/index.js';
import { CLUSTER_CATALOG_CRD } from '../api/crds.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { Condition } from '../kube/types.js';
import { withoutEndlessRead } from '../util/endless-read.test-helper.js';
import { CatalogRegistry } from './catalog-registry.js';
import { ClusterCatalogReconciler } from './cluster-catalog.js';

const logger = pino({ level: 'silent' });
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const ATTACKER = 'a'.repeat(64);
const VICTIM = 'b'.repeat(64);

/**
 * The shared OCI cache `<root>/cache/fs/<manifest hex>`: the catalog's own image (`configs`
 * holds the valid fixture catalog under `tree`, when given) and another catalog's image beside it
 * (pulled with the manager's credentials for another ClusterCatalog), with the valid fixture
 * catalog under /configs.
 */
async function sharedCache(tree?: string): Promise<{ root: string; image: string; victim: string }> {
  const root = await mkdtemp(join(tmpdir(), 'cc-label-'));
  dirs.push(root);
  const image = join(root, 'cache', 'fs', ATTACKER);
  const victim = join(root, 'cache', 'fs', VICTIM);
  await mkdir(image, { recursive: true });
  if (tree !== undefined) await cp(join(CATALOG_TESTDATA, 'fbc', 'valid'), join(image, tree), { recursive: true });
  await cp(join(CATALOG_TESTDATA, 'fbc', 'valid'), join(victim, 'configs'), { recursive: true });
  return { root, image, victim };
}

/** Reconciles ClusterCatalog `evil`, whose image unpacks to `image` with the configs label `label`: what is served and its status. */
async function reconcile(root: string, image: string, label: string): Promise<{ registry: CatalogRegistry; progressing: Condition | undefined; serving: Condition | undefined }> {
  const cluster = new FakeCluster({ objects: [CLUSTER_CATALOG_CRD] });
  const catalog: ClusterCatalog = { apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'evil', finalizers: [FINALIZER_CLEANUP] }, spec: { source: { type: 'Image', image: { ref: 'quay.io/evil/catalog:1' } } } };
  cluster.put(catalog);
  const registry = new CatalogRegistry();
  const r = new ClusterCatalogReconciler({
    client: cluster.client(),
    registry,
    // What oci/pull.ts answers: the image config's labels, verbatim.
    pull: () => Promise.resolve({ digest: `sha256:${ATTACKER}`, dir: image, labels: { [LABEL_CATALOG_CONFIGS]: label } }),
    storeDir: join(root, 'store'),
    serverUrl: 'http://127.0.0.1:8083',
  });
  await r.reconcile({ key: 'evil', name: 'evil' }, { logger, signal: new AbortController().signal });
  const c = cluster.get({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: 'evil' }) as ClusterCatalog;
  const cond = (type: string): Condition | undefined => c.status?.conditions?.find((x) => x.type === type);
  return { registry, progressing: cond('Progressing'), serving: cond('Serving') };
}

test("a label '../<another image>/configs' does not serve the other image's catalog under this catalog's name", async () => {
  const { root, image } = await sharedCache();
  const label = `../${VICTIM}/configs`;
  const { registry, progressing, serving } = await reconcile(root, image, label);
  const served = registry.get('evil');
  assert.equal(served, undefined, `catalog "evil" serves ${served?.config.packages.length ?? 0} packages read from the image beside it in the cache`);
  assert.equal(progressing?.reason, 'InvalidCatalog');
  assert.equal(serving?.status, 'False');
  assert.match(progressing?.message ?? '', new RegExp(`image label ${LABEL_CATALOG_CONFIGS.replace(/\./g, '\\.')}="\\.\\./${VICTIM}/configs" contains "\\.\\." and could lead out of the image`));
});

test('a label leading to a host directory: none of its files is read or named in the status', async () => {
  const { root, image } = await sharedCache();
  const secretDir = join(root, 'etc-secret');
  await mkdir(secretDir, { recursive: true });
  await writeFile(join(secretDir, 'token'), 'not-fbc-but-read: [\n');
  for (const label of [`../../../../../../../../../../..${secretDir}`, secretDir]) {
    const { registry, progressing } = await reconcile(root, image, label);
    assert.equal(registry.get('evil'), undefined);
    assert.equal(progressing?.reason, 'InvalidCatalog');
    const msg = progressing?.message ?? '';
    assert.ok(!msg.includes(join(secretDir, 'token')), `status names a host file outside the image: ${msg}`);
    // An absolute label is the image's own path, as in a container: looked for inside the image.
    if (!label.includes('..')) assert.match(msg, /which is not in the image/);
  }
});

test('a label ../../…/dev/zero is refused before anything is read (the manager read it until it was OOM-killed)', async () => {
  const { root, image } = await sharedCache();
  const { registry, progressing } = await withoutEndlessRead('reconciling a catalog labelled ../../…/dev/zero', () => reconcile(root, image, '../../../../../../../../../../../../dev/zero'));
  assert.equal(registry.get('evil'), undefined);
  assert.equal(progressing?.reason, 'InvalidCatalog');
  assert.match(progressing?.message ?? '', /dev\/zero" contains "\.\." and could lead out of the image/);
});

test('a legitimate label still serves: nested and absolute (/configs/sub), relative (configs)', async () => {
  for (const [tree, label] of [
    ['configs/sub', '/configs/sub'],
    ['configs', 'configs'],
  ] as const) {
    const { root, image } = await sharedCache(tree);
    const { registry, progressing } = await reconcile(root, image, label);
    assert.equal(progressing?.reason, 'Succeeded', `${label}: ${progressing?.message ?? ''}`);
    assert.equal(registry.get('evil')?.config.packages.length, 2, label);
  }
});
