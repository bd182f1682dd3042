/**
 * upgrade_steps.go and ha_steps.go: a component ready to reconcile (its Deployment rolled out, its
 * leader-election Lease held, the leader Pod remembered), a resource reconciled by that leader (its
 * log says so; a catalog also unpacked since the leader Pod was made), the leader Pod force-deleted
 * and a new leader elected; and the upgrade suite's install and upgrade of OLM by script.
 *
 * Binnacle's one manager plays both of OLM v1's components: "catalogd" and "operator-controller"
 * both name its Deployment (label `app.kubernetes.io/name=binnacle`, in the namespace install-self
 * put it in) and its Lease (`binnacle-manager`, holder `<pod>_<pid>`, the Pod name first as
 * controller-runtime's `<pod>_<uuid>`). Where OLM v1's reconcilers log `reconcile ending`, Binnacle's
 * controllers log `reconciled` with the object's key at debug level: the scenarios' manager runs at
 * that level (real-node.sh: `install-self --log-level debug`). They need the manager in-cluster
 * (OLMV1_SCENARIOS_IN_CLUSTER); ha.feature runs only with two manager Pods or more (hooks.ts).
 */
import { spawn } from 'node:child_process';
import { Given, Then, When } from '@cucumber/cucumber';
import { LEADER_LEASE_NAME } from '../../src/kube/leader-election.js';
import { SELF_LABELS } from '../../src/self/manifests.js';
import { IN_CLUSTER, k8s, kubectlRun, STEP_TIMEOUT_MS, waitFor, type ScenarioWorld } from './world.js';

/** leaseNames (upgrade_steps.go:21): both components are Binnacle's manager. */
const LEASE_NAMES = new Map([
  ['catalogd', LEADER_LEASE_NAME],
  ['operator-controller', LEADER_LEASE_NAME],
]);

/** resourceTypeToComponent (upgrade_steps.go:125), with the OLM v1 group kubectl needs beside binnacle.dev's kinds of the same names. */
const RESOURCE_TYPES = new Map([
  ['ClusterCatalog', { component: 'catalogd', resource: 'clustercatalogs.olm.operatorframework.io' }],
  ['ClusterExtension', { component: 'operator-controller', resource: 'clusterextensions.olm.operatorframework.io' }],
]);

/** namespaceForComponent (steps.go:244): the namespace install-self put the manager in. */
function namespaceForComponent(component: string): string {
  if (!LEASE_NAMES.has(component)) throw new Error(`no lease name for component: ${component}`);
  if (IN_CLUSTER === undefined) throw new Error(`"${component}" is a Pod of the manager in-cluster: set OLMV1_SCENARIOS_IN_CLUSTER (test/olmv1-scenarios/real-node.sh does)`);
  return IN_CLUSTER;
}

/** A Go duration for kubectl's --timeout. */
const timeoutArg = (): string => `--timeout=${Math.ceil(STEP_TIMEOUT_MS / 1000)}s`;

/** ComponentIsReadyToReconcile (upgrade_steps.go:83). */
async function componentIsReadyToReconcile(w: ScenarioWorld, component: string): Promise<void> {
  const ns = namespaceForComponent(component);
  const selector = `app.kubernetes.io/name=${SELF_LABELS['app.kubernetes.io/name']}`;
  const found = await kubectlRun(['get', 'deployments', '-n', ns, '-l', selector, '-o', 'jsonpath={.items[0].metadata.name}']);
  if (found.code !== 0) throw new Error(`failed to find deployment for component ${component} in namespace ${ns}: ${found.stderr.trim()}`);
  const depName = found.stdout.trim();
  if (depName === '') throw new Error(`failed to find deployment for component ${component} in namespace ${ns}: no matching deployments found`);
  const rollout = await kubectlRun(['rollout', 'status', `deployment/${depName}`, '-n', ns, timeoutArg()]);
  if (rollout.code !== 0) throw new Error(`deployment rollout failed for ${component}: ${rollout.stderr.trim()}`);
  const leaseName = LEASE_NAMES.get(component) ?? '';
  let holder = '';
  await waitFor(`Lease ${ns}/${leaseName} held by a Pod that is there and not terminating`, async () => {
    const r = await kubectlRun(['get', 'lease', leaseName, '-n', ns, '-o', 'jsonpath={.spec.holderIdentity}']);
    if (r.code !== 0 || r.stdout === '') return false;
    holder = r.stdout;
    const pod = holder.split('_')[0] ?? '';
    // More than the Go step waits for: right after a rollout the Lease may still name a Pod being
    // replaced (a leader releases it once its controllers have drained), whose logs the next steps
    // would read; the holder is taken once it is a Pod that is there and not terminating.
    const p = await kubectlRun(['get', 'pod', pod, '-n', ns, '-o', 'jsonpath={.metadata.deletionTimestamp}']);
    if (p.code !== 0 || p.stdout.trim() !== '') return false;
    w.leaderPods.set(component, pod);
    return true;
  }, () => holder);
}

/** reconcileEndingCheck (upgrade_steps.go:132): the leader Pod's last 1000 log lines have a reconcile of `resourceName` ending. */
function reconcileEndingCheck(namespace: string, leaderPod: string, resourceName: string): () => Promise<boolean> {
  return async () => {
    const r = await kubectlRun(['logs', leaderPod, '-n', namespace, '--all-containers=true', '--tail=1000']);
    if (r.code !== 0) return false;
    // A leader's controller: a follower's (clustercatalog-follower) reconciles are not the leader's, as only a leader's reconciler logs upstream's line.
    return r.stdout.split('\n').some((line) => line.includes('"msg":"reconciled"') && line.includes(`"key":${JSON.stringify(resourceName)}`) && !/"controller":"[^"]*-follower"/.test(line));
  };
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

/** clusterCatalogUnpackedAfterPodCreation (upgrade_steps.go:174): Serving/Available, Progressing/Succeeded, and unpacked after the leader Pod was made. */
function clusterCatalogUnpackedAfterPodCreation(namespace: string, resourceName: string, leaderPod: string): () => Promise<boolean> {
  return async () => {
    const c = await kubectlRun(['get', 'clustercatalogs.olm.operatorframework.io', resourceName, '-o', 'json']);
    if (c.code !== 0) return false;
    const catalog = JSON.parse(c.stdout) as { status?: { conditions?: Condition[]; lastUnpacked?: string } };
    const cond = (type: string): Condition | undefined => catalog.status?.conditions?.find((x) => x.type === type);
    if (cond('Serving')?.status !== 'True' || cond('Serving')?.reason !== 'Available') return false;
    // ReasonSucceeded with status True, as Go's check says (OLM v1 reports Progressing True/Succeeded while it polls).
    if (cond('Progressing')?.status !== 'True' || cond('Progressing')?.reason !== 'Succeeded') return false;
    if (catalog.status?.lastUnpacked === undefined) return false;
    const p = await kubectlRun(['get', 'pod', leaderPod, '-n', namespace, '-o', 'json']);
    if (p.code !== 0) return false;
    const pod = JSON.parse(p.stdout) as { metadata?: { creationTimestamp?: string } };
    return Date.parse(catalog.status.lastUnpacked) > Date.parse(pod.metadata?.creationTimestamp ?? '');
  };
}

/** LatestStableOLMReleaseIsInstalled / OLMIsUpgraded (upgrade_steps.go:46, :77) run the script an environment variable names, once per run (sync.OnceValue). */
const scriptRuns = new Map<string, Promise<void>>();
function runInstallScriptOnce(envVar: string): Promise<void> {
  let run = scriptRuns.get(envVar);
  if (run === undefined) scriptRuns.set(envVar, (run = runInstallScript(envVar)));
  return run;
}

/** runInstallScript (upgrade_steps.go:51): a URL piped to bash, or a file run by bash, in ROOT_DIR with the scenarios' KUBECONFIG. */
function runInstallScript(envVar: string): Promise<void> {
  const scriptPath = process.env[envVar];
  if (scriptPath === undefined) return Promise.reject(new Error(`missing ${envVar} env variable`));
  if (scriptPath === '') return Promise.reject(new Error(`${envVar} environment variable must contain install script location`));
  const dir = process.env.ROOT_DIR ?? '';
  if (dir === '') return Promise.reject(new Error('ROOT_DIR environment variable not set'));
  const isUrl = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(scriptPath);
  const args = isUrl ? ['-c', `curl -L -s ${scriptPath} | bash -s`] : [scriptPath];
  return new Promise((resolve, reject) => {
    const child = spawn('bash', args, { cwd: dir, env: { ...process.env, KUBECONFIG: process.env.BINNACLE_E2E_KUBECONFIG }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bash ${args.join(' ')}: exit status ${String(code)}`))));
  });
}

/** LatestStableOLMReleaseIsInstalled (upgrade_steps.go:46): $RELEASE_INSTALL, once. */
Given(/^the latest stable OLM release is installed$/i, function () {
  return runInstallScriptOnce('RELEASE_INSTALL');
});

/** OLMIsUpgraded (upgrade_steps.go:77): $RELEASE_UPGRADE, once. */
When(/^OLM is upgraded$/i, function () {
  return runInstallScriptOnce('RELEASE_UPGRADE');
});

/** ComponentIsReadyToReconcile (upgrade_steps.go:83). */
Given(/^(catalogd|operator-controller) is ready to reconcile resources$/i, async function (this: ScenarioWorld, component: string) {
  await componentIsReadyToReconcile(this, component);
});

/** allResourcesAreReconciled (upgrade_steps.go:209): every object of the kind, in the leader's log. */
Then(/^all (ClusterCatalog|ClusterExtension) resources are reconciled$/i, async function (this: ScenarioWorld, resourceType: string) {
  const t = RESOURCE_TYPES.get(resourceType);
  if (t === undefined) throw new Error(`unknown resource type: ${resourceType}`);
  const leaderPod = this.leaderPods.get(t.component);
  if (leaderPod === undefined) throw new Error(`leader pod not found for component ${t.component}; run '${t.component} is ready to reconcile resources' first`);
  const names = (await k8s('get', t.resource, '-o', 'jsonpath={.items[*].metadata.name}')).split(/\s+/).filter((n) => n !== '');
  if (names.length === 0) throw new Error(`no ${resourceType} resources found`);
  const ns = namespaceForComponent(t.component);
  for (const name of names) await waitFor(`${leaderPod} logged a reconcile of ${name} ending`, reconcileEndingCheck(ns, leaderPod, name));
});

/** ClusterExtensionIsReconciled (upgrade_steps.go:150). */
Then(/^ClusterExtension is reconciled$/i, async function (this: ScenarioWorld) {
  const component = 'operator-controller';
  if (this.clusterExtensionName === '') throw new Error('no ClusterExtension found in scenario context');
  await componentIsReadyToReconcile(this, component);
  const leaderPod = this.leaderPods.get(component) ?? '';
  await waitFor(`${leaderPod} logged a reconcile of ${this.clusterExtensionName} ending`, reconcileEndingCheck(namespaceForComponent(component), leaderPod, this.clusterExtensionName));
});

/** ScenarioCatalogIsReconciled (upgrade_steps.go:242). */
Then(/^catalog "([^"]+)" is reconciled$/i, async function (this: ScenarioWorld, catalogUserName: string) {
  const catalogName = this.catalogs.get(catalogUserName);
  if (catalogName === undefined) throw new Error(`no catalog "${catalogUserName}" has been created for this scenario`);
  const component = 'catalogd';
  await componentIsReadyToReconcile(this, component);
  const leaderPod = this.leaderPods.get(component);
  if (leaderPod === undefined) throw new Error(`leader pod not found for component ${component}`);
  const ns = namespaceForComponent(component);
  await waitFor(`${leaderPod} logged a reconcile of ${catalogName} ending`, reconcileEndingCheck(ns, leaderPod, catalogName));
  // As upstream: unpacked after the leader Pod was made (operator-controller#1626).
  await waitFor(`catalog ${catalogName} serving, unpacked after Pod ${leaderPod} was made`, clusterCatalogUnpackedAfterPodCreation(ns, catalogName, leaderPod));
});

/** CatalogdLeaderPodIsForceDeleted (ha_steps.go:26). */
When(/^the catalogd leader pod is force-deleted$/i, async function (this: ScenarioWorld) {
  const leaderPod = this.leaderPods.get('catalogd') ?? '';
  if (leaderPod === '') throw new Error("catalogd leader pod not found in scenario context; run 'catalogd is ready to reconcile resources' first");
  this.log(`Force-deleting catalogd leader pod ${leaderPod}`);
  const r = await kubectlRun(['delete', 'pod', leaderPod, '-n', namespaceForComponent('catalogd'), '--force', '--grace-period=0']);
  if (r.code !== 0) throw new Error(`failed to force-delete catalogd leader pod "${leaderPod}": ${r.stderr.trim()}`);
});

/** NewCatalogdLeaderIsElected (ha_steps.go:44): the Lease names another Pod. */
Then(/^a new catalogd leader is elected$/i, async function (this: ScenarioWorld) {
  const oldLeader = this.leaderPods.get('catalogd');
  let holder = '';
  await waitFor(`a catalogd leader other than ${oldLeader ?? '(none)'}`, async () => {
    const r = await kubectlRun(['get', 'lease', LEASE_NAMES.get('catalogd') ?? '', '-n', namespaceForComponent('catalogd'), '-o', 'jsonpath={.spec.holderIdentity}']);
    if (r.code !== 0 || r.stdout === '') return false;
    holder = r.stdout.trim();
    const newPod = holder.split('_')[0] ?? '';
    if (newPod === oldLeader) return false;
    this.leaderPods.set('catalogd', newPod);
    this.log(`New catalogd leader elected: ${newPod}`);
    return true;
  }, () => holder);
});
