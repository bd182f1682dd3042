/**
 * OLM v1's API served unchanged (issue 45 §1): a ClusterCatalog and a ClusterExtension written
 * as OLM v1's manifests (`olm.operatorframework.io/v1`, no serviceAccount: the manager's default
 * installer) install an operator from a catalog in the local registry; their status reads as
 * OLM v1's (catalogd's Serving/Progressing, `urls.base` answering `/api/v1/all`; Installed,
 * Progressing=True/Succeeded, `install.bundle`); `binnacle status` shows it; and (§3) it is
 * upgraded, rolled back and uninstalled with kubectl alone and with `binnacle upgrade`, `rollback`,
 * `approve` and `uninstall`, which write the OLM v1 object (its binnacle.dev twin is the manager's,
 * and only the manager may make one: a tenant's forged twin is refused by the API server).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publishPackages } from '../../src/publish/packages.js';
import type { RunningManager } from '../../src/controllers/manager.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { ANNOTATION_APPROVED_PLAN } from '../../src/api/approval.js';
import { API_VERSION, type ClusterExtension } from '../../src/api/types.js';
import { LABEL_OLMV1_TWIN_OF, OLMV1_API_VERSION, OLMV1_EXTRA_ANNOTATIONS, type Olmv1ClusterCatalog, type Olmv1ClusterExtension } from '../../src/api/olmv1/types.js';
import { adminInstaller, adminInstallerObjects, binnacle, e2eClient, e2eRegistry, eventually, kubectl, startE2eManager, stopE2e, uniqueName } from './env.js';
import { conditionsLine, CORPUS, poisonPillTwoVersions } from './extensions.js';

let client: KubeClient;
let manager: RunningManager | undefined;
let work: string;
const catalogName = uniqueName('olmv1-cat');
const ns = uniqueName('olmv1');
const ceName = uniqueName('olmv1-ce');

async function v1Extension(): Promise<Olmv1ClusterExtension | undefined> {
  return client.find<Olmv1ClusterExtension>({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName });
}

/** Installed at `version` in OLM v1's words: Installed=True/Succeeded, Progressing=True/Succeeded at the latest generation, install.bundle. */
async function installedAt(version: string): Promise<Olmv1ClusterExtension> {
  let last = 'no ClusterExtension';
  return eventually(`${ceName} installed at ${version}`, async () => {
    const ce = await v1Extension();
    last = `install ${JSON.stringify(ce?.status?.install)}; ${conditionsLine(ce)}`;
    const installed = findCondition(ce?.status?.conditions, 'Installed');
    const progressing = findCondition(ce?.status?.conditions, 'Progressing');
    const ok = installed?.status === 'True' && installed.reason === 'Succeeded' && progressing?.status === 'True' && progressing.reason === 'Succeeded' && progressing.observedGeneration === ce?.metadata.generation && ce?.status?.install?.bundle.version === version;
    return ok ? ce : undefined;
  }, 240_000, 500).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${last}`);
  });
}

before(async () => {
  client = await e2eClient();
  work = await mkdtemp(join(tmpdir(), 'binnacle-e2e-olmv1-'));
  await adminInstaller(client, ns);
  const published = await publishPackages({ packages: [join(CORPUS, 'poison-pill-operator')], registry: e2eRegistry(), repository: catalogName, transform: poisonPillTwoVersions });
  // The admin's default installer for OLM v1 ClusterExtensions that name no ServiceAccount.
  manager = await startE2eManager('olmv1-api', client, work, { olmv1: { installer: { namespace: ns, name: 'installer' } } });
  // OLM v1's manifest, as written for operator-controller.
  await client.apply({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
});

after(async () => {
  await client.delete({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName }).catch(() => undefined);
  await eventually('the OLM v1 ClusterExtension gone', async () => ((await v1Extension()) === undefined ? true : undefined), 180_000).catch(() => undefined);
  await stopE2e({ client, manager, work, remove: [{ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', name: catalogName }, ...adminInstallerObjects(ns)] });
});

test('an OLM v1 ClusterCatalog is served with catalogd status and HTTP paths', async () => {
  const catalog = await eventually('catalog serving', async () => {
    const c = await client.find<Olmv1ClusterCatalog>({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterCatalog', name: catalogName });
    const serving = findCondition(c?.status?.conditions, 'Serving');
    return serving?.status === 'True' && serving.reason === 'Available' ? c : undefined;
  }, 120_000);
  assert.equal(findCondition(catalog.status?.conditions, 'Progressing')?.reason, 'Succeeded');
  assert.equal(catalog.metadata.labels?.['olm.operatorframework.io/metadata.name'], catalogName);
  assert.match(catalog.status?.resolvedSource?.image.ref ?? '', /@sha256:[0-9a-f]{64}$/);
  assert.ok(catalog.status?.lastUnpacked !== undefined);
  const base = catalog.status?.urls?.base ?? '';
  assert.match(base, new RegExp(`/catalogs/${catalogName}$`));
  const all = await fetch(`${base}/api/v1/all`);
  assert.equal(all.status, 200);
  assert.match(await all.text(), /"name":"poison-pill-operator"/);
  const metas = await fetch(`${base}/api/v1/metas?schema=olm.bundle`);
  assert.equal((await metas.text()).trim().split('\n').length, 2);
});

/** OLM v1's manifest's spec: no serviceAccount (deprecated in v1.11); the manager's --olmv1-installer installs. */
const manifestSpec = { namespace: ns, source: { sourceType: 'Catalog', catalog: { packageName: 'poison-pill-operator', version: '0.0.5', selector: { matchLabels: { 'olm.operatorframework.io/metadata.name': catalogName } } } } };

/**
 * Only the manager makes twins (api/olmv1/twin-policy.ts): a tenant who may write binnacle.dev
 * ClusterExtensions is refused by the API server when it makes one read as `v1`'s twin (the
 * label, an owner reference to it, or both), points the twin elsewhere or changes its spec or
 * binnacle.dev annotations; a plain one, and the twin's other metadata, go through. Server-side
 * dry runs: admission runs, nothing is kept.
 */
async function onlyTheManagerMakesTwins(v1: Olmv1ClusterExtension): Promise<void> {
  const user = uniqueName('olmv1-tenant');
  const rbac = 'rbac.authorization.k8s.io/v1';
  await client.apply({ apiVersion: rbac, kind: 'ClusterRole', metadata: { name: user }, rules: [{ apiGroups: ['binnacle.dev'], resources: ['clusterextensions'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'] }] });
  await client.apply({ apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: user }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] });
  try {
    const tenant = client.impersonate({ user, groups: ['system:authenticated'] });
    const uid = v1.metadata.uid ?? '';
    const twin = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName });
    const reference = { apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', name: ceName, uid, controller: true, blockOwnerDeletion: true };
    const forged = (labels: Record<string, string> | undefined, ownerReferences: (typeof reference)[] | undefined): ClusterExtension => ({
      apiVersion: API_VERSION,
      kind: 'ClusterExtension',
      metadata: { name: `${ceName}-forged`, ...(labels === undefined ? {} : { labels }), ...(ownerReferences === undefined ? {} : { ownerReferences }) },
      spec: twin.spec,
    });
    const denial = (err: unknown): string | undefined => (String(err).includes("ValidatingAdmissionPolicy 'binnacle-olmv1-twins'") ? String(err) : undefined);
    // The tenant's RBAC and the policy take effect within moments: retried until the policy answers.
    const refused = await eventually('the twin policy refuses a forged twin', async () => {
      try {
        await tenant.apply(forged({ [LABEL_OLMV1_TWIN_OF]: uid }, [reference]), { dryRun: true });
        return undefined;
      } catch (err) {
        return denial(err);
      }
    }, 60_000, 500);
    assert.match(refused, /only Binnacle's manager makes an OLM v1 ClusterExtension's twin/);
    for (const [what, obj] of [['the label alone', forged({ [LABEL_OLMV1_TWIN_OF]: uid }, undefined)], ['the reference alone', forged(undefined, [reference])]] as const) {
      await assert.rejects(tenant.apply(obj, { dryRun: true }), (err: unknown) => denial(err) !== undefined, what);
    }
    // The twin itself, pointed at another object by the tenant.
    const elsewhere = { ...twin, metadata: { name: ceName, labels: { ...twin.metadata.labels, [LABEL_OLMV1_TWIN_OF]: 'another-uid' } } };
    await assert.rejects(tenant.apply(elsewhere, { dryRun: true, force: true }), (err: unknown) => denial(err) !== undefined, 'the twin repointed');
    // …or reshaped: its spec and its binnacle.dev annotations are the manager's (an approval, adoptExisting).
    // (Whole specs: server-side apply checks the applied object's required fields.)
    const twinRef = { apiVersion: API_VERSION, kind: 'ClusterExtension', metadata: { name: ceName }, spec: twin.spec };
    const reshaped = [
      { ...twinRef, spec: { ...twin.spec, install: { ...twin.spec.install, adoptExisting: true } } },
      { ...twinRef, metadata: { name: ceName, annotations: { [ANNOTATION_APPROVED_PLAN]: 'planted' } } },
    ];
    for (const obj of reshaped) {
      await assert.rejects(tenant.apply(obj, { dryRun: true, force: true }), (err: unknown) => {
        assert.match(denial(err) ?? String(err), /is the twin Binnacle's manager keeps of an OLM v1 ClusterExtension/, JSON.stringify(obj));
        return true;
      });
    }
    // Deleted by the tenant, its operator would be uninstalled, then made again from the OLM v1 object: refused.
    const asTenant = ['--dry-run=server', '--as', user, '--as-group', 'system:authenticated'];
    await assert.rejects(kubectl('delete', 'clusterextensions.binnacle.dev', ceName, ...asTenant), (err: unknown) => {
      assert.match(String(err), /is the twin Binnacle's manager keeps of an OLM v1 ClusterExtension: it goes with it\. Delete the olm\.operatorframework\.io\/v1 ClusterExtension/);
      return true;
    });
    // Other metadata is anyone's who may write it (a merge patch: written, harmless).
    await tenant.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName }, { metadata: { annotations: { 'example.com/note': 'seen' } } });
    // A plain binnacle.dev ClusterExtension is the tenant's to write.
    await tenant.apply(forged(undefined, undefined), { dryRun: true });
  } finally {
    await client.delete({ apiVersion: rbac, kind: 'ClusterRoleBinding', name: user }).catch(() => undefined);
    await client.delete({ apiVersion: rbac, kind: 'ClusterRole', name: user }).catch(() => undefined);
  }
}

test('an OLM v1 ClusterExtension installs, reads as OLM v1, shows in binnacle status; upgraded, rolled back and uninstalled with kubectl alone and with binnacle', async () => {
  await client.apply({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name: ceName }, spec: manifestSpec });
  const installed = await installedAt('0.0.5');
  assert.deepEqual(installed.status?.install, { bundle: { name: 'poison-pill.v0.0.5', version: '0.0.5' } });
  assert.match(findCondition(installed.status?.conditions, 'Installed')?.message ?? '', /^Installed bundle .+ successfully$/);
  for (const type of ['Deprecated', 'PackageDeprecated', 'ChannelDeprecated', 'BundleDeprecated']) assert.equal(findCondition(installed.status?.conditions, type)?.reason, 'NotDeprecated', type);
  assert.equal(installed.status?.activeRevisions?.length, 1);

  const status = await binnacle('status', ceName);
  assert.equal(status.code, 0, status.err);
  assert.match(status.out, /Installed:\s+poison-pill\.v0\.0\.5/);
  assert.match(status.out, /API:\s+olm\.operatorframework\.io\/v1 ClusterExtension/);

  await onlyTheManagerMakesTwins(installed);

  // Upgraded, rolled back and uninstalled with kubectl alone, and with binnacle's commands (issue 45 §3).
  const v1Resource = 'clusterextensions.olm.operatorframework.io';
  const pin = (version: string, policy?: string): string => JSON.stringify({ spec: { source: { catalog: { version, ...(policy === undefined ? {} : { upgradeConstraintPolicy: policy }) } } } });
  await kubectl('patch', v1Resource, ceName, '--type', 'merge', '-p', pin('0.0.6'));
  await installedAt('0.0.6');

  const rolledBack = await binnacle('rollback', ceName);
  assert.equal(rolledBack.code, 0, rolledBack.err);
  assert.match(rolledBack.err, /rolling back from 0\.0\.6 to 0\.0\.5/);
  await installedAt('0.0.5');
  // Written on the OLM v1 object (its twin is the manager's), in OLM v1's own fields.
  const pinned = (await v1Extension())?.spec.source.catalog;
  assert.deepEqual([pinned?.version, pinned?.upgradeConstraintPolicy], ['0.0.5', 'SelfCertified']);
  assert.equal((await client.get({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName })).metadata.labels?.[LABEL_OLMV1_TWIN_OF], (await v1Extension())?.metadata.uid, 'the twin still made from it');

  const upgraded = await binnacle('upgrade', ceName, '--version', '0.0.6', '--policy', 'CatalogProvided');
  assert.equal(upgraded.code, 0, upgraded.err);
  await installedAt('0.0.6');
  assert.equal((await v1Extension())?.spec.source.catalog?.version, '0.0.6');

  await kubectl('patch', v1Resource, ceName, '--type', 'merge', '-p', pin('0.0.5', 'SelfCertified'));
  await installedAt('0.0.5');

  // Binnacle's approval from a plan, asked for on the OLM v1 object (an annotation) and given with `binnacle approve`.
  await kubectl('annotate', v1Resource, ceName, `${OLMV1_EXTRA_ANNOTATIONS.upgradeApproval}=Manual`);
  const held = await binnacle('upgrade', ceName, '--version', '0.0.6', '--policy', 'CatalogProvided');
  assert.equal(held.code, 0, held.err);
  const pending = await eventually('a plan awaiting approval', async () => (await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName })).status?.pendingPlan, 120_000);
  assert.deepEqual(pending.changes.map((c) => [c.from, c.to]), [['0.0.5', '0.0.6']]);
  assert.equal((await v1Extension())?.status?.install?.bundle.version, '0.0.5', 'held until approved');
  const approved = await binnacle('approve', ceName);
  assert.equal(approved.code, 0, approved.err);
  assert.equal((await v1Extension())?.metadata.annotations?.[ANNOTATION_APPROVED_PLAN], pending.digest, 'the approval is on the OLM v1 object');
  await installedAt('0.0.6');

  const uninstalled = await binnacle('uninstall', ceName, '--wait', '--timeout', '180s');
  assert.equal(uninstalled.code, 0, uninstalled.err);
  await operatorGone();

  // Installed again from the same manifest, then uninstalled with kubectl alone.
  await client.apply({ apiVersion: OLMV1_API_VERSION, kind: 'ClusterExtension', metadata: { name: ceName }, spec: manifestSpec });
  await installedAt('0.0.5');
  await kubectl('delete', v1Resource, ceName, '--wait=false');
  await operatorGone();
});

/** Nothing of the extension left: neither object, no BundleDeployment it needed, no operator Deployment. */
async function operatorGone(): Promise<void> {
  // Five minutes, as operator-controller's e2e waits for CRDs (operator-framework/operator-controller#1437):
  // a CRD deleted soon after it was made again can meet its watch cache re-initializing; the API server's
  // cleanup finalizer then fails to list ("storage is (re)initializing") and retries on a growing backoff.
  await eventually('uninstalled', async () => {
    const left = [await v1Extension(), await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ceName })].filter((x) => x !== undefined);
    const bds = (await client.list(API_VERSION, 'BundleDeployment')).items.filter((bd) => bd.metadata.labels?.[`needed-by.binnacle.dev/${ceName}`] !== undefined);
    // Its CRDs too (they go as OLM v1's do): an install made again meanwhile would meet them terminating.
    const crds = (await client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).items.filter((c) => (c.spec as { group?: string }).group === 'poison-pill.medik8s.io');
    if (left.length === 0 && bds.length === 0 && crds.length === 0) return true;
    // Thrown, not undefined: a timeout then names what stayed (eventually reports the last error).
    const named = (objs: KubeObject[]): string => objs.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.name}${o.metadata.deletionTimestamp === undefined ? '' : ` (deleting; finalizers ${JSON.stringify(o.metadata.finalizers ?? [])})`}`).join(', ');
    throw new Error(`still there: ${named([...left, ...bds, ...crds])}`);
  }, 300_000);
  const deployments = (await client.list('apps/v1', 'Deployment', { namespace: ns })).items;
  assert.deepEqual(deployments.map((d) => d.metadata.name), [], 'the operator is gone');
}
