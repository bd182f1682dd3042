/**
 * Issue 12 §4 and §6 end to end, with real corpus operators published as images: an operator
 * holds back its own upgrade through its OperatorCondition (written here as the operator
 * would, as its own ServiceAccount) until it clears it; a PlatformOperator reports each
 * package's health with the reason, one aggregated condition and an OpenShift ClusterOperator;
 * its extensions refuse a direct `kubectl delete` (and `binnacle uninstall`) with the admission
 * policy's message; and taking a package off its list uninstalls that package.
 *
 * The manager runs as a ServiceAccount (as it does in a cluster), so the tests' kubectl — the
 * cluster's admin — is somebody else as far as the admission policy is concerned.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { publishPackages, type PublishResult } from '../../src/publish/packages.js';
import { startManager, type RunningManager } from '../../src/controllers/manager.js';
import { platformExtensionName } from '../../src/controllers/platform-operator.js';
import { clusterOperatorName } from '../../src/controllers/cluster-operator.js';
import { PROTECTION_POLICY_NAME } from '../../src/actions/platform-protection.js';
import { neededByLabel } from '../../src/installed/index.js';
import type { KubeClient } from '../../src/kube/client.js';
import { findCondition, type Condition, type KubeObject } from '../../src/kube/types.js';
import type { OperatorCondition } from '../../src/api/operator-condition.js';
import { API_VERSION, type ClusterExtension, type PlatformOperator, type PlatformPackageStatus } from '../../src/api/types.js';
import { e2eClient, e2eKubeconfig, e2eRegistry, eventually, kubectl, removeAllExtensions, uniqueName } from './env.js';
import { CORPUS, createExtension, deploymentAvailable, describeExtension, getExtension, installedAt, removeExtension, serviceAccount, type Cleanup } from './extensions.js';
import { managerLogger, managerLogNote } from './manager-log.js';

const run = promisify(execFile);
/** The manager's log (manager-log.ts). */
const LOG = 'platform';
const BINNACLE = join(import.meta.dirname, '..', '..', 'bin', 'binnacle.js');
const OC = 'operators.coreos.com/v2';

let client: KubeClient;
let manager: RunningManager;
let dataDir: string;
let published: PublishResult;
const catalogName = uniqueName('platform');
const managerNamespace = uniqueName('binnacle-system');
const cleanup: Cleanup = [];

/** A client acting as a ServiceAccount, as a pod running under it would. */
function asServiceAccount(namespace: string, name: string): KubeClient {
  return client.impersonate({ user: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] });
}

/** Runs a command that must fail; answers what it printed on stderr. */
async function fails(cmd: () => Promise<unknown>): Promise<string> {
  try {
    await cmd();
  } catch (err) {
    const stderr = (err as { stderr?: unknown }).stderr;
    return typeof stderr === 'string' ? stderr : String(err);
  }
  throw new Error('the command succeeded');
}

function containersEnv(d: KubeObject): { name: string; value?: string }[][] {
  const spec = d.spec as { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  return spec.template.spec.containers.map((c) => c.env ?? []);
}

/** The value every container of the Deployment has for OPERATOR_CONDITION_NAME (and that they agree). */
async function conditionNameOf(namespace: string, deployment: string): Promise<string> {
  const d = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: deployment });
  const values = containersEnv(d).map((env) => env.find((e) => e.name === 'OPERATOR_CONDITION_NAME')?.value);
  assert.ok(values.length > 0 && values.every((v) => v !== undefined && v === values[0]), `every container names the condition: ${JSON.stringify(values)}`);
  return values[0] ?? '';
}

/** What operator-lib's conditions package does: read the condition, set spec.conditions, update. */
async function setUpgradeable(operator: KubeClient, namespace: string, name: string, status: 'True' | 'False', reason: string, message: string): Promise<void> {
  const cond = await operator.get<OperatorCondition>({ apiVersion: OC, kind: 'OperatorCondition', namespace, name });
  const next: Condition = { type: 'Upgradeable', status, reason, message, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
  const spec = cond.spec ?? {};
  spec.conditions = [...(spec.conditions ?? []).filter((c) => c.type !== 'Upgradeable'), next];
  await operator.update({ ...cond, spec });
}

async function platformStatus(name: string): Promise<PlatformOperator['status']> {
  return (await client.get<PlatformOperator>({ apiVersion: API_VERSION, kind: 'PlatformOperator', name })).status;
}

function pkg(st: PlatformOperator['status'], name: string): PlatformPackageStatus | undefined {
  return st?.packages?.find((p) => p.name === name);
}

before(async () => {
  client = await e2eClient();
  dataDir = await mkdtemp(join(tmpdir(), 'binnacle-e2e-platform-'));
  published = await publishPackages({ packages: ['poison-pill-operator', 'flux'].map((p) => join(CORPUS, p)), registry: e2eRegistry(), repository: catalogName });
  // The manager's own identity: a ServiceAccount allowed everything, as an in-cluster install has.
  await serviceAccount(client, cleanup, managerNamespace, 'binnacle-manager', true);
  // Its log is kept as .cache/test-artifacts/manager-platform.log; a test that does not converge quotes its last warnings.
  manager = await startManager({ client: asServiceAccount(managerNamespace, 'binnacle-manager'), logger: managerLogger(LOG), dataDir, healthTimeoutMs: 60_000, workers: 4 });
  await client.apply({ apiVersion: API_VERSION, kind: 'ClusterCatalog', metadata: { name: catalogName }, spec: { source: { type: 'Image', image: { ref: published.catalog } } } });
});

after(async () => {
  await removeAllExtensions(client);
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
  await client.delete({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: catalogName }).catch(() => undefined);
  await manager.stop();
  client.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('an operator holds back its own upgrade (OperatorCondition)', () => {
  test('Upgradeable=False written by the operator holds its upgrade, with its message, until it clears', async () => {
    const ns = uniqueName('cond');
    await serviceAccount(client, cleanup, ns, 'installer', true);
    const name = uniqueName('pp');
    await createExtension(client, catalogName, name, ns, { packageName: 'poison-pill-operator', version: '0.0.5' });
    await installedAt(client, name, '0.0.5');

    // As OLM: a condition named after the CSV, listing the Deployment and its ServiceAccount, named in the pods' env.
    const deployment = 'poison-pill-controller-manager';
    const condName = await conditionNameOf(ns, deployment);
    assert.equal(condName, 'poison-pill.v0.0.5');
    const cond = await client.get<OperatorCondition>({ apiVersion: OC, kind: 'OperatorCondition', namespace: ns, name: condName });
    assert.deepEqual(cond.spec?.deployments, [deployment]);
    assert.deepEqual(cond.spec?.serviceAccounts, ['poison-pill-controller-manager']);

    // The operator (its own ServiceAccount) may write its condition, and only that one.
    const operator = asServiceAccount(ns, 'poison-pill-controller-manager');
    await assert.rejects(operator.list(OC, 'OperatorCondition', { namespace: ns }), /forbidden/i);
    await setUpgradeable(operator, ns, condName, 'False', 'RemediationInProgress', 'a node remediation is in progress; upgrading now would abandon it');

    await client.patch({ apiVersion: API_VERSION, kind: 'ClusterExtension', name }, { spec: { source: { catalog: { version: '0.0.6' } } } });
    const blocked = await eventually(
      'upgrade held back',
      async () => {
        const ce = await getExtension(client, name);
        const p = findCondition(ce.status?.conditions, 'Progressing');
        return ce.status?.observedGeneration === ce.metadata.generation && p?.reason === 'UpgradeBlocked' ? { ce, p } : undefined;
      },
      60_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\n${await describeExtension(client, name)}\n${managerLogNote(LOG)}`);
    });
    assert.equal(blocked.p.status, 'True');
    assert.match(blocked.p.message, /upgrade of poison-pill-operator to poison-pill\.v0\.0\.6 is held back/);
    assert.match(blocked.p.message, /a node remediation is in progress; upgrading now would abandon it/);
    assert.match(blocked.p.message, new RegExp(`OperatorCondition ${ns}/poison-pill\\.v0\\.0\\.5`));
    assert.equal(blocked.ce.status?.install?.bundle.version, '0.0.5');
    assert.equal(findCondition(blocked.ce.status?.conditions, 'Installed')?.status, 'True');

    // Level-triggered: it keeps looking, and keeps holding, while the operator says so.
    await new Promise((r) => setTimeout(r, 12_000));
    const still = await getExtension(client, name);
    assert.equal(findCondition(still.status?.conditions, 'Progressing')?.reason, 'UpgradeBlocked');
    assert.equal(still.status?.install?.bundle.version, '0.0.5');
    assert.equal(await conditionNameOf(ns, deployment), 'poison-pill.v0.0.5', 'the operator was not replaced');

    // The operator clears it: the upgrade goes ahead, and the new version gets its own condition.
    await setUpgradeable(operator, ns, condName, 'True', 'Ready', 'nothing in flight');
    await installedAt(client, name, '0.0.6');
    assert.equal(await conditionNameOf(ns, deployment), 'poison-pill.v0.0.6');
    await client.get({ apiVersion: OC, kind: 'OperatorCondition', namespace: ns, name: 'poison-pill.v0.0.6' });
    await eventually('the old condition pruned', async () => ((await client.find({ apiVersion: OC, kind: 'OperatorCondition', namespace: ns, name: condName })) === undefined ? true : undefined));
    await removeExtension(client, name);
  });
});

describe('PlatformOperators are the cluster’s must-haves', () => {
  const po = uniqueName('core');
  const nsA = uniqueName('platform-a');
  const nsB = uniqueName('platform-b');
  const ppExt = platformExtensionName(po, 'poison-pill-operator');
  const fluxExt = platformExtensionName(po, 'flux');
  const packages = [
    { name: 'poison-pill-operator', namespace: nsA },
    { name: 'flux', namespace: nsB },
    { name: 'no-such-operator', namespace: nsA },
  ];

  test('each package’s health is reported with its reason, with one aggregated condition and an OpenShift ClusterOperator', async () => {
    // A cluster that serves config.openshift.io: OpenShift's ClusterOperator API.
    const crd = parseYaml(await readFile(join(import.meta.dirname, 'fixtures', 'clusteroperators.crd.yaml'), 'utf8')) as KubeObject;
    await client.apply(crd, { force: true });
    cleanup.push(() => client.delete({ apiVersion: crd.apiVersion, kind: crd.kind, name: crd.metadata.name ?? '' }));
    await eventually('ClusterOperator CRD established', async () => {
      const live = await client.get({ apiVersion: crd.apiVersion, kind: crd.kind, name: crd.metadata.name ?? '' });
      return (live.status as { conditions?: Condition[] } | undefined)?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true ? true : undefined;
    });
    await serviceAccount(client, cleanup, nsA, 'installer', true);
    // nsB has no installer of its own: the PlatformOperator's ServiceAccount, in nsA, installs there too.
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: nsB } });
    cleanup.push(() => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: nsB }));
    await client.apply({
      apiVersion: API_VERSION,
      kind: 'PlatformOperator',
      metadata: { name: po },
      spec: { packages: packages.map((p) => ({ ...p })), serviceAccount: { name: 'installer', namespace: nsA } },
    });
    cleanup.push(() => client.delete({ apiVersion: API_VERSION, kind: 'PlatformOperator', name: po }));
    // The catalog selector is not part of a PlatformOperator: only this run's catalog serves these packages anyway.
    const st = await eventually(
      'each package settled',
      async () => {
        const s = await platformStatus(po);
        const ok = pkg(s, 'poison-pill-operator')?.reason === 'Healthy' && pkg(s, 'flux')?.reason === 'Healthy' && pkg(s, 'no-such-operator')?.reason === 'Failed';
        return ok ? s : undefined;
      },
      240_000,
      1_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\n${JSON.stringify(await platformStatus(po), null, 1)}\n${await describeExtension(client, ppExt)}\n${await describeExtension(client, fluxExt)}\n${managerLogNote(LOG)}`);
    });
    const pp = pkg(st, 'poison-pill-operator');
    assert.deepEqual([pp?.installed, pp?.healthy, pp?.extension], [true, true, ppExt]);
    assert.match(pp?.version ?? '', /^\d+\.\d+\.\d+$/);
    const missing = pkg(st, 'no-such-operator');
    assert.deepEqual([missing?.installed, missing?.healthy], [false, false]);
    assert.match(missing?.message ?? '', /no-such-operator/);
    const available = findCondition(st?.conditions, 'Available');
    assert.equal(available?.status, 'False');
    assert.equal(available?.reason, 'PackagesDegraded');
    assert.match(available?.message ?? '', /^no-such-operator: Failed: /);
    assert.equal(findCondition(st?.conditions, 'Degraded')?.status, 'True');
    assert.equal(await deploymentAvailable(client, nsA, 'poison-pill-controller-manager'), true);

    // OpenShift's tooling reads the same through the ClusterOperator.
    const coName = clusterOperatorName(po);
    const co = JSON.parse(await kubectl('get', 'clusteroperators', coName, '-o', 'json')) as {
      status: { conditions: Condition[]; relatedObjects: { group: string; resource: string; name: string }[]; versions: { name: string; version: string }[] };
    };
    assert.equal(findCondition(co.status.conditions, 'Available')?.status, 'False');
    assert.equal(findCondition(co.status.conditions, 'Degraded')?.status, 'True');
    assert.ok(co.status.relatedObjects.some((o) => o.resource === 'platformoperators' && o.name === po));
    assert.ok(co.status.relatedObjects.some((o) => o.resource === 'clusterextensions' && o.name === ppExt));
    assert.ok(co.status.relatedObjects.some((o) => o.resource === 'namespaces' && o.name === nsB));
    assert.ok(co.status.versions.some((v) => v.name === 'operator'));
    assert.ok(co.status.versions.some((v) => v.name === 'poison-pill-operator' && v.version === pp?.version));

    // Taking the failing package off the list: it is reported removed, and the rest is Available.
    await client.patch({ apiVersion: API_VERSION, kind: 'PlatformOperator', name: po }, { spec: { packages: packages.slice(0, 2) } });
    const fixed = await eventually('Available', async () => {
      const s = await platformStatus(po);
      return findCondition(s?.conditions, 'Available')?.status === 'True' && pkg(s, 'no-such-operator')?.reason === 'Removed' ? s : undefined;
    }, 120_000);
    assert.equal(findCondition(fixed?.conditions, 'Available')?.reason, 'AllHealthy');
    assert.equal(findCondition(fixed?.conditions, 'Degraded')?.status, 'False');
    await eventually('ClusterOperator Available', async () => {
      const live = await client.get({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', name: coName });
      return findCondition((live.status as { conditions?: Condition[] }).conditions, 'Available')?.status === 'True' ? true : undefined;
    });
  });

  test('its extensions refuse a direct kubectl delete or change, and binnacle uninstall, saying how to remove them', async () => {
    // The policy is enforced once the API server has loaded it: probe with a server-side dry run.
    const dryRun = await eventually('the policy enforced', async () => {
      const out = await fails(() => kubectl('delete', 'clusterextension', fluxExt, '--dry-run=server')).catch(() => undefined);
      return out?.includes(PROTECTION_POLICY_NAME) === true ? out : undefined;
    }, 30_000, 500);
    assert.match(dryRun, /is installed by PlatformOperator/);

    const deleted = await fails(() => kubectl('delete', 'clusterextension', fluxExt, '--wait=false'));
    assert.match(deleted, new RegExp(`ValidatingAdmissionPolicy '${PROTECTION_POLICY_NAME}'`));
    assert.match(deleted, new RegExp(`ClusterExtension ${fluxExt} is installed by PlatformOperator ${po}, which keeps it on the cluster, and cannot be removed directly`));
    assert.match(deleted, new RegExp(`remove package flux from spec\\.packages of PlatformOperator ${po} \\(kubectl edit platformoperator ${po}\\)`));

    const changed = await fails(() => kubectl('patch', 'clusterextension', fluxExt, '--type=merge', '-p', '{"spec":{"source":{"catalog":{"version":"0.13.4"}}}}'));
    assert.match(changed, /cannot be changed directly/);
    const relabelled = await fails(() => kubectl('label', 'clusterextension', fluxExt, '--overwrite', 'binnacle.dev/owner-kind=Nobody'));
    assert.match(relabelled, /cannot be changed directly/);
    // Changes that leave spec and ownership alone are nobody's business.
    await kubectl('annotate', 'clusterextension', fluxExt, 'example.com/note=seen');

    const uninstall = await fails(() => run('node', [BINNACLE, 'uninstall', fluxExt, '--kubeconfig', e2eKubeconfig()], { env: { ...process.env, BINNACLE_FROM_SOURCE: '1' } }));
    assert.match(uninstall, new RegExp(`error: ClusterExtension ${fluxExt} is installed by PlatformOperator ${po}`));
    assert.match(uninstall, /remove package flux from spec\.packages/);

    const ce = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: fluxExt });
    assert.equal(ce.metadata.deletionTimestamp, undefined);
    assert.equal(ce.spec.source.catalog.version, undefined);

    // The API server type-checked every expression of the policy against the ClusterExtension schema.
    const typeChecking = await eventually('the policy type-checked', async () => {
      const policy = await client.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', name: PROTECTION_POLICY_NAME });
      const status = policy.status as { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } } | undefined;
      return status?.observedGeneration === policy.metadata.generation && status?.typeChecking !== undefined ? status.typeChecking : undefined;
    });
    assert.deepEqual(typeChecking.expressionWarnings ?? [], []);
  });

  test('removing a package from the list uninstalls it cleanly, and the status says so', async () => {
    const ppBefore = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ppExt });
    const seen = new Set<string>();
    await client.patch({ apiVersion: API_VERSION, kind: 'PlatformOperator', name: po }, { spec: { packages: packages.slice(0, 1) } });
    const st = await eventually(
      'flux removed',
      async () => {
        const s = await platformStatus(po);
        const reason = pkg(s, 'flux')?.reason;
        if (reason !== undefined) seen.add(reason);
        const gone = (await client.find({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: fluxExt })) === undefined;
        return gone && reason === 'Removed' ? s : undefined;
      },
      180_000,
      250,
    );
    assert.deepEqual(pkg(st, 'flux'), { name: 'flux', extension: fluxExt, installed: false, healthy: false, reason: 'Removed', message: 'removed from spec.packages and uninstalled' });
    assert.ok([...seen].every((r) => r === 'Healthy' || r === 'Removing' || r === 'Removed'), [...seen].join());
    // Nothing of flux is left; poison-pill was not touched.
    assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: nsB })).items.map((d) => d.metadata.name), []);
    for (const labelSelector of [`binnacle.dev/owner-name=${fluxExt}`, neededByLabel(fluxExt)]) assert.deepEqual((await client.list(API_VERSION, 'BundleDeployment', { labelSelector })).items, []);
    const ppAfter = await client.get<ClusterExtension>({ apiVersion: API_VERSION, kind: 'ClusterExtension', name: ppExt });
    assert.equal(ppAfter.metadata.uid, ppBefore.metadata.uid);
    assert.equal(pkg(st, 'poison-pill-operator')?.reason, 'Healthy');
    assert.equal(findCondition(st?.conditions, 'Available')?.status, 'True');
    assert.equal(findCondition(st?.conditions, 'Available')?.message, '1 package installed and healthy');
  });

  test('deleting the PlatformOperator removes its extensions: the garbage collector may, where users may not', async () => {
    await client.delete({ apiVersion: API_VERSION, kind: 'PlatformOperator', name: po });
    await eventually('its extensions gone', async () => {
      const left = (await client.list(API_VERSION, 'ClusterExtension', { labelSelector: `binnacle.dev/owner-name=${po}` })).items;
      return left.length === 0 ? true : undefined;
    }, 180_000);
    assert.deepEqual((await client.list('apps/v1', 'Deployment', { namespace: nsA })).items.map((d) => d.metadata.name), []);
    await eventually('its ClusterOperator gone', async () => ((await client.find({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', name: clusterOperatorName(po) })) === undefined ? true : undefined));
  });
});
