/**
 * demo_steps.go's steps (demos.feature, `@demo`, which upstream's Makefile never runs): a
 * catalog's content through its HTTP API, the role bindings of a namespace, a Pod's containers.
 * Upstream reads the catalog with `curl -k …/api/v1/all | jq` through a port-forward to
 * catalogd's Service; here the same `/api/v1/all` of the catalog's `status.urls.base`, through a
 * port-forward to the manager's catalog Service when the manager runs in the cluster. Names are
 * substituted (`${PACKAGE:…}`, `${TEST_NAMESPACE}`) where Go substitutes only some: a literal
 * name, as demos.feature writes them, is the same either way.
 */
import { Then } from '@cucumber/cucumber';
import { CATALOG_SERVICE } from '../../src/self/manifests.js';
import { anyCatalog } from './steps.js';
import { insecureGet, portForward } from './metrics-steps.js';
import { IN_CLUSTER, k8s, waitFor, type ScenarioWorld } from './world.js';

interface Meta {
  schema?: string;
  package?: string;
  name?: string;
}

/** catalogCurlJq (demo_steps.go:112): every record of the catalog's `/api/v1/all`, one JSON object a line. */
async function catalogRecords(w: ScenarioWorld, name: string): Promise<Meta[]> {
  const catalog = await anyCatalog(w, name);
  const base = (await k8s('get', 'clustercatalogs.olm.operatorframework.io', catalog, '-o', 'jsonpath={.status.urls.base}')).trim();
  if (base === '') throw new Error(`catalog "${name}" has no status.urls.base: it is not serving`);
  let url = new URL(`${base}/api/v1/all`);
  let cleanup = (): void => undefined;
  if (IN_CLUSTER !== undefined) {
    // The base names the in-cluster Service (https://binnacle-catalogs.<ns>.svc/catalogs/<name>).
    const pf = await portForward(IN_CLUSTER, `service/${CATALOG_SERVICE}`, 443);
    cleanup = pf.cleanup;
    url = new URL(`https://${pf.addr.host}:${pf.addr.port}${url.pathname}`);
  }
  try {
    let text = '';
    let last = '';
    await waitFor(
      `the content of catalog "${name}" at ${url.href}`,
      async () => {
        const r = await insecureGet(url).catch((err: unknown) => ({ status: 0, body: err instanceof Error ? err.message : String(err) }));
        last = `HTTP ${r.status}: ${r.body.slice(0, 200)}`;
        text = r.status === 200 ? r.body : '';
        return text !== '';
      },
      () => last,
    );
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Meta);
  } finally {
    cleanup();
  }
}

/** CatalogContainsSomePackages (demo_steps.go:124). */
Then(/^catalog "([^"]+)" contains some packages$/i, async function (this: ScenarioWorld, name: string) {
  if (!(await catalogRecords(this, name)).some((m) => m.schema === 'olm.package' && (m.name ?? '') !== '')) throw new Error(`catalog "${name}" contains no packages`);
});

/** PackageHasSomeChannels (demo_steps.go:136). */
Then(/^package "([^"]+)" in catalog "([^"]+)" has some channels defined$/i, async function (this: ScenarioWorld, pkg: string, name: string) {
  if (!(await catalogRecords(this, name)).some((m) => m.schema === 'olm.channel' && m.package === this.substitute(pkg))) throw new Error(`package "${pkg}" in catalog "${name}" has no channels`);
});

/** PackageHasSomeBundles (demo_steps.go:148). */
Then(/^package "([^"]+)" in catalog "([^"]+)" has some bundles published$/i, async function (this: ScenarioWorld, pkg: string, name: string) {
  if (!(await catalogRecords(this, name)).some((m) => m.schema === 'olm.bundle' && m.package === this.substitute(pkg))) throw new Error(`package "${pkg}" in catalog "${name}" has no bundles`);
});

/** RolebindingsReferenceServiceAccount (demo_steps.go:160): some RoleBinding of the namespace names the ServiceAccount (its namespace substituted). */
Then(/^rolebindings in namespace "([^"]+)" reference service account "([^"]+)" in namespace "([^"]+)"$/i, async function (this: ScenarioWorld, rbNamespace: string, sa: string, saNamespace: string) {
  const ns = this.substitute(saNamespace);
  const where = this.substitute(rbNamespace);
  const list = JSON.parse(await k8s('get', 'rolebindings', '-n', where, '-o', 'json')) as { items: { subjects?: { kind?: string; name?: string; namespace?: string }[] }[] };
  if (!list.items.some((rb) => (rb.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === ns))) {
    throw new Error(`no rolebinding in namespace "${where}" references service account ${ns}/${sa}`);
  }
});

/** PodHasContainerCount (demo_steps.go:201): waits until the Pod (named as written) in the scenario's namespace has that many containers. */
Then(/^pod "([^"]+)" in test namespace has (\d+) containers$/i, async function (this: ScenarioWorld, pod: string, count: string) {
  const want = Number.parseInt(count, 10);
  let names: string[] = [];
  await waitFor(
    `pod ${this.namespace}/${pod} with ${want} containers`,
    async () => {
      names = (await k8s('get', 'pod', pod, '-n', this.namespace, '-o', 'jsonpath={.spec.containers[*].name}').catch(() => '')).split(/\s+/).filter((n) => n !== '');
      return names.length === want;
    },
    () => `containers: ${names.join(', ') || 'none'}`,
  );
});
