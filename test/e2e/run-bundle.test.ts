/**
 * The operator developer's loop on the cluster (issue 14 §1): `run bundle` of a directory (shipped
 * in ConfigMaps, no registry) and of an image, `run bundle-upgrade` along an upgrade edge (and a
 * refusal without one), `cleanup` keeping the CRDs and their custom resources, then with
 * `--delete-crds`, a run whose operator never becomes ready (the timeout names the Deployment and
 * its condition), and the bad inputs: a missing directory, an image that does not exist, a
 * cluster without Binnacle; then `run bundle --index-image`: the bundle joins an existing catalog
 * image's package graph, the index's other packages stay installable from the result, and an
 * index image that is missing or is a bundle image is refused before anything changes. The
 * manager runs in process, as `binnacle manager` would.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { parse as parseYaml, stringify as toYamlText } from 'yaml';
import { buildBundleImage } from '../../src/bundle/index.js';
import { ensureCrds } from '../../src/controllers/crds.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import { describePlan, planCleanup, readBundleInput, readIndexImage, requireBinnacle, runBundle, runBundleUpgrade, runCleanup } from '../../src/devloop/index.js';
import { publishPackages } from '../../src/publish/packages.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { clusterDown, clusterUp } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';
import { BinnacleError } from '../../src/util/errors.js';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import { CORPUS } from './extensions.js';
import { adminInstaller, e2eClient, e2eRegistry, eventually, startE2eManager, stopE2e, uniqueName } from './env.js';

const PKG = 'poison-pill-operator';
const CRD = 'poisonpillconfigs.poison-pill.medik8s.io';
let client: KubeClient;
let manager: RunningManager | undefined;
let work: string;
let cacheDir: string;
const ns = uniqueName('runb');
const progress = (): void => undefined;

/** The parts of a CSV the tests change. */
interface Csv {
  spec: { replaces?: string; install: { spec: { deployments: { spec: { template: { spec: Record<string, unknown> } } }[] } } };
}

/** A copy of a corpus bundle with its CSV changed by `edit`. */
async function bundleCopy(version: string, edit?: (csv: Csv) => void): Promise<string> {
  const dir = join(work, `${version}-${Math.random().toString(36).slice(2, 8)}`);
  await cp(join(CORPUS, PKG, version), dir, { recursive: true });
  if (edit !== undefined) {
    const manifests = join(dir, 'manifests');
    const file = (await readdir(manifests)).find((f) => f.endsWith('clusterserviceversion.yaml'));
    assert.ok(file !== undefined, `${dir} has no CSV`);
    const csv = parseYaml(await readFile(join(manifests, file), 'utf8')) as Csv;
    edit(csv);
    await writeFile(join(manifests, file), toYamlText(csv));
  }
  return dir;
}

async function crdExists(name: string): Promise<boolean> {
  return (await client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name })) !== undefined;
}

async function rejects(p: Promise<unknown>, code: string, ...parts: (string | RegExp)[]): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof BinnacleError, `expected a BinnacleError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    for (const part of parts) assert.match(err.message, typeof part === 'string' ? new RegExp(part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : part);
    return err.message;
  }
  assert.fail(`expected ${code}`);
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-run-bundle-'));
  cacheDir = join(work, 'cache');
});

after(async () => {
  await stopE2e({ client, manager, work, remove: [{ apiVersion: 'v1', kind: 'Namespace', name: ns }] });
});

test('a cluster without Binnacle: run bundle says so and what to run next', async () => {
  // A control plane of this test's own: the shared e2e cluster has Binnacle's CRDs once any test ran.
  const name = `${process.env.BINNACLE_E2E_CLUSTER ?? 'e2e'}-bare`;
  const logger = pino({ level: 'silent' });
  const up = await clusterUp({ name, logger, timeoutMs: 240_000, progress: () => undefined });
  const bare = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: up.kubeconfig }));
  try {
    assert.equal(await bare.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'clusterextensions.binnacle.dev' }), undefined, 'a fresh cluster has no Binnacle CRDs');
    await rejects(requireBinnacle(bare), 'RUN_BUNDLE_NO_BINNACLE', 'clusterextensions.binnacle.dev', 'binnacle install-self', 'binnacle manager');
    // Through the CLI too: one clear line, no stack trace.
    const dir = await bundleCopy('0.0.5');
    const res = await promisify(execFile)(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'binnacle.js'), 'run', 'bundle', dir, '--kubeconfig', up.kubeconfig, '--timeout', '10s']).then(
      () => assert.fail('run bundle succeeded on a cluster without Binnacle'),
      (err: unknown) => err as { code?: number; stderr?: string },
    );
    assert.equal(res.code, 1);
    assert.match(res.stderr ?? '', /has no Binnacle .*binnacle install-self/);
    assert.doesNotMatch(res.stderr ?? '', /\n\s+at /, 'no stack trace');
  } finally {
    bare.close();
    await clusterDown({ name, logger });
  }
});

test("a cluster with Binnacle's CRDs but no manager running: the timeout says so and what to run", async () => {
  await ensureCrds(client);
  await rejects(
    runBundle({ client, input: await readBundleInput(await bundleCopy('0.0.5'), { cacheDir }), namespace: ns, timeoutMs: 5_000, progress }),
    'RUN_BUNDLE_TIMEOUT',
    'ClusterCatalog poison-pill-operator-run-bundle has no status: no Binnacle manager is reconciling this cluster',
    'binnacle manager',
  );
  // cleanup needs no manager while nothing was installed (the API server may still answer 429
  // "storage is (re)initializing" for the CRDs just made: try again).
  await eventually(
    'cleanup without a manager',
    async () => {
      await runCleanup(client, await planCleanup(client, PKG, { deleteCrds: false, deleteAll: false }), { timeoutMs: 60_000, progress });
      return true;
    },
    90_000,
    2_000,
  );
  assert.equal(await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'poison-pill-operator' }), undefined);
  manager = await startE2eManager('run-bundle', client, work);
});

test('bad input: a missing bundle directory, an image that does not exist', async () => {
  await rejects(readBundleInput(join(work, 'no-such-bundle'), { cacheDir }), 'RUN_BUNDLE_DIR_MISSING', 'does not exist');
  const image = `${e2eRegistry()}/${uniqueName('nothing')}/bundle:v0.0.1`;
  await rejects(readBundleInput(image, { cacheDir }), 'RUN_BUNDLE_IMAGE', image, 'was not found', 'binnacle bundle build');
});

test('run bundle of a directory (no registry), then bundle-upgrade: refused without an upgrade edge, done along one', async () => {
  const r = await runBundle({ client, input: await readBundleInput(await bundleCopy('0.0.5'), { cacheDir }), namespace: ns, timeoutMs: 240_000, progress });
  assert.equal(r.version, '0.0.5');
  assert.match(r.image, /^configmaps:\/\//, 'the bundle went through ConfigMaps');
  const cat = await client.get({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: r.catalog });
  assert.equal((cat.spec as { source: { type: string } }).source.type, 'ConfigMaps');
  assert.ok((await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'poison-pill-controller-manager' })) !== undefined, 'the operator Deployment exists');

  // 0.0.6 as shipped has no replaces/skips/skipRange: no edge from 0.0.5.
  await rejects(runBundleUpgrade({ client, input: await readBundleInput(await bundleCopy('0.0.6'), { cacheDir }), timeoutMs: 60_000, progress }), 'RUN_BUNDLE_NO_UPGRADE_EDGE', 'poison-pill.v0.0.6', 'no upgrade edge from the installed poison-pill.v0.0.5', 'replaces');
  const up = await runBundleUpgrade({
    client,
    input: await readBundleInput(await bundleCopy('0.0.6', (csv) => void (csv.spec.replaces = 'poison-pill.v0.0.5')), { cacheDir }),
    timeoutMs: 240_000,
    progress,
  });
  assert.equal(up.from, '0.0.5');
  assert.equal(up.version, '0.0.6');
});

test('cleanup without --delete-crds keeps the CRDs and their custom resources, and says so first', async () => {
  await client.apply({ apiVersion: 'poison-pill.medik8s.io/v1alpha1', kind: 'PoisonPillConfig', metadata: { name: 'keep-me', namespace: ns }, spec: {} });
  const plan = await planCleanup(client, PKG, { deleteCrds: false, deleteAll: false });
  const text = describePlan(plan).join('\n');
  assert.match(text, /ClusterExtension poison-pill-operator/);
  assert.match(text, new RegExp(`and keep:\\n(.*\\n)*  CustomResourceDefinition ${CRD.replace(/\./g, '\\.')} \\(1 custom resource; --delete-crds removes them\\)`));
  await runCleanup(client, plan, { timeoutMs: 180_000, progress });
  assert.equal(await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'poison-pill-operator' }), undefined);
  assert.equal(await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'poison-pill-controller-manager' }), undefined, 'the operator is gone');
  assert.ok(await crdExists(CRD), 'the CRD stays');
  assert.ok((await client.find({ apiVersion: 'poison-pill.medik8s.io/v1alpha1', kind: 'PoisonPillConfig', namespace: ns, name: 'keep-me' })) !== undefined, 'its custom resource stays');
});

test('run bundle of an image (pushed to the registry), taking back the kept CRDs; cleanup --delete-crds removes them and their data', async () => {
  const tag = `${e2eRegistry()}/${uniqueName('runb')}/poison-pill-bundle:v0.0.6`;
  await buildBundleImage(await bundleCopy('0.0.6'), { tag, push: true });
  const input = await readBundleInput(tag, { cacheDir });
  assert.match(input.image ?? '', /@sha256:/);
  const r = await runBundle({ client, input, namespace: ns, timeoutMs: 240_000, progress });
  assert.equal(r.version, '0.0.6');
  assert.ok(r.image.startsWith(tag.split(':v0.0.6')[0] ?? ''), r.image);
  const plan = await planCleanup(client, PKG, { deleteCrds: true, deleteAll: false });
  assert.match(describePlan(plan).join('\n'), new RegExp(`CustomResourceDefinition ${CRD.replace(/\./g, '\\.')} with its 1 custom resource`));
  await runCleanup(client, plan, { timeoutMs: 180_000, progress });
  assert.equal(await crdExists(CRD), false, 'the CRD is gone');
  await rejects(planCleanup(client, PKG, { deleteCrds: false, deleteAll: false }), 'CLEANUP_NOT_FOUND', 'no operator of package poison-pill-operator');
});

test('run bundle whose operator never becomes ready: the timeout names the Deployment, its condition and the Pod events', async (t) => {
  const dir = await bundleCopy('0.0.5', (csv) => {
    const dep = csv.spec.install.spec.deployments[0];
    assert.ok(dep !== undefined, 'the CSV has a Deployment');
    dep.spec.template.spec.nodeSelector = { 'binnacle.dev/no-such-node': 'true' };
  });
  const message = await rejects(
    runBundle({ client, input: await readBundleInput(dir, { cacheDir }), namespace: ns, timeoutMs: 60_000, progress }),
    'RUN_BUNDLE_TIMEOUT',
    `Deployment ${ns}/poison-pill-controller-manager is not available`,
    /Available=False/,
    /FailedScheduling/,
    'binnacle cleanup',
  );
  assert.match(message, /what is stuck:/);
  t.diagnostic(message);
  await runCleanup(client, await planCleanup(client, PKG, { deleteCrds: false, deleteAll: true }), { timeoutMs: 180_000, progress });
  assert.equal(await crdExists(CRD), false);
});

/** The catalog a `run bundle` ClusterCatalog serves, read back from its ConfigMaps: package → bundle names. */
async function servedCatalog(namespace: string, catalog: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const cm of (await client.list('v1', 'ConfigMap', { namespace, labelSelector: `binnacle.dev/run-bundle-catalog=${catalog}` })).items) {
    for (const text of Object.values((cm as KubeObject & { data?: Record<string, string> }).data ?? {})) {
      for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
        const meta = JSON.parse(line) as { schema: string; name: string; package?: string };
        if (meta.schema === 'olm.bundle' && meta.package !== undefined) out.set(meta.package, [...(out.get(meta.package) ?? []), meta.name].sort());
      }
    }
  }
  return out;
}

test('run bundle --index-image: the bundle joins the index\'s package, the index\'s other packages stay installable (and cleanup keeps their catalog); a missing or non-catalog index image is refused first', async () => {
  const indexNs = uniqueName('runb-index');
  const fluxNs = uniqueName('runb-flux');
  // The index: poison-pill up to 0.0.5 (0.0.6 and 0.1.0 taken out) and flux, only flux 0.16.1 pushed.
  const dropped = new Set(['poison-pill.v0.0.6', 'poison-pill.v0.1.0']);
  const index = await publishPackages({
    packages: [join(CORPUS, PKG), join(CORPUS, 'flux')],
    registry: e2eRegistry(),
    repository: uniqueName('runb-index'),
    select: (cfg) => new Set(cfg.bundles.filter((b) => b.package === 'flux' && JSON.stringify(b.properties).includes('"version":"0.16.1"')).map((b) => b.name)),
    transform: (cfg) => {
      cfg.bundles = cfg.bundles.filter((b) => !dropped.has(b.name));
      for (const ch of cfg.channels) ch.entries = ch.entries.filter((e) => !dropped.has(e.name));
    },
  });
  const indexBundles = index.config.bundles.filter((b) => b.package === PKG && !dropped.has(b.name)).map((b) => b.name);
  assert.ok(indexBundles.includes('poison-pill.v0.0.5'), indexBundles.join(', '));

  // Bad index images first: nothing may change on the cluster.
  const missing = `${e2eRegistry()}/${uniqueName('nothing')}/catalog:latest`;
  await rejects(readIndexImage(missing, { cacheDir }), 'RUN_BUNDLE_INDEX_IMAGE', `--index-image ${missing}`, 'was not found in its registry', 'binnacle catalog build');
  const bundleImage = `${e2eRegistry()}/${uniqueName('runb-index')}/poison-pill-bundle:v0.0.5`;
  await buildBundleImage(await bundleCopy('0.0.5'), { tag: bundleImage, push: true });
  await rejects(readIndexImage(bundleImage, { cacheDir }), 'RUN_BUNDLE_INDEX_IMAGE', 'is a bundle image', `binnacle run bundle ${bundleImage}`);
  // Through the CLI: one clear line, exit 1, no stack trace, before the cluster is touched.
  const cli = await promisify(execFile)(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'binnacle.js'), 'run', 'bundle', await bundleCopy('0.0.6'), '--index-image', bundleImage, '-n', indexNs, '--kubeconfig', process.env.BINNACLE_E2E_KUBECONFIG ?? ''], {
    env: { ...process.env, BINNACLE_FROM_SOURCE: '1' },
  }).then(
    () => assert.fail('run bundle took a bundle image as its index'),
    (err: unknown) => err as { code?: number; stderr?: string },
  );
  assert.equal(cli.code, 1);
  assert.match(cli.stderr ?? '', /--index-image .* is a bundle image .*, not a catalog/);
  assert.doesNotMatch(cli.stderr ?? '', /\n\s+at /, 'no stack trace');
  assert.equal(await client.find({ apiVersion: 'v1', kind: 'Namespace', name: indexNs }), undefined, 'nothing was made on the cluster');

  // 0.0.6 (replacing the index's 0.0.5), shipped in ConfigMaps, added to the index.
  const baseCatalog = await readIndexImage(index.catalog, { cacheDir });
  const r = await runBundle({
    client,
    input: await readBundleInput(await bundleCopy('0.0.6', (csv) => void (csv.spec.replaces = 'poison-pill.v0.0.5')), { cacheDir }),
    namespace: indexNs,
    baseCatalog,
    timeoutMs: 240_000,
    progress,
  });
  assert.equal(r.version, '0.0.6');
  const served = await servedCatalog(indexNs, r.catalog);
  assert.deepEqual(served.get(PKG), [...indexBundles, 'poison-pill.v0.0.6'].sort(), "the index's bundles of the package, and the one added");
  assert.deepEqual(served.get('flux'), index.config.bundles.filter((b) => b.package === 'flux').map((b) => b.name).sort(), "the index's other package, whole");
  assert.ok((await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: indexNs, name: 'poison-pill-controller-manager' })) !== undefined, 'the operator Deployment exists');

  // Another package of the index installs from the same catalog.
  await adminInstaller(client, fluxNs);
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name: fluxNs },
    spec: { namespace: fluxNs, serviceAccount: { name: 'installer' }, source: { sourceType: 'Catalog', catalog: { packageName: 'flux', version: '0.16.1', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': r.catalog } } } } },
  });
  const ce = await eventually(
    'flux installed from the run bundle catalog',
    async () => {
      const x = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: fluxNs });
      return x.status?.observedGeneration === x.metadata.generation && findCondition(x.status?.conditions, 'Installed')?.status === 'True' && findCondition(x.status?.conditions, 'Progressing')?.status === 'False' ? x : undefined;
    },
    240_000,
    1000,
  ).catch(async (err: unknown) => {
    const x = await client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: fluxNs });
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${(x?.status?.conditions ?? []).map((c) => `  ${c.type}=${c.status} ${c.reason}: ${c.message}`).join('\n')}`, { cause: err });
  });
  assert.equal(ce.status?.install?.bundle.version, '0.16.1');

  // Cleanup of the run bundle keeps the catalog (and, under --delete-all, its namespace) while flux resolves from it…
  const plan = await planCleanup(client, PKG, { deleteCrds: false, deleteAll: true });
  const text = describePlan(plan).join('\n');
  assert.match(text, new RegExp(`and keep:\\n(.*\\n)*  ClusterCatalog ${r.catalog} and its ConfigMaps, and Namespace ${indexNs} they are in: ClusterExtension ${fluxNs} \\(package flux\\) resolves from it`), text);
  await runCleanup(client, plan, { timeoutMs: 180_000, progress });
  assert.equal(await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: 'poison-pill-operator' }), undefined, 'the run bundle extension is gone');
  assert.ok((await client.find({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: r.catalog })) !== undefined, 'the catalog flux resolves from stays');
  assert.deepEqual(await servedCatalog(indexNs, r.catalog).then((m) => m.get('flux')?.length), index.config.bundles.filter((b) => b.package === 'flux').length, 'with its ConfigMaps');
  const fluxAfter = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: fluxNs });
  assert.equal(findCondition(fluxAfter.status?.conditions, 'Installed')?.status, 'True');

  // …and once flux is gone, a second cleanup removes the catalog and the namespace.
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: fluxNs });
  await eventually('flux removed', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: fluxNs })) === undefined ? true : undefined), 180_000);
  await client.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', name: `${fluxNs}-installer` });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: fluxNs });
  const second = await planCleanup(client, PKG, { deleteCrds: false, deleteAll: true });
  assert.deepEqual(second.catalogUsers, []);
  assert.equal(second.namespace, indexNs, 'the namespace the kept catalog was in goes under --delete-all');
  await runCleanup(client, second, { timeoutMs: 180_000, progress });
  assert.equal(await client.find({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: r.catalog }), undefined, 'cleanup removed the catalog');
});
