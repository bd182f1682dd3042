/**
 * `run bundle` and `run bundle-upgrade` of package-manifest directories (issue 28 §3): a version
 * directory (`PKG/0.1.0/`, no metadata/annotations.yaml) installs with its package name and
 * channels read from the package file one level up, and upgrades along its CSV's `replaces` to
 * the next version directory, including one only the `fast` channel reaches; a version no
 * channel reaches is refused before anything changes, naming the package file and field; and the
 * package directory itself (`PKG/`) installs its default channel's head. The manager runs in
 * process, as `binnacle manager` would.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCrds } from '../../src/controllers/crds.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import { planCleanup, readBundleInput, runBundle, runBundleUpgrade, runCleanup } from '../../src/devloop/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { InputError } from '../../src/util/errors.js';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import { e2eClient, eventually, startE2eManager, stopE2e, uniqueName } from './env.js';

const TESTDATA = join(import.meta.dirname, '..', '..', 'src', 'bundle', 'testdata', 'pkgmanifest');
const PKG = 'tiny-operator';
let client: KubeClient;
let manager: RunningManager | undefined;
let work: string;
let pkgDir: string;
let cacheDir: string;
const ns = uniqueName('pmrun');
const progress = (): void => undefined;

/** The image the operator Deployment runs, once it exists. */
async function operatorImage(namespace: string): Promise<string | undefined> {
  const dep = await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: 'tiny-operator' });
  const spec = dep?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined;
  return spec?.template?.spec?.containers?.[0]?.image;
}

async function installedBundle(): Promise<string | undefined> {
  const ext = await client.find<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: PKG });
  return ext?.status?.install?.bundle?.name;
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-pkgmanifest-'));
  cacheDir = join(work, 'cache');
  // A copy, so nothing the run writes can land in the repository's test data.
  pkgDir = join(work, PKG);
  await cp(join(TESTDATA, PKG), pkgDir, { recursive: true });
  await ensureCrds(client);
  manager = await startE2eManager('package-manifest-run', client, work);
});

after(async () => {
  await stopE2e({ client, manager, work, remove: [{ apiVersion: 'v1', kind: 'Namespace', name: ns }] });
});

test('a version no channel reaches is refused before anything changes, naming the package file and its channels field', async () => {
  const orphan = join(TESTDATA, 'orphan', PKG);
  await assert.rejects(
    readBundleInput(join(orphan, '0.9.0'), { cacheDir }),
    (e: unknown) =>
      e instanceof InputError && e.code === 'RUN_BUNDLE_NO_CHANNEL' && e.file === join(orphan, `${PKG}.package.yaml`) && e.field === 'channels' && /reaches tiny-operator\.v0\.9\.0/.test(e.message),
  );
  assert.equal(await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: PKG }), undefined);
});

test('run bundle of a package-manifest version directory, then bundle-upgrade along replaces to the next two version directories', async () => {
  const input = await readBundleInput(join(pkgDir, '0.1.0'), { cacheDir });
  assert.equal(input.packageName, PKG, 'the package name comes from the package file');
  assert.deepEqual(input.info.channels, ['stable', 'fast'], 'channels whose currentCSV reaches 0.1.0');
  const r = await runBundle({ client, input, namespace: ns, timeoutMs: 240_000, progress });
  assert.equal(r.version, '0.1.0');
  assert.match(r.image, /^configmaps:\/\//, 'the version directory went through ConfigMaps in the bundle layout');
  assert.equal(await operatorImage(ns), 'quay.io/example/tiny-operator:v0.1.0');
  assert.equal(await installedBundle(), 'tiny-operator.v0.1.0');
  assert.ok((await client.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.tiny.example.com' })) !== undefined, 'the CRD is installed');

  const up = await runBundleUpgrade({ client, input: await readBundleInput(join(pkgDir, '0.2.0'), { cacheDir }), timeoutMs: 240_000, progress });
  assert.deepEqual([up.from, up.version], ['0.1.0', '0.2.0']);
  await eventually('the Deployment runs 0.2.0', async () => ((await operatorImage(ns)) === 'quay.io/example/tiny-operator:v0.2.0' ? true : undefined), 60_000, 1_000);

  // 0.3.0 is only in the fast channel (its head): the upgrade still follows its replaces edge.
  const fast = await readBundleInput(join(pkgDir, '0.3.0'), { cacheDir });
  assert.deepEqual(fast.info.channels, ['fast']);
  const up3 = await runBundleUpgrade({ client, input: fast, timeoutMs: 240_000, progress });
  assert.deepEqual([up3.from, up3.version], ['0.2.0', '0.3.0']);
  await eventually('the Deployment runs 0.3.0', async () => ((await operatorImage(ns)) === 'quay.io/example/tiny-operator:v0.3.0' ? true : undefined), 60_000, 1_000);
  assert.equal(await installedBundle(), 'tiny-operator.v0.3.0');
});

test("run bundle of the package directory installs its default channel's head", async () => {
  await runCleanup(client, await planCleanup(client, PKG, { deleteCrds: false, deleteAll: false }), { timeoutMs: 180_000, progress });
  assert.equal(await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: PKG }), undefined);
  const input = await readBundleInput(pkgDir, { cacheDir });
  assert.equal(input.info.name, 'tiny-operator.v0.2.0', "stable is the default channel and 0.2.0 its currentCSV, though 0.3.0 is newer");
  const r = await runBundle({ client, input, namespace: ns, timeoutMs: 240_000, progress });
  assert.equal(r.version, '0.2.0');
  await eventually('the Deployment runs 0.2.0', async () => ((await operatorImage(ns)) === 'quay.io/example/tiny-operator:v0.2.0' ? true : undefined), 60_000, 1_000);
  await runCleanup(client, await planCleanup(client, PKG, { deleteCrds: true, deleteAll: false }), { timeoutMs: 180_000, progress });
});
