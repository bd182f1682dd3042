/**
 * The `helm` bundle format on the local control plane: a BundleDeployment installs a corpus
 * chart (prometheus-pushgateway) from an image, upgrades it when its values change, rolls back
 * an upgrade that does not become healthy, keeps the same revision when nothing changed, and
 * uninstalls; the real `helm` CLI sees each step (list, history, get values, get manifest).
 * A chart with hooks runs them in weight order at install, upgrade and delete.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION, type BundleDeployment } from '../../src/api/types.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition } from '../../src/kube/types.js';
import { RegistryClient, buildImage, pushImage } from '../../src/oci/index.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, eventually, uniqueName } from './env.js';
import { serviceAccount, type Cleanup } from './extensions.js';
import { managerLogger } from './manager-log.js';
import { binDir } from '../../src/cluster/layout.js';

const run = promisify(execFile);
const CHARTS = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'charts');
const HELM = join(binDir(), 'helm'); // the tools' folder (BINNACLE_BIN_DIR, else .cache/bin)

async function helm(...args: string[]): Promise<string> {
  const { stdout } = await run(HELM, [...args, '--kubeconfig', e2eKubeconfig()], { env: { ...process.env, HELM_CACHE_HOME: '/tmp/helm-cache', HELM_CONFIG_HOME: '/tmp/helm-config' } });
  return stdout;
}

interface HelmHistoryEntry {
  revision: number;
  status: string;
  chart: string;
  description: string;
}

describe('helm bundle format', () => {
  let client: KubeClient;
  let manager: RunningManager;
  let dataDir = '';
  const cleanup: Cleanup = [];
  const ns = uniqueName('helm-bd');

  /** Builds an image whose content is the chart directory and pushes it; answers its reference. */
  async function chartImage(chartDir: string, repo: string): Promise<string> {
    const work = await mkdtemp(join(tmpdir(), 'helm-chart-'));
    cleanup.push(() => rm(work, { recursive: true, force: true }));
    await cp(chartDir, join(work, 'chart'), { recursive: true });
    const image = await buildImage({ layers: [{ dir: join(work, 'chart'), prefix: '/' }], labels: { 'binnacle.dev/content': 'helm-chart' } });
    const ref = `${e2eRegistry()}/${repo}:v1`;
    await pushImage(image, ref, new RegistryClient({ auth: () => undefined }));
    return ref;
  }

  async function applyBd(name: string, image: string, values: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'BundleDeployment',
      metadata: { name },
      spec: { source: { type: 'image', image: { ref: image, insecure: true } }, format: 'helm', installNamespace: ns, serviceAccount: { name: 'installer' }, values, ...extra },
    });
  }

  /** Waits until the BundleDeployment has acted on its current generation and says Installed=`want`. */
  async function settled(name: string, want: 'True' | 'False', timeoutMs = 120_000): Promise<BundleDeployment> {
    return eventually(
      `${name} settled with Installed=${want}`,
      async () => {
        const bd = await client.get<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
        const installed = findCondition(bd.status?.conditions, 'Installed');
        const progressing = findCondition(bd.status?.conditions, 'Progressing');
        return bd.status?.observedGeneration === bd.metadata.generation && installed?.status === want && progressing?.status === 'False' ? bd : undefined;
      },
      timeoutMs,
    );
  }

  async function history(release: string): Promise<HelmHistoryEntry[]> {
    return JSON.parse(await helm('history', release, '-n', ns, '-o', 'json')) as HelmHistoryEntry[];
  }

  before(async () => {
    client = await e2eClient();
    await serviceAccount(client, cleanup, ns, 'installer', true);
    dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-helm-'));
    manager = await startManager({ client, logger: managerLogger('helm-bundle'), dataDir, healthTimeoutMs: 20_000, workers: 2 });
  });

  after(async () => {
    for (const bd of (await client.list(API_VERSION, 'BundleDeployment')).items) {
      if (bd.metadata.name?.startsWith('helm-e2e-') === true) await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: bd.metadata.name });
    }
    await eventually('helm BundleDeployments gone', async () => ((await client.list(API_VERSION, 'BundleDeployment')).items.some((b) => b.metadata.name?.startsWith('helm-e2e-') === true) ? undefined : true), 60_000).catch(() => undefined);
    await manager.stop();
    for (const f of cleanup.reverse()) await f().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
    client.close();
  });

  test('installs, upgrades, keeps its revision when unchanged, rolls back a failed upgrade and uninstalls a corpus chart; helm sees each step', async () => {
    const name = 'helm-e2e-pushgateway';
    const image = await chartImage(join(CHARTS, 'prometheus-community__prometheus-pushgateway'), 'charts/pushgateway');

    await applyBd(name, image, { replicaCount: 1 });
    await settled(name, 'True');
    const list = JSON.parse(await helm('list', '-n', ns, '-o', 'json')) as { name: string; status: string; chart: string; revision: string }[];
    assert.deepEqual(list.map((r) => [r.name, r.status, r.chart, r.revision]), [[name, 'deployed', 'prometheus-pushgateway-3.8.0', '1']]);
    const manifest = await helm('get', 'manifest', name, '-n', ns);
    assert.match(manifest, /# Source: prometheus-pushgateway\/templates\/deployment.yaml/, 'helm get manifest shows Helm’s own manifest');
    const deployment = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: `${name}-prometheus-pushgateway` });
    assert.equal((deployment.spec as { replicas?: number }).replicas, 1);

    // A new generation with the same chart and values (templates with random parts would
    // render differently): reconciled, but no new revision.
    await applyBd(name, image, { replicaCount: 1 }, { autoRollback: true });
    await settled(name, 'True');
    assert.equal((await history(name)).length, 1, 'an unchanged chart and values make no new revision');

    // Upgrade: new values.
    await applyBd(name, image, { replicaCount: 2, podLabels: { tier: 'e2e' } });
    await settled(name, 'True');
    const afterUpgrade = await history(name);
    assert.deepEqual(afterUpgrade.map((h) => [h.revision, h.status]), [[1, 'superseded'], [2, 'deployed']]);
    const values = JSON.parse(await helm('get', 'values', name, '-n', ns, '-o', 'json')) as Record<string, unknown>;
    assert.deepEqual(values, { replicaCount: 2, podLabels: { tier: 'e2e' } });
    const upgraded = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: `${name}-prometheus-pushgateway` });
    assert.equal((upgraded.spec as { replicas?: number }).replicas, 2);

    // An upgrade whose Pods can never be scheduled fails health and rolls back to revision 2.
    await applyBd(name, image, { replicaCount: 2, podLabels: { tier: 'e2e' }, nodeSelector: { 'binnacle.dev/no-such-node': 'true' } });
    const rolledBack = await settled(name, 'True', 180_000).catch(async () => client.get<BundleDeployment>({ apiVersion: API_VERSION, kind: 'BundleDeployment', name }));
    const installed = findCondition(rolledBack.status?.conditions, 'Installed');
    assert.equal(installed?.reason, 'RolledBack', `Installed: ${JSON.stringify(installed)}`);
    const afterRollback = await history(name);
    assert.deepEqual(
      afterRollback.map((h) => [h.revision, h.status]),
      [
        [1, 'superseded'],
        [2, 'superseded'],
        [3, 'failed'],
        [4, 'deployed'],
      ],
    );
    assert.equal(afterRollback.at(-1)?.description, 'Rollback to 2');
    const back = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: `${name}-prometheus-pushgateway` });
    assert.equal((back.spec as { template: { spec: { nodeSelector?: unknown } } }).template.spec.nodeSelector, undefined, 'the rollback removed the bad nodeSelector');

    // Uninstall: the objects and the release records go.
    await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
    await eventually('release gone', async () => ((await helm('list', '-n', ns, '-o', 'json')).trim() === '[]' ? true : undefined), 60_000);
    assert.equal(await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: `${name}-prometheus-pushgateway` }), undefined);
  });

  test('runs a chart’s hooks in weight order at install and upgrade, with their delete policies, and pre-delete hooks on uninstall', async () => {
    const name = 'helm-e2e-hooks';
    const image = await chartImage(join(import.meta.dirname, 'fixtures', 'hooks-chart'), 'charts/hooks');
    await applyBd(name, image, { message: 'first' });
    await settled(name, 'True');
    const job = await client.find({ apiVersion: 'batch/v1', kind: 'Job', namespace: ns, name: `${name}-migrate` });
    assert.equal(job, undefined, 'the migrate Job ran and was deleted (hook-succeeded)');
    const pre = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-pre-run` });
    assert.equal((pre.data as Record<string, string>).revision, '1');
    const post = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-post-install` });
    assert.equal((post.data as Record<string, string>).message, 'first');
    const rel = JSON.parse(await helm('status', name, '-n', ns, '-o', 'json')) as { info: { status: string } };
    assert.equal(rel.info.status, 'deployed');
    const hooksText = await helm('get', 'hooks', name, '-n', ns);
    assert.match(hooksText, /name: helm-e2e-hooks-migrate/);

    // The chart draws a random token on every render: same chart and values, no new revision.
    const token = (await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-main` })).data as Record<string, string>;
    await applyBd(name, image, { message: 'first' }, { autoRollback: true });
    await settled(name, 'True');
    assert.equal((await history(name)).length, 1, 'a template with randAlphaNum does not loop into new revisions');
    const same = (await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-main` })).data as Record<string, string>;
    assert.equal(same.token, token.token, 'the recorded revision is what is re-applied');

    await applyBd(name, image, { message: 'second' });
    await settled(name, 'True');
    await eventually('the pre-upgrade hook recreated its ConfigMap for revision 2', async () => {
      const cm = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-pre-run` });
      return (cm.data as Record<string, string>).revision === '2' ? true : undefined;
    });
    const main = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-main` });
    assert.equal((main.data as Record<string, string>).message, 'second');

    await client.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
    await eventually('hooks release gone', async () => ((await client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-main` })) === undefined ? true : undefined), 60_000);
    assert.notEqual(await client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-pre-delete` }), undefined, 'the pre-delete hook ran (hooks stay, as in Helm)');
  });
});
