/**
 * Upgrades approved from their plan (issue 31 §1) on the local control plane. An extension on
 * `upgradeApproval: Manual` sees a new bundle in its catalog and keeps running the old one with
 * the plan in its status; a newer bundle before approval supersedes the plan, and approving the
 * superseded digest applies nothing; approving the digest shown (`binnacle approve`) upgrades.
 * A first install on `install.approval: Manual` waits the same way. A HelmOperator on Manual
 * keeps serving its chart when a new version is pushed, until that plan is approved.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { approvePlan } from '../../src/actions/approve.js';
import { ANNOTATION_APPROVED_PLAN, type PendingPlan } from '../../src/api/approval.js';
import { API_VERSION, LABEL_OWNER_NAME, type ClusterExtension, type HelmOperator } from '../../src/api/types.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import type { DeclarativeConfig } from '../../src/declcfg/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { publishPackages } from '../../src/publish/packages.js';
import { applyPushgatewayOperator, pushPushgateway } from './pushgateway.js';
import { adminInstaller, adminInstallerObjects, e2eClient, e2eKubeconfig, e2eRegistry, eventually, startE2eManager, stopE2e, uniqueName } from './env.js';
import { CORPUS } from './extensions.js';

const run = promisify(execFile);
const started = Date.now();
const BINNACLE = join(import.meta.dirname, '..', '..', 'bin', 'binnacle.js');
const GROUP = 'approval.e2e.binnacle.dev';

let client: KubeClient;
let manager: RunningManager;
let work: string;
const catalogName = uniqueName('approval');
const ns = uniqueName('approval');

/** A catalog of poison-pill holding `versions` (each skipping the ones before it). */
function only(...versions: string[]): (cfg: DeclarativeConfig) => void {
  const names = versions.map((v) => `poison-pill.v${v}`);
  return (cfg) => {
    cfg.bundles = cfg.bundles.filter((b) => names.includes(b.name));
    for (const ch of cfg.channels) ch.entries = names.map((name, i) => (i === 0 ? { name } : { name, skips: names.slice(0, i) }));
  };
}

async function binnacle(...args: string[]): Promise<string> {
  const { stdout } = await run('node', [BINNACLE, ...args, '--kubeconfig', e2eKubeconfig()]);
  return stdout;
}

async function extension(name: string): Promise<ClusterExtension> {
  return client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
}

function describeCe(ce: ClusterExtension | undefined): string {
  return `installed ${ce?.status?.install?.bundle.version ?? 'nothing'}; pending ${ce?.status?.pendingPlan?.digest ?? 'none'}; ${(ce?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} (${c.reason}): ${c.message}`).join('; ')}`;
}

/** Waits until `check` holds of the extension, saying where it stood when it does not. */
async function extensionUntil(name: string, what: string, check: (ce: ClusterExtension) => boolean, timeoutMs = 120_000): Promise<ClusterExtension> {
  let last: ClusterExtension | undefined;
  return eventually(`${name}: ${what}`, async () => {
    last = await extension(name);
    return last.status?.observedGeneration === last.metadata.generation && check(last) ? last : undefined;
  }, timeoutMs, 500).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${describeCe(last)}`);
  });
}

const settledAt = (name: string, version: string): Promise<ClusterExtension> =>
  extensionUntil(name, `installed at ${version}`, (ce) => findCondition(ce.status?.conditions, 'Progressing')?.status === 'False' && ce.status?.install?.bundle.version === version, 180_000);

const pendingTo = (name: string, version: string): Promise<ClusterExtension> =>
  extensionUntil(name, `a plan to ${version} awaits approval`, (ce) => ce.status?.pendingPlan?.changes.some((c) => c.package === 'poison-pill-operator' && c.to === version) === true);

async function useCatalog(ref: string): Promise<void> {
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref } } } }, { force: true });
}

/** The version the extension's BundleDeployments are set to install: what actually runs. */
async function deployedVersions(name: string): Promise<string[]> {
  const bds = await client.list(API_VERSION, 'BundleDeployment', { labelSelector: `${LABEL_OWNER_NAME}=${name}` });
  return bds.items.map((bd) => bd.metadata.annotations?.['binnacle.dev/bundle-version'] ?? '');
}

const catalogs: Record<string, string> = {};

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-approval-'));
  for (const [stage, versions] of [['a', ['0.0.5']], ['b', ['0.0.5', '0.0.6']], ['c', ['0.0.5', '0.0.6', '0.1.0']]] as const) {
    const published = await publishPackages({ packages: [join(CORPUS, 'poison-pill-operator')], registry: e2eRegistry(), repository: `${catalogName}-${stage}`, transform: only(...versions) });
    catalogs[stage] = published.catalog;
  }
  manager = await startE2eManager('upgrade-approval', client, work, { healthTimeoutMs: 60_000 });
  await adminInstaller(client, ns);
});

after(async () => {
  await stopE2e({ client, manager, work, remove: [{ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName }, ...adminInstallerObjects(ns)] });
  process.stdout.write(`# upgrade-approval e2e took ${Math.round((Date.now() - started) / 1000)} s\n`);
});

/** A ClusterExtension of poison-pill-operator from this file's catalog, with the approval fields given. */
async function applyPoisonPill(name: string, approval: Record<string, unknown>): Promise<void> {
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'ClusterExtension',
    metadata: { name },
    spec: { namespace: ns, serviceAccount: { name: 'installer' }, ...approval, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } },
  });
}

describe('ClusterExtension on manual approval', () => {
  test('a new bundle waits with its plan in status; a superseded plan is not applied; the approved digest upgrades', async () => {
    const name = uniqueName('manual');
    await useCatalog(catalogs.a ?? '');
    await applyPoisonPill(name, { upgradeApproval: 'Manual' });
    await settledAt(name, '0.0.5'); // a first install is not held unless install.approval says so

    // The catalog offers 0.0.6: nothing changes, the plan is in status.
    await useCatalog(catalogs.b ?? '');
    const first = await pendingTo(name, '0.0.6');
    const plan1 = first.status?.pendingPlan as PendingPlan;
    assert.match(plan1.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(first.status?.install?.bundle.version, '0.0.5', 'the old bundle keeps running');
    assert.deepEqual(await deployedVersions(name), ['0.0.5']);
    assert.equal(findCondition(first.status?.conditions, 'Progressing')?.reason, 'AwaitingApproval');
    assert.equal(findCondition(first.status?.conditions, 'Installed')?.status, 'True');
    assert.ok(plan1.objects !== undefined && plan1.objects.update + plan1.objects.create + plan1.objects.unchanged > 0, `the object diff is summarised: ${JSON.stringify(plan1.objects)}`);
    assert.ok((plan1.crdSafety ?? []).length > 0 && (plan1.crdSafety ?? []).every((c) => c.safe), `CRD-safety verdicts of the CRDs installed: ${JSON.stringify(plan1.crdSafety)}`);
    assert.deepEqual(plan1.missingPermissions, [], 'the installer is cluster-admin: it lacks nothing');

    // A re-poll (a metadata change calls it back) keeps the digest: live state is not in it.
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { metadata: { annotations: { 'e2e/poll': '1' } } });
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await extension(name)).status?.pendingPlan?.digest, plan1.digest);

    // 0.1.0 arrives before anyone approved: the plan is superseded, and says so.
    await useCatalog(catalogs.c ?? '');
    const second = await pendingTo(name, '0.1.0');
    const plan2 = second.status?.pendingPlan as PendingPlan;
    assert.notEqual(plan2.digest, plan1.digest);
    assert.equal(plan2.supersedes, plan1.digest);
    assert.match(findCondition(second.status?.conditions, 'Progressing')?.message ?? '', /it supersedes plan sha256:[0-9a-f]{64}, which was not approved/);

    // `binnacle approve --digest` refuses the superseded digest; the annotation written by hand is not applied, and status says why.
    await assert.rejects(binnacle('approve', name, '--digest', plan1.digest), /superseded by plan/);
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { metadata: { annotations: { [ANNOTATION_APPROVED_PLAN]: plan1.digest } } });
    const refused = await extensionUntil(name, 'the superseded approval refused', (ce) => /that plan was superseded before it was applied/.test(findCondition(ce.status?.conditions, 'Progressing')?.message ?? ''));
    assert.equal(refused.status?.install?.bundle.version, '0.0.5');
    assert.deepEqual(await deployedVersions(name), ['0.0.5']);

    // Approving the digest shown upgrades to exactly that plan.
    const out = await binnacle('approve', name);
    assert.equal(out.trim(), `approved plan ${plan2.digest}`);
    const upgraded = await settledAt(name, '0.1.0');
    assert.equal(upgraded.status?.pendingPlan, undefined);
    assert.deepEqual(await deployedVersions(name), ['0.1.0']);
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
    await eventually(`${name} removed`, async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name })) === undefined ? true : undefined), 120_000);
  });

  test('a first install on install.approval: Manual waits for its plan too', async () => {
    const name = uniqueName('first');
    await useCatalog(catalogs.a ?? '');
    await applyPoisonPill(name, { install: { approval: 'Manual' } });
    const waiting = await pendingTo(name, '0.0.5');
    assert.equal(findCondition(waiting.status?.conditions, 'Installed')?.reason, 'AwaitingApproval');
    assert.equal(waiting.status?.pendingPlan?.changes[0]?.from, undefined, 'nothing installed before');
    assert.ok((waiting.status?.pendingPlan?.objects?.create ?? 0) > 0, 'a first install creates its objects');
    assert.deepEqual(await deployedVersions(name), [], 'nothing is deployed');
    const r = await approvePlan(client, { kind: 'ClusterExtension', name });
    assert.equal(r.digest, waiting.status?.pendingPlan?.digest);
    await settledAt(name, '0.0.5');
  });
});

interface Cr extends KubeObject {
  status?: { conditions?: Parameters<typeof findCondition>[0] };
}

describe('HelmOperator on manual approval', () => {
  const hopName = uniqueName('approval-hop');
  const repo = (): string => `oci://${e2eRegistry()}/${catalogName}-charts`;
  const hopRef = { apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName };
  const crRef = { apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns, name: 'pg' };

  const pushChart = (version: string): Promise<void> => pushPushgateway(work, version, repo());

  /** The chart the CR's release runs, as its Deployment's labels say. */
  async function releaseChart(): Promise<string | undefined> {
    const dep = await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'pg-prometheus-pushgateway' });
    return dep?.metadata.labels?.['helm.sh/chart'];
  }

  async function hopUntil(what: string, check: (h: HelmOperator) => boolean, poll = true): Promise<HelmOperator> {
    // The HelmOperator looks for new versions every pollIntervalMinutes; a metadata change makes it look now.
    if (poll) await client.patch(hopRef, { metadata: { annotations: { 'e2e/poll': String(Date.now()) } } });
    let last: HelmOperator | undefined;
    return eventually(what, async () => {
      last = await client.get<HelmOperator>(hopRef);
      return check(last) ? last : undefined;
    }, 120_000, 500).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: chart ${last?.status?.chart?.version ?? '-'}, pending ${JSON.stringify(last?.status?.pendingPlan?.changes)}; ${(last?.status?.conditions ?? []).map((c) => `${c.reason}: ${c.message}`).join('; ')}`);
    });
  }

  after(async () => {
    await client.delete(crRef).catch(() => undefined);
    await eventually('CR gone', async () => ((await client.find(crRef).catch(() => undefined)) === undefined ? true : undefined), 60_000).catch(() => undefined);
    await client.delete(hopRef).catch(() => undefined);
    await eventually('HelmOperator gone', async () => ((await client.find(hopRef)) === undefined ? true : undefined), 60_000).catch(() => undefined);
    await client.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `pushgateways.${GROUP}` }).catch(() => undefined);
  });

  test('a new chart version waits with its plan; a superseded plan is not applied; the approved digest upgrades the releases', async () => {
    await pushChart('3.8.0');
    await applyPushgatewayOperator(client, { name: hopName, repo: repo(), group: GROUP, namespace: ns, spec: { upgradeApproval: 'Manual' } });
    await hopUntil('serving 3.8.0', (h) => findCondition(h.status?.conditions, 'Ready')?.status === 'True' && h.status?.chart?.version === '3.8.0', false);
    await client.apply({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', metadata: { name: 'pg', namespace: ns }, spec: { replicaCount: 1 } }, { force: true });
    await eventually('release pg deployed', async () => (findCondition((await client.get<Cr>(crRef)).status?.conditions, 'Deployed')?.status === 'True' && (await releaseChart()) === 'prometheus-pushgateway-3.8.0' ? true : undefined), 120_000, 1000);

    await pushChart('3.8.1');
    const first = await hopUntil('a plan to 3.8.1', (h) => h.status?.pendingPlan?.changes[0]?.to === '3.8.1');
    const plan1 = first.status?.pendingPlan as PendingPlan;
    assert.equal(first.status?.chart?.version, '3.8.0', 'the chart served before keeps serving');
    assert.equal(await releaseChart(), 'prometheus-pushgateway-3.8.0');
    assert.deepEqual(plan1.crdSafety?.map((c) => [c.crd, c.safe]), [[`pushgateways.${GROUP}`, true]], 'the kind\'s CRD from the new chart, judged against the one served');

    await pushChart('3.8.2');
    const second = await hopUntil('a plan to 3.8.2 superseding it', (h) => h.status?.pendingPlan?.changes[0]?.to === '3.8.2');
    const plan2 = second.status?.pendingPlan as PendingPlan;
    assert.equal(plan2.supersedes, plan1.digest);

    await client.patch(hopRef, { metadata: { annotations: { [ANNOTATION_APPROVED_PLAN]: plan1.digest } } });
    await hopUntil('the superseded approval refused', (h) => /that plan was superseded before it was applied/.test(findCondition(h.status?.conditions, 'Ready')?.message ?? ''), false);
    assert.equal(await releaseChart(), 'prometheus-pushgateway-3.8.0');

    assert.equal((await binnacle('approve', hopName, '--helm-operator')).trim(), `approved plan ${plan2.digest}`);
    await hopUntil('serving 3.8.2', (h) => h.status?.chart?.version === '3.8.2' && h.status.pendingPlan === undefined, false);
    await eventually('release pg on chart 3.8.2', async () => ((await releaseChart()) === 'prometheus-pushgateway-3.8.2' ? true : undefined), 120_000, 1000);
  });
});
