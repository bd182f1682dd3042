/**
 * A tenant on the local control plane. A HelmOperator serves the corpus prometheus-pushgateway
 * chart (whose `extraManifests` values go through `tpl`) as a kind whose releases act as the
 * ServiceAccount `releaser` of each CR's own namespace. Alice's only RBAC is a RoleBinding in
 * `team-a` to the operator's app-team role. Through a CR's values she tries everything the
 * trust issue lists; each is refused with a condition naming the rule, she gains no rights,
 * nothing outside team-a changes, the manager's memory stays bounded and comes back, and a
 * second tenant's release stays Deployed and keeps reconciling throughout.
 *
 * Then the rest of the trust model's Helm-operator rules: a HelmOperator that would take
 * another owner's CRD is refused, deleting a tenant namespace with live CRs finishes, and
 * deleting the HelmOperator uninstalls its CRs and leaves nothing Terminating.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION, type HelmOperator } from '../../src/api/types.js';
import { binDir } from '../../src/cluster/layout.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import { appTeamRoleName } from '../../src/controllers/helm-operator/helm-operator.js';
import { configureHelmEngine } from '../../src/helm-engine/engine.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, eventually, kubectl, startE2eManager, uniqueName } from './env.js';

const run = promisify(execFile);
const CHART = join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus', 'charts', 'prometheus-community__prometheus-pushgateway');
const HELM = join(binDir(), 'helm');
const GROUP = 'tenant.e2e.binnacle.dev';
const KIND = 'Gateway';
const API = `${GROUP}/v1alpha1`;
/** The memory limit install-self gives the manager. */
const MANAGER_LIMIT_BYTES = 1024 * 1024 * 1024;
/** Short enough for a test, long enough for any honest render of this chart. */
const RENDER_TIME_LIMIT_MS = 15_000;

interface Cr extends KubeObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Parameters<typeof findCondition>[0]; deployedRelease?: { name: string; manifest: string } };
}

describe('a tenant of a Helm operator can do no more than its namespace allows', () => {
  let admin: KubeClient;
  let alice: KubeClient;
  let manager: RunningManager;
  let work = '';
  const teamA = uniqueName('team-a');
  const teamB = uniqueName('team-b');
  const hopName = uniqueName('tenant-gw');
  let peakRss = 0;
  let sampler: NodeJS.Timeout | undefined;

  const crRef = (namespace: string, name: string) => ({ apiVersion: API, kind: KIND, namespace, name });
  const getCr = (c: KubeClient, namespace: string, name: string) => c.get<Cr>(crRef(namespace, name));
  const applyCr = (c: KubeClient, namespace: string, name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}) =>
    c.apply({ apiVersion: API, kind: KIND, metadata: { name, namespace, annotations }, spec }, { force: true, fieldManager: 'tenant' });

  async function conditionOf(namespace: string, name: string, type: string, match: (c: { status: string; reason: string; message: string }) => boolean, timeoutMs = 90_000) {
    return eventually(
      `${namespace}/${name} ${type}`,
      async () => {
        const c = findCondition((await getCr(admin, namespace, name)).status?.conditions, type);
        return c !== undefined && match(c) ? c : undefined;
      },
      timeoutMs,
      500,
    );
  }

  const deployed = (namespace: string, name: string) => conditionOf(namespace, name, 'Deployed', (c) => c.status === 'True');
  const refused = (namespace: string, name: string, reason: RegExp, message: RegExp, timeoutMs?: number) =>
    conditionOf(namespace, name, 'ReleaseFailed', (c) => c.status === 'True' && reason.test(c.reason) && message.test(c.message), timeoutMs);

  /**
   * What lies outside team-a: cluster-scoped RBAC, namespaces, and everything of team-b and
   * kube-system that a tenant could write. Not what is already being deleted: an earlier test's
   * namespaces may still be terminating on this control plane and go meanwhile. An object deleted
   * during the test still shows (it is in the first list and not the second).
   */
  async function outside(): Promise<string[]> {
    const names: string[] = [];
    const add = async (apiVersion: string, kind: string, namespace?: string) => {
      for (const o of (await admin.list(apiVersion, kind, namespace === undefined ? {} : { namespace })).items) {
        if (o.metadata.deletionTimestamp !== undefined) continue;
        names.push(`${kind} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''} ${o.metadata.uid ?? ''}`);
      }
    };
    await add('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding');
    await add('rbac.authorization.k8s.io/v1', 'ClusterRole');
    await add('v1', 'Namespace');
    for (const ns of ['kube-system', 'default']) {
      for (const kind of ['ConfigMap', 'Secret', 'ServiceAccount']) await add('v1', kind, ns);
    }
    return names.filter((n) => !n.startsWith(`Namespace /${teamA} `)).sort();
  }

  /** `kubectl auth can-i` as alice: "yes" or "no" (it exits 1 on no). */
  async function aliceCan(...args: string[]): Promise<string> {
    try {
      return (await kubectl('auth', 'can-i', ...args, '--as', 'alice')).trim();
    } catch (err) {
      const out = (err as { stdout?: unknown }).stdout;
      return typeof out === 'string' ? out.trim() : '';
    }
  }

  /** A tenant namespace whose release identity `releaser` is namespace admin there (as the trust model says). */
  async function tenantNamespace(ns: string): Promise<void> {
    await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await admin.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'releaser', namespace: ns } });
    await admin.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'releaser-admin', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'releaser', namespace: ns }],
    });
  }

  async function reconcileErrors(): Promise<number> {
    const text = await (await fetch(`${manager.metricsUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('binnacle_reconcile_total{') && l.includes(`controller="helm-${KIND.toLowerCase()}"`) && l.includes('result="error"'));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  }

  before(async () => {
    configureHelmEngine({ callTimeoutMs: RENDER_TIME_LIMIT_MS });
    admin = await e2eClient();
    alice = admin.impersonate({ user: 'alice' });
    work = await mkdtemp(join(tmpdir(), 'tenant-e2e-'));
    await run(HELM, ['package', CHART, '--version', '3.8.0', '-d', work]);
    await run(HELM, ['push', join(work, 'prometheus-pushgateway-3.8.0.tgz'), `oci://${e2eRegistry()}/tenant-charts`, '--plain-http', '--kubeconfig', e2eKubeconfig()], {
      env: { ...process.env, HELM_CACHE_HOME: join(work, 'helm-cache'), HELM_CONFIG_HOME: join(work, 'helm-config') },
    });
    for (const ns of [teamA, teamB]) await tenantNamespace(ns);
    manager = await startE2eManager('tenant', admin, work);
    sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 50);
    await admin.apply({
      apiVersion: API_VERSION,
      kind: 'HelmOperator',
      metadata: { name: hopName },
      spec: {
        chart: { oci: { ref: `oci://${e2eRegistry()}/tenant-charts/prometheus-pushgateway`, insecure: true }, version: '3.8.0' },
        kinds: [{ group: GROUP, version: 'v1alpha1', kind: KIND }],
        serviceAccount: { name: 'releaser' },
      },
    });
    await eventually('HelmOperator Ready', async () => {
      const h = await admin.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName });
      return findCondition(h.status?.conditions, 'Ready')?.status === 'True' ? h : undefined;
    }, 120_000);
    // Alice: the operator's app-team role in team-a, nothing else.
    await admin.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-gateways', namespace: teamA },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: appTeamRoleName(hopName) },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
  });

  after(async () => {
    if (sampler !== undefined) clearInterval(sampler);
    await admin.delete({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName }).catch(() => undefined);
    await eventually('HelmOperator gone', async () => ((await admin.find({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName })) === undefined ? true : undefined), 120_000).catch(() => undefined);
    await manager.stop();
    for (const ns of [teamA, teamB]) await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
    admin.close();
  });

  test('every escalation through a CR\'s values is refused by rule; another tenant keeps working; nothing outside changes', async (t) => {
    // Another tenant's release, Deployed before and reconciled throughout.
    await applyCr(admin, teamB, 'gw', { replicaCount: 1 });
    await deployed(teamB, 'gw');
    // Alice's own, honest release: fine.
    await applyCr(alice, teamA, 'gw', { replicaCount: 1, extraManifests: ['apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gw-extra\ndata:\n  a: b\n', 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: gw-secret\nstringData:\n  password: hunter2-tenant\n'] });
    await deployed(teamA, 'gw');
    const honest = await getCr(admin, teamA, 'gw');
    assert.doesNotMatch(honest.status?.deployedRelease?.manifest ?? '', /hunter2-tenant/, 'Secret data never reaches status');
    assert.match(honest.status?.deployedRelease?.manifest ?? '', /kind: Secret/);
    await assert.rejects(applyCr(alice, teamB, 'mine', {}), /forbidden/i, 'alice has no rights in team-b');

    const before = await outside();
    assert.equal(await aliceCan('*', '*'), 'no');

    // 1. A cluster-scoped object: a ClusterRoleBinding of herself to cluster-admin.
    const crb = 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: alice-is-admin\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: alice\n';
    await applyCr(alice, teamA, 'escalate', { extraManifests: [crb] });
    await refused(teamA, 'escalate', /ObjectsOutOfScope/, /ClusterRoleBinding alice-is-admin is cluster-scoped/);
    // 2. An object in another namespace.
    await applyCr(alice, teamA, 'reach', { extraManifests: [`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n  namespace: ${teamB}\ndata: {}\n`] });
    await refused(teamA, 'reach', /ObjectsOutOfScope/, new RegExp(`ConfigMap ${teamB}/planted is in namespace ${teamB}`));
    // 2b. Skipping the CRD upgrade safety check (crdUpgradeSafety: None; OLM v1's enforcement:
    // None) is a cluster admin's choice on a ClusterExtension: through a CR, a ClusterExtension
    // (either group) is a cluster-scoped object, refused; directly, she may not write one.
    await applyCr(alice, teamA, 'unsafe', { extraManifests: [
      'apiVersion: binnacle.dev/v1alpha1\nkind: ClusterExtension\nmetadata:\n  name: alice-unsafe\nspec:\n  packageName: anything\n  install:\n    crdUpgradeSafety: None\n',
      'apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata:\n  name: alice-unsafe-v1\nspec:\n  namespace: team-a\n  source:\n    sourceType: Catalog\n    catalog:\n      packageName: anything\n  install:\n    preflight:\n      crdUpgradeSafety:\n        enforcement: None\n',
    ] });
    await refused(teamA, 'unsafe', /ObjectsOutOfScope/, /ClusterExtension alice-unsafe(-v1)? is cluster-scoped/);
    assert.equal(await admin.find({ apiVersion: 'binnacle.dev/v1alpha1', kind: 'ClusterExtension', name: 'alice-unsafe' }), undefined, 'no ClusterExtension was made');
    for (const resource of ['clusterextensions.binnacle.dev', 'clusterextensions.olm.operatorframework.io', 'bundledeployments.binnacle.dev']) {
      for (const verb of ['create', 'patch', 'update']) assert.equal(await aliceCan(verb, resource), 'no', `alice may not ${verb} ${resource}`);
    }
    // 3. A lookup of another namespace's Secret: it runs as team-a's releaser, which may not read it.
    await applyCr(alice, teamA, 'peek', { extraManifests: ['apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: peek\ndata:\n  stolen: {{ (lookup "v1" "Secret" "kube-system" "") | toJson | quote }}\n'] });
    await refused(teamA, 'peek', /InstallError/, /forbidden/i);
    // 3b. A write through lookup: `lookup` only reads, so the nearest a template gets is a
    // subresource (a Service's proxy reaches into a workload); it never reaches the API server.
    await applyCr(alice, teamA, 'proxy', { extraManifests: [`apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proxy\ndata:\n  hit: {{ (lookup "v1" "Service" "${teamB}" "gw-prometheus-pushgateway/proxy") | toJson | quote }}\n`] });
    await refused(teamA, 'proxy', /InstallError/, /invalid resource name|lookup reads resources only/i);
    // 4. Taking over another release's object of the same name (gw's ConfigMap).
    await applyCr(alice, teamA, 'takeover', { extraManifests: ['apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gw-extra\ndata:\n  a: mine\n'] });
    await refused(teamA, 'takeover', /InstallError/, new RegExp(`ConfigMap ${teamA}/gw-extra already exists and belongs to ${KIND} ${teamA}/gw`));
    // 5. A 1 ms reconcile period: raised to the floor, and said so.
    await applyCr(alice, teamA, 'spin', { replicaCount: 1 }, { 'helm.sdk.operatorframework.io/reconcile-period': '1ms' });
    await conditionOf(teamA, 'spin', 'ReconcilePeriodRaised', (c) => c.status === 'True' && /floor is 1m0s/.test(c.message));
    // 6. A memory bomb: refused by the render's memory limit; the manager stays under its own.
    await applyCr(alice, teamA, 'bomb', { extraManifests: ['apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  n: "{{ len (repeat 400000000 "xxxxxxxxxx") }}"\n'] });
    await refused(teamA, 'bomb', /InstallError/, /memory limit/i, 180_000);
    // 7. A template that never ends: refused by the render's time limit.
    await applyCr(alice, teamA, 'forever', { extraManifests: ['{{ range $i := until 100000 }}{{ range $j := until 100000 }}{{ range $k := until 100000 }}{{ end }}{{ end }}{{ end }}'] });
    await refused(teamA, 'forever', /InstallError/, /time limit|took longer/i, 180_000);

    // The other tenant kept reconciling all along: a change lands.
    await applyCr(admin, teamB, 'gw', { replicaCount: 2 });
    await eventually('team-b upgraded', async () => ((((await admin.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: teamB, name: 'gw-prometheus-pushgateway' })).spec as { replicas?: number }).replicas === 2) ? true : undefined), 90_000, 500);
    assert.equal(findCondition((await getCr(admin, teamB, 'gw')).status?.conditions, 'Deployed')?.status, 'True');

    // No new rights, nothing outside team-a changed, memory bounded and back down.
    assert.equal(await aliceCan('*', '*'), 'no');
    assert.equal(await aliceCan('get', 'secrets', '-n', 'kube-system'), 'no');
    assert.equal(await aliceCan('create', 'clusterrolebindings'), 'no');
    assert.deepEqual(await outside(), before, 'nothing outside team-a was created, changed or deleted');
    assert.equal(await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: teamB, name: 'planted' }), undefined);
    assert.ok(peakRss < MANAGER_LIMIT_BYTES, `the manager's process peaked at ${Math.round(peakRss / 2 ** 20)} MiB, under install-self's 1 GiB limit`);
    global.gc?.();
    const settled = await eventually('memory back down', () => {
      const rss = process.memoryUsage().rss;
      return Promise.resolve(rss < 700 * 2 ** 20 ? rss : undefined);
    }, 60_000, 1000);
    assert.ok(settled < 700 * 2 ** 20);
    t.diagnostic(`manager process RSS: peak ${Math.round(peakRss / 2 ** 20)} MiB through the bomb and the endless template, ${Math.round(settled / 2 ** 20)} MiB after`);

    // The failing CRs back off (1 s, 2 s, 4 s, … each): over 20 s, eight failing CRs retry a few
    // times each (at most 5 in any 20 s of doubling delays), where a loop would retry thousands.
    const errorsBefore = await reconcileErrors();
    await new Promise((r) => setTimeout(r, 20_000));
    const retries = (await reconcileErrors()) - errorsBefore;
    assert.ok(retries <= 40, `failing CRs retried ${retries} times in 20 s`);
    t.diagnostic(`eight failing CRs retried ${retries} times in 20 s (backoff)`);
  });

  test('a HelmOperator never takes another owner\'s CRD', async () => {
    const group = `${uniqueName('owned')}.e2e.binnacle.dev`;
    await admin.apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: { group, names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    const thief = uniqueName('thief');
    await admin.apply({
      apiVersion: API_VERSION,
      kind: 'HelmOperator',
      metadata: { name: thief },
      spec: { chart: { oci: { ref: `oci://${e2eRegistry()}/tenant-charts/prometheus-pushgateway`, insecure: true }, version: '3.8.0' }, kinds: [{ group, version: 'v1', kind: 'Widget' }], serviceAccount: { name: 'releaser' } },
    });
    const ready = await eventually('CRDOwnedElsewhere', async () => {
      const h = await admin.get<HelmOperator>({ apiVersion: API_VERSION, kind: 'HelmOperator', name: thief });
      const c = findCondition(h.status?.conditions, 'Ready');
      return c?.reason === 'CRDOwnedElsewhere' ? c : undefined;
    }, 120_000);
    assert.match(ready.message, new RegExp(`widgets.${group} exists and belongs to`));
    const crd = await admin.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `widgets.${group}` });
    assert.equal(crd.metadata.labels?.['binnacle.dev/helm-operator'], undefined, 'the CRD is untouched');
    await admin.delete({ apiVersion: API_VERSION, kind: 'HelmOperator', name: thief });
    await eventually('thief gone', async () => ((await admin.find({ apiVersion: API_VERSION, kind: 'HelmOperator', name: thief })) === undefined ? true : undefined), 60_000);
    assert.ok((await admin.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `widgets.${group}` })) !== undefined, 'deleting the HelmOperator leaves a CRD it never owned');
    await admin.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `widgets.${group}` });
  });

  test('a BundleDeployment whose ServiceAccount is gone still finishes deleting, and orphan-on-delete leaves what it installed', async () => {
    // This e2e manager runs as cluster-admin, so it may remove what a gone ServiceAccount
    // installed and does; under install-self's least-privilege role it may not, and the
    // BundleDeployment waits with ServiceAccountGone naming the way out (unit-tested:
    // bundle-deployment-reconcile.test.ts). The way out itself, orphan-on-delete, is shown here.
    const ns = uniqueName('bd-sa-gone');
    await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const install = async (name: string, cm: string, annotations: Record<string, string> = {}): Promise<void> => {
      await admin.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `installer-${cm}`, namespace: ns } });
      await admin.apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: `installer-${cm}`, namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'ServiceAccount', name: `installer-${cm}`, namespace: ns }] });
      await admin.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-bundle`, namespace: ns }, data: { 'objects.yaml': JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm, namespace: ns }, data: { a: 'b' } }) } });
      await admin.apply({
        apiVersion: API_VERSION,
        kind: 'BundleDeployment',
        metadata: { name, annotations },
        spec: { source: { type: 'configMaps', configMaps: [{ namespace: ns, name: `${name}-bundle`, path: 'manifests' }] }, format: 'plain', installNamespace: ns, serviceAccount: { name: `installer-${cm}` } },
      });
      await eventually(`${name} installed`, async () => ((await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: cm })) !== undefined ? true : undefined), 120_000, 500);
      await admin.delete({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: `installer-${cm}` });
      await admin.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', namespace: ns, name: `installer-${cm}` });
    };
    const removed = uniqueName('bd-removed');
    const orphaned = uniqueName('bd-orphaned');
    await install(removed, 'removed');
    await install(orphaned, 'orphaned', { 'binnacle.dev/orphan-on-delete': 'true' });
    for (const name of [removed, orphaned]) {
      await admin.delete({ apiVersion: API_VERSION, kind: 'BundleDeployment', name });
      await eventually(`${name} gone`, async () => ((await admin.find({ apiVersion: API_VERSION, kind: 'BundleDeployment', name })) === undefined ? true : undefined), 120_000, 500);
    }
    assert.equal(await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'removed' }), undefined, 'removed by the manager, its ServiceAccount gone');
    assert.ok((await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'orphaned' })) !== undefined, 'orphan-on-delete leaves what it installed in place');
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  });

  test('deleting a tenant namespace with live CRs finishes, and deleting the HelmOperator uninstalls the rest', async () => {
    const doomed = uniqueName('doomed');
    await tenantNamespace(doomed);
    await applyCr(admin, doomed, 'gw', { replicaCount: 1 });
    await deployed(doomed, 'gw');
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: doomed });
    await eventually(`namespace ${doomed} gone`, async () => ((await admin.find({ apiVersion: 'v1', kind: 'Namespace', name: doomed })) === undefined ? true : undefined), 180_000, 1000);

    // The HelmOperator's deletion uninstalls team-b's release (Uninstall is the default policy).
    await admin.delete({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName });
    await eventually('HelmOperator gone', async () => ((await admin.find({ apiVersion: API_VERSION, kind: 'HelmOperator', name: hopName })) === undefined ? true : undefined), 180_000, 1000);
    assert.equal(await admin.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: teamB, name: 'gw-prometheus-pushgateway' }), undefined, 'team-b\'s release is uninstalled');
    assert.equal(await admin.find({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `gateways.${GROUP}` }), undefined, 'its CRD is gone');
    assert.equal(await admin.find({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: appTeamRoleName(hopName) }), undefined, 'its app-team role is gone');
    for (const ns of [teamA, teamB]) {
      const left = await admin.find({ apiVersion: 'v1', kind: 'Namespace', name: ns });
      assert.equal(left?.metadata.deletionTimestamp, undefined, `${ns} is not stuck Terminating`);
    }
  });
});
