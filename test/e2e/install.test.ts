/**
 * The install engine end to end on the local control plane, with real bundles from the
 * community-operators corpus published as images to the local registry: a ClusterCatalog is
 * served, ClusterExtensions resolve (with a package dependency) and install (with webhooks),
 * upgrade along catalog edges, refuse a downgrade unless self-certified, refuse an install
 * through a ServiceAccount that lacks permissions (naming them, creating nothing), and
 * uninstall leaving nothing behind; `helm history` shows the revisions.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bundleDeploymentName } from '../../src/api/names.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { API_VERSION, type BundleDeployment, type ClusterCatalog } from '../../src/api/types.js';
import { errorMessage } from '../../src/util/errors.js';
import { CRD_DELETION_TIMEOUT_MS, e2eKubeconfig, eventually, kubectl, uniqueName } from './env.js';
import { OperatorHarness } from './operators.js';
import { managerLogNote } from './manager-log.js';

const run = promisify(execFile);

let h: OperatorHarness;
let client: KubeClient;

before(async () => {
  h = await OperatorHarness.start({ packages: ['node-healthcheck-operator', 'poison-pill-operator', 'opentelemetry-operator', 'flux'], prefix: 'examples' });
  client = h.client;
});

after(async () => {
  await h.stop();
});

describe('install engine', () => {
  test('the ClusterCatalog is served, pinned to the digest it pulled', async () => {
    const cat = await eventually('catalog Serving', async () => {
      const c = await client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: h.catalogName });
      return findCondition(c.status?.conditions, 'Serving')?.status === 'True' ? c : undefined;
    });
    assert.equal(cat.status?.resolvedSource?.image.ref, h.published.catalog);
    const base = cat.status?.urls?.base ?? '';
    const res = await fetch(`${base}/api/v1/all`);
    assert.equal(res.status, 200);
    const names = (await res.text()).trim().split('\n').map((l) => (JSON.parse(l) as { schema: string; name?: string }));
    assert.deepEqual(names.filter((m) => m.schema === 'olm.package').map((m) => m.name).sort(), ['flux', 'node-healthcheck-operator', 'opentelemetry-operator', 'poison-pill-operator']);
  });

  test('an operator with a GVK dependency installs both packages as one resolution set', async () => {
    const ns = uniqueName('nhc');
    await h.serviceAccount(ns, 'installer', true);
    const name = uniqueName('nhc');
    await h.createExtension(name, ns, { packageName: 'node-healthcheck-operator' });
    const ce = await h.installedAt(name, '0.0.2');
    const bundles = (ce.status?.resolution?.bundles ?? []).map((b) => b.package).sort();
    assert.deepEqual(bundles, ['node-healthcheck-operator', 'poison-pill-operator']);
    assert.equal(await h.deploymentAvailable(ns, 'node-healthcheck-operator-controller-manager'), true);
    assert.equal(await h.deploymentAvailable(ns, 'poison-pill-controller-manager'), true);
    // The dependency's API is served, and kubectl sees both BundleDeployments of the set.
    await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'poisonpillremediations.poison-pill.medik8s.io' });
    const bds = await kubectl('get', 'bundledeployments', '-l', `binnacle.dev/resolution-set=${name}`, '-o', 'name');
    assert.equal(bds.trim().split('\n').length, 2);

    // Uninstall removes the whole set and what it installed.
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
    await eventually('extension gone', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name })) === undefined ? true : undefined), 120_000);
    const left = (await client.list('apps/v1', 'Deployment', { namespace: ns })).items.map((d) => d.metadata.name);
    assert.deepEqual(left, []);
    // The set's CRDs go too (their deletion finishes after the extension's): a later install of the same packages must find none of them.
    const setCrds = async (): Promise<KubeObject[]> => (await client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).items.filter((c) => (c.metadata.labels?.['binnacle.dev/owner-name'] ?? '').startsWith(`${name}-`));
    await eventually('the set\'s CRDs gone', async () => ((await setCrds()).length === 0 ? true : undefined), CRD_DELETION_TIMEOUT_MS).catch(async (err: unknown) => {
      const held = (await setCrds()).map((c) => `${c.metadata.name ?? ''} deletionTimestamp=${c.metadata.deletionTimestamp ?? 'none'} finalizers=${JSON.stringify(c.metadata.finalizers ?? [])}`);
      throw new Error(`${errorMessage(err)}:\n  ${held.join('\n  ')}\n  ${managerLogNote('examples')}`, { cause: err });
    });
    assert.equal((await client.list(API_VERSION, 'BundleDeployment', { labelSelector: `binnacle.dev/resolution-set=${name}` })).items.length, 0);
    const releases = (await client.list('v1', 'Secret', { namespace: ns, labelSelector: 'owner=helm' })).items;
    assert.deepEqual(releases.map((s) => s.metadata.name), []);
  });

  test('an operator with webhooks installs with Binnacle-issued serving certificates, upgrades along catalog edges, and refuses a downgrade unless self-certified', async () => {
    const ns = uniqueName('otel');
    await h.serviceAccount(ns, 'installer', true);
    const name = uniqueName('otel');
    await h.createExtension(name, ns, { packageName: 'opentelemetry-operator', version: '0.16.0' });
    await h.installedAt(name, '0.16.0');
    const hooks = (await client.list('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration')).items.filter((w) => w.metadata.labels?.['binnacle.dev/owner-name'] === `${name}-opentelemetry-operator` || JSON.stringify(w).includes(ns));
    assert.ok(hooks.length > 0, 'a validating webhook configuration was created');
    const caBundle = ((hooks[0]?.webhooks as { clientConfig: { caBundle?: string; service?: { namespace: string } } }[] | undefined) ?? [])[0]?.clientConfig;
    assert.ok((caBundle?.caBundle ?? '').length > 100, 'caBundle injected');
    assert.equal(caBundle?.service?.namespace, ns);

    // Upgrade: the catalog's semver-mode edges lead 0.16.0 → 0.17.1 → 0.21.0 → 0.27.0.
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.17.1' } } } });
    await h.installedAt(name, '0.17.1');
    const bdName = bundleDeploymentName(name, 'opentelemetry-operator');
    const history = await run('helm', ['--kubeconfig', e2eKubeconfig(), 'history', bdName, '-n', ns, '-o', 'json']);
    const revs = JSON.parse(history.stdout) as { revision: number; status: string; chart: string }[];
    assert.ok(revs.length >= 2, `helm history shows the revisions: ${history.stdout}`);
    assert.equal(revs[revs.length - 1]?.status, 'deployed');
    assert.match(revs[revs.length - 1]?.chart ?? '', /0\.17\.1/);
    assert.ok(revs.some((r) => r.status === 'superseded' && r.chart.includes('0.16.0')));

    // Downgrade under CatalogProvided: refused with an explanation; the installed version stays.
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.16.0' } } } });
    const refused = await eventually('downgrade refused', async () => {
      const ce = await h.extension(name);
      const p = findCondition(ce.status?.conditions, 'Progressing');
      return ce.status?.observedGeneration === ce.metadata.generation && p?.status === 'True' && p.message.includes('resolution failed') ? ce : undefined;
    });
    assert.equal(refused.status?.install?.bundle.version, '0.17.1');
    assert.match(refused.status?.resolution?.explanation ?? '', /0\.17\.1/);
    // …and allowed once the user self-certifies it.
    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { upgradeConstraintPolicy: 'SelfCertified' } } } });
    await h.installedAt(name, '0.16.0');
    // Uninstall, so the next tests can own its cluster-wide objects (CRDs, webhooks).
    await h.removeExtension(name);
    assert.deepEqual((await client.list('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', { labelSelector: `binnacle.dev/owner-name=${bdName}` })).items, []);
  });

  test('an install through a ServiceAccount that lacks permissions fails naming them and creates nothing', async () => {
    const ns = uniqueName('noperm');
    await h.serviceAccount(ns, 'weak', false);
    const name = uniqueName('noperm');
    await h.createExtension(name, ns, { packageName: 'poison-pill-operator' }, 'weak');
    const bd = await eventually(
      'permission failure reported',
      async () => {
        const list = (await client.list<BundleDeployment>(API_VERSION, 'BundleDeployment', { labelSelector: `binnacle.dev/resolution-set=${name}` })).items;
        const c = findCondition(list[0]?.status?.conditions, 'Installed');
        return c?.reason === 'InsufficientPermissions' ? c : undefined;
      },
      120_000,
    );
    assert.match(bd.message, /lacks permissions: .*(create|get|patch) /);
    assert.match(bd.message, /deployments\.apps|customresourcedefinitions|secrets/);
    const ce = await h.extension(name);
    assert.notEqual(findCondition(ce.status?.conditions, 'Installed')?.status, 'True');
    const created: KubeObject[] = [
      ...(await client.list('apps/v1', 'Deployment', { namespace: ns })).items,
      ...(await client.list('v1', 'ServiceAccount', { namespace: ns })).items.filter((s) => s.metadata.name !== 'weak' && s.metadata.name !== 'default'),
    ];
    assert.deepEqual(created.map((o) => o.metadata.name), []);
    await h.removeExtension(name);
  });

  test('SingleNamespace install mode: the operator watches another namespace, with its RBAC there', async () => {
    const ns = uniqueName('single');
    const watched = uniqueName('watched');
    await h.serviceAccount(ns, 'installer', true);
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: watched } });
    h.cleanup.push(() => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: watched }));
    const name = uniqueName('single');
    await h.createExtension(name, ns, { packageName: 'opentelemetry-operator', version: '0.27.0' }, 'installer', { install: { watchNamespace: watched } });
    await h.installedAt(name, '0.27.0');
    const deployments = (await client.list('apps/v1', 'Deployment', { namespace: ns })).items;
    const template = (deployments[0]?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template;
    assert.equal(template?.metadata?.annotations?.['olm.targetNamespaces'], watched);
    assert.equal(template?.metadata?.annotations?.['olm.operatorNamespace'], ns);
    const roles = (await client.list('rbac.authorization.k8s.io/v1', 'Role', { namespace: watched })).items;
    assert.ok(roles.length > 0, 'permissions are granted in the watched namespace');
    // …and in its own namespace, as OLM v0 grants them (its lock and caches live there).
    const own = new Set((await client.list('rbac.authorization.k8s.io/v1', 'Role', { namespace: ns })).items.map((r) => r.metadata.name));
    assert.deepEqual(roles.map((r) => r.metadata.name).filter((n) => !own.has(n)), [], 'the same Roles in the operator namespace');
    await client.delete({ apiVersion: API_VERSION, kind: 'ClusterExtension', name });
    await eventually('extension gone', async () => ((await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name })) === undefined ? true : undefined), 120_000);
    assert.deepEqual((await client.list('rbac.authorization.k8s.io/v1', 'Role', { namespace: watched })).items.map((r) => r.metadata.name), []);
  });

  test('MultiNamespace install mode: the operator watches a list of namespaces', async () => {
    const ns = uniqueName('multi');
    const watched = [uniqueName('wa'), uniqueName('wb')];
    await h.serviceAccount(ns, 'installer', true);
    for (const w of watched) {
      await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: w } });
      h.cleanup.push(() => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: w }));
    }
    const name = uniqueName('flux');
    await h.createExtension(name, ns, { packageName: 'flux' }, 'installer', { install: { watchNamespaces: watched } });
    await h.installedAt(name, '0.16.1');
    const deployments = (await client.list('apps/v1', 'Deployment', { namespace: ns })).items;
    assert.ok(deployments.length > 0);
    for (const d of deployments) {
      const annotations = (d.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template?.metadata?.annotations;
      assert.equal(annotations?.['olm.targetNamespaces'], watched.join(','), `${d.metadata.name ?? ''} watches both namespaces`);
    }
    await h.removeExtension(name);
  });

  test('a PlatformOperator keeps its packages installed and reports Available', async () => {
    const ns = uniqueName('platform');
    await h.serviceAccount(ns, 'installer', true);
    const name = uniqueName('po');
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'PlatformOperator',
      metadata: { name },
      spec: { packages: [{ name: 'poison-pill-operator', namespace: ns }], serviceAccount: { name: 'installer', namespace: ns } },
    });
    h.cleanup.push(() => client.delete({ apiVersion: API_VERSION, kind: 'PlatformOperator', name }));
    type PlatformStatus = { conditions?: { type: string; status: string; reason?: string; message?: string }[]; packages?: { name: string; installed: boolean; version?: string }[] };
    const po = await eventually(
      'PlatformOperator Available',
      async () => {
        const p = await client.get({ apiVersion: API_VERSION, kind: 'PlatformOperator', name });
        const st = p.status as PlatformStatus | undefined;
        return st?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true ? st : undefined;
      },
      180_000,
      500,
    ).catch(async (err: unknown) => {
      // What the PlatformOperator and its extensions said, and where the manager logged.
      const p = await client.find({ apiVersion: API_VERSION, kind: 'PlatformOperator', name });
      const ces = (await client.list(API_VERSION, 'ClusterExtension', { labelSelector: `binnacle.dev/owner-name=${name}` })).items;
      const conds = (o: KubeObject | undefined): string => ((o?.status as PlatformStatus | undefined)?.conditions ?? []).map((c) => `    ${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`).join('\n');
      throw new Error(`${errorMessage(err)}\n  PlatformOperator ${name}:\n${conds(p)}\n${ces.map((c) => `  ClusterExtension ${c.metadata.name ?? ''}:\n${conds(c)}`).join('\n')}\n  ${managerLogNote('examples')}`, { cause: err });
    });
    assert.deepEqual(po.packages?.map((p) => [p.name, p.installed]), [['poison-pill-operator', true]]);
    assert.equal(await h.deploymentAvailable(ns, 'poison-pill-controller-manager'), true);
    // Deleting the PlatformOperator removes what it asked for.
    await client.delete({ apiVersion: API_VERSION, kind: 'PlatformOperator', name });
    await eventually('its extension gone', async () => {
      const left = (await client.list(API_VERSION, 'ClusterExtension', { labelSelector: `binnacle.dev/owner-name=${name}` })).items;
      return left.length === 0 ? true : undefined;
    }, 120_000);
  });
});
