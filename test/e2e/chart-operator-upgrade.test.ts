/**
 * A chart operator's second version, end to end on the local control plane (issue 29 §3):
 * 1. `binnacle helm release` publishes v1 of a small chart (fixtures/chart-operator) as an
 *    operator bundle into a catalog kept as an `olm.semver` template; a ClusterExtension
 *    installs it, and its operator (the bundle's own `helm-operator run`, as a local process
 *    with the ServiceAccount the CSV granted, as the Pelorus e2e runs it) deploys live
 *    custom resources in two namespaces;
 * 2. v2 only adds values-schema fields and is released with the same one command: the
 *    ClusterExtension upgrades, the CRD change passes CRD upgrade safety, and every existing
 *    custom resource is rendered with v2 and stays Deployed;
 * 3. v3 removes a field and changes a default, released the same way: CRD upgrade safety
 *    refuses the upgrade with the reason in a condition, and v2 keeps running;
 * 4. `binnacle rollback` takes the operator back to v1 and says what that does to the custom
 *    resource written against v2; the resources are rendered with v1 again and stay Deployed.
 * The operator process is restarted after each version change, as its Pod would be.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import { filesOfConfigMap } from '../../src/publish/helm-bundle/index.js';
import type { KubeObject } from '../../src/kube/types.js';
import { beaconConditions, beaconDeployedAt, BEACON_CRD, BEACON_GROUP, BEACON_TEMPLATE, releaseBeacon, type Beacon } from './chart-release.js';
import { e2eKubeconfig, e2eRegistry, eventually, serviceAccountKubeconfig, uniqueName } from './env.js';
import { OperatorHarness } from './operators.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BINNACLE = join(ROOT, 'bin', 'binnacle.js');
const GROUP = BEACON_GROUP;
const CRD = BEACON_CRD;
const started = Date.now();

let work: string;
let template: string;
let h: OperatorHarness;
let operator: ChildProcess | undefined;
let operatorLog = '';
const repo = uniqueName('chartrel');
const ns = uniqueName('beacon-op');
const teamA = uniqueName('team-a');
const teamB = uniqueName('team-b');
const extension = uniqueName('beacon');

async function release(version: 'v1' | 'v2' | 'v3'): Promise<{ stdout: string; catalog: string }> {
  return releaseBeacon({ version, template, registry: e2eRegistry(), repo, cacheDir: join(work, 'cache') });
}

/** Points the ClusterCatalog at a newly published catalog image (as a GitOps change or a poll would). */
async function serve(catalog: string): Promise<void> {
  await h.client.patch({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: h.catalogName }, { spec: { source: { type: 'Image', image: { ref: catalog } } } });
}

async function stopOperator(): Promise<void> {
  if (operator === undefined || operator.exitCode !== null) return;
  const exited = new Promise((resolve) => operator?.once('exit', resolve));
  operator.kill('SIGTERM');
  await exited;
}

/** (Re)starts the operator from what its Pod would mount: the installed ConfigMap, as the Deployment's ServiceAccount. */
async function startOperator(): Promise<void> {
  await stopOperator();
  const cm = await h.client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'beacon-helm-charts' });
  const opt = join(work, `opt-helm-${Date.now()}`);
  for (const [rel, data] of filesOfConfigMap(cm)) {
    await mkdir(dirname(join(opt, rel)), { recursive: true });
    await writeFile(join(opt, rel), data);
  }
  const dep = await h.client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'beacon-controller-manager' });
  const pod = (dep.spec as { template: { metadata: { annotations?: Record<string, string> }; spec: { serviceAccountName: string; containers: { args: string[] }[] } } }).template;
  const kubeconfig = join(work, 'operator.kubeconfig');
  await serviceAccountKubeconfig(ns, pod.spec.serviceAccountName, kubeconfig);
  const args = (pod.spec.containers[0]?.args ?? []).map((a) => a.replace('$(POD_NAMESPACE)', ns).replace('/opt/helm', opt));
  operator = spawn(process.execPath, [BINNACLE, ...args, '--kubeconfig', kubeconfig, '--metrics-bind-address=0', '--health-probe-bind-address=0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WATCH_NAMESPACE: pod.metadata.annotations?.['olm.targetNamespaces'] ?? '', POD_NAMESPACE: ns, BINNACLE_LOG_LEVEL: 'info' },
  });
  operator.stdout?.on('data', (d: Buffer) => (operatorLog += d.toString()));
  operator.stderr?.on('data', (d: Buffer) => (operatorLog += d.toString()));
}

/** Waits until the Beacon is Deployed with chart `version`: its release's manifest and its ConfigMap say so. */
async function deployedAt(namespace: string, name: string, version: string): Promise<{ cr: Beacon; data: Record<string, string> }> {
  try {
    return await eventually(
      `Beacon ${namespace}/${name} Deployed with chart ${version}`,
      () => beaconDeployedAt(h.client, namespace, name, version),
      240_000,
      1000,
    );
  } catch (err) {
    throw new Error(`${String(err)}\nstatus: ${await beaconConditions(h.client, namespace, name)}\noperator log (tail):\n${operatorLog.slice(-4000)}`, { cause: err });
  }
}

/** The chart versions of the Helm release records of a Beacon, oldest first. */
async function releaseRecords(namespace: string, name: string): Promise<string[]> {
  const secrets = await h.client.list('v1', 'Secret', { namespace, labelSelector: `owner=helm,name=${name}` });
  return secrets.items
    .map((s) => ({ version: Number(s.metadata.labels?.version ?? 0), status: s.metadata.labels?.status ?? '' }))
    .sort((a, b) => a.version - b.version)
    .map((r) => `${r.version}:${r.status}`);
}

function specProperties(crd: KubeObject): Record<string, { properties?: Record<string, unknown> }> {
  const v = (crd.spec as { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, { properties?: Record<string, unknown> }> } } } } }[] }).versions[0];
  return v?.schema.openAPIV3Schema.properties.spec.properties ?? {};
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-chartrel-'));
  template = join(work, 'catalog.yaml');
  await writeFile(template, BEACON_TEMPLATE);
  const first = await release('v1');
  h = await OperatorHarness.start({ packages: [], catalogImage: first.catalog, prefix: 'chartrel' });
  await h.serviceAccount(ns, 'installer', true);
  for (const team of [teamA, teamB]) {
    await h.client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: team } });
    h.cleanup.push(() => h.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: team }));
  }
});

/**
 * The Beacons go while their operator runs: their uninstall finalizers are its. Left for the
 * extension's removal, the CRD it deletes would be held by custom resources nobody serves any
 * more, and the next test file on this control plane would wait for it in vain.
 */
async function removeBeacons(): Promise<void> {
  const refs = [
    { namespace: teamA, name: 'one' },
    { namespace: teamB, name: 'two' },
  ].map((r) => ({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Beacon', ...r }));
  for (const ref of refs) await h.client.delete(ref).catch(() => undefined);
  const gone = async (): Promise<true | undefined> => ((await Promise.all(refs.map((r) => h.client.find(r).catch(() => undefined)))).every((o) => o === undefined) ? true : undefined);
  await eventually('the Beacons uninstalled by their operator', gone, 60_000, 500).catch(async () => {
    // The operator did not finish them (stopped by a failed test): let them go by hand.
    for (const ref of refs) await h.client.patch(ref, { metadata: { finalizers: null } }).catch(() => undefined);
  });
}

after(async () => {
  await removeBeacons();
  await stopOperator();
  await h.stop();
  await rm(work, { recursive: true, force: true });
  console.log(`# chart-operator-upgrade: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

describe('a chart operator released, upgraded, refused and rolled back', () => {
  test('v1: released with helm release, installed from the catalog, serving custom resources in two namespaces', async () => {
    const tpl = await readFile(template, 'utf8');
    assert.match(tpl, /^# the beacon operator catalog\n/, 'the template keeps its comment');
    assert.equal((tpl.match(/- image: .*beacon-bundle@sha256:[0-9a-f]{64}/g) ?? []).length, 1, tpl);
    await h.createExtension(extension, ns, { packageName: 'beacon' });
    await h.installedAt(extension, '1.0.0', 300_000);
    await startOperator();
    await h.client.create({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Beacon', metadata: { name: 'one', namespace: teamA }, spec: { message: 'from team a' } });
    await h.client.create({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Beacon', metadata: { name: 'two', namespace: teamB }, spec: { replicaCount: 2 } });
    const one = await deployedAt(teamA, 'one', '1.0.0');
    assert.deepEqual([one.data.message, one.data.serviceType], ['from team a', 'ClusterIP']);
    await deployedAt(teamB, 'two', '1.0.0');
  });

  test('v2 adds values-schema fields: released with the one command, the extension upgrades past CRD upgrade safety, every custom resource is rendered with v2 and stays Deployed', async () => {
    const v2 = await release('v2');
    const out = JSON.parse(v2.stdout) as { bundle: string; replaces: string; skipRange: string; channel: string; relatedImages: { image: string }[] };
    assert.deepEqual([out.bundle, out.replaces, out.skipRange, out.channel], ['beacon.v1.1.0', 'beacon.v1.0.0', '>=1.0.0 <1.1.0', 'stable-v1']);
    assert.deepEqual(out.relatedImages.map((i) => i.image).slice(1), ['registry.invalid/beacon/server:1.0', 'registry.invalid/beacon/wait:1.0'], 'every image the chart renders, init containers too');
    await serve(v2.catalog);
    await h.installedAt(extension, '1.1.0', 300_000);
    const crd = await h.client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: CRD });
    assert.ok('greeting' in specProperties(crd) && 'colour' in specProperties(crd), 'the CRD has v2 fields');
    await startOperator();
    const one = await deployedAt(teamA, 'one', '1.1.0');
    assert.deepEqual([one.data.message, one.data.greeting], ['from team a', 'hi'], 'v2 renders the CR with its own defaults');
    await deployedAt(teamB, 'two', '1.1.0');
    for (const [team, name] of [[teamA, 'one'], [teamB, 'two']] as const) assert.deepEqual(await releaseRecords(team, name), ['1:superseded', '2:deployed'], `${team}/${name}: an upgrade, not a reinstall`);
    // A resource written against v2: it sets the new fields.
    await h.client.patch({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Beacon', namespace: teamB, name: 'two' }, { spec: { greeting: 'ahoy', colour: 'green' } });
    const two = await eventually('two rendered with its v2 fields', async () => {
      const r = await deployedAt(teamB, 'two', '1.1.0');
      return r.data.greeting === 'ahoy' ? r : undefined;
    }, 120_000, 1000);
    assert.equal(two.data.colour, 'green');
  });

  test('v3 removes a field and changes a default: released the same way, the upgrade is refused by CRD upgrade safety with the reason, and v2 keeps running', async () => {
    const v3 = await release('v3');
    const out = JSON.parse(v3.stdout) as { replaces: string; changedDefaults: unknown[] };
    assert.equal(out.replaces, 'beacon.v1.1.0');
    // The CRD carries no chart defaults: helm release says what changed, as CRD upgrade safety cannot.
    assert.deepEqual(out.changedDefaults, [
      { kind: 'Beacon', path: 'spec.replicaCount', from: 1, to: 2 },
      { kind: 'Beacon', path: 'spec.service.type', from: 'ClusterIP' },
    ]);
    await serve(v3.catalog);
    const refused = await eventually(
      'the upgrade to 1.2.0 refused',
      async () => {
        const ce = await h.extension(extension);
        const c = (ce.status?.conditions ?? []).find((x) => x.message.includes('crd.field-removed') || x.message.includes('.spec.service.type was removed'));
        return c === undefined ? undefined : { ce, c };
      },
      300_000,
      1000,
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\n${await h.describeExtension(extension)}`, { cause: err });
    });
    assert.deepEqual([refused.c.type, refused.c.status], ['Progressing', 'True'], `${refused.c.type}: ${refused.c.message}`);
    assert.match(refused.c.message, /refusing to apply, nothing was changed[\s\S]*\[crd\.field-removed\] \.spec\.service\.type/, refused.c.message);
    console.log(`# refused: ${refused.c.type}=${refused.c.status} ${refused.c.reason}: ${refused.c.message.replace(/\n/g, ' | ')}`);
    assert.match(refused.c.message, /1\.2\.0/, 'the condition names the version refused');
    const ce = await h.extension(extension);
    assert.equal(ce.status?.install?.bundle.version, '1.1.0', 'v2 is still the installed version');
    const crd = await h.client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: CRD });
    assert.ok('type' in (specProperties(crd).service?.properties ?? {}), 'the CRD still has service.type');
    const cm = await h.client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'beacon-helm-charts' });
    assert.ok(Object.keys((cm.binaryData as Record<string, string> | undefined) ?? {}).includes('beacon.tgz'));
    // The running operator (v2) still serves: a change lands, rendered with v2.
    await h.client.patch({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Beacon', namespace: teamA, name: 'one' }, { spec: { message: 'still v2' } });
    await eventually('one re-rendered by v2', async () => ((await deployedAt(teamA, 'one', '1.1.0')).data.message === 'still v2' ? true : undefined), 120_000, 1000);
    await deployedAt(teamB, 'two', '1.1.0');
  });

  test('a rollback to v1 works and says what it does to the custom resource written against v2', async () => {
    const { stdout, stderr } = await run(process.execPath, [BINNACLE, 'rollback', extension, '--to-version', '1.0.0', '--kubeconfig', e2eKubeconfig()], { cwd: ROOT });
    assert.match(stderr, /rolling back from 1\.1\.0 to 1\.0\.0/);
    assert.ok(stdout.includes(`Beacon (${CRD}): 1.0.0 does not declare spec.colour, spec.greeting, which 1.1.0 added; 1 custom resources written against 1.1.0 set them: ${teamB}/two (spec.colour, spec.greeting)`), stdout);
    assert.match(stdout, /kept in storage .* 1\.0\.0 does not act on them/, stdout);
    assert.doesNotMatch(stdout, /refuses/, stdout);
    await h.installedAt(extension, '1.0.0', 300_000);
    const ce = await h.client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: extension });
    assert.equal(ce.spec.source.catalog.version, '1.0.0', 'pinned until an upgrade lifts it');
    await startOperator();
    const two = await deployedAt(teamB, 'two', '1.0.0');
    assert.equal(two.data.greeting, undefined, 'v1 does not render the v2 field');
    assert.equal(two.cr.spec?.greeting, 'ahoy', 'the value is kept in storage, as the rollback said');
    const one = await deployedAt(teamA, 'one', '1.0.0');
    assert.equal(one.data.message, 'still v2');
  });
});
