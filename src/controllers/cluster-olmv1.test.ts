/**
 * OLM v1's API over the one fake cluster: its CRDs installed beside Binnacle's unless someone
 * else owns them; a ClusterCatalog served by Binnacle's catalog engine (the real reconciler over
 * its twin, the real store and HTTP server) with catalogd's status and paths; a ClusterExtension
 * given a twin only with an identity, its twin's status read back in api/v1's words, a name
 * taken in the other group refused, and its deletion waiting for the twin's uninstall.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ALL_CRDS } from '../api/crds.js';
import { loadOlmv1Crds } from '../api/olmv1/crds.js';
import { LABEL_METADATA_NAME, LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION, type Olmv1ClusterCatalog, type Olmv1ClusterExtension } from '../api/olmv1/types.js';
import { API_VERSION, FINALIZER_CLEANUP, type ClusterExtension } from '../api/types.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/index.js';
import { CATALOG_TESTDATA } from '../catalog/testdata.test-helper.js';
import { startCatalogServer } from '../catalog-store/index.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { FakeRequest } from '../kube/fake-requests.test-helper.js';
import { allows, type PolicyRule } from '../publish/helm-bundle/rbac.js';
import { managerClusterRules } from '../self/manifests.js';
import { parseApiVersion, type Condition, type KubeObject } from '../kube/types.js';
import { CatalogRegistry } from './catalog-registry.js';
import { olmv1CatalogReconciler } from './cluster-catalog-olmv1.js';
import { ClusterCatalogReconciler } from './cluster-catalog.js';
import { olmv1ExtensionReconciler } from './cluster-extension-olmv1.js';
import { ensureOlmv1Crds, OLMV1_CRD_LABELS } from './crds.js';

const logger = pino({ level: 'silent' });
const ctx = (): { logger: typeof logger; signal: AbortSignal } => ({ logger, signal: new AbortController().signal });
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

function cluster(): FakeCluster {
  return new FakeCluster({ objects: [...ALL_CRDS, ...loadOlmv1Crds()] });
}

function condition(obj: KubeObject | undefined, type: string): Condition | undefined {
  return ((obj?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}

const v1Ref = (kind: string, name: string): { apiVersion: string; kind: string; name: string } => ({ apiVersion: OLMV1_API_VERSION, kind, name });
const twinRef = (kind: string, name: string): { apiVersion: string; kind: string; name: string } => ({ apiVersion: API_VERSION, kind, name });

describe("OLM v1's CRDs", () => {
  test('installed beside Binnacle\'s, marked as the manager\'s (not install-self\'s), and served', async () => {
    const c = new FakeCluster({ objects: ALL_CRDS });
    const verdict = await ensureOlmv1Crds(c.client(), logger);
    assert.deepEqual(verdict, { serve: true });
    const crd = c.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'clusterextensions.olm.operatorframework.io' });
    assert.equal(crd?.metadata.labels?.['app.kubernetes.io/managed-by'], OLMV1_CRD_LABELS['app.kubernetes.io/managed-by']);
    assert.equal(crd?.metadata.annotations?.['olm.operatorframework.io/generator'], 'experimental');
    // Again: its own CRDs are updated in place.
    assert.deepEqual(await ensureOlmv1Crds(c.client(), logger), { serve: true });
  });

  test("operator-controller's CRDs are left as they are, named with their owner, and the kinds not served", async () => {
    const [catalogCrd, extensionCrd] = loadOlmv1Crds('standard');
    assert.ok(catalogCrd !== undefined && extensionCrd !== undefined);
    const theirs = (crd: KubeObject): KubeObject => ({ ...crd, metadata: { ...crd.metadata, labels: { 'app.kubernetes.io/part-of': 'olm' }, annotations: { ...crd.metadata.annotations, 'meta.helm.sh/release-name': 'olmv1', 'meta.helm.sh/release-namespace': 'olmv1-system' } } });
    const c = new FakeCluster({ objects: [...ALL_CRDS, theirs(catalogCrd), theirs(extensionCrd)] });
    const before = c.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'clusterextensions.olm.operatorframework.io' });
    const verdict = await ensureOlmv1Crds(c.client(), logger);
    assert.ok(!verdict.serve);
    assert.equal(verdict.foreign.length, 2);
    assert.match(verdict.foreign[0]?.owner ?? '', /^operator-controller \(OLM v1\) \(Helm release olmv1-system\/olmv1; generator standard\)/);
    const afterwards = c.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'clusterextensions.olm.operatorframework.io' });
    assert.equal(afterwards?.metadata.resourceVersion, before?.metadata.resourceVersion, 'not written');
  });

  test("OpenShift's cluster-olm-operator is named as such", async () => {
    const [catalogCrd] = loadOlmv1Crds();
    assert.ok(catalogCrd !== undefined);
    const c = new FakeCluster({ objects: [{ ...catalogCrd, metadata: { ...catalogCrd.metadata, annotations: { 'capability.openshift.io/name': 'OperatorLifecycleManagerV1' } } }] });
    const verdict = await ensureOlmv1Crds(c.client(), logger);
    assert.ok(!verdict.serve);
    assert.match(verdict.foreign[0]?.owner ?? '', /^OpenShift's cluster-olm-operator/);
  });
});

/** The fake cluster with an OLM v1 ClusterCatalog `ops`, Binnacle's catalog engine over a fixture pull and a real catalog server, and the adapter. */
async function catalogWorld(t: { after: (fn: () => Promise<void>) => void }): Promise<{ c: FakeCluster; serverUrl: string; engine: ClusterCatalogReconciler; adapter: ReturnType<typeof olmv1CatalogReconciler> }> {
  const c = cluster();
  const client = c.client();
  c.put({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'ops', labels: { team: 'a', 'binnacle.dev/owner-kind': 'PlatformOperator', 'binnacle.dev/owner-name': 'core' } }, spec: { source: { type: 'Image', image: { ref: 'quay.io/example/catalog:latest', pollIntervalMinutes: 5 } }, priority: 10 } });
  const registry = new CatalogRegistry();
  const server = await startCatalogServer({ catalogs: registry.lookup, port: 0, address: '127.0.0.1', logger });
  t.after(() => server.close());
  const storeDir = await mkdtemp(join(tmpdir(), 'olmv1-cc-'));
  dirs.push(storeDir);
  const engine = new ClusterCatalogReconciler({ client, registry, storeDir, serverUrl: server.url, pull: () => Promise.resolve({ digest: `sha256:${'c'.repeat(64)}`, dir: CATALOG_TESTDATA, labels: { [LABEL_CATALOG_CONFIGS]: '/fbc/valid' } }) });
  return { c, serverUrl: server.url, engine, adapter: olmv1CatalogReconciler(client) };
}

/** The twin made for the OLM v1 catalog `ops`: its spec, the labels selectors match, and its owner. */
function assertCatalogTwin(c: FakeCluster): void {
  const v1 = c.get(v1Ref('ClusterCatalog', 'ops'));
  assert.equal(v1?.metadata.labels?.[LABEL_METADATA_NAME], 'ops', "catalogd's metadata.name label");
  assert.deepEqual(v1?.metadata.finalizers, [FINALIZER_CLEANUP]);
  const twin = c.get(twinRef('ClusterCatalog', 'ops'));
  assert.deepEqual(twin?.spec, { source: { type: 'Image', image: { ref: 'quay.io/example/catalog:latest', pollIntervalMinutes: 5 } }, priority: 10 });
  const labels = twin?.metadata.labels ?? {};
  assert.deepEqual([labels.team, labels[LABEL_METADATA_NAME], labels[LABEL_OLMV1_TWIN_OF]], ['a', 'ops', v1?.metadata.uid]);
  // Binnacle's own labels on the OLM v1 object act on nothing: an owner kind and name would let a PlatformOperator claim the twin.
  assert.deepEqual(Object.keys(labels).filter((k) => k.startsWith('binnacle.dev/')), [LABEL_OLMV1_TWIN_OF]);
  assert.equal(twin?.metadata.ownerReferences?.[0]?.uid, v1?.metadata.uid);
}

/** The OLM v1 catalog's status once served, in catalogd's words. */
function assertCatalogServed(served: Olmv1ClusterCatalog, serverUrl: string): void {
  const serving = condition(served, 'Serving');
  const progressing = condition(served, 'Progressing');
  assert.deepEqual([serving?.status, serving?.reason, serving?.observedGeneration], ['True', 'Available', served.metadata.generation]);
  assert.deepEqual([progressing?.status, progressing?.reason], ['True', 'Succeeded']);
  const st = served.status;
  assert.equal(st?.urls?.base, `${serverUrl}/catalogs/ops`);
  assert.equal(st?.resolvedSource?.image.ref, `quay.io/example/catalog@sha256:${'c'.repeat(64)}`);
  assert.ok(st?.lastUnpacked !== undefined);
}

describe('ClusterCatalog (olm.operatorframework.io/v1)', () => {
  test("served by Binnacle's catalog engine: a twin, catalogd's label, status and HTTP paths at status.urls.base", async (t) => {
    const w = await catalogWorld(t);
    await w.adapter.reconcile({ key: 'ops', name: 'ops' }, ctx());
    assertCatalogTwin(w.c);
    // Binnacle's engine serves the twin; its status update calls the adapter back.
    await w.engine.reconcile({ key: 'ops', name: 'ops' }, ctx());
    await w.adapter.reconcile({ key: 'ops', name: 'ops' }, ctx());
    const served = w.c.get(v1Ref('ClusterCatalog', 'ops')) as Olmv1ClusterCatalog | undefined;
    assert.ok(served !== undefined);
    assertCatalogServed(served, w.serverUrl);
    const base = served.status?.urls?.base ?? '';
    const all = await fetch(`${base}/api/v1/all`);
    assert.equal(all.status, 200);
    assert.match(await all.text(), /"schema":"olm\.package"/);
    const metas = await fetch(`${base}/api/v1/metas?schema=olm.package`);
    assert.equal(metas.status, 200);
    const lines = (await metas.text()).trim().split('\n');
    assert.ok(lines.length > 0 && lines.every((l) => (JSON.parse(l) as { schema: string }).schema === 'olm.package'));
  });
});

/** The manager's ClusterRole rules as RBAC reads them. */
function policyRules(rules: readonly Record<string, unknown>[]): PolicyRule[] {
  const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  return rules.map((r) => {
    const apiGroups = strings(r.apiGroups);
    const resources = strings(r.resources);
    const resourceNames = strings(r.resourceNames);
    return { verbs: strings(r.verbs) ?? [], ...(apiGroups === undefined ? {} : { apiGroups }), ...(resources === undefined ? {} : { resources }), ...(resourceNames === undefined ? {} : { resourceNames }) };
  });
}

/** The fake's `authorize` as the ClusterRole `rules` decide (RBAC's verb and resource for each request: apply and status are patches). */
function authorizeBy(rules: readonly PolicyRule[]): (req: FakeRequest) => boolean {
  return (req) => {
    const verb = req.verb === 'apply' || req.verb === 'dry-run' || req.verb === 'status' ? 'patch' : req.verb === 'discover' ? 'get' : req.verb;
    return allows(rules, parseApiVersion(req.apiVersion).group, req.verb === 'status' ? `${req.resource}/status` : req.resource, verb, req.name === '' ? undefined : req.name);
  };
}

describe('ClusterCatalog (olm.operatorframework.io/v1) with the in-cluster manager\'s rights', () => {
  test("install-self's ClusterRole lets the adapter make, serve and delete the twin; without create on binnacle.dev clustercatalogs (its rule before) the twin is refused as the API server refused it", async (t) => {
    const w = await catalogWorld(t);
    w.c.authorize = authorizeBy(policyRules(managerClusterRules('binnacle-system')));
    await w.adapter.reconcile({ key: 'ops', name: 'ops' }, ctx());
    assertCatalogTwin(w.c);
    await w.engine.reconcile({ key: 'ops', name: 'ops' }, ctx());
    await w.adapter.reconcile({ key: 'ops', name: 'ops' }, ctx());
    assertCatalogServed(w.c.get(v1Ref('ClusterCatalog', 'ops')) as Olmv1ClusterCatalog, w.serverUrl);
    // The admin deletes it (the fake has one identity for the admin and the manager: RBAC set aside for this request).
    const rbac = w.c.authorize;
    w.c.authorize = undefined;
    await w.c.client().delete(v1Ref('ClusterCatalog', 'ops'));
    w.c.authorize = rbac;
    await w.adapter.reconcile({ key: 'ops', name: 'ops' }, ctx()); // deletes the twin
    await w.engine.reconcile({ key: 'ops', name: 'ops' }, ctx()); // the twin's finalizer: stops serving it
    await w.adapter.reconcile({ key: 'ops', name: 'ops' }, ctx());
    assert.equal(w.c.get(twinRef('ClusterCatalog', 'ops')), undefined, 'the twin gone');
    assert.equal(w.c.get(v1Ref('ClusterCatalog', 'ops')), undefined, 'the OLM v1 catalog gone');

    const before = await catalogWorld(t);
    const withoutCreate = policyRules(managerClusterRules('binnacle-system')).map((r) => (r.resources?.includes('clustercatalogs') === true && r.apiGroups?.includes('binnacle.dev') === true ? { ...r, verbs: r.verbs.filter((v) => v !== 'create') } : r));
    before.c.authorize = authorizeBy(withoutCreate);
    await before.adapter.reconcile({ key: 'ops', name: 'ops' }, ctx()).catch(() => undefined);
    assert.equal(before.c.get(twinRef('ClusterCatalog', 'ops')), undefined, 'no twin');
    assert.match(condition(before.c.get(v1Ref('ClusterCatalog', 'ops')), 'Progressing')?.message ?? '', /clustercatalogs\.binnacle\.dev "ops" is forbidden: User "admin" cannot create resource "clustercatalogs"/);
  });

  test("an admin's binnacle.dev ClusterCatalog of the same name is not its twin: left as it is, the OLM v1 one Blocked saying why, and kept when the OLM v1 one is deleted", async () => {
    const c = cluster();
    const admin = c.put({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'ops' }, spec: { source: { type: 'Image', image: { ref: 'registry.example/admin/catalog:1' } } } });
    c.put({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', metadata: { name: 'ops' }, spec: { source: { type: 'Image', image: { ref: 'registry.example/other/catalog:1' } } } });
    const adapter = olmv1CatalogReconciler(c.client());
    await adapter.reconcile({ key: 'ops', name: 'ops' }, ctx());
    assert.equal(c.get(twinRef('ClusterCatalog', 'ops'))?.metadata.resourceVersion, admin.metadata.resourceVersion, 'not written');
    const v1 = c.get(v1Ref('ClusterCatalog', 'ops'));
    assert.equal(condition(v1, 'Progressing')?.reason, 'Blocked');
    assert.match(condition(v1, 'Progressing')?.message ?? '', /not this object's twin/);
    await c.client().delete(v1Ref('ClusterCatalog', 'ops'));
    await adapter.reconcile({ key: 'ops', name: 'ops' }, ctx());
    assert.equal(c.get(v1Ref('ClusterCatalog', 'ops')), undefined);
    assert.equal(c.get(twinRef('ClusterCatalog', 'ops'))?.metadata.resourceVersion, admin.metadata.resourceVersion, "the admin's catalog kept, unchanged");
  });
});

describe('ClusterExtension (olm.operatorframework.io/v1)', () => {
  function v1Extension(spec: Partial<Olmv1ClusterExtension['spec']> = {}): Olmv1ClusterExtension {
    return { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name: 'argocd' }, spec: { namespace: 'argocd', source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator', version: '0.6.0' } }, ...spec } };
  }

  test('no ServiceAccount and no installer configured: refused with a condition saying how to set one; no twin, nothing installed', async () => {
    const c = cluster();
    c.put(v1Extension());
    await olmv1ExtensionReconciler({ client: c.client() }).reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    const v1 = c.get(v1Ref('ClusterExtension', 'argocd'));
    assert.deepEqual([condition(v1, 'Progressing')?.status, condition(v1, 'Progressing')?.reason], ['False', 'Blocked']);
    assert.match(condition(v1, 'Progressing')?.message ?? '', /--olmv1-installer=<namespace>\/<serviceaccount>/);
    assert.equal(condition(v1, 'Installed')?.status, 'False');
    assert.equal(c.get(twinRef('ClusterExtension', 'argocd')), undefined);
  });

  test("the twin installs as the configured installer; its status is read back as OLM v1's", async () => {
    const c = cluster();
    c.put(v1Extension({ progressDeadlineMinutes: 10 }));
    const adapter = olmv1ExtensionReconciler({ client: c.client(), installer: { namespace: 'olmv1-system', name: 'installer' } });
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    const twin = c.get(twinRef('ClusterExtension', 'argocd')) as ClusterExtension | undefined;
    assert.deepEqual(twin?.spec.serviceAccount, { namespace: 'olmv1-system', name: 'installer' });
    assert.deepEqual(twin?.spec.source.catalog, { packageName: 'argocd-operator', version: '0.6.0' });
    assert.equal(condition(c.get(v1Ref('ClusterExtension', 'argocd')), 'Progressing')?.reason, 'Retrying', 'waiting for the twin');
    // Binnacle's ClusterExtension engine installed it (its status, as it writes it).
    const now = new Date().toISOString();
    c.put({
      ...(twin),
      status: {
        observedGeneration: twin?.metadata.generation,
        conditions: [
          { type: 'Installed', status: 'True', reason: 'Succeeded', message: 'installed', lastTransitionTime: now },
          { type: 'Progressing', status: 'False', reason: 'Succeeded', message: 'desired state reached', lastTransitionTime: now },
          { type: 'Deprecated', status: 'False', reason: 'NotDeprecated', message: '', lastTransitionTime: now },
        ],
        install: { bundle: { name: 'argocd-operator.v0.6.0', version: '0.6.0', package: 'argocd-operator', image: 'quay.io/x/argocd@sha256:1', catalog: 'ops' }, bundleDeployment: 'argocd-argocd-operator' },
      },
    });
    c.put({ apiVersion: API_VERSION, kind: 'BundleDeployment', metadata: { name: 'argocd-argocd-operator' }, spec: {}, status: { revision: 2 } });
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    const v1 = c.get(v1Ref('ClusterExtension', 'argocd')) as Olmv1ClusterExtension | undefined;
    assert.deepEqual([condition(v1, 'Installed')?.status, condition(v1, 'Installed')?.reason, condition(v1, 'Installed')?.message], ['True', 'Succeeded', 'Installed bundle quay.io/x/argocd@sha256:1 successfully']);
    assert.deepEqual([condition(v1, 'Progressing')?.status, condition(v1, 'Progressing')?.reason], ['True', 'Succeeded']);
    assert.equal(condition(v1, 'Progressing')?.observedGeneration, v1?.metadata.generation);
    assert.deepEqual(v1?.status?.install, { bundle: { name: 'argocd-operator.v0.6.0', version: '0.6.0' } });
    assert.deepEqual(v1?.status?.activeRevisions, [{ name: 'argocd-2' }]);
    assert.equal(condition(v1, 'BundleDeprecated')?.reason, 'DeprecationStatusUnknown');
    // An upgrade: the version changes, and the twin follows.
    c.put({ ...(v1), spec: { ...(v1).spec, source: { sourceType: 'Catalog', catalog: { packageName: 'argocd-operator', version: '0.7.0' } } } });
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    assert.equal((c.get(twinRef('ClusterExtension', 'argocd')) as ClusterExtension | undefined)?.spec.source.catalog.version, '0.7.0');
  });

  test('a binnacle.dev ClusterExtension of the same name that is not its twin is left alone, and the OLM v1 one says why', async () => {
    const c = cluster();
    const other = c.put({ apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name: 'argocd' }, spec: { namespace: 'x', serviceAccount: { name: 'sa' }, source: { sourceType: 'Catalog', catalog: { packageName: 'other' } } } });
    c.put(v1Extension({ serviceAccount: { name: 'installer' } }));
    await olmv1ExtensionReconciler({ client: c.client() }).reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    assert.equal(c.get(twinRef('ClusterExtension', 'argocd'))?.metadata.resourceVersion, other.metadata.resourceVersion);
    const v1 = c.get(v1Ref('ClusterExtension', 'argocd'));
    assert.equal(condition(v1, 'Progressing')?.reason, 'Blocked');
    assert.match(condition(v1, 'Progressing')?.message ?? '', /not this object's twin/);
  });

  test("a twin whose controller reference was removed (its label still this object's UID) is claimed again and repaired, its spec the OLM v1 object's: not stuck Blocked", async () => {
    const c = cluster();
    const v1Uid = c.put(v1Extension({ serviceAccount: { name: 'installer' } })).metadata.uid ?? '';
    c.put({ apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name: 'argocd', labels: { [LABEL_OLMV1_TWIN_OF]: v1Uid } }, spec: { namespace: 'x', serviceAccount: { name: 'sa', namespace: 'elsewhere' }, install: { adoptExisting: true, conflictPolicy: 'Force' }, source: { sourceType: 'Catalog', catalog: { packageName: 'other' } } } });
    await olmv1ExtensionReconciler({ client: c.client() }).reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    const twin = c.get(twinRef('ClusterExtension', 'argocd')) as ClusterExtension | undefined;
    assert.deepEqual(twin?.metadata.ownerReferences?.map((o) => [o.kind, o.uid, o.controller]), [['ClusterExtension', v1Uid, true]]);
    assert.equal(twin?.spec.source.catalog.packageName, 'argocd-operator', "the OLM v1 object's spec, not the planted one");
    assert.equal(twin?.spec.install?.adoptExisting, undefined, 'nothing planted beside the converted fields stays');
    assert.equal(twin?.spec.install?.conflictPolicy, undefined);
    assert.equal(twin?.spec.serviceAccount.namespace, undefined);
    assert.notEqual(condition(c.get(v1Ref('ClusterExtension', 'argocd')), 'Progressing')?.reason, 'Blocked');
  });

  test("deleting it deletes its twin and waits for the twin's uninstall before letting go", async () => {
    const c = cluster();
    const client = c.client();
    c.put(v1Extension({ serviceAccount: { name: 'installer' } }));
    const adapter = olmv1ExtensionReconciler({ client });
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    // The twin's own finalizer (Binnacle's engine uninstalls under it).
    await client.patch(twinRef('ClusterExtension', 'argocd'), { metadata: { finalizers: [FINALIZER_CLEANUP] } });
    await client.delete(v1Ref('ClusterExtension', 'argocd'));
    const waiting = await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    assert.ok((waiting?.requeueAfterMs ?? 0) > 0);
    assert.ok(c.get(twinRef('ClusterExtension', 'argocd'))?.metadata.deletionTimestamp !== undefined, 'the twin is being deleted');
    assert.ok(c.get(v1Ref('ClusterExtension', 'argocd')) !== undefined, 'held until the twin is gone');
    await client.patch(twinRef('ClusterExtension', 'argocd'), { metadata: { finalizers: null } });
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    assert.equal(c.get(v1Ref('ClusterExtension', 'argocd')), undefined);
  });

  test("one moved over from operator-controller lets go of OLM v1's cache finalizers too once its twin is gone, and of no one else's", async () => {
    const c = cluster();
    const client = c.client();
    const olmFinalizers = ['olm.operatorframework.io/cleanup-unpack-cache', 'olm.operatorframework.io/cleanup-contentmanager-cache'];
    const v1 = v1Extension({ serviceAccount: { name: 'installer' } });
    c.put({ ...v1, metadata: { ...v1.metadata, finalizers: [...olmFinalizers, 'example.com/someone-else'] } });
    const adapter = olmv1ExtensionReconciler({ client });
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    await client.delete(v1Ref('ClusterExtension', 'argocd'));
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx()); // deletes the twin (no finalizer: gone at once)
    await adapter.reconcile({ key: 'argocd', name: 'argocd' }, ctx());
    assert.deepEqual(c.get(v1Ref('ClusterExtension', 'argocd'))?.metadata.finalizers, ['example.com/someone-else']);
  });
});
