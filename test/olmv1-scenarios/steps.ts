/**
 * Step definitions: operator-controller v1.11.0's test/e2e/steps (steps.go, demo_steps.go,
 * upgrade_steps.go) in TypeScript, same patterns (case-insensitive, as `(?i)`), same kubectl
 * calls, same waits (E2E_STEP_TIMEOUT, 1 s tick) and the same assertions. STEPS.md maps each Go
 * step to its definition here. Steps not written yet are left undefined so cucumber reports them.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Given, Then, When, type DataTable } from '@cucumber/cucumber';
import { parse as parseYaml, stringify } from 'yaml';
import { e2eRegistry } from '../e2e/env.js';
import { buildCatalog, parseCatalogTable, tagImage } from './catalog.js';
import { FEATURE_GATES, managerReadyz } from './hooks.js';
import { expand, IN_CLUSTER, k8s, kubectlRun, waitFor, type ScenarioWorld } from './world.js';
import { MANAGER_NAME } from '../../src/self/manifests.js';

const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'vendor', 'operator-controller-v1.11.0');
/** steps.go's `testdata` folder (its templates), vendored. */
const STEPS_TESTDATA = join(PROJECT_ROOT, 'test', 'e2e', 'steps', 'testdata');
const CLUSTER_OBJECT_SETS = 'clusterobjectsets.olm.operatorframework.io';

type Obj = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string>; creationTimestamp?: string; generation?: number; uid?: string } };
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

function toObject(text: string): Obj {
  const v = parseYaml(text) as unknown;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`not an object: ${text.slice(0, 200)}`);
  return v as Obj;
}

function kindName(w: ScenarioWorld, resource: string): [string, string] {
  const r = w.substitute(resource);
  const i = r.indexOf('/');
  if (i < 0) throw new Error(`resource ${r} is not in the format <kind>/<name>`);
  return [r.slice(0, i), r.slice(i + 1)];
}

/** injectTestAnnotations + yaml.Marshal. */
function annotated(w: ScenarioWorld, obj: Obj): string {
  obj.metadata ??= {};
  obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), 'e2e.olm.operatorframework.io/feature': w.featureName, 'e2e.olm.operatorframework.io/scenario': w.scenarioName };
  return stringify(obj);
}

/** What ResourceIsApplied records for cleanup. */
function track(w: ScenarioWorld, obj: Obj): void {
  const name = obj.metadata?.name ?? '';
  if (obj.kind === 'ClusterExtension') w.addedResources.push({ name, kind: 'clusterextensions.olm.operatorframework.io' });
  else if (obj.kind === 'ClusterObjectSet') {
    w.clusterObjectSetName = name;
    w.addedResources.push({ name, kind: 'clusterobjectset' });
  } else w.addedResources.push({ name, kind: (obj.kind ?? '').toLowerCase(), namespace: obj.metadata?.namespace ?? w.namespace });
}

/** ResourceIsApplied (steps.go:614). */
async function resourceIsApplied(this: ScenarioWorld, doc: string): Promise<void> {
  const obj = toObject(this.substitute(doc));
  const r = await kubectlRun(['apply', '-f', '-'], annotated(this, obj));
  if (r.code !== 0) throw new Error(`failed to apply resource ${r.stdout}; exit ${r.code}; stderr: ${r.stderr}`);
  this.lastApplyStderr = r.stderr;
  track(this, obj);
}

// --- environment ---

/** OLMisAvailable (steps.go:351): operator-controller's Deployment Available; here, the manager's readiness. */
Given(/^OLM is available$/, async function () {
  let last = '';
  const inCluster = IN_CLUSTER;
  if (inCluster !== undefined) {
    // OLMisAvailable (steps.go:351): the manager's Deployment reports Available.
    await waitFor(`deployment ${inCluster}/${MANAGER_NAME} Available`, async () => {
      const r = await kubectlRun(['get', 'deployment', '-n', inCluster, MANAGER_NAME, '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}']);
      last = r.code === 0 ? r.stdout : r.stderr;
      return r.code === 0 && r.stdout === 'True';
    }, () => last);
    return;
  }
  await waitFor('the Binnacle manager is ready (/readyz 200)', async () => {
    const res = await fetch(managerReadyz);
    last = `${res.status}`;
    await res.body?.cancel();
    return res.status === 200;
  }, () => last);
});

/** ImageRegistryIsAvailable (steps.go:346): deploys a registry on kind only; here the loopback registry must answer /v2/. */
Given(/^an image registry is available$/i, async function () {
  await waitFor(`the registry ${e2eRegistry()} answers /v2/`, async () => {
    const res = await fetch(`http://${e2eRegistry()}/v2/`);
    await res.body?.cancel();
    return res.status === 200;
  });
});

/** NamespaceIsAvailable (steps.go:1526): applies namespace-template.yaml. */
Given(/^namespace "([^"]*)" is available$/i, async function (this: ScenarioWorld, ns: string) {
  const name = this.substitute(ns);
  const r = await kubectlRun(['apply', '-f', '-'], `---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`);
  if (r.code !== 0) throw new Error(`failed to apply namespace ${name}: ${r.stderr}`);
});

/** templateYaml (steps.go:2082): a steps testdata template through templateContent (os.Expand; an unknown name stays `${name}`). */
async function templateYaml(template: string, values: ReadonlyMap<string, string>): Promise<string> {
  const path = join(STEPS_TESTDATA, template);
  let content: string;
  try {
    content = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`failed to read template file '${path}': ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return expand(content, (k) => values.get(k) ?? `\${${k}}`);
}

/** applyServiceAccount (steps.go:1457): serviceaccount-template.yaml (the test namespace and the ServiceAccount); `extra` as extendMap's key/values. */
async function applyServiceAccount(w: ScenarioWorld, serviceAccount: string, extra: readonly [string, string][] = []): Promise<void> {
  const vars = new Map<string, string>([['TEST_NAMESPACE', w.namespace], ['SERVICE_ACCOUNT_NAME', serviceAccount], ['SERVICEACCOUNT_NAME', serviceAccount], ...extra]);
  let yaml: string;
  try {
    yaml = await templateYaml('serviceaccount-template.yaml', vars);
  } catch (err) {
    throw new Error(`failed to template ServiceAccount yaml: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const r = await kubectlRun(['apply', '-f', '-'], yaml);
  if (r.code !== 0) throw new Error(`failed to apply ServiceAccount configuration: exit ${r.code}: ${r.stderr}`);
}

/**
 * applyPermissionsToServiceAccount (steps.go:1481): the ServiceAccount, then the RBAC template
 * applied as it is (no test annotations); its ClusterRoles and ClusterRoleBindings are recorded
 * for cleanup (the namespaced ones go with the test namespace), as Go does.
 */
export async function applyPermissionsToServiceAccount(w: ScenarioWorld, serviceAccount: string, rbacTemplate: string, extra: readonly [string, string][] = []): Promise<void> {
  await applyServiceAccount(w, serviceAccount);
  const vars = new Map<string, string>([
    ['TEST_NAMESPACE', w.namespace],
    ['SERVICE_ACCOUNT_NAME', serviceAccount],
    ['SERVICEACCOUNT_NAME', serviceAccount],
    ['CLUSTER_EXTENSION_NAME', w.clusterExtensionName],
    ['CLUSTEREXTENSION_NAME', w.clusterExtensionName],
    ...extra,
  ]);
  let rbacYaml: string;
  try {
    rbacYaml = await templateYaml(rbacTemplate, vars);
  } catch (err) {
    throw new Error(`failed to template RBAC yaml: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const r = await kubectlRun(['apply', '-f', '-'], rbacYaml);
  if (r.code !== 0) throw new Error(`failed to apply RBAC configuration: exit ${r.code}: ${r.stderr}`);
  // Go splits on "---" as text and skips what does not parse.
  for (const part of rbacYaml.split('---')) {
    const doc = part.trim();
    if (doc === '') continue;
    let res: Obj;
    try {
      res = toObject(doc);
    } catch {
      continue;
    }
    if (res.kind === 'ClusterRole' || res.kind === 'ClusterRoleBinding') w.addedResources.push({ name: res.metadata?.name ?? '', kind: res.kind.toLowerCase() });
  }
}

/**
 * ServiceAccountWithNeededPermissionsIsAvailableInTestNamespace (steps.go:1549): the RBAC template
 * is `<sa>-<helm|boxcutter>-rbac-template.yaml`, boxcutter when the BoxcutterRuntime gate is on.
 * The name is used as written (Go does not substitute it).
 */
Given(/^ServiceAccount "([^"]*)" with needed permissions is available in test namespace$/i, async function (this: ScenarioWorld, serviceAccount: string) {
  const kernel = FEATURE_GATES.get('BoxcutterRuntime') === true ? 'boxcutter' : 'helm';
  await applyPermissionsToServiceAccount(this, serviceAccount, `${serviceAccount}-${kernel}-rbac-template.yaml`);
});

/** ServiceAccountIsAvailableInNamespace (steps.go:1543; upstream's upgrade-e2e only). */
Given(/^ServiceAccount "([^"]*)" is available in test namespace$/i, async function (this: ScenarioWorld, serviceAccount: string) {
  await applyServiceAccount(this, serviceAccount);
});

/**
 * ServiceAccountWithNeededPermissionsIsAvailableInGivenNamespace (steps.go:1559; upgrade-e2e
 * only): the namespace (substituted) recorded for cleanup, the ServiceAccount made there, and
 * rbac-template-for-all-extensions.yaml for it. As Go, applyPermissionsToServiceAccount first
 * applies the ServiceAccount in the test namespace too.
 */
Given(/^ServiceAccount "([^"]*)" with permissions to install extensions is available in "([^"]*)" namespace$/i, async function (this: ScenarioWorld, serviceAccount: string, namespace: string) {
  const ns = this.substitute(namespace);
  this.addedResources.push({ name: ns, kind: 'namespace', namespace: undefined });
  await applyServiceAccount(this, serviceAccount, [['TEST_NAMESPACE', ns]]);
  await applyPermissionsToServiceAccount(this, serviceAccount, 'rbac-template-for-all-extensions.yaml', [['TEST_NAMESPACE', ns]]);
});

/** ServiceAccountWithClusterAdminPermissionsIsAvailableInNamespace (steps.go:1570; upgrade-e2e only). */
Given(/^ServiceAccount "([^"]*)" in test namespace is cluster admin$/i, async function (this: ScenarioWorld, serviceAccount: string) {
  await applyPermissionsToServiceAccount(this, serviceAccount, 'cluster-admin-rbac-template.yaml');
});

// --- catalogs ---

const CLUSTER_CATALOG = (name: string, ref: string): Obj => ({ apiVersion: 'olm.operatorframework.io/v1', kind: 'ClusterCatalog', metadata: { name }, spec: { priority: 0, source: { type: 'Image', image: { pollIntervalMinutes: 1, ref } } } });

/** CatalogWithPackages (steps.go:1872). */
Given(/^a catalog "([^"]+)" with packages:$/i, async function (this: ScenarioWorld, name: string, table: DataTable) {
  const result = await buildCatalog(name, this.id, parseCatalogTable(table.raw(), PROJECT_ROOT), 'v1', e2eRegistry());
  this.catalogs.set(name, result.catalogName);
  for (const [k, v] of result.packageNames) this.catalogPackageNames.set(k, v);
  const r = await kubectlRun(['apply', '-f', '-'], annotated(this, CLUSTER_CATALOG(result.catalogName, result.catalogImageRef)));
  if (r.code !== 0) throw new Error(`failed to apply ClusterCatalog: ${r.stderr}`);
});

/** CatalogVersionWithPackages (steps.go:1716): another tag of the catalog image, the ClusterCatalog untouched. */
Given(/^catalog "([^"]+)" version "([^"]+)" with packages:$/i, async function (this: ScenarioWorld, name: string, version: string, table: DataTable) {
  const result = await buildCatalog(name, this.id, parseCatalogTable(table.raw(), PROJECT_ROOT), version, e2eRegistry());
  for (const [k, v] of result.packageNames) this.catalogPackageNames.set(k, v);
});

function scenarioCatalog(w: ScenarioWorld, name: string): string {
  const c = w.catalogs.get(name);
  if (c === undefined) throw new Error(`no catalog "${name}" has been created for this scenario`);
  return c;
}

/** ScenarioCatalogIsUpdatedToVersion (steps.go:1744). */
When(/^catalog "([^"]+)" is updated to version "([^"]+)"$/i, async function (this: ScenarioWorld, name: string, version: string) {
  const catalog = scenarioCatalog(this, name);
  const ref = await k8s('get', 'clustercatalogs.olm.operatorframework.io', catalog, '-o', 'jsonpath={.spec.source.image.ref}');
  const i = ref.lastIndexOf(':');
  if (i < 0) throw new Error(`failed to find tag in image reference ${ref}`);
  await k8s('patch', 'clustercatalogs.olm.operatorframework.io', catalog, '--type', 'merge', '-p', JSON.stringify({ spec: { source: { image: { ref: `${ref.slice(0, i)}:${version}` } } } }));
});

/** ScenarioCatalogTagImage (steps.go:1777): crane.Tag. */
When(/^catalog "([^"]+)" image version "([^"]+)" is also tagged as "([^"]+)"$/i, async function (this: ScenarioWorld, name: string, oldTag: string, newTag: string) {
  await tagImage(`${e2eRegistry()}/e2e/${name}-catalog-${this.id}:${oldTag}`, newTag);
});

/** ScenarioCatalogIsDeleted (steps.go:1669). */
When(/^catalog "([^"]+)" is deleted$/i, async function (this: ScenarioWorld, name: string) {
  const catalog = scenarioCatalog(this, name);
  const r = await kubectlRun(['delete', 'clustercatalogs.olm.operatorframework.io', catalog, '--ignore-not-found=true', '--wait=true']);
  if (r.code !== 0) throw new Error(`failed to delete catalog "${name}": ${r.stderr}`);
});

/** CatalogIsLabeledWith (steps.go:1682). */
Given(/^catalog "([^"]+)" is labeled with "([^"]+)"$/i, async function (this: ScenarioWorld, name: string, label: string) {
  const catalog = scenarioCatalog(this, name);
  const r = await kubectlRun(['label', 'clustercatalogs.olm.operatorframework.io', catalog, label, '--overwrite']);
  if (r.code !== 0) throw new Error(`failed to label catalog "${name}" with "${label}": ${r.stderr}`);
});

/** A scenario catalog, or (demo/upgrade steps) a catalog of that name on the cluster. */
export async function anyCatalog(w: ScenarioWorld, name: string): Promise<string> {
  const c = w.catalogs.get(name);
  if (c !== undefined) return c;
  if ((await kubectlRun(['get', 'clustercatalogs.olm.operatorframework.io', name])).code !== 0) throw new Error(`catalog "${name}" was not created by this scenario and does not exist on the cluster`);
  return name;
}

/** ScenarioCatalogReportsCondition (upgrade_steps.go:269). */
Then(/^catalog "([^"]+)" reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+)$/i, async function (this: ScenarioWorld, name: string, type: string, status: string, reason: string) {
  await waitForCondition('clustercatalogs.olm.operatorframework.io', await anyCatalog(this, name), type, status, reason, undefined);
});

/** CatalogReportsConditionWithoutReason (demo_steps.go:53). */
Then(/^catalog "([^"]+)" reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+)$/i, async function (this: ScenarioWorld, name: string, type: string, status: string) {
  await waitForCondition('clustercatalogs.olm.operatorframework.io', await anyCatalog(this, name), type, status, undefined, undefined);
});

// --- applying ---

When(/^ClusterExtension is applied(?:\s+.*)?$/i, resourceIsApplied);
When(/^ClusterExtension is updated(?:\s+.*)?$/i, resourceIsApplied);
When(/^ClusterObjectSet is applied(?:\s+.*)?$/i, resourceIsApplied);
When(/^resource is applied$/i, resourceIsApplied);
When(/^namespace is applied$/i, resourceIsApplied);

/** ClusterExtensionVersionUpdate (steps.go:576). */
When(/^ClusterExtension version is updated to "([^"]+)"$/i, async function (this: ScenarioWorld, version: string) {
  await k8s('patch', 'clusterextensions.olm.operatorframework.io', this.clusterExtensionName, '--type', 'merge', '-p', JSON.stringify({ spec: { source: { catalog: { version } } } }));
});

/** ResourceApplyFails (steps.go:421): retried until apply fails with the message. */
Then(/^resource apply fails with error msg containing "([^"]+)"$/i, async function (this: ScenarioWorld, msg: string, doc: string) {
  const content = this.substitute(doc);
  toObject(content);
  let last = '';
  await waitFor(`apply fails with "${msg}"`, async () => {
    const r = await kubectlRun(['apply', '-f', '-'], content);
    last = r.code === 0 ? 'apply succeeded' : r.stderr;
    return r.code !== 0 && r.stderr.includes(msg);
  }, () => last);
});

/** ResourceIsAppliedAsUser (steps.go:442). */
When(/^resource is applied as user "([^"]+)" in group "([^"]+)"$/i, async function (this: ScenarioWorld, user: string, group: string, doc: string) {
  const obj = toObject(this.substitute(doc));
  const r = await kubectlRun(['apply', '-f', '-', `--as=${user}`, `--as-group=${group}`], annotated(this, obj));
  if (r.code !== 0) throw new Error(`failed to apply resource as ${user}/${group}: ${r.stdout}; stderr: ${r.stderr}`);
  this.lastApplyStderr = r.stderr;
  if (obj.kind === 'ClusterExtension') this.addedResources.push({ name: obj.metadata?.name ?? '', kind: 'clusterextensions.olm.operatorframework.io' });
  else this.addedResources.push({ name: obj.metadata?.name ?? '', kind: (obj.kind ?? '').toLowerCase(), namespace: obj.metadata?.namespace ?? this.namespace });
});

/** ResourceApplyAsUserFails (steps.go:480): denied on a server dry run, then a real apply denied too. */
Then(/^resource apply as user "([^"]+)" in group "([^"]+)" fails with error msg containing "([^"]+)"$/i, async function (this: ScenarioWorld, user: string, group: string, msg: string, doc: string) {
  const content = this.substitute(doc);
  const obj = toObject(content);
  let last = '';
  await waitFor(`dry-run apply as ${user} denied with "${msg}"`, async () => {
    const r = await kubectlRun(['apply', '--dry-run=server', '-f', '-', `--as=${user}`, `--as-group=${group}`], content);
    last = r.code === 0 ? 'dry run succeeded' : r.stderr;
    return r.code !== 0 && r.stderr.includes(msg);
  }, () => last);
  const r = await kubectlRun(['apply', '-f', '-', `--as=${user}`, `--as-group=${group}`], content);
  if (r.code === 0) {
    this.addedResources.push({ name: obj.metadata?.name ?? '', kind: (obj.kind ?? '').toLowerCase() });
    throw new Error(`expected apply to fail with "${msg}", but it succeeded`);
  }
  if (!r.stderr.includes(msg)) throw new Error(`expected apply error containing "${msg}", got: ${r.stderr}`);
});

/** ResourceApplyEmitsWarning (steps.go:512). */
Then(/^\w+ apply emits warning:$/i, function (this: ScenarioWorld, doc: string) {
  const expected = doc.trim();
  if (!this.lastApplyStderr.includes(expected)) throw new Error(`expected apply warning ${JSON.stringify(expected)}, got stderr: ${JSON.stringify(this.lastApplyStderr)}`);
});

/** ResourceApplyDoesNotEmitWarning (steps.go:521). */
Then(/^\w+ apply does not emit warning$/i, function (this: ScenarioWorld) {
  if (this.lastApplyStderr.includes('Warning:')) throw new Error(`expected no warnings, got stderr: ${JSON.stringify(this.lastApplyStderr)}`);
});

/** ValidatingAdmissionPolicyIsActive (steps.go:1698). */
Given(/^ValidatingAdmissionPolicy "([^"]+)" is active$/i, async function (this: ScenarioWorld, name: string) {
  const vap = this.substitute(name);
  let last = '';
  await waitFor(`ValidatingAdmissionPolicy ${vap} observed its generation`, async () => {
    last = await k8s('get', 'validatingadmissionpolicy', vap, '-o', 'jsonpath={.metadata.generation},{.status.observedGeneration}');
    const [g, o] = last.split(',');
    return g !== undefined && o !== undefined && g !== '' && o !== '' && g === o;
  }, () => last);
});

// --- ClusterExtension status ---

async function conditionOf(kind: string, name: string, type: string): Promise<Condition | undefined> {
  const out = await k8s('get', kind, name, '-o', `jsonpath={.status.conditions[?(@.type=="${type}")]}`);
  return out.trim() === '' ? undefined : (JSON.parse(out) as Condition);
}

/** waitForCondition (steps.go): status, then reason and message when given. */
async function waitForCondition(kind: string, name: string, type: string, status: string, reason: string | undefined, msg: ((m: string) => boolean) | undefined): Promise<void> {
  let last: Condition | undefined;
  await waitFor(`${kind} ${name} ${type}=${status}${reason === undefined ? '' : ` reason ${reason}`}${msg === undefined ? '' : ' with the message'}`, async () => {
    last = await conditionOf(kind, name, type);
    if (last === undefined || last.status !== status) return false;
    if (reason !== undefined && last.reason !== reason) return false;
    return msg === undefined || msg(last.message ?? '');
  }, () => JSON.stringify(last));
}

const collapse = (s: string): string => s.split(/\s+/).filter((x) => x !== '').join(' ');
/** messageComparison: the whole message, the doc string's whitespace collapsed. */
const exactly = (w: ScenarioWorld, doc: string) => {
  const expected = w.substitute(collapse(doc));
  return (m: string): boolean => m === expected;
};
/** messageFragmentComparison: a fragment, whitespace collapsed on both sides. */
const containing = (w: ScenarioWorld, doc: string) => {
  const expected = w.substitute(collapse(doc));
  return (m: string): boolean => collapse(m).includes(expected);
};

/** ClusterExtensionIsAvailable (steps.go:651): Installed=True. */
Then(/^ClusterExtension is available$/i, async function (this: ScenarioWorld) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.clusterExtensionName, 'Installed', 'True', undefined, undefined);
});

/**
 * ClusterExtensionIsRolledOut (steps.go:697): Progressing=True/Succeeded, then the installed
 * objects gathered. operator-controller reads them from its Helm release Secret; Binnacle's
 * inventory is the twin's BundleDeployment (`status.appliedObjects`).
 */
Then(/^ClusterExtension is rolled out$/i, async function (this: ScenarioWorld) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.clusterExtensionName, 'Progressing', 'True', 'Succeeded', undefined);
  const list = JSON.parse(await k8s('get', 'bundledeployments.binnacle.dev', '-l', `needed-by.binnacle.dev/${this.clusterExtensionName}`, '-o', 'json')) as { items: { status?: { appliedObjects?: { apiVersion: string; kind: string; name: string; namespace?: string }[] } }[] };
  if (list.items.length !== 1) throw new Error(`failed to find the installed release of ${this.clusterExtensionName}: ${list.items.length} BundleDeployments`);
  const objs = list.items[0]?.status?.appliedObjects ?? [];
  if (objs.length === 0) throw new Error(`the installed release of ${this.clusterExtensionName} lists no objects`);
  this.extensionObjects = objs;
});

/** BundleInstalled (steps.go:368). */
Then(/^bundle "([^"]+)" is installed in version "([^"]+)"$/i, async function (this: ScenarioWorld, nameIn: string, version: string) {
  const name = this.substitute(nameIn);
  let last = '';
  await waitFor(`status.install.bundle = ${name} ${version}`, async () => {
    last = await k8s('get', 'clusterextensions.olm.operatorframework.io', this.clusterExtensionName, '-o', 'jsonpath={.status.install.bundle}');
    const b = JSON.parse(last) as { name?: string; version?: string };
    return b.name === name && b.version === version;
  }, () => last);
});

/** ClusterExtensionReconciledLatestGeneration (steps.go:676). */
Then(/^ClusterExtension (?:latest generation )?has (?:been )?reconciled(?: the latest generation)?$/i, async function (this: ScenarioWorld) {
  let last = '';
  await waitFor('Progressing observedGeneration = metadata.generation', async () => {
    last = await k8s('get', 'clusterextensions.olm.operatorframework.io', this.clusterExtensionName, '-o', "jsonpath={.metadata.generation},{.status.conditions[?(@.type=='Progressing')].observedGeneration}");
    const [g, o] = last.split(',');
    return g !== undefined && o !== undefined && g !== '' && o !== '' && g === o;
  }, () => last);
});

Then(/^ClusterExtension reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+) and Message:$/i, async function (this: ScenarioWorld, type: string, status: string, reason: string, doc: string) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.clusterExtensionName, type, status, reason, exactly(this, doc));
});
Then(/^ClusterExtension reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+) and Message includes:$/i, async function (this: ScenarioWorld, type: string, status: string, reason: string, doc: string) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.clusterExtensionName, type, status, reason, containing(this, doc));
});
Then(/^ClusterExtension reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+)$/i, async function (this: ScenarioWorld, type: string, status: string, reason: string) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.clusterExtensionName, type, status, reason, undefined);
});
Then(/^ClusterExtension reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+)$/i, async function (this: ScenarioWorld, type: string, status: string) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.clusterExtensionName, type, status, undefined, undefined);
});
/** NamedClusterExtensionReportsCondition (steps.go:562). */
Then(/^ClusterExtension "([^"]+)" reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+)$/i, async function (this: ScenarioWorld, name: string, type: string, status: string) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.substitute(name), type, status, undefined, undefined);
});
/** NamedClusterExtensionReportsConditionWithMessageFragment (steps.go:570). */
Then(/^ClusterExtension "([^"]+)" reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+) and Message includes:$/i, async function (this: ScenarioWorld, name: string, type: string, status: string, reason: string, doc: string) {
  await waitForCondition('clusterextensions.olm.operatorframework.io', this.substitute(name), type, status, reason, containing(this, doc));
});

/** ClusterExtensionReportsConditionTransitionTime (steps.go:869): read once, no wait. */
Then(/^ClusterExtension reports ([A-Za-z0-9]+) transition between (\d+) and (\d+) minutes since its creation$/i, async function (this: ScenarioWorld, type: string, min: string, max: string) {
  const v = await k8s('get', 'clusterextensions.olm.operatorframework.io', this.clusterExtensionName, '-o', `jsonpath={.metadata.creationTimestamp},{.status.conditions[?(@.type=="${type}")].lastTransitionTime}`);
  const parts = v.split(',');
  if (parts.length !== 2) throw new Error(`expected creationTimestamp and lastTransitionTime but got: ${v}`);
  const created = Date.parse(parts[0] ?? '');
  const moved = Date.parse(parts[1] ?? '');
  if (Number.isNaN(created) || Number.isNaN(moved)) throw new Error(`failed to parse times: ${v}`);
  const d = moved - created;
  if (d < Number(min) * 60_000) throw new Error(`condition ${type} transitioned too early: ${d / 1000} s since creation (expected >= ${min} min)`);
  if (d > Number(max) * 60_000) throw new Error(`condition ${type} transitioned too late: ${d / 1000} s since creation (expected <= ${max} min)`);
});

/** ClusterExtensionResourcesCreatedAndAreLabeled (steps.go:727). */
Then(/^ClusterExtension resources are created and labeled$/i, async function (this: ScenarioWorld) {
  if (this.extensionObjects.length === 0) throw new Error('extension objects not found in context');
  for (const o of this.extensionObjects) {
    let last = '';
    await waitFor(`${o.kind} ${o.namespace ?? ''}/${o.name} labelled owner-kind=ClusterExtension owner-name=${this.clusterExtensionName}`, async () => {
      const obj = toObject(await k8s('get', o.kind, o.name, '-n', o.namespace ?? '', '-o', 'yaml'));
      const labels = obj.metadata?.labels ?? {};
      last = JSON.stringify(labels);
      return labels['olm.operatorframework.io/owner-kind'] === 'ClusterExtension' && labels['olm.operatorframework.io/owner-name'] === this.clusterExtensionName;
    }, () => last);
  }
});

/** ResourceRemoved (steps.go:1342): saved for the restore check, then deleted. */
async function resourceRemoved(w: ScenarioWorld, kind: string, name: string): Promise<void> {
  const obj = toObject(await k8s('get', kind, name, '-n', w.namespace, '-o', 'yaml'));
  w.removedResources.push(obj);
  await k8s('delete', kind, name, '-n', w.namespace);
}

/** ClusterExtensionIsRemoved (steps.go:764). */
When(/^ClusterExtension is removed$/i, async function (this: ScenarioWorld) {
  await resourceRemoved(this, 'clusterextensions.olm.operatorframework.io', this.clusterExtensionName);
});

/** ResourceEventuallyNotFound (steps.go:1363). */
async function eventuallyNotFound(w: ScenarioWorld, kind: string, name: string): Promise<void> {
  let last = '';
  await waitFor(`${kind}/${name} not found in ${w.namespace}`, async () => {
    const r = await kubectlRun(['get', kind, name, '-n', w.namespace, '--ignore-not-found', '-o', 'yaml']);
    last = r.code === 0 ? r.stdout.slice(0, 300) : r.stderr;
    return r.code === 0 && r.stdout.trim() === '';
  }, () => last);
}

/** ClusterExtensionResourcesRemoved (steps.go:770). */
Then(/^the ClusterExtension's constituent resources are removed$/i, async function (this: ScenarioWorld) {
  if (this.extensionObjects.length === 0) throw new Error('extension objects not found in context');
  for (const o of this.extensionObjects) await eventuallyNotFound(this, o.kind, o.name);
});

// --- ClusterObjectSet ---

/** ClusterObjectSetReportsConditionWithMsg (steps.go:934): as ClusterExtensionReportsCondition, the named ClusterObjectSet. */
Then(/^ClusterObjectSet "([^"]+)" reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+) and Message:$/i, async function (this: ScenarioWorld, name: string, type: string, status: string, reason: string, doc: string) {
  await waitForCondition(CLUSTER_OBJECT_SETS, this.substitute(name), type, status, reason, exactly(this, doc));
});
/** ClusterObjectSetReportsConditionWithMessageFragment (steps.go:940). */
Then(/^ClusterObjectSet "([^"]+)" reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+) and Message includes:$/i, async function (this: ScenarioWorld, name: string, type: string, status: string, reason: string, doc: string) {
  await waitForCondition(CLUSTER_OBJECT_SETS, this.substitute(name), type, status, reason, containing(this, doc));
});
/** ClusterObjectSetReportsConditionWithoutMsg (steps.go:928). */
Then(/^ClusterObjectSet "([^"]+)" reports ([A-Za-z0-9]+) as ([A-Za-z0-9]+) with Reason ([A-Za-z0-9]+)$/i, async function (this: ScenarioWorld, name: string, type: string, status: string, reason: string) {
  await waitForCondition(CLUSTER_OBJECT_SETS, this.substitute(name), type, status, reason, undefined);
});

/** ClusterObjectSetIsArchived (steps.go:974): Progressing=False with Reason Archived. */
Then(/^ClusterObjectSet "([^"]+)" is archived$/i, async function (this: ScenarioWorld, name: string) {
  await waitForCondition(CLUSTER_OBJECT_SETS, this.substitute(name), 'Progressing', 'False', 'Archived', undefined);
});

/** TriggerClusterObjectSetReconciliation (steps.go:946): annotation `e2e-trigger=<Unix ns>` (here whole milliseconds in ns). */
When(/^ClusterObjectSet "([^"]+)" reconciliation is triggered$/i, async function (this: ScenarioWorld, name: string) {
  await k8s('annotate', CLUSTER_OBJECT_SETS, this.substitute(name), '--overwrite', `e2e-trigger=${BigInt(Date.now()) * 1_000_000n}`);
});

/** ClusterObjectSetHasObservedPhase (steps.go:956): `status.observedPhases[name=P].digest` not blank. */
Then(/^ClusterObjectSet "([^"]+)" has observed phase "([^"]+)" with a non-empty digest$/i, async function (this: ScenarioWorld, nameIn: string, phaseIn: string) {
  const name = this.substitute(nameIn);
  const phase = this.substitute(phaseIn);
  let last = '';
  await waitFor(`${CLUSTER_OBJECT_SETS} ${name} observed phase ${phase} with a digest`, async () => {
    last = await k8s('get', CLUSTER_OBJECT_SETS, name, '-o', `jsonpath={.status.observedPhases[?(@.name=="${phase}")].digest}`);
    return last.trim() !== '';
  }, () => JSON.stringify(last));
});

/** ClusterObjectSetLifecycleUpdate (steps.go:596): merge patch of spec.lifecycleState (the value as written). */
When(/^ClusterObjectSet "([^"]+)" lifecycle is set to "([^"]+)"$/i, async function (this: ScenarioWorld, name: string, lifecycle: string) {
  await k8s('patch', CLUSTER_OBJECT_SETS, this.substitute(name), '--type', 'merge', '-p', JSON.stringify({ spec: { lifecycleState: lifecycle } }));
});

// --- resources in the test namespace ---

/** ResourceAvailable (steps.go:1327). */
async function resourceAvailable(this: ScenarioWorld, resource: string): Promise<void> {
  const [kind, name] = kindName(this, resource);
  let last = '';
  await waitFor(`${kind}/${name} in ${this.namespace}`, async () => {
    const r = await kubectlRun(['get', kind, name, '-n', this.namespace]);
    last = r.stderr.trim();
    return r.code === 0;
  }, () => last);
}
Then(/^resource "([^"]+)" is installed$/i, resourceAvailable);
Then(/^resource "([^"]+)" is available$/i, resourceAvailable);
Then(/^resource "([^"]+)" exists$/i, resourceAvailable);

When(/^resource "([^"]+)" is removed$/i, async function (this: ScenarioWorld, resource: string) {
  const [kind, name] = kindName(this, resource);
  await resourceRemoved(this, kind, name);
});

Then(/^resource "([^"]+)" is (?:eventually not found|not found|not installed)$/i, async function (this: ScenarioWorld, resource: string) {
  const [kind, name] = kindName(this, resource);
  await eventuallyNotFound(this, kind, name);
});

/** ResourceRestored (steps.go:1418): a newer object of that name with the removed one's data (ConfigMap) or spec. */
Then(/^resource "([^"]+)" is eventually restored$/i, async function (this: ScenarioWorld, resource: string) {
  const [kind, name] = kindName(this, resource);
  await waitFor(`${kind}/${name} re-created as it was`, async () => {
    const obj = toObject(await k8s('get', kind, name, '-n', this.namespace, '-o', 'yaml'));
    for (let i = 0; i < this.removedResources.length; i++) {
      const removed = this.removedResources[i] as Obj;
      // A newer object: another uid. The Go step compares creationTimestamps, whole seconds, and a
      // repair within the second the object was created (Binnacle's took 0.7 s in CI) never passed it.
      if (removed.metadata?.name === obj.metadata?.name && removed.kind === obj.kind && removed.metadata?.uid !== obj.metadata?.uid) {
        const field = kind === 'configmap' ? 'data' : 'spec';
        if (!isDeepStrictEqual(removed[field], obj[field])) return false;
        this.removedResources.splice(i, 1);
        return true;
      }
    }
    return false;
  });
});

/** RFC 7386 JSON merge patch (jsonpatch.MergePatch). */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out = new Map<string, unknown>(typeof target === 'object' && target !== null && !Array.isArray(target) ? Object.entries(target) : []);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) out.delete(k);
    else out.set(k, mergePatch(out.get(k), v));
  }
  return Object.fromEntries(out);
}

/** ResourceMatches (steps.go:1379): the live object is unchanged by a merge patch of the doc string. */
Then(/^resource "([^"]+)" matches$/i, async function (this: ScenarioWorld, resource: string, doc: string) {
  const [kind, name] = kindName(this, resource);
  const required = toObject(this.substitute(doc));
  let last = '';
  await waitFor(`${kind}/${name} contains the required content`, async () => {
    const obj = JSON.parse(await k8s('get', kind, name, '-n', this.namespace, '-o', 'json')) as unknown;
    last = JSON.stringify(obj).slice(0, 2000);
    return isDeepStrictEqual(mergePatch(obj, JSON.parse(JSON.stringify(required))), obj);
  }, () => last);
});

/** OperatorTargetNamespace (steps.go:1996): read once. */
Then(/^operator "([^"]+)" target namespace is "([^"]+)"$/i, async function (this: ScenarioWorld, operator: string, namespace: string) {
  const d = JSON.parse(await k8s('get', 'deployment', '-n', this.namespace, this.substitute(operator), '-o', 'json')) as { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } };
  const tns = d.spec?.template?.metadata?.annotations?.['olm.targetNamespaces'];
  const want = this.substitute(namespace);
  if (tns !== want) throw new Error(`expected target namespace ${want}, got ${tns ?? ''}`);
});

/** MarkDeploymentReadiness (steps.go:2022): exec into the first Pod of the Deployment (a real kubelet). */
When(/^deployment "([^"]+)" reports as (not ready|ready)$/i, async function (this: ScenarioWorld, deployment: string, state: string) {
  const labels = JSON.parse(await k8s('get', 'deployment', '-n', this.namespace, this.substitute(deployment), '-o', 'jsonpath={.spec.selector.matchLabels}')) as Record<string, string>;
  const pod = await k8s('get', 'pod', '-n', this.namespace, '-o', 'jsonpath={.items[0].metadata.name}', ...Object.entries(labels).map(([k, v]) => `--selector=${k}=${v}`));
  await k8s('exec', pod, '-n', this.namespace, '--', state === 'not ready' ? 'rm' : 'touch', '/tmp/www/ready');
});

// --- CRDs ---

const CRD_OF = new Map([
  ['ClusterExtension', 'clusterextensions.olm.operatorframework.io'],
  ['ClusterObjectSet', CLUSTER_OBJECT_SETS],
]);

/**
 * SetCRDFieldMinValue (steps.go:2056): a JSON patch replacing `minimum` of the field's schema in
 * the CRD's first version (`.spec.a` → `properties/spec/properties/a`). The kind is compared as
 * written (the pattern is case-insensitive, the comparison is not). Go never restores it and
 * neither does this: later scenarios of the run see the lowered minimum, as upstream's do. The
 * next manager start puts back the vendored value of each OLM v1 CRD it installs (applied
 * server-side with force, src/controllers/crds.ts ensureOlmv1Crds).
 */
Given(/^min value for (ClusterExtension|ClusterObjectSet) ((?:\.[a-zA-Z]+)+) is set to (\d+)$/i, async function (this: ScenarioWorld, resourceType: string, jsonPath: string, minValue: string) {
  const crd = CRD_OF.get(resourceType);
  if (crd === undefined) throw new Error(`unsupported resource type: ${resourceType}`);
  const schemaPath = jsonPath.replace(/^\./, '').split('.').flatMap((part) => ['properties', part]).join('/');
  const patch = `[{"op": "replace", "path": "/spec/versions/0/schema/openAPIV3Schema/${schemaPath}/minimum", "value": ${Number.parseInt(minValue, 10)}}]`;
  await k8s('patch', 'crd', crd, '--type=json', '-p', patch);
});

// --- fields other managers own (user-managed-fields.feature) ---

/** parseKeyValueTable (steps.go:2472): a header row naming `key` and `value`, at least one row; both substituted. */
function keyValueTable(w: ScenarioWorld, table: DataTable): Map<string, string> {
  const rows = table.raw();
  if (rows.length < 2) throw new Error('table must have a header row and at least one data row');
  const header = rows[0] ?? [];
  const keyIdx = header.indexOf('key');
  const valueIdx = header.indexOf('value');
  if (keyIdx === -1 || valueIdx === -1) throw new Error("table must have 'key' and 'value' columns");
  const need = Math.max(keyIdx, valueIdx) + 1;
  const out = new Map<string, string>();
  rows.slice(1).forEach((row, i) => {
    if (row.length < need) throw new Error(`table row ${i + 2} has ${row.length} cells, expected at least ${need}`);
    out.set(w.substitute(row[keyIdx] ?? ''), w.substitute(row[valueIdx] ?? ''));
  });
  return out;
}

/** AnnotationsAreAdded / LabelsAreAdded (steps.go:2325, 2353): `kubectl annotate|label <kind> <name> k=v… --overwrite -n <test ns>`. */
async function addMetadata(w: ScenarioWorld, verb: 'annotate' | 'label', resource: string, table: DataTable): Promise<void> {
  const pairs = keyValueTable(w, table);
  const [kind, name] = kindName(w, resource);
  await k8s(verb, kind, name, ...[...pairs].map(([k, v]) => `${k}=${v}`), '--overwrite', '-n', w.namespace);
}
When(/^annotations are added to "([^"]+)"$/i, async function (this: ScenarioWorld, resource: string, table: DataTable) {
  await addMetadata(this, 'annotate', resource, table);
});
When(/^labels are added to "([^"]+)"$/i, async function (this: ScenarioWorld, resource: string, table: DataTable) {
  await addMetadata(this, 'label', resource, table);
});

/** ResourceHasAnnotations / ResourceHasLabels (steps.go:2381, 2430): waits until the live object carries every pair of the table. */
async function hasMetadata(w: ScenarioWorld, field: 'annotations' | 'labels', resource: string, table: DataTable): Promise<void> {
  const expected = keyValueTable(w, table);
  const [kind, name] = kindName(w, resource);
  let last = '';
  await waitFor(`${kind}/${name} has ${field} ${JSON.stringify(Object.fromEntries(expected))}`, async () => {
    const obj = JSON.parse(await k8s('get', kind, name, '-n', w.namespace, '-o', 'json')) as Obj;
    const actual = obj.metadata?.[field] ?? {};
    last = JSON.stringify(actual);
    return [...expected].every(([k, v]) => actual[k] === v);
  }, () => last);
}
Then(/^resource "([^"]+)" has annotations$/i, async function (this: ScenarioWorld, resource: string, table: DataTable) {
  await hasMetadata(this, 'annotations', resource, table);
});
Then(/^resource "([^"]+)" has labels$/i, async function (this: ScenarioWorld, resource: string, table: DataTable) {
  await hasMetadata(this, 'labels', resource, table);
});

/** RolloutRestartIsPerformed (steps.go:2525): `kubectl rollout restart deployment/<name>`, deployments only. */
When(/^rollout restart is performed on "([^"]+)"$/i, async function (this: ScenarioWorld, resource: string) {
  const [kind] = kindName(this, resource);
  if (kind !== 'deployment') throw new Error(`only deployment resources are supported for rollout restart, got: ${JSON.stringify(kind)}`);
  await k8s('rollout', 'restart', this.substitute(resource), '-n', this.namespace);
});

interface DeploymentJson {
  metadata?: { uid?: string };
  spec?: { selector?: { matchLabels?: Record<string, string> }; template?: { metadata?: { annotations?: Record<string, string> } } };
}

/** DeploymentPodTemplateHasAnnotation (steps.go:2553): waits until the pod template carries the key. */
Then(/^deployment "([^"]+)" pod template has annotation "([^"]+)"$/i, async function (this: ScenarioWorld, deployment: string, key: string) {
  const name = this.substitute(deployment);
  let last = '';
  await waitFor(`deployment ${name} pod template annotation ${key}`, async () => {
    const d = JSON.parse(await k8s('get', 'deployment', name, '-n', this.namespace, '-o', 'json')) as DeploymentJson;
    const annotations = d.spec?.template?.metadata?.annotations ?? {};
    last = JSON.stringify(annotations);
    return Object.hasOwn(annotations, key);
  }, () => last);
});

/** DeploymentRolloutIsComplete (steps.go:2617): `kubectl rollout status --watch=false` says "successfully rolled out". */
Then(/^deployment "([^"]+)" rollout is complete$/i, async function (this: ScenarioWorld, deployment: string) {
  const name = this.substitute(deployment);
  let last = '';
  await waitFor(`deployment ${name} rolled out`, async () => {
    last = await k8s('rollout', 'status', `deployment/${name}`, '-n', this.namespace, '--watch=false');
    return last.includes('successfully rolled out');
  }, () => last.trim());
});

/**
 * DeploymentHasReplicaSets (steps.go:2640): exactly N ReplicaSets of the selector owned by the
 * Deployment (its uid), and at least one of them with replicas and ready replicas.
 */
Then(/^deployment "([^"]+)" has (\d+) replica sets?$/i, async function (this: ScenarioWorld, deployment: string, count: string) {
  const name = this.substitute(deployment);
  const expected = Number.parseInt(count, 10);
  let last = '';
  await waitFor(`deployment ${name} owns ${expected} ReplicaSet(s), one of them active`, async () => {
    const d = JSON.parse(await k8s('get', 'deployment', name, '-n', this.namespace, '-o', 'json')) as DeploymentJson;
    const selector = Object.entries(d.spec?.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
    const list = JSON.parse(await k8s('get', 'rs', '-n', this.namespace, ...(selector.length > 0 ? ['-l', selector.join(',')] : []), '-o', 'json')) as {
      items: { metadata?: { name?: string; ownerReferences?: { kind?: string; uid?: string }[] }; status?: { replicas?: number; readyReplicas?: number } }[];
    };
    const owned = list.items.filter((rs) => (rs.metadata?.ownerReferences ?? []).some((o) => o.kind === 'Deployment' && o.uid === d.metadata?.uid));
    last = JSON.stringify(owned.map((rs) => ({ name: rs.metadata?.name, replicas: rs.status?.replicas ?? 0, ready: rs.status?.readyReplicas ?? 0 })));
    if (owned.length !== expected) return false;
    return owned.some((rs) => (rs.status?.replicas ?? 0) > 0 && (rs.status?.readyReplicas ?? 0) > 0);
  }, () => last);
});

/**
 * TriggerClusterExtensionReconciliation (steps.go:2585): flips
 * spec.install.preflight.crdUpgradeSafety.enforcement between None and Strict (a merge patch), so
 * metadata.generation moves (the group named: Binnacle serves a ClusterExtension kind of its own too).
 */
When(/^ClusterExtension reconciliation is triggered$/i, async function (this: ScenarioWorld) {
  const ce = JSON.parse(await k8s('get', 'clusterextensions.olm.operatorframework.io', this.clusterExtensionName, '-o', 'json')) as { spec?: { install?: { preflight?: { crdUpgradeSafety?: { enforcement?: unknown } } } } };
  const current = ce.spec?.install?.preflight?.crdUpgradeSafety?.enforcement;
  const next = current === 'None' ? 'Strict' : 'None';
  await k8s('patch', 'clusterextensions.olm.operatorframework.io', this.clusterExtensionName, '--type=merge', '-p', JSON.stringify({ spec: { install: { preflight: { crdUpgradeSafety: { enforcement: next } } } } }));
});
