/**
 * Resolution that sees the whole cluster, end to end with corpus operators: two extensions
 * resolving at the same time share one copy of their dependency; an explicit install of an
 * installed dependency takes that copy over without reinstalling it; uninstalling in either
 * order removes exactly what nobody needs any more; a second provider of an installed API is
 * refused naming the installed owner; a bundle whose minKubeVersion is above the cluster is
 * refused with the reason; `binnacle history` shows resolutions beside the Helm revisions.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeclarativeConfig } from '../../src/declcfg/index.js';
import { recordedNeeds } from '../../src/installed/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { clusterVersion } from '../../src/resolve/index.js';
import { API_VERSION, type BundleDeployment, type ClusterExtension } from '../../src/api/types.js';
import { CRD_DELETION_TIMEOUT_MS, e2eClient, binnacle, eventually, uniqueName } from './env.js';
import { OperatorHarness } from './operators.js';

let h: OperatorHarness;
let client: KubeClient;
/** One minor above the API server: what the flux bundles are made to need. */
let futureKube = '';

function requireMinKube(version: string): (cfg: DeclarativeConfig) => void {
  return (cfg) => {
    for (const b of cfg.bundles.filter((x) => x.package === 'flux')) {
      for (const p of b.properties) if (p.type === 'olm.csv.metadata' && typeof p.value === 'object' && p.value !== null) (p.value as Record<string, unknown>).minKubeVersion = version;
    }
  };
}

/** The live BundleDeployments of a package (there must never be two). */
async function deploymentsOfPackage(pkg: string): Promise<BundleDeployment[]> {
  return (await client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: `binnacle.dev/package=${pkg}` })).items.filter((b) => b.metadata.deletionTimestamp === undefined);
}

function needsOf(bd: BundleDeployment | undefined): string[] {
  return bd === undefined ? [] : recordedNeeds(bd).map((n) => `${n.extension}:${n.role}`);
}

async function onlyDeployment(pkg: string): Promise<BundleDeployment> {
  const list = await deploymentsOfPackage(pkg);
  assert.equal(list.length, 1, `one BundleDeployment of ${pkg}: ${list.map((b) => b.metadata.name).join(', ')}`);
  const [bd] = list;
  assert.ok(bd !== undefined);
  return bd;
}

/** Waits until no CRD of `group` is left (the API server removes a deleted CRD's objects first). */
async function crdsGone(group: string): Promise<void> {
  const left = async (): Promise<KubeObject[]> => (await client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).items.filter((c) => (c.metadata.name ?? '').endsWith(`.${group}`));
  try {
    await eventually(`CRDs of ${group} gone`, async () => ((await left()).length === 0 ? true : undefined), CRD_DELETION_TIMEOUT_MS);
  } catch (err) {
    const state = (await left()).map((c) => `${c.metadata.name ?? ''} deletionTimestamp=${c.metadata.deletionTimestamp ?? '-'} owner=${c.metadata.labels?.['binnacle.dev/owner-name'] ?? '-'} status=${JSON.stringify(c.status)}`);
    throw new Error(`${err instanceof Error ? err.message : String(err)}:\n${state.join('\n')}`, { cause: err });
  }
}

before(async () => {
  const probe = await e2eClient();
  const kube = clusterVersion(await probe.serverVersion());
  probe.close();
  assert.ok(kube !== undefined, 'the API server reports its version');
  futureKube = `${kube.major}.${kube.minor + 1}.0`;
  h = await OperatorHarness.start({
    packages: ['node-healthcheck-operator', 'poison-pill-operator', 'lib-bucket-provisioner', 'awss3-operator-registry', 'noobaa-operator', 'flux'],
    prefix: 'cwide',
    transform: requireMinKube(futureKube),
  });
  client = h.client;
  await eventually('catalog served', async () => {
    const c = await client.get({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: h.catalogName });
    return findCondition((c.status as { conditions?: [] } | undefined)?.conditions, 'Serving')?.status === 'True' ? true : undefined;
  });
});

after(async () => {
  await h.stop();
});

describe('cluster-wide resolution', () => {
  test('two extensions that need the same dependency share one copy, even resolving at the same time; a second provider of its API is refused naming the owner', async () => {
    const [nsA, nsB] = [uniqueName('awss3'), uniqueName('noobaa')];
    await h.serviceAccount(nsA, 'installer', true);
    await h.serviceAccount(nsB, 'installer', true);
    const [a, b] = [uniqueName('awss3'), uniqueName('noobaa')];
    // Both need the objectbucket.io API, which lib-bucket-provisioner provides.
    await Promise.all([h.createExtension(a, nsA, { packageName: 'awss3-operator-registry' }), h.createExtension(b, nsB, { packageName: 'noobaa-operator' })]);
    await Promise.all([h.installedAt(a, '1.0.1', 300_000), h.installedAt(b, '5.6.0', 300_000)]);
    const lib = await onlyDeployment('lib-bucket-provisioner');
    assert.deepEqual(needsOf(lib).sort(), [`${a}:dependency`, `${b}:dependency`].sort());
    const libName = lib.metadata.name ?? '';
    const libNs = lib.spec.installNamespace;
    const revision = lib.status?.revision;
    assert.equal(revision, 1, 'installed once');
    assert.equal(await h.deploymentAvailable(libNs, 'lib-bucket-provisioner'), true);
    for (const x of [a, b]) {
      const ce = await h.extension(x);
      assert.deepEqual(ce.status?.resolution?.bundles.map((r) => r.package).sort(), ['lib-bucket-provisioner', x === a ? 'awss3-operator-registry' : 'noobaa-operator'].sort());
      assert.match(findCondition(ce.status?.conditions, 'Installed')?.message ?? '', /with 1 dependency \(1 shared with other extensions\)/);
    }
    // `binnacle status` says who needs it.
    const status = await binnacle('status', a);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, new RegExp(`${libName}\\s+lib-bucket-provisioner 1\\.0\\.0\\s+namespace ${libNs}.*needed by extensions (${a} and ${b}|${b} and ${a})`));
    const json = JSON.parse((await binnacle('status', '-o', 'json')).out) as { name: string; bundles: { package: string; shared: boolean; neededBy: string }[] }[];
    assert.equal(json.find((e) => e.name === b)?.bundles.find((x) => x.package === 'lib-bucket-provisioner')?.shared, true);

    // The first leaves: the shared dependency stays for the other, untouched.
    await h.removeExtension(a);
    const kept = await onlyDeployment('lib-bucket-provisioner');
    assert.equal(kept.metadata.name, libName);
    assert.deepEqual(needsOf(kept), [`${b}:dependency`]);
    assert.equal(kept.status?.revision, revision, 'no new revision');
    assert.equal(await h.deploymentAvailable(libNs, 'lib-bucket-provisioner'), true);
    assert.deepEqual(await deploymentsOfPackage('awss3-operator-registry'), []);
    assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: nsA })).items.map((d) => d.metadata.name).filter((n) => n !== 'lib-bucket-provisioner'), []);

    // awss3's channel "original" (1.0.0) provides the objectbucket.io API itself: refused before anything changes.
    const clash = uniqueName('clash');
    await h.createExtension(clash, nsA, { packageName: 'awss3-operator-registry', channels: ['original'] });
    const refused = await h.resolutionFailed(clash);
    const why = refused.status?.resolution?.explanation ?? '';
    assert.match(why, /only one bundle may provide the API objectbucket\.io\/v1alpha1\/ObjectBucket(Claim)? \(awss3-operator-registry and lib-bucket-provisioner both do\)/);
    assert.match(why, new RegExp(`lib-bucket-provisioner 1\\.0\\.0 is installed \\(needed by extension ${b}\\) and no request allows it to change`));
    assert.deepEqual(await h.bundleDeploymentsOf(clash), []);
    const after = await onlyDeployment('lib-bucket-provisioner');
    assert.equal(after.metadata.generation, kept.metadata.generation, 'its spec untouched');
    assert.deepEqual(needsOf(after), [`${b}:dependency`]);
    await h.removeExtension(clash);

    // The last one leaves: the dependency goes with it, and nothing is left behind.
    await h.removeExtension(b);
    await eventually('lib-bucket-provisioner removed', async () => ((await client.list(API_VERSION, 'BundleDeployment', { labelSelector: 'binnacle.dev/package=lib-bucket-provisioner' })).items.length === 0 ? true : undefined), 120_000);
    for (const ns of [nsA, nsB]) assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: ns })).items.map((d) => d.metadata.name), []);
    await crdsGone('objectbucket.io');
    await crdsGone('noobaa.io');
  });

  test('an explicit install of an installed dependency takes it over without reinstalling; uninstalling in either order keeps what the other needs', async () => {
    const ns = uniqueName('nhc');
    const other = uniqueName('pp');
    await h.serviceAccount(ns, 'installer', true);
    await h.serviceAccount(other, 'installer', true);
    const nhc = uniqueName('nhc');
    await h.createExtension(nhc, ns, { packageName: 'node-healthcheck-operator' });
    await h.installedAt(nhc, '0.0.2');
    const dep = await onlyDeployment('poison-pill-operator');
    const depName = dep.metadata.name ?? '';
    const revision = dep.status?.revision;
    const podsBefore = (await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'poison-pill-controller-manager' })).metadata.uid;
    assert.deepEqual(needsOf(dep), [`${nhc}:dependency`]);

    const pp = uniqueName('pp');
    // `binnacle plan` sees the same: the installed copy, in its namespace, nothing to create.
    const planned = await binnacle('plan', 'poison-pill-operator', '--name', pp, '-n', other, '-o', 'json');
    assert.equal(planned.code, 0, planned.err);
    const plan = JSON.parse(planned.out) as { bundles: { bundleDeployment: string; from?: string; objects: { action: string; namespace?: string }[] }[] };
    assert.deepEqual(plan.bundles.map((b) => [b.bundleDeployment, b.from]), [[depName, '0.1.0']]);
    assert.deepEqual(plan.bundles[0]?.objects.filter((o) => o.action === 'create' || o.action === 'delete'), []);
    assert.ok(plan.bundles[0]?.objects.every((o) => o.namespace === undefined || o.namespace === ns));
    const takeOver = async (): Promise<void> => {
      const res = await binnacle('install', 'poison-pill-operator', '--name', pp, '-n', other, '--service-account', 'installer', '--catalog-selector', `olm.operatorframework.io/metadata.name=${h.catalogName}`, '--wait', '--timeout', '180');
      assert.equal(res.code, 0, `${res.err}\n${await h.describeExtension(pp)}`);
      assert.match(res.out, new RegExp(`installed poison-pill\\.v0\\.1\\.0 \\(0\\.1\\.0\\) in ${ns}`), 'it stays where it runs');
      const bd = await onlyDeployment('poison-pill-operator');
      assert.equal(bd.metadata.name, depName, 'the same BundleDeployment');
      assert.equal(bd.status?.revision, revision, 'the same release revision: nothing was reinstalled');
      assert.equal(bd.metadata.labels?.['binnacle.dev/owner-name'], pp, 'held by the extension that asked for it');
      assert.deepEqual(needsOf(bd), [`${pp}:requested`, `${nhc}:dependency`]);
      assert.equal((await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'poison-pill-controller-manager' })).metadata.uid, podsBefore, 'the same Deployment');
      assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: other })).items, [], 'no second copy');
      const ce = await h.extension(pp);
      assert.equal(ce.status?.install?.bundleDeployment, depName);
      assert.equal(ce.status?.install?.namespace, ns);
      const status = await binnacle('status', pp);
      assert.match(status.out, new RegExp(`requested by extension ${pp}, needed by extension ${nhc}`));
      assert.match(status.out, new RegExp(`it runs in ${ns}`));
    };
    await takeOver();

    // The explicit owner leaves first: the dependent still needs it, so it stays, untouched.
    await h.removeExtension(pp);
    const stays = await onlyDeployment('poison-pill-operator');
    assert.deepEqual(needsOf(stays), [`${nhc}:dependency`]);
    assert.equal(stays.metadata.labels?.['binnacle.dev/owner-name'], nhc);
    assert.equal(stays.status?.revision, revision);
    assert.equal(await h.deploymentAvailable(ns, 'poison-pill-controller-manager'), true);

    // Taken over again; now the dependent leaves first: its own bundle goes, the shared one stays.
    await takeOver();
    await h.removeExtension(nhc);
    assert.deepEqual(await deploymentsOfPackage('node-healthcheck-operator'), []);
    assert.equal(await h.deploymentAvailable(ns, 'node-healthcheck-operator-controller-manager'), false);
    await crdsGone('remediation.medik8s.io');
    const own = await onlyDeployment('poison-pill-operator');
    assert.deepEqual(needsOf(own), [`${pp}:requested`]);
    assert.equal(own.status?.revision, revision);
    assert.equal(await h.deploymentAvailable(ns, 'poison-pill-controller-manager'), true);
    const ce = await h.installedAt(pp, '0.1.0');
    assert.deepEqual(ce.status?.resolution?.bundles.map((b) => b.package), ['poison-pill-operator']);

    // And the last: nothing is orphaned.
    await h.removeExtension(pp);
    await eventually('poison-pill removed', async () => ((await client.list(API_VERSION, 'BundleDeployment', { labelSelector: 'binnacle.dev/package=poison-pill-operator' })).items.length === 0 ? true : undefined), 120_000);
    assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: ns })).items.map((d) => d.metadata.name), []);
    await crdsGone('poison-pill.medik8s.io');
    assert.deepEqual((await client.list('v1', 'Secret', { namespace: ns, labelSelector: 'owner=helm' })).items.map((s) => s.metadata.name), []);
  });

  test('a bundle whose minKubeVersion is above the cluster is refused, naming it; nothing is installed', async () => {
    const ns = uniqueName('future');
    await h.serviceAccount(ns, 'installer', true);
    const name = uniqueName('future');
    await h.createExtension(name, ns, { packageName: 'flux' });
    const ce = await h.resolutionFailed(name);
    const why = ce.status?.resolution?.explanation ?? '';
    assert.match(why, new RegExp(`flux [0-9.]+ requires Kubernetes ${futureKube.replace(/\./g, '\\.')} or newer \\(minKubeVersion\\); the cluster runs Kubernetes \\d+\\.\\d+\\.\\d+`));
    assert.notEqual(findCondition(ce.status?.conditions, 'Installed')?.status, 'True');
    assert.deepEqual(await h.bundleDeploymentsOf(name), []);
    assert.deepEqual(await deploymentsOfPackage('flux'), []);
    const history = ce.status?.history ?? [];
    assert.equal(history.at(-1)?.outcome, 'Failed');
    await h.removeExtension(name);
  });

  test('binnacle history shows each resolution (when, why, catalog digest, bundles, outcome) beside the Helm revisions', async () => {
    const ns = uniqueName('hist');
    await h.serviceAccount(ns, 'installer', true);
    const name = uniqueName('hist');
    await h.createExtension(name, ns, { packageName: 'poison-pill-operator', version: '0.0.6', upgradeConstraintPolicy: 'SelfCertified' });
    await h.installedAt(name, '0.0.6');
    // A spec change: a new resolution and a new revision.
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.1.0' } } } });
    await h.installedAt(name, '0.1.0');
    // One that cannot be met: recorded as failed, the installed version stays.
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '>=9' } } } });
    await h.resolutionFailed(name);
    const ce: ClusterExtension = await h.extension(name);
    const history = ce.status?.history ?? [];
    assert.deepEqual(
      history.map((r) => [r.reason, r.outcome, r.bundles.map((b) => `${b.package}@${b.version}`).join(',')]),
      [
        ['Initial', 'Resolved', 'poison-pill-operator@0.0.6'],
        ['SpecChanged', 'Resolved', 'poison-pill-operator@0.1.0'],
        ['SpecChanged', 'Failed', ''],
      ],
    );
    const digest = h.published.catalog.split('@')[1] ?? '';
    assert.ok(history.every((r) => r.catalogs.some((c) => c.name === h.catalogName && c.digest === digest)), JSON.stringify(history));

    const table = await binnacle('history', name);
    assert.equal(table.code, 0, table.err);
    assert.match(table.out, /TIME\s+REASON\s+GENERATION\s+OUTCOME\s+BUNDLES\s+CATALOGS\s+MESSAGE/);
    assert.match(table.out, /Initial\s+1\s+Resolved\s+poison-pill-operator@0\.0\.6/);
    assert.match(table.out, /SpecChanged\s+3\s+Failed\s+-\s+.*no bundle of package poison-pill-operator matches version range >=9/);
    assert.match(table.out, new RegExp(`Helm revisions of release ${ns}/${name}-poison-pill-operator \\(package poison-pill-operator; requested by extension ${name}\\)`));
    assert.match(table.out, /1\s+\S+\s+superseded\s+poison-pill-operator-0\.0\.6/);
    assert.match(table.out, /2\s+\S+\s+deployed\s+poison-pill-operator-0\.1\.0/);
    const json = JSON.parse((await binnacle('history', name, '-o', 'json')).out) as { resolutions: unknown[]; releases: { revisions: { revision: number; status: string }[] }[] };
    assert.equal(json.resolutions.length, 3);
    assert.deepEqual(json.releases[0]?.revisions.map((r) => [r.revision, r.status]), [[1, 'superseded'], [2, 'deployed']]);
    await h.removeExtension(name);
  });
});
