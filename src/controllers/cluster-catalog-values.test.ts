/**
 * A catalog image whose FBC is shaped to take far more memory than its bytes (20 MB of empty
 * objects: 427 MiB of heap and 1 GiB of peak RSS once parsed, the manager's whole limit) is
 * refused before it is parsed: InvalidCatalog naming the file and why, nothing served.
 */
// test process: its own (its endless-read guard stops the process)
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { API_VERSION, FINALIZER_CLEANUP, type ClusterCatalog } from '../api/types.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/index.js';
import { CLUSTER_CATALOG_CRD } from '../api/crds.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { CatalogRegistry } from './catalog-registry.js';
import { ClusterCatalogReconciler } from './cluster-catalog.js';

const logger = pino({ level: 'silent' });
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

test('a catalog of 20 MB of empty objects is InvalidCatalog naming the file and the bound, without the memory its values take', async () => {
  const root = await mkdtemp(join(tmpdir(), 'cc-values-'));
  dirs.push(root);
  const image = join(root, 'image');
  await mkdir(join(image, 'configs'), { recursive: true });
  const file = join(image, 'configs', 'catalog.json');
  await writeFile(file, `{"schema":"example.com.x","name":"a","v":[${'{},'.repeat(7_000_000)}{}]}\n`);
  const cluster = new FakeCluster({ objects: [CLUSTER_CATALOG_CRD] });
  cluster.put({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'heavy', finalizers: [FINALIZER_CLEANUP] }, spec: { source: { type: 'Image', image: { ref: 'quay.io/evil/catalog:1' } } } } satisfies ClusterCatalog);
  const registry = new CatalogRegistry();
  const r = new ClusterCatalogReconciler({
    client: cluster.client(),
    registry,
    pull: () => Promise.resolve({ digest: `sha256:${'a'.repeat(64)}`, dir: image, labels: { [LABEL_CATALOG_CONFIGS]: '/configs' } }),
    storeDir: join(root, 'store'),
    serverUrl: 'http://127.0.0.1:8083',
  });
  const peak = process.resourceUsage().maxRSS;
  await r.reconcile({ key: 'heavy', name: 'heavy' }, { logger, signal: new AbortController().signal });
  const grownMiB = (process.resourceUsage().maxRSS - peak) / 1024;
  const c = cluster.get({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: 'heavy' }) as ClusterCatalog;
  const progressing = c.status?.conditions?.find((x) => x.type === 'Progressing');
  assert.equal(registry.get('heavy'), undefined);
  assert.equal(progressing?.reason, 'InvalidCatalog');
  assert.match(progressing?.message ?? '', new RegExp(`fbc\\.too-many-values\\] ${file.replace(/[.]/g, '\\.')}:1: the catalog's documents parse into more than 8388608 values`));
  assert.ok(grownMiB < 96, `peak RSS grew by ${grownMiB.toFixed(0)} MiB`);
});
