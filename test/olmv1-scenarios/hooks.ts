/**
 * hooks.go's hooks: feature-gate tags skip a scenario when the gate is known and off
 * (CheckFeatureTags), each scenario gets its own id, namespace and names (CreateScenarioContext),
 * and cleanup deletes what it applied, its catalogs and its namespace (ScenarioCleanup). Besides
 * hooks.go: the scenarios EXCLUDED.md lists are skipped with their reason, and the suite runs a
 * Binnacle manager in this process (BeforeAll/AfterAll) serving `olm.operatorframework.io/v1`,
 * installing as a cluster-admin ServiceAccount as operator-controller v1.11 does, unless
 * OLMV1_SCENARIOS_IN_CLUSTER names the namespace of one install-self put in the cluster.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { After, AfterAll, Before, BeforeAll, setDefaultTimeout, Status } from '@cucumber/cucumber';
import type { RunningManager } from '../../src/controllers/manager.js';
import type { KubeClient } from '../../src/kube/client.js';
import { REGISTRIES_CONF_ENV } from '../../src/oci/index.js';
import { MANAGER_NAME } from '../../src/self/manifests.js';
import { adminInstaller, adminInstallerObjects, e2eClient, e2eRegistry, startE2eManager, stopE2e } from '../e2e/env.js';
import { excludedScenarios, IN_CLUSTER_FEATURES, REAL_NODE_SCENARIOS } from './where.js';
import { IN_CLUSTER, kubectlRun, STEP_TIMEOUT_MS, type ScenarioWorld } from './world.js';

// Every wait is bounded by STEP_TIMEOUT_MS; cucumber's own timeout only catches a step that hangs past it.
setDefaultTimeout(STEP_TIMEOUT_MS + 120_000);

/**
 * The gates hooks.go knows, as Binnacle has them. BoxcutterRuntime is on as far as Binnacle
 * builds it: the manager serves ClusterObjectSets (`--olmv1-object-sets`, revision.feature), but
 * its ClusterExtensions roll out through its own release engine, not through ClusterObjectSets,
 * so the scenarios that look for an extension's ClusterObjectSets are excluded in EXCLUDED.md.
 * CatalogdHA: on when the manager runs in-cluster with two Pods or more (hooks.go turns it on for a
 * cluster of two nodes or more, where catalogd runs two replicas; real-node.sh installs two). The rest are on: Binnacle maps
 * `config.inline.watchNamespace` (SingleOwnNamespaceInstallSupport) and `.deploymentConfig`
 * (DeploymentConfig), and issues webhook certificates itself (WebhookProviderCertManager).
 */
export const FEATURE_GATES = new Map<string, boolean>([
  ['BoxcutterRuntime', true],
  ['CatalogdHA', false],
  ['SingleOwnNamespaceInstallSupport', true],
  ['DeploymentConfig', true],
  ['WebhookProviderCertManager', true],
  ['WebhookProviderOpenshiftServiceCA', true],
  ['BundleReleaseSupport', false],
  ['APIV1MetasHandler', true],
  ['GraphQLCatalogQueries', false],
]);

const EXCLUDED = excludedScenarios();

const INSTALLER_NS = 'olmv1-scenarios-installer';
let client: KubeClient | undefined;
let manager: RunningManager | undefined;
let work = '';
export let managerReadyz = '';

BeforeAll(async function () {
  client = await e2eClient();
  // The manager install-self put in the cluster acts; it was given its installer (real-node.sh).
  if (IN_CLUSTER !== undefined) {
    const deployment = await client.find({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: IN_CLUSTER, name: MANAGER_NAME });
    FEATURE_GATES.set('CatalogdHA', ((deployment?.spec as { replicas?: number } | undefined)?.replicas ?? 1) >= 2);
    return;
  }
  work = await mkdtemp(join(tmpdir(), 'olmv1-scenarios-'));
  await adminInstaller(client, INSTALLER_NS);
  // What upstream's e2e overlay mounts into operator-controller as /etc/containers/registries.conf
  // (config/components/e2e/registries-conf): the mirrored-registry name moved to the e2e registry
  // (install.feature's @mirrored-registry scenario).
  const registriesConf = join(work, 'registries.conf');
  await writeFile(registriesConf, `[[registry]]\nprefix = "mirrored-registry.operator-controller-e2e.svc.cluster.local:5000"\nlocation = "${e2eRegistry()}"\n`);
  process.env[REGISTRIES_CONF_ENV] = registriesConf;
  // operator-controller v1.11's behaviour, chosen explicitly: the deprecated spec.serviceAccount is
  // ignored and the cluster-admin installer acts (install.feature:565, update.feature:350; docs/trust-model.md).
  manager = await startE2eManager('olmv1-scenarios', client, work, { olmv1: { installer: { namespace: INSTALLER_NS, name: 'installer' }, serviceAccount: 'Ignore', objectSets: true } });
  managerReadyz = new URL('/readyz', manager.metricsUrl).href;
});

AfterAll(async function () {
  if (client === undefined) return;
  await stopE2e({ client, manager, work, remove: adminInstallerObjects(INSTALLER_NS) });
});

let counter = 0;
const RUN = Date.now().toString(36).slice(-4);

interface HookArg {
  pickle: { name: string; uri: string; tags: readonly { name: string }[]; astNodeIds: readonly string[] };
  gherkinDocument: { feature?: { children: readonly GherkinChild[] } };
}
interface GherkinChild {
  scenario?: { id: string; location: { line: number }; examples: readonly { tableBody: readonly { id: string; location: { line: number } }[] }[] };
  rule?: { children: readonly GherkinChild[] };
}

/** `feature:line` of the pickle's Scenario (a Scenario Outline's example row keeps the outline's line). */
function scenarioLine(arg: HookArg): string {
  const file = arg.pickle.uri.split('/').pop() ?? arg.pickle.uri;
  const id = arg.pickle.astNodeIds[0];
  const find = (children: readonly GherkinChild[]): number | undefined => {
    for (const c of children) {
      if (c.scenario !== undefined && c.scenario.id === id) return c.scenario.location.line;
      const inRule = c.rule === undefined ? undefined : find(c.rule.children);
      if (inRule !== undefined) return inRule;
    }
    return undefined;
  };
  return `${file}:${find(arg.gherkinDocument.feature?.children ?? []) ?? 0}`;
}

Before(function (this: ScenarioWorld, arg: HookArg) {
  const where = scenarioLine(arg);
  const reason = EXCLUDED.get(where);
  if (reason !== undefined) {
    this.log(`excluded (${where}): ${reason}`);
    return 'skipped';
  }
  const feature = (arg.pickle.uri.split('/').pop() ?? '').replace(/\.feature$/, '');
  if (IN_CLUSTER === undefined && IN_CLUSTER_FEATURES.has(feature)) {
    this.log(`skipped here: ${feature}.feature reaches the manager's Pods, so it runs with the manager in-cluster on a real node (test/olmv1-scenarios/real-node.sh)`);
    return 'skipped';
  }
  if (IN_CLUSTER === undefined && REAL_NODE_SCENARIOS.has(where)) {
    this.log(`skipped here: ${where} needs its workload to run (kwok's Pods are ready at once and run nothing), so it runs with the manager in-cluster on a real node (test/olmv1-scenarios/real-node.sh)`);
    return 'skipped';
  }
  // CheckFeatureTags
  for (const tag of arg.pickle.tags) {
    const enabled = FEATURE_GATES.get(tag.name.slice(1));
    if (enabled === false) {
      this.log(`skipped: feature gate ${tag.name.slice(1)} is disabled`);
      return 'skipped';
    }
  }
  // CreateScenarioContext: godog's ids are short; these are too, and unique to this run.
  this.id = `${RUN}${(counter++).toString(36)}`;
  this.featureName = (arg.pickle.uri.split('/').pop() ?? '').replace(/\.feature$/, '');
  this.scenarioName = arg.pickle.name;
  this.namespace = `ns-${this.id}`;
  this.clusterExtensionName = `ce-${this.id}`;
  this.clusterObjectSetName = `cos-${this.id}`;
  return undefined;
});

/**
 * ScenarioCleanup: what the scenario applied, its catalogs, then its namespace. Unlike hooks.go
 * (which keeps a failed scenario's objects for debugging), a failed scenario is cleaned up too
 * unless OLMV1_SCENARIOS_KEEP_FAILED=1: the cluster is shared.
 */
After(async function (this: ScenarioWorld, arg: { result?: { status: string } }) {
  if (this.id === '') return;
  if (arg.result?.status === Status.FAILED && process.env.OLMV1_SCENARIOS_KEEP_FAILED === '1') return;
  const forDeletion = [...this.addedResources, ...[...this.catalogs.values()].map((name) => ({ kind: 'clustercatalogs.olm.operatorframework.io', name, namespace: undefined })), { kind: 'namespace', name: this.namespace, namespace: undefined }];
  // The extensions first: their uninstall needs the manager and the namespace.
  const ces = forDeletion.filter((r) => r.kind === 'clusterextensions.olm.operatorframework.io');
  await Promise.all(ces.map((r) => kubectlRun(['delete', r.kind, r.name, '--ignore-not-found=true', '--timeout=180s'])));
  // Catalogs next, waited for: their finalizer needs the manager, which stops after the last scenario.
  const catalogs = forDeletion.filter((r) => r.kind === 'clustercatalogs.olm.operatorframework.io');
  await Promise.all(catalogs.map((r) => kubectlRun(['delete', r.kind, r.name, '--ignore-not-found=true', '--timeout=60s'])));
  const rest = forDeletion.filter((r) => r.kind !== 'clusterextensions.olm.operatorframework.io' && r.kind !== 'clustercatalogs.olm.operatorframework.io');
  for (let i = 0; i < rest.length; i += 8) {
    await Promise.all(rest.slice(i, i + 8).map((r) => kubectlRun(['delete', r.kind, r.name, '--ignore-not-found=true', '--wait=false', ...(r.namespace === undefined || r.namespace === '' ? [] : ['-n', r.namespace])])));
  }
});
