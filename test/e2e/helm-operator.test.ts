/**
 * HelmOperator on the local control plane: a corpus chart (prometheus-pushgateway) pushed to a
 * real registry with `helm push` becomes a `Pushgateway` kind with a structural CRD schema from
 * its values. Its CRs are installed, changed (upgrade), drifted by hand (repaired without a new
 * revision), given values Helm refuses (ReleaseFailed with Helm's message while the previous
 * release keeps running), changed where the API server refuses it in place (refused, then
 * replaced with the upgrade-force annotation), upgraded to a new chart version in range, and
 * deleted (nothing left).
 * `helm adopt` takes over a release the `helm` CLI installed, without reinstalling; a `helm upgrade`
 * by hand on it is refused on Binnacle's fields; forced, its record is put back and its objects repaired.
 * A release Helm 3 installed (its record from helm v3.22.0) is adopted, upgraded and rolled back (`binnacle helm rollback`) on Helm 4;
 * one Binnacle recorded under Helm 3 (its trusted history and mirror) is carried on with nothing reinstalled.
 * The HelmOperator's conflictPolicy (Fail names the other field manager and the field; Force takes
 * it), takeOwnership (an object no one holds is taken; another release's never) and postRenderers
 * (the owner's patches upgrade every release; one that selects nothing fails it by name).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseAllDocuments } from 'yaml';
import { API_VERSION, type HelmOperator } from '../../src/api/types.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, eventually, kubectl, startE2eManager, uniqueName } from './env.js';
import { serviceAccount, type Cleanup } from './extensions.js';
import { applyPushgatewayOperator, HELM, PUSHGATEWAY_CHART as CHART, pushPushgateway } from './pushgateway.js';

const run = promisify(execFile);
const BINNACLE = join(import.meta.dirname, '..', '..', 'bin', 'binnacle.js');
const GROUP = 'e2e.binnacle.dev';

async function helm(...args: string[]): Promise<string> {
  const { stdout } = await run(HELM, [...args, '--kubeconfig', e2eKubeconfig()], { env: { ...process.env, HELM_CACHE_HOME: '/tmp/helm-cache', HELM_CONFIG_HOME: '/tmp/helm-config' } });
  return stdout;
}

interface Cr extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Parameters<typeof findCondition>[0]; deployedRelease?: { name: string; manifest: string } };
}

describe('HelmOperator', () => {
  let client: KubeClient;
  let manager: RunningManager;
  let work = '';
  const cleanup: Cleanup = [];
  const ns = uniqueName('helm-op');
  const hopName = 'e2e-pushgateway';
  const repo = () => `oci://${e2eRegistry()}/charts`;

  const pushChart = (version: string): Promise<void> => pushPushgateway(work, version, repo());

  async function cr(name: string, namespace = ns): Promise<Cr> {
    return client.get<Cr>({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace, name });
  }

  async function applyCr(name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): Promise<void> {
    await client.apply({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', metadata: { name, namespace: ns, annotations }, spec }, { force: true });
  }

  async function deployedAt(name: string, revision: number, timeoutMs = 120_000, namespace = ns): Promise<Cr> {
    return eventually(
      `${name} Deployed at revision ${revision}`,
      async () => {
        const c = await cr(name, namespace);
        const deployed = findCondition(c.status?.conditions, 'Deployed');
        if (deployed?.status !== 'True') return undefined;
        const hist = JSON.parse(await helm('history', name, '-n', namespace, '-o', 'json')) as { revision: number; status: string }[];
        return hist.at(-1)?.revision === revision && hist.at(-1)?.status === 'deployed' ? c : undefined;
      },
      timeoutMs,
      1000,
    );
  }

  before(async () => {
    client = await e2eClient();
    work = await mkdtemp(join(tmpdir(), 'helm-op-e2e-'));
    await serviceAccount(client, cleanup, ns, 'installer', true);
    await pushChart('3.8.0');
    manager = await startE2eManager('helm-operator', client, work);
  });

  after(async () => {
    for (const c of (await client.list<Cr>(`${GROUP}/v1alpha1`, 'Pushgateway', { namespace: ns }).catch(() => ({ items: [] as Cr[] }))).items) {
      await client.delete({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns, name: c.metadata.name ?? '' }).catch(() => undefined);
    }
    await eventually('CRs gone', async () => ((await client.list(`${GROUP}/v1alpha1`, 'Pushgateway', { namespace: ns }).catch(() => ({ items: [] }))).items.length === 0 ? true : undefined), 60_000).catch(() => undefined);
    await client.delete({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName }).catch(() => undefined);
    // Its finalizer goes once its custom resources are uninstalled: the manager must still run.
    await eventually('HelmOperator gone', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName })) === undefined ? true : undefined), 60_000).catch(() => undefined);
    await manager.stop();
    await client.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `pushgateways.${GROUP}` }).catch(() => undefined);
    for (const f of cleanup.reverse()) await f().catch(() => undefined);
    await rm(work, { recursive: true, force: true });
    client.close();
  });

  test('serves a chart as a kind: CRD from values, install, upgrade, drift repair, refused values, new chart version, delete', async () => {
    await applyPushgatewayOperator(client, { name: hopName, repo: repo(), group: GROUP, namespace: ns, kind: { valuesFrom: [{ kind: 'ConfigMap', name: 'shared-values', optional: true }] } });
    const hop = await eventually(
      'HelmOperator Ready',
      async () => {
        const h = await client.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName });
        return findCondition(h.status?.conditions, 'Ready')?.status === 'True' ? h : undefined;
      },
      120_000,
    );
    assert.equal(hop.status?.chart?.version, '3.8.0');
    const crd = await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `pushgateways.${GROUP}` });
    const specSchema = (crd.spec as { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties?: Record<string, { type?: string }> } } } } }[] }).versions[0]?.schema.openAPIV3Schema.properties.spec;
    assert.equal(specSchema?.properties?.replicaCount?.type, 'integer', 'the CRD schema follows values.yaml');
    // The API server itself refuses a spec that does not fit the chart's values.
    await assert.rejects(applyCr('bad-type', { replicaCount: 'many' }), /replicaCount/);

    // Install, with values from a ConfigMap (valuesFrom) under the CR's spec.
    await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared-values', namespace: ns }, data: { 'values.yaml': 'podLabels:\n  source: configmap\nreplicaCount: 7\n' } });
    await applyCr('pg', { replicaCount: 1 });
    const installed = await deployedAt('pg', 1);
    assert.match(installed.status?.deployedRelease?.manifest ?? '', /kind: Deployment/);
    const depRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'pg-prometheus-pushgateway' };
    const dep = await client.get(depRef);
    assert.equal(dep.metadata.ownerReferences?.[0]?.kind, 'Pushgateway', 'the release’s objects are owned by the CR');
    const podLabels = (dep.spec as { template: { metadata: { labels?: Record<string, string> } } }).template.metadata.labels ?? {};
    assert.equal(podLabels.source, 'configmap', 'values from the ConfigMap');
    assert.equal((dep.spec as { replicas?: number }).replicas, 1, 'the CR’s spec wins over valuesFrom');

    // Upgrade: the spec changes.
    await applyCr('pg', { replicaCount: 2 });
    await deployedAt('pg', 2);
    assert.equal(((await client.get(depRef)).spec as { replicas?: number }).replicas, 2);

    // Drift: scaled by hand; repaired on the next reconcile (period 5s), with no new revision.
    await client.patch(depRef, { spec: { replicas: 5 } });
    await eventually('drift repaired', async () => (((await client.get(depRef)).spec as { replicas?: number }).replicas === 2 ? true : undefined), 60_000, 1000);
    const hist = JSON.parse(await helm('history', 'pg', '-n', ns, '-o', 'json')) as unknown[];
    assert.equal(hist.length, 2, 'repairing drift makes no new revision');

    // A dependent deleted: the watch on the release's objects (watchDependentResources) re-queues
    // the CR at once; with a reconcile period of an hour, nothing else would bring it back.
    await applyCr('pg', { replicaCount: 2 }, { 'helm.sdk.operatorframework.io/reconcile-period': '1h' });
    const svcRef = { apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'pg-prometheus-pushgateway' };
    const svc = await client.get(svcRef);
    await client.delete(svcRef);
    await eventually('the deleted Service re-created', async () => {
      const now = await client.find(svcRef);
      return now !== undefined && now.metadata.uid !== svc.metadata.uid ? true : undefined;
    }, 60_000, 500);
    assert.equal((JSON.parse(await helm('history', 'pg', '-n', ns, '-o', 'json')) as unknown[]).length, 2, 'a repair, not a revision');
    // A field the release applied, changed by someone else (the real kubectl): the API server moves
    // the field out of Binnacle's managedFields entry, and that re-queues at once. A write that
    // leaves Binnacle's fields alone (the Deployment controller's revision annotation) does not.
    await kubectl('scale', 'deployment', depRef.name, '-n', ns, '--replicas=4');
    await eventually('a hand-scaled Deployment repaired at once', async () => (((await client.get(depRef)).spec as { replicas?: number }).replicas === 2 ? true : undefined), 60_000, 500);

    // Values Helm refuses (a template's `fail`): ReleaseFailed with Helm's message; revision 2 keeps running.
    await applyCr('pg', { replicaCount: 2, extraManifests: ['{{ fail "pushgateway refuses this value" }}'] });
    const failed = await eventually(
      'ReleaseFailed',
      async () => {
        const c = await cr('pg');
        return findCondition(c.status?.conditions, 'ReleaseFailed')?.status === 'True' ? c : undefined;
      },
      60_000,
    );
    assert.match(findCondition(failed.status?.conditions, 'ReleaseFailed')?.message ?? '', /pushgateway refuses this value/);
    assert.equal((JSON.parse(await helm('history', 'pg', '-n', ns, '-o', 'json')) as unknown[]).length, 2);
    assert.equal(((await client.get(depRef)).spec as { replicas?: number }).replicas, 2);
    await applyCr('pg', { replicaCount: 2 });

    // A change the API server refuses in place (a Service's clusterIP): ReleaseFailed, naming
    // helm-operator's upgrade-force annotation; with it, the Service is deleted and re-created.
    const headless = { replicaCount: 2, service: { clusterIP: 'None' } };
    await applyCr('pg', headless);
    const immutable = await eventually(
      'ReleaseFailed on an immutable field',
      async () => {
        const f = findCondition((await cr('pg')).status?.conditions, 'ReleaseFailed');
        return f?.status === 'True' && /may not change once set/.test(f.message) ? f : undefined;
      },
      60_000,
    );
    assert.match(immutable.message, /Service .*pg-prometheus-pushgateway.*upgrade-force/s);
    const svcBeforeForce = await client.get(svcRef);
    await applyCr('pg', headless, { 'helm.sdk.operatorframework.io/upgrade-force': 'true' });
    await deployedAt('pg', 3);
    const svcAfterForce = await client.get(svcRef);
    assert.equal((svcAfterForce.spec as { clusterIP?: string }).clusterIP, 'None');
    assert.notEqual(svcAfterForce.metadata.uid, svcBeforeForce.metadata.uid, 're-created');
    assert.equal(svcAfterForce.metadata.ownerReferences?.[0]?.kind, 'Pushgateway');

    // A new chart version in range: every CR is upgraded to it.
    await pushChart('3.8.1');
    // (The HelmOperator polls every pollIntervalMinutes; a metadata change makes it look now.)
    await client.patch({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName }, { metadata: { annotations: { 'e2e/poll': '1' } } });
    await eventually(
      'release on chart 3.8.1',
      async () => {
        const list = JSON.parse(await helm('list', '-n', ns, '-o', 'json')) as { name: string; chart: string; status: string }[];
        return list.find((r) => r.name === 'pg')?.chart === 'prometheus-pushgateway-3.8.1' && list.find((r) => r.name === 'pg')?.status === 'deployed' ? true : undefined;
      },
      120_000,
      1000,
    );

    // Paused: a spec change waits until the annotation goes.
    const revisions = async (): Promise<number> => (JSON.parse(await helm('history', 'pg', '-n', ns, '-o', 'json')) as unknown[]).length;
    const before = await revisions();
    await applyCr('pg', { ...headless, replicaCount: 3 }, { 'binnacle.dev/paused': 'true' });
    await eventually('Paused', async () => (findCondition((await cr('pg')).status?.conditions, 'Paused')?.status === 'True' ? true : undefined), 60_000);
    await new Promise((r) => setTimeout(r, 6000));
    assert.equal(await revisions(), before, 'nothing happens while paused');
    await client.patch({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns, name: 'pg' }, { metadata: { annotations: { 'binnacle.dev/paused': null } } });
    await deployedAt('pg', before + 1);
    assert.equal(((await client.get(depRef)).spec as { replicas?: number }).replicas, 3);

    // Delete: the release and its objects go.
    await client.delete({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns, name: 'pg' });
    await eventually('CR gone', async () => ((await client.find({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns, name: 'pg' })) === undefined ? true : undefined), 60_000);
    assert.equal(await client.find(depRef), undefined);
    assert.equal((await helm('list', '-n', ns, '-o', 'json')).trim(), '[]');
  });

  test('helm adopt: a release the helm CLI installed becomes a CR, keeping its history and objects', async () => {
    await helm('install', 'adopted', CHART, '-n', ns, '--set', 'replicaCount=1');
    const before = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'adopted-prometheus-pushgateway' });
    const { stdout } = await run('node', [BINNACLE, 'helm', 'adopt', 'adopted', '-n', ns, '--kind', `Pushgateway.v1alpha1.${GROUP}`, '--kubeconfig', e2eKubeconfig()]);
    assert.match(stdout, /adopted/);
    const c = await deployedAt('adopted', 2);
    assert.deepEqual(c.spec, { replicaCount: 1 }, 'the CR’s spec is the release’s values');
    const after = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'adopted-prometheus-pushgateway' });
    assert.equal(after.metadata.uid, before.metadata.uid, 'no reinstall: the same Deployment');
    const hist = JSON.parse(await helm('history', 'adopted', '-n', ns, '-o', 'json')) as { revision: number; status: string }[];
    assert.deepEqual(hist.map((h) => [h.revision, h.status]), [[1, 'superseded'], [2, 'deployed']]);
  });

  test('a release Helm 3 installed: adopted and upgraded by Binnacle on Helm 4, read by helm v4, a field only Helm 3 set removed by the next revision, rolled back with binnacle helm rollback', async () => {
    // The record Helm v3.22.0 wrote (hack/make-helm3-record.sh), moved to this test's namespace.
    const made = JSON.parse(await readFile(join(import.meta.dirname, 'fixtures', 'helm3-release.json'), 'utf8')) as KubeObject & { data: { release: string } };
    const decoded = gunzipSync(Buffer.from(Buffer.from(made.data.release, 'base64').toString(), 'base64')).toString();
    assert.doesNotMatch(decoded, /apply_method/, 'a Helm 3 record');
    const moved = decoded.replaceAll('helm3-made', ns);
    const release = Buffer.from(Buffer.from(gzipSync(moved)).toString('base64')).toString('base64');
    await client.create({ ...made, metadata: { ...made.metadata, namespace: ns }, data: { release } });
    // The objects as Helm 3's install creates them: its manifest with Helm's marks, POSTed as the `helm` field manager.
    const manifest = (JSON.parse(moved) as { manifest: string }).manifest;
    const objects = parseAllDocuments(manifest).map((d) => d.toJSON() as KubeObject | null).filter((o): o is KubeObject => o !== null);
    for (const o of objects) {
      o.metadata.labels = { ...o.metadata.labels, 'app.kubernetes.io/managed-by': 'Helm' };
      o.metadata.annotations = { ...o.metadata.annotations, 'meta.helm.sh/release-name': 'h3', 'meta.helm.sh/release-namespace': ns };
    }
    // JSON: kubectl reads YAML 1.1, where a plain `yes` is a boolean.
    const file = join(work, 'helm3-objects.json');
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    await kubectl('create', '-f', file, '--field-manager=helm');
    const depRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'h3-prometheus-pushgateway' };
    const before = await client.get(depRef);
    assert.ok(((before.metadata.managedFields ?? []) as { manager?: string; operation?: string }[]).some((e) => e.manager === 'helm' && e.operation === 'Update'), 'Helm 3 holds its fields as Updates');
    const podLabels = async (): Promise<Record<string, string>> => ((await client.get(depRef)).spec as { template: { metadata: { labels?: Record<string, string> } } }).template.metadata.labels ?? {};

    await run('node', [BINNACLE, 'helm', 'adopt', 'h3', '-n', ns, '--kind', `Pushgateway.v1alpha1.${GROUP}`, '--kubeconfig', e2eKubeconfig()]);
    const adopted = await deployedAt('h3', 2);
    assert.deepEqual(adopted.spec, { podLabels: { h3: 'yes' }, replicaCount: 1 });
    assert.equal((await client.get(depRef)).metadata.uid, before.metadata.uid, 'no reinstall');
    // Helm 4 reads both: Helm 3's record and Binnacle's.
    const history = async (): Promise<[number, string][]> => (JSON.parse(await helm('history', 'h3', '-n', ns, '-o', 'json')) as { revision: number; status: string }[]).map((h) => [h.revision, h.status]);
    assert.deepEqual(await history(), [[1, 'superseded'], [2, 'deployed']]);
    assert.deepEqual(JSON.parse(await helm('get', 'values', 'h3', '-n', ns, '--revision', '1', '-o', 'json')), { podLabels: { h3: 'yes' }, replicaCount: 1 });
    const adoptedValues = JSON.parse(await helm('get', 'values', 'h3', '-n', ns, '-o', 'json')) as { replicaCount?: number };
    assert.equal(adoptedValues.replicaCount, 1);
    assert.equal((await podLabels()).h3, 'yes');

    // Upgraded without the label Helm 3 set: it goes (Helm 3's Update entry was handed to Binnacle).
    const crRef = { apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns, name: 'h3' };
    await client.patch(crRef, { spec: { podLabels: null, replicaCount: 2 } });
    await deployedAt('h3', 3);
    assert.equal((await podLabels()).h3, undefined, 'the label only Helm 3 and the adopted revision set is gone');
    assert.equal(((await client.get(depRef)).spec as { replicas?: number }).replicas, 2);
    // Rolled back with binnacle, as `helm rollback` would: revision 2's values into the CR's spec, a new revision made from them.
    // The applier's own rollback is refused: the manager would put an old manifest applied behind the CR back.
    const behind = await run('node', [BINNACLE, 'release', 'rollback', 'h3', '-n', ns, '--kubeconfig', e2eKubeconfig()]).then(() => 'ran', (err: unknown) => String((err as { stderr?: unknown }).stderr ?? err));
    assert.match(behind, /release .+\/h3 is held by Pushgateway .+\/h3, whose spec the manager renders: roll it back with `binnacle helm rollback h3/);
    const rolledBack = await run('node', [BINNACLE, 'helm', 'rollback', 'h3', '-n', ns, '--kubeconfig', e2eKubeconfig()]);
    assert.match(rolledBack.stdout, /rolling back from revision 3 to revision 2's values/);
    // The CR's own values at revision 2, not Helm's config for it (which holds the kind's valuesFrom ConfigMap too).
    assert.match(rolledBack.stderr, /spec written: \{"podLabels":\{"h3":"yes"\},"replicaCount":1\}\n/);
    assert.deepEqual((await cr('h3')).spec, { podLabels: { h3: 'yes' }, replicaCount: 1 });
    await deployedAt('h3', 4);
    assert.deepEqual(await history(), [[1, 'superseded'], [2, 'superseded'], [3, 'superseded'], [4, 'deployed']]);
    assert.deepEqual(JSON.parse(await helm('get', 'values', 'h3', '-n', ns, '-o', 'json')), adoptedValues);
    assert.equal((await podLabels()).h3, 'yes');
  });

  test('a release Binnacle recorded under Helm 3 (its trusted history and Helm mirror, fixture): carried on by Binnacle on Helm 4 with nothing reinstalled, read by helm v4, rolled back with binnacle', async () => {
    // What Binnacle at its last Helm 3 commit kept for a Pushgateway b3 (hack/make-binnacle-helm3-record.sh).
    const fixture = JSON.parse(await readFile(join(import.meta.dirname, 'fixtures', 'binnacle-helm3-release.json'), 'utf8')) as { ownerUid: string; secrets: KubeObject[]; objects: KubeObject[] };
    const ns3 = 'binnacle-helm3-made';
    assert.deepEqual([...new Set(fixture.objects.map((o) => o.metadata.namespace))], [ns3]);
    // Binnacle is stopped while it is upgraded; the resource is there from before (its UID keys the history).
    await manager.stop();
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns3 } });
    cleanup.push(async () => {
      await client.delete({ apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns3, name: 'b3' }).catch(() => undefined);
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns3 });
    });
    const crRef = { apiVersion: `${GROUP}/v1alpha1`, kind: 'Pushgateway', namespace: ns3, name: 'b3' };
    const made = await client.create({ apiVersion: crRef.apiVersion, kind: crRef.kind, metadata: { name: 'b3', namespace: ns3 }, spec: { replicaCount: 1, podLabels: { b3: 'yes' } } });
    const uid = made.metadata.uid ?? '';
    for (const secret of fixture.secrets) await client.create(JSON.parse(JSON.stringify(secret).replaceAll(fixture.ownerUid, uid)) as KubeObject);
    // The objects as that Binnacle's apply left them: its marks, applied server-side as its field manager.
    for (const o of fixture.objects) await client.apply(o, { force: true });
    const depRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns3, name: 'b3-prometheus-pushgateway' };
    const before = await client.get(depRef);
    manager = await startE2eManager('helm-operator-after-upgrade', client, work);

    // Binnacle on Helm 4 carries the release on: the next revision, the same objects.
    await deployedAt('b3', 2, 120_000, ns3);
    assert.equal((await client.get(depRef)).metadata.uid, before.metadata.uid, 'nothing reinstalled');
    const history = async (): Promise<[number, string][]> => (JSON.parse(await helm('history', 'b3', '-n', ns3, '-o', 'json')) as { revision: number; status: string }[]).map((h) => [h.revision, h.status]);
    assert.deepEqual(await history(), [[1, 'superseded'], [2, 'deployed']]);
    assert.deepEqual(JSON.parse(await helm('get', 'values', 'b3', '-n', ns3, '--revision', '1', '-o', 'json')), { podLabels: { b3: 'yes' }, replicaCount: 1 });
    assert.equal(((await client.get(depRef)).spec as { template: { metadata: { labels?: Record<string, string> } } }).template.metadata.labels?.b3, 'yes');

    await client.patch(crRef, { spec: { podLabels: null, replicaCount: 2 } });
    await deployedAt('b3', 3, 120_000, ns3);
    // Revision 1 predates the resource's own values kept apart: Helm's config is all there is, written only when accepted.
    const refusedRollback = await run('node', [BINNACLE, 'helm', 'rollback', 'b3', '1', '-n', ns3, '--kubeconfig', e2eKubeconfig()]).then(() => 'ran', (err: unknown) => String((err as { stderr?: unknown }).stderr ?? err));
    assert.match(refusedRollback, /revision 1 did not record the resource's own values apart .+--accept-config/);
    const rolledBack = await run('node', [BINNACLE, 'helm', 'rollback', 'b3', '1', '-n', ns3, '--accept-config', '--kubeconfig', e2eKubeconfig()]);
    assert.match(rolledBack.stdout, /rolling back from revision 3 to revision 1's values/);
    assert.match(rolledBack.stderr, /spec written: \{"replicaCount":1,"podLabels":\{"b3":"yes"\}\} \(Helm's config for that revision, accepted with --accept-config\)/);
    await deployedAt('b3', 4, 120_000, ns3);
    assert.deepEqual(JSON.parse(await helm('get', 'values', 'b3', '-n', ns3, '-o', 'json')), { podLabels: { b3: 'yes' }, replicaCount: 1 });
    assert.equal((await client.get(depRef)).metadata.uid, before.metadata.uid, 'still the same Deployment');
  });

  test('helm upgrade by hand on a Binnacle release: refused on the fields Binnacle holds; forced, its record is put back as the history says, the objects are repaired, and what only the hand upgrade set is gone', async () => {
    const depRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'adopted-prometheus-pushgateway' };
    const history = async (): Promise<[number, string][]> => (JSON.parse(await helm('history', 'adopted', '-n', ns, '-o', 'json')) as { revision: number; status: string }[]).map((h) => [h.revision, h.status]);
    const asBinnacleKeeps = (what: string): Promise<true> =>
      eventually(what, async () => (JSON.stringify(await history()) === JSON.stringify([[1, 'superseded'], [2, 'deployed']]) ? true : undefined), 60_000, 500);
    const values = async (): Promise<unknown> => JSON.parse(await helm('get', 'values', 'adopted', '-n', ns, '-o', 'json'));
    const deployedValues = await values();
    // Helm 4 upgrades a server-side release server-side: replicas is Binnacle's field.
    const refused = await helm('upgrade', 'adopted', CHART, '-n', ns, '--reuse-values', '--set', 'replicaCount=3').then(
      () => '',
      (err: unknown) => String((err as { stderr?: string }).stderr ?? err),
    );
    assert.match(refused, /conflict/i, 'the hand upgrade is refused on the fields Binnacle holds');
    await asBinnacleKeeps('the failed record of the hand upgrade put back');

    // Forced: the hand upgrade deploys, with a pod label of its own. It waits for the objects, so
    // Binnacle reconciles (the Deployment changed) while its record is pending: the command still
    // ends well, its record left until it is done (it failed at its last step when taken at once).
    await helm('upgrade', 'adopted', CHART, '-n', ns, '--reuse-values', '--force-conflicts', '--wait', '--timeout', '60s', '--set', 'replicaCount=3', '--set', 'podLabels.byhand=yes');
    await asBinnacleKeeps('the hand upgrade’s record put back: revision 2 is the deployed one');
    assert.deepEqual(await values(), deployedValues);
    const dep = await eventually(
      'the Deployment repaired, the hand upgrade’s label gone',
      async () => {
        const d = await client.get(depRef);
        const spec = d.spec as { replicas?: number; template: { metadata: { labels?: Record<string, string> } } };
        return spec.replicas === 1 && spec.template.metadata.labels?.byhand === undefined ? d : undefined;
      },
      60_000,
      500,
    );
    const managers = ((dep.metadata.managedFields ?? []) as { manager?: string; subresource?: string }[]).filter((e) => e.subresource === undefined).map((e) => e.manager);
    assert.ok(!managers.includes('helm'), `the helm CLI holds no field of the Deployment any more: ${managers.join(', ')}`);
    assert.equal(findCondition((await cr('adopted')).status?.conditions, 'Deployed')?.status, 'True');
  });

  test("conflict policy, take ownership, post-render: Fail refuses a field another manager holds, naming it, Force takes it; an object no one holds is taken only with takeOwnership, another release's never; the owner's patches reach every release", async () => {
    // Applied, then waited for until the operator serves it: its kinds restarted for the new spec.
    const operator = async (spec: Record<string, unknown>): Promise<void> => {
      await applyPushgatewayOperator(client, { name: hopName, repo: repo(), group: GROUP, namespace: ns, kind: { valuesFrom: [{ kind: 'ConfigMap', name: 'shared-values', optional: true }] }, spec });
      await eventually(
        `HelmOperator serving ${JSON.stringify(spec)}`,
        async () => {
          const h = await client.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName });
          return h.status?.observedGeneration === h.metadata.generation && findCondition(h.status?.conditions, 'Ready')?.status === 'True' ? h : undefined;
        },
        60_000,
        250,
      );
    };
    const failed = (name: string, what: RegExp): Promise<string> =>
      eventually(
        `${name}: ReleaseFailed ${String(what)}`,
        async () => {
          const message = findCondition((await cr(name)).status?.conditions, 'ReleaseFailed')?.message ?? '';
          return what.test(message) ? message : undefined;
        },
        60_000,
        500,
      );
    const depRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'cf-prometheus-pushgateway' };
    await operator({ conflictPolicy: 'Fail' });
    await applyCr('cf', { replicaCount: 1 });
    await deployedAt('cf', 1);
    // Someone else sets the replicas (its field now); the next upgrade sets them too.
    await kubectl('patch', 'deployment', depRef.name, '-n', ns, '--type=merge', '--field-manager=someone-else', '-p', '{"spec":{"replicas":4}}');
    await applyCr('cf', { replicaCount: 2 });
    // (Meanwhile each drift repair fails alike: the revision stays, the field is the other's.)
    const refused = await failed('cf', /nothing was changed[\s\S]*conflict with "someone-else"/);
    assert.match(refused, /cf-prometheus-pushgateway[^;]*conflict with "someone-else" using apps\/v1: \.spec\.replicas[^;]*conflictPolicy Fail/);
    assert.equal(((await client.get(depRef)).spec as { replicas?: number }).replicas, 4, 'the other manager’s value stays');
    assert.deepEqual((JSON.parse(await helm('history', 'cf', '-n', ns, '-o', 'json')) as { revision: number }[]).map((h) => h.revision), [1], 'no revision recorded');
    // Force (the default): the upgrade takes the field.
    await operator({});
    await deployedAt('cf', 2);
    assert.equal(((await client.get(depRef)).spec as { replicas?: number }).replicas, 2);

    // A ServiceAccount made by hand where the release puts its own: refused unless the operator's owner asks.
    const saRef = { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'to-prometheus-pushgateway' };
    await kubectl('create', 'serviceaccount', saRef.name, '-n', ns);
    await applyCr('to', { replicaCount: 1 });
    assert.match(await failed('to', /already exists/), /ServiceAccount .*to-prometheus-pushgateway already exists and belongs to no Binnacle owner .*refusing to take it over/);
    await operator({ takeOwnership: true });
    await deployedAt('to', 1);
    const sa = await client.get(saRef);
    assert.equal(sa.metadata.labels?.['binnacle.dev/owner-name'], 'to', 'taken: it carries the release’s marks');
    assert.equal(sa.metadata.annotations?.['meta.helm.sh/release-name'], 'to');
    // Another release's object is never taken, takeOwnership or not: release `thief` renders cf's Service name.
    await applyCr('thief', { replicaCount: 1, fullnameOverride: 'cf-prometheus-pushgateway' });
    assert.match(await failed('thief', /belongs to/), /cf-prometheus-pushgateway already exists and belongs to Pushgateway .*\/cf.*takeOwnership takes only objects no release, owner or controller holds/);
    assert.equal((await client.get(depRef)).metadata.labels?.['binnacle.dev/owner-name'], 'cf', 'cf’s objects stay cf’s');
    await applyCr('thief', { replicaCount: 1 });

    // Post-rendering (the operator owner's patches, in each release's input digest): every release upgrades.
    const label = '- op: add\n  path: /metadata/labels/post-rendered\n  value: "yes"\n';
    await operator({ postRenderers: [{ kustomize: { patches: [{ target: { kind: 'Deployment' }, patch: label }] } }] });
    await deployedAt('cf', 3);
    assert.equal((await client.get(depRef)).metadata.labels?.['post-rendered'], 'yes');
    assert.match(await helm('get', 'manifest', 'cf', '-n', ns), /post-rendered: "?yes/, 'the record keeps what was applied');
    // A patch that selects nothing fails the release by name; the deployed revision stays.
    await operator({ postRenderers: [{ kustomize: { patches: [{ target: { kind: 'StatefulSet' }, patch: label }] } }] });
    assert.match(await failed('cf', /selects none/), /postRenderers\[0\]\.kustomize\.patches\[0\]: selects none of the \d+ rendered objects/);
    assert.equal(findCondition((await cr('cf')).status?.conditions, 'ReleaseFailed')?.reason, 'PostRenderFailed');
    assert.equal((await client.get(depRef)).metadata.labels?.['post-rendered'], 'yes');
    await operator({});
    await deployedAt('cf', 4);
    assert.equal((await client.get(depRef)).metadata.labels?.['post-rendered'], undefined, 'the patch gone, what it set is gone');
  });
});
