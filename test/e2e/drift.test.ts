/**
 * Drift rules beside an autoscaler (issue 31 §2), on the local control plane, whose real
 * kube-controller-manager runs the HorizontalPodAutoscaler controller: an HPA whose minReplicas
 * (3) is above the manifest's replicas (1) scales the operator Deployment up, kwok reporting no
 * metrics. With an ignore rule on /spec/replicas a repair leaves the HPA's replicas alone (and
 * Binnacle's field manager lets go of them); without it the repair scales back and says so; in
 * Warn mode nothing changes and the drift is a condition and an Event. An upgrade whose manifest
 * changes an ignored field still applies it, and the repairs after it keep the field.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { API_VERSION, type BundleDeployment, type DriftSpec } from '../../src/api/types.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import { FIELD_MANAGER, type KubeClient } from '../../src/kube/client.js';
import { findCondition, type Condition, type KubeObject } from '../../src/kube/types.js';
import { e2eClient, eventually, uniqueName } from './env.js';
import { serviceAccount, type Cleanup } from './extensions.js';
import { managerLogger } from './manager-log.js';

const started = Date.now();
const ns = uniqueName('drift');
const cleanup: Cleanup = [];
const bundles: string[] = [];
let client: KubeClient;
let manager: RunningManager;
let dataDir: string;

function deployment(name: string, replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'manager', image: 'registry.example/op:1' }] } } },
  };
}

const configMap = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });

/** A plain bundle in a ConfigMap (`${name}-${version}`), installed by the BundleDeployment `name`. */
async function installPlain(name: string, objects: KubeObject[], drift: DriftSpec | undefined, version = 'v1'): Promise<void> {
  await client.apply(configMap(`${name}-${version}`, { 'objects.yaml': objects.map((o) => stringify(o)).join('---\n') }));
  await client.apply({
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name },
    spec: {
      source: { type: 'configMaps', configMaps: [{ namespace: ns, name: `${name}-${version}`, path: 'manifests' }] },
      format: 'plain',
      installNamespace: ns,
      serviceAccount: { name: 'installer' },
      ...(drift === undefined ? {} : { drift }),
    },
  });
  if (!bundles.includes(name)) bundles.push(name);
}

/** The user's autoscaler: minReplicas 3 above the manifest's 1, so the HPA controller scales up without metrics. */
async function autoscale(target: string): Promise<void> {
  await client.apply({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: target, namespace: ns },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target }, minReplicas: 3, maxReplicas: 4 },
  });
}

const bundleDeployment = (name: string): Promise<BundleDeployment> => client.get<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
const live = (kind: string, name: string): Promise<KubeObject> => client.get({ apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1', kind, namespace: ns, name });
const replicasOf = (d: KubeObject): number | undefined => (d.spec as { replicas?: number }).replicas;

/** Whether Binnacle's field manager's applied configuration holds the Deployment's spec.replicas. */
function binnacleHoldsReplicas(d: KubeObject): boolean {
  const entries = (d.metadata.managedFields ?? []) as { manager?: string; operation?: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }[];
  return entries.some((e) => e.manager === FIELD_MANAGER && e.operation === 'Apply' && e.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined);
}

async function installedRevision(name: string, revision: number): Promise<BundleDeployment> {
  return eventually(
    `${name} Installed at revision ${revision}`,
    async () => {
      const bd = await bundleDeployment(name);
      const ok = bd.status?.observedGeneration === bd.metadata.generation && findCondition(bd.status?.conditions, 'Installed')?.status === 'True' && bd.status?.revision === revision;
      return ok ? bd : undefined;
    },
    120_000,
    500,
  );
}

/**
 * Makes the BundleDeployment reconcile (as its resync would), then waits for a Drifted finding
 * that `want` accepts: in its condition, or in the Event its repair left. What the BundleDeployment
 * installed is watched, so a repair may already have run when the edit was seen, and the
 * reconcile this asks for then finds nothing left to repair.
 */
async function resyncUntil(name: string, what: string, want: (c: Condition) => boolean): Promise<Condition> {
  await client.apply({ apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name, annotations: { 'e2e.binnacle.dev/resync': String(Date.now()) } } }, { fieldManager: 'e2e-resync' });
  return eventually(
    `${name}: ${what}`,
    async () => {
      const c = findCondition((await bundleDeployment(name)).status?.conditions, 'Drifted');
      if (c !== undefined && want(c)) return c;
      const found = (await eventsOf(name)).map((e): Condition => ({ type: 'Drifted', status: e.reason === 'DriftDetected' ? 'True' : 'False', reason: e.reason, message: e.message, lastTransitionTime: '' })).find(want);
      return found;
    },
    90_000,
    500,
  );
}

/** The Events about this run's BundleDeployment `name` (by its uid: an earlier run's of the same name are not its). */
async function eventsOf(name: string): Promise<{ type: string; reason: string; message: string }[]> {
  const uid = (await bundleDeployment(name)).metadata.uid ?? '';
  const list = await client.list<KubeObject & { type: string; reason: string; message: string }>('v1', 'Event', { namespace: 'default', fieldSelector: `involvedObject.kind=BundleDeployment,involvedObject.name=${name},involvedObject.uid=${uid}` });
  return list.items;
}

/** Waits until the HPA controller has scaled `name` to 3; answers the Deployment then. */
function scaledByHpa(name: string): Promise<KubeObject> {
  return eventually(`the HPA scales ${name} to 3`, async () => {
    const d = await live('Deployment', name);
    return replicasOf(d) === 3 ? d : undefined;
  }, 120_000, 1000);
}

before(async () => {
  client = await e2eClient();
  await serviceAccount(client, cleanup, ns, 'installer', true);
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-drift-'));
  manager = await startManager({ client, logger: managerLogger('drift'), dataDir, healthTimeoutMs: 30_000, workers: 4 });
});

after(async () => {
  for (const name of bundles) await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name }).catch(() => undefined);
  await eventually('drift BundleDeployments gone', async () => {
    for (const name of bundles) if ((await client.find({ apiVersion: API_VERSION, kind: 'BundleDeployment', name })) !== undefined) return undefined;
    return true;
  }, 120_000).catch(() => undefined);
  await manager.stop();
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
  client.close();
  console.log(`drift e2e: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

describe('what a BundleDeployment installed is watched', () => {
  test('a changed image, a deleted Deployment and a deleted Service are repaired within seconds, not at the 10-minute resync (the watch re-queues the BundleDeployment)', async () => {
    const name = 'drift-watched';
    const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns }, spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'op', image: 'registry.example/op:1' }] } } } };
    const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { selector: { app: name }, ports: [{ port: 80 }] } };
    await installPlain(name, [deployment, service], undefined);
    await installedRevision(name, 1);
    const imageOf = (d: KubeObject): string | undefined => (d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]?.image;
    const times: Record<string, number> = {};
    // Someone edits the image by hand (another field manager, forced).
    let at = Date.now();
    await client.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: ns }, spec: { template: { spec: { containers: [{ name: 'op', image: 'evil.example/op:6' }] } } } }, { fieldManager: 'kubectl-edit', force: true });
    await eventually('the image repaired', async () => ((imageOf(await live('Deployment', name))) === 'registry.example/op:1' ? true : undefined), 60_000, 200);
    times.image = Date.now() - at;
    at = Date.now();
    await client.delete({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name });
    await eventually('the Deployment re-created', async () => ((await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name })) === undefined ? undefined : true), 60_000, 200);
    times.deployment = Date.now() - at;
    at = Date.now();
    await client.delete({ apiVersion: 'v1', kind: 'Service', namespace: ns, name });
    await eventually('the Service re-created', async () => ((await client.find({ apiVersion: 'v1', kind: 'Service', namespace: ns, name })) === undefined ? undefined : true), 60_000, 200);
    times.service = Date.now() - at;
    console.log(`BundleDeployment drift repaired without a resync (ms): ${JSON.stringify(times)}`);
    assert.equal((await bundleDeployment(name)).status?.revision, 1, 'repairs, no new revision');
  });
});

describe('drift rules beside a HorizontalPodAutoscaler', () => {
  test('with an ignore rule on /spec/replicas the HPA keeps its replicas; other drift is still repaired and reported', async () => {
    const name = 'drift-ignored';
    await installPlain(name, [deployment('ignored-op', 1), configMap('ignored-config', { level: 'info' })], { ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }] });
    await installedRevision(name, 1);
    await autoscale('ignored-op');
    const scaled = await scaledByHpa('ignored-op');
    // Someone also edits a field that is not ignored: the repair that follows proves a resync ran.
    await client.apply(configMap('ignored-config', { level: 'debug' }), { fieldManager: 'someone', force: true });
    const cond = await resyncUntil(name, 'the config repaired', (c) => c.reason === 'DriftRepaired' && c.message.includes('ignored-config'));
    assert.equal(cond.status, 'False');
    assert.match(cond.message, new RegExp(`ConfigMap ${ns}/ignored-config: data.level \\(manifest "info", live "debug"\\)`));
    assert.doesNotMatch(cond.message, /replicas/, 'an ignored field is not reported');
    assert.deepEqual((await live('ConfigMap', 'ignored-config')).data, { level: 'info' });
    const after = await live('Deployment', 'ignored-op');
    assert.equal(replicasOf(after), 3);
    assert.equal(after.metadata.generation, scaled.metadata.generation, 'the Deployment was not scaled back (and up again) in between');
    assert.equal(binnacleHoldsReplicas(after), false, 'Binnacle’s field manager does not hold spec.replicas');
  });

  test('without it the repair scales back (at once: the Deployment is watched), and says so', async () => {
    const name = 'drift-fight';
    await installPlain(name, [deployment('fight-op', 1)], undefined);
    await installedRevision(name, 1);
    const installed = await live('Deployment', 'fight-op');
    await autoscale('fight-op');
    // The HPA scales to 3 and the watch repairs it back to 1 before a poll could see it: the repair's finding says so.
    const cond = await resyncUntil(name, 'replicas repaired', (c) => c.reason === 'DriftRepaired' && c.message.includes('spec.replicas'));
    assert.match(cond.message, new RegExp(`Deployment ${ns}/fight-op: spec.replicas \\(manifest 1, live 3\\)`));
    const events = await eventsOf(name);
    assert.ok(events.some((e) => e.type === 'Warning' && e.reason === 'DriftRepaired' && e.message.includes('spec.replicas')), 'a Warning Event names the object and field');
    const after = await eventually('scaled back to 1', async () => {
      const d = await live('Deployment', 'fight-op');
      return replicasOf(d) === 1 ? d : undefined;
    }, 60_000, 500);
    assert.ok((after.metadata.generation ?? 0) > (installed.metadata.generation ?? 0) + 1, 'scaled up by the HPA, then back by the repair');
    assert.equal(binnacleHoldsReplicas(after), true);
  });

  test('Warn mode changes nothing and reports the drift as a condition and an Event', async () => {
    const name = 'drift-warn';
    await installPlain(name, [deployment('warn-op', 1)], { mode: 'Warn' });
    await installedRevision(name, 1);
    await autoscale('warn-op');
    const scaled = await scaledByHpa('warn-op');
    const cond = await resyncUntil(name, 'drift detected', (c) => c.reason === 'DriftDetected');
    assert.equal(cond.status, 'True');
    assert.match(cond.message, new RegExp(`Deployment ${ns}/warn-op: spec.replicas \\(manifest 1, live 3\\)`));
    const events = await eventsOf(name);
    assert.ok(events.some((e) => e.type === 'Warning' && e.reason === 'DriftDetected' && e.message.includes(`Deployment ${ns}/warn-op: spec.replicas`)));
    const after = await live('Deployment', 'warn-op');
    assert.equal(replicasOf(after), 3);
    assert.equal(after.metadata.generation, scaled.metadata.generation, 'nothing was changed');
  });

  test('an upgrade whose manifest changes an ignored field applies it; repairs after it keep it', async () => {
    const name = 'drift-upgrade';
    const drift: DriftSpec = { ignore: [{ paths: ['/data/mode'], target: { kind: 'ConfigMap', name: 'upgrade-config' } }] };
    await installPlain(name, [configMap('upgrade-config', { mode: 'a', other: 'x' })], drift);
    await installedRevision(name, 1);
    await client.apply(configMap('upgrade-config', { mode: 'edited', other: 'y' }), { fieldManager: 'someone', force: true });
    const repaired = await resyncUntil(name, 'other repaired', (c) => c.reason === 'DriftRepaired' && c.message.includes('data.other'));
    assert.doesNotMatch(repaired.message, /data\.mode/);
    assert.deepEqual((await live('ConfigMap', 'upgrade-config')).data, { mode: 'edited', other: 'x' }, 'the ignored field is left as edited, the other repaired');

    // A new version of the bundle changes the ignored field: applied.
    await installPlain(name, [configMap('upgrade-config', { mode: 'b', other: 'x' })], drift, 'v2');
    await installedRevision(name, 2);
    assert.deepEqual((await live('ConfigMap', 'upgrade-config')).data, { mode: 'b', other: 'x' });

    // Repairs leave the field out again: handed over first, so letting go of it does not delete it.
    await client.apply(configMap('upgrade-config', { other: 'z' }), { fieldManager: 'someone', force: true });
    await resyncUntil(name, 'other repaired again', (c) => c.reason === 'DriftRepaired' && c.message.includes('live "z"'));
    assert.deepEqual((await live('ConfigMap', 'upgrade-config')).data, { mode: 'b', other: 'x' });
  });
});
