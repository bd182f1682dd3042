/**
 * `helmBundle` on real charts from the corpus, through Helm's engine: Pelorus (a parent chart
 * with an `exporters` subchart, Prometheus and Grafana resources, OpenShift Routes) and
 * Bitnami's memcached (a library dependency in a nested archive). The written bundles pass
 * the bundle validators; their CRDs are structural; their examples fit the CRDs; the RBAC
 * covers every kind the charts render; the charts shipped in the ConfigMap render exactly as
 * the chart directories; the converter installs them in every install mode. Bad input fails
 * naming the chart file or the flag.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertRegistryV1, loadBundleDir, validateBundleDir, type RegistryV1Bundle } from '../../bundle/index.js';
import type { JsonObject } from '../../bundle/decode.js';
import { gvkOf, type KubeObject } from '../../kube/types.js';
import { InputError, UsageError } from '../../util/errors.js';
import { createHelmEngine } from '../../helm-engine/engine.js';
import { checkStructural, validateValue } from '../../helm/schema/index.js';
import { loadWatches } from '../../controllers/helm-operator/watches.js';
import { allows, APPLY_VERBS, filesOfConfigMap, helmBundle, packageChartDir, resourceFor, type HelmBundleResult, type PolicyRule } from './index.js';
import { crdKindsOf, generousApiVersions, objectsOf } from './render.js';

const CHARTS = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'corpus', 'charts');
const PELORUS = join(CHARTS, 'pelorus__pelorus');
const MEMCACHED = join(CHARTS, 'bitnami__memcached');
const engine = createHelmEngine();
let work: string;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'binnacle-helm-bundle-test-'));
});
after(async () => {
  await engine.close();
  await rm(work, { recursive: true, force: true });
});

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/** The CSV's rules as RBAC reads them: each list of strings it sets. */
function rulesOf(bundle: RegistryV1Bundle, which: 'permissions' | 'clusterPermissions'): PolicyRule[] {
  return bundle.csv[which].flatMap((p) => p.rules).map((r) => {
    const rule: PolicyRule = { verbs: strings(r.verbs) ?? [] };
    for (const k of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const v = strings(r[k]);
      if (v !== undefined) rule[k] = v;
    }
    return rule;
  });
}

function specSchema(crd: JsonObject): unknown {
  const versions = (crd.spec as { versions: { schema: { openAPIV3Schema: { properties: { spec: unknown } } } }[] }).versions;
  return versions[0]?.schema.openAPIV3Schema.properties.spec;
}

/** Every object the chart (or subchart) renders with its defaults, offline, whatever its capability checks. */
async function everythingRendered(chart: string, subchart?: string): Promise<KubeObject[]> {
  const base = { chart, releaseName: 'check', namespace: 'check', skipTests: true, kubeVersion: 'v1.34.0', ...(subchart === undefined ? {} : { subchart }) };
  const plain = await engine.render(base);
  const crds = crdKindsOf([...plain.crds.flatMap((f) => objectsOf(f.data)), ...objectsOf(plain.output)]);
  const res = await engine.render({ ...base, apiVersions: generousApiVersions(crds) });
  return objectsOf(res.output);
}

/** The operator may do everything the applier does to each object. */
function assertCovers(bundle: RegistryV1Bundle, objects: readonly KubeObject[], crdKinds: Map<string, { group: string; kind: string; plural: string; namespaced: boolean; versions: string[] }>): void {
  const rules = [...rulesOf(bundle, 'permissions'), ...rulesOf(bundle, 'clusterPermissions')];
  assert.ok(objects.length > 0);
  for (const o of objects) {
    const { group, kind } = gvkOf(o);
    const { resource, namespaced } = resourceFor(group, kind, crdKinds);
    const where = namespaced && o.metadata.namespace === undefined ? rulesOf(bundle, 'permissions') : rules;
    for (const verb of APPLY_VERBS) assert.ok(allows(where, group, resource, verb), `${verb} ${group}/${resource} (${kind} ${o.metadata.name ?? ''})`);
  }
}

describe('Pelorus as an operator', () => {
  let result: HelmBundleResult;
  let bundle: RegistryV1Bundle;
  let dir: string;

  before(async () => {
    dir = join(work, 'pelorus', '2.0.13');
    result = await helmBundle({ chart: PELORUS, kinds: ['Pelorus', 'Exporter=charts/exporters'], version: '2.0.13', outputDir: dir, image: 'registry.example.com/binnacle:test', engine });
    bundle = await loadBundleDir(dir);
  });

  test('the bundle passes the bundle validators and has the registry+v1 layout', async () => {
    const { result: v } = await validateBundleDir(dir);
    assert.deepEqual(v.errors(), []);
    assert.deepEqual(result.files, [
      'manifests/exporters.pelorus.helm.binnacle.dev.crd.yaml',
      'manifests/pelorus-helm-charts_v1_configmap.yaml',
      'manifests/pelorus.clusterserviceversion.yaml',
      'manifests/peloruses.pelorus.helm.binnacle.dev.crd.yaml',
      'metadata/annotations.yaml',
      'metadata/dependencies.yaml',
    ]);
    assert.equal(bundle.name, 'pelorus.v2.0.13');
    assert.equal(bundle.packageName, 'pelorus');
    assert.deepEqual(bundle.csv.installModes.filter((m) => m.supported).map((m) => m.type).sort(), ['AllNamespaces', 'MultiNamespace', 'OwnNamespace', 'SingleNamespace']);
  });

  test('one owned CRD per kind, each with a structural schema whose spec comes from the values', () => {
    assert.deepEqual(bundle.csv.ownedCRDs.map((c) => `${c.name}/${c.version}/${c.kind}`).sort(), ['exporters.pelorus.helm.binnacle.dev/v1alpha1/Exporter', 'peloruses.pelorus.helm.binnacle.dev/v1alpha1/Pelorus']);
    assert.equal(bundle.crds.length, 2);
    for (const crd of bundle.crds) {
      const versions = (crd.object.spec as { versions: { schema: { openAPIV3Schema: unknown } }[] }).versions;
      assert.deepEqual(checkStructural(versions[0]?.schema.openAPIV3Schema), [], crd.name);
    }
    const pelorus = bundle.crds.find((c) => c.name.startsWith('peloruses.'));
    const props = (specSchema(pelorus?.object ?? {}) as { properties?: Record<string, unknown> }).properties ?? {};
    assert.ok('exporters' in props && 'prometheus_retention' in props, Object.keys(props).join(', '));
  });

  test('Prometheus and Grafana kinds are required; OpenShift and optional monitoring kinds are not', () => {
    const gvks = bundle.dependencies.filter((d) => d.type === 'olm.gvk').map((d) => {
      const v = d.value as { group: string; version: string; kind: string };
      return `${v.group}/${v.version}/${v.kind}`;
    });
    assert.deepEqual(gvks, [
      'grafana.integreatly.org/v1beta1/Grafana',
      'grafana.integreatly.org/v1beta1/GrafanaDashboard',
      'grafana.integreatly.org/v1beta1/GrafanaDatasource',
      'monitoring.coreos.com/v1/Prometheus',
    ]);
    const not = result.notRequired.map((n) => `${n.group}/${n.kind}`);
    assert.ok(not.includes('route.openshift.io/Route') && not.includes('image.openshift.io/ImageStream'), not.join(', '));
    assert.ok(not.includes('monitoring.coreos.com/ServiceMonitor'), not.join(', '));
  });

  test("alm-examples parse, one per kind, and each spec (the chart's defaults) validates against its CRD", () => {
    const examples = JSON.parse(bundle.csv.annotations['alm-examples'] ?? '[]') as KubeObject[];
    assert.deepEqual(examples.map((e) => `${e.apiVersion}/${e.kind}`).sort(), ['pelorus.helm.binnacle.dev/v1alpha1/Exporter', 'pelorus.helm.binnacle.dev/v1alpha1/Pelorus']);
    for (const ex of examples) {
      const crd = bundle.crds.find((c) => (c.object.spec as { names: { kind: string } }).names.kind === ex.kind);
      assert.ok(crd !== undefined, ex.kind);
      assert.deepEqual(validateValue(specSchema(crd.object), ex.spec), [], ex.kind);
    }
    const pelorus = examples.find((e) => e.kind === 'Pelorus');
    assert.equal((pelorus?.spec as { prometheus_retention?: string }).prometheus_retention, '1y');
  });

  test('the RBAC covers every kind the chart and the subchart render, and binds only the roles it refers to', async () => {
    const crdKinds = new Map<string, { group: string; kind: string; plural: string; namespaced: boolean; versions: string[] }>();
    assertCovers(bundle, await everythingRendered(PELORUS), crdKinds);
    assertCovers(bundle, await everythingRendered(PELORUS, 'exporters'), crdKinds);
    const perms = rulesOf(bundle, 'permissions');
    assert.ok(allows(perms, 'pelorus.helm.binnacle.dev', 'peloruses/status', 'update'));
    assert.ok(allows(perms, 'pelorus.helm.binnacle.dev', 'exporters/finalizers', 'update'));
    assert.ok(allows(perms, '', 'secrets', 'create'), 'Helm release records');
    assert.ok(allows(perms, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'system:image-puller'));
    assert.ok(!allows(perms, 'rbac.authorization.k8s.io', 'clusterroles', 'bind', 'cluster-admin'));
    assert.ok(allows(rulesOf(bundle, 'clusterPermissions'), 'coordination.k8s.io', 'leases', 'update'));
  });

  test('relatedImages: the operator and every container image the chart renders, custom resources included', () => {
    const images = bundle.csv.relatedImages.map((i) => i.image);
    assert.equal(images[0], 'registry.example.com/binnacle:test');
    for (const want of ['quay.io/pelorus/pelorus-deploytime-exporter:v2.0.13-rc.6', 'quay.io/pelorus/pelorus-committime-exporter:v2.0.13-rc.6', 'image-registry.openshift-image-registry.svc.cluster.local:5000/openshift/oauth-proxy:v4.4']) {
      assert.ok(images.includes(want), want);
    }
    assert.ok(!images.some((i) => i.includes('web-terminal-tooling')), 'helm test images are not run by the operator');
  });

  test('the Deployment runs binnacle helm-operator run; the ConfigMap holds watches.yaml and charts that render as the chart', async () => {
    const dep = bundle.csv.deployments[0]?.spec as { template: { spec: { serviceAccountName: string; containers: { image: string; command: string[]; args: string[]; env: { name: string }[]; resources: unknown }[]; volumes: { configMap: { name: string } }[] } } };
    const c = dep.template.spec.containers[0];
    assert.deepEqual(c?.command, ['node', '--optimize-for-size', '--no-opt', '--no-sparkplug', '--no-maglev', '/opt/binnacle/bin/binnacle.js'], 'node runs the CLI with the helm-operator\'s V8 flags');
    assert.deepEqual(c?.args, ['helm-operator', 'run', '--watches', '/opt/helm/watches.yaml', '--leader-elect', '--leader-election-namespace', '$(POD_NAMESPACE)', '--helm-engine-threads', '1']);
    assert.equal(c?.image, 'registry.example.com/binnacle:test');
    // One engine thread (its memory ceiling 256 MiB) over the ~200 MiB the rest takes (operator.ts, bench/helm-operator-memory.ts).
    assert.deepEqual(c?.resources, { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } });
    assert.deepEqual(c?.env.map((e) => e.name), ['POD_NAMESPACE', 'WATCH_NAMESPACE', 'NODE_OPTIONS']);
    // Probed where helm-operator run serves /healthz and /readyz by default (:8081).
    assert.ok(c !== undefined);
    // The container as written carries more than its type names: its ports and probes.
    const probes = c as typeof c & { ports: { name: string; containerPort: number }[]; livenessProbe: { httpGet: { path: string; port: string } }; readinessProbe: { httpGet: { path: string; port: string } } };
    assert.deepEqual(probes.ports.map((p) => [p.name, p.containerPort]), [['probes', 8081]]);
    assert.deepEqual([probes.livenessProbe.httpGet, probes.readinessProbe.httpGet], [{ path: '/healthz', port: 'probes' }, { path: '/readyz', port: 'probes' }]);
    const cm = bundle.others.find((o) => o.kind === 'ConfigMap');
    assert.equal(cm?.name, dep.template.spec.volumes[0]?.configMap.name);
    const files = filesOfConfigMap(cm?.object as KubeObject);
    const root = join(work, 'opt-helm');
    for (const [rel, data] of files) {
      await mkdir(join(root, rel, '..'), { recursive: true });
      await writeFile(join(root, rel), data);
    }
    const watches = loadWatches(join(root, 'watches.yaml'));
    assert.deepEqual(watches.map((w) => `${w.kind}.${w.version}.${w.group} ${w.chart.slice(root.length + 1)}`), ['Pelorus.v1alpha1.pelorus.helm.binnacle.dev charts/pelorus.tgz', 'Exporter.v1alpha1.pelorus.helm.binnacle.dev charts/pelorus-exporters.tgz']);
    const req = { releaseName: 'x', namespace: 'y', skipTests: true };
    const [main, sub] = watches;
    assert.equal((await engine.render({ ...req, chart: main?.chart ?? '' })).output, (await engine.render({ ...req, chart: PELORUS })).output);
    assert.equal((await engine.render({ ...req, chart: sub?.chart ?? '' })).output, (await engine.render({ ...req, chart: PELORUS, subchart: 'exporters' })).output);
  });

  test('the registry+v1 converter installs it in every install mode', () => {
    for (const watch of [[''], ['ops'], ['team-a'], ['team-a', 'team-b']]) {
      const out = convertRegistryV1(bundle, { installNamespace: 'ops', watchNamespaces: watch });
      const kinds = out.objects.map((o) => `${String(o.kind)}/${(o.metadata as { namespace?: string }).namespace ?? ''}`);
      assert.ok(kinds.includes('ConfigMap/ops') && kinds.includes('Deployment/ops'), `${out.installMode}: ${kinds.join(', ')}`);
      if (out.installMode !== 'AllNamespaces') for (const ns of watch) assert.ok(kinds.includes(`Role/${ns}`), `${out.installMode}: Role in ${ns}`);
    }
  });
});

describe('a second chart: memcached', () => {
  test('bundles with its schema, images and RBAC; a library subchart cannot serve a kind', async () => {
    const dir = join(work, 'memcached', '1.0.0');
    const res = await helmBundle({ chart: MEMCACHED, kinds: ['Memcached'], version: '1.0.0', outputDir: dir, engine });
    const { result: v, bundle } = await validateBundleDir(dir);
    assert.deepEqual(v.errors(), []);
    assert.ok(bundle !== undefined);
    assert.deepEqual(res.required, [], 'memcached needs no other operator');
    const crd = bundle.crds[0];
    assert.ok(crd !== undefined);
    assert.deepEqual(checkStructural((crd.object.spec as { versions: { schema: { openAPIV3Schema: unknown } }[] }).versions[0]?.schema.openAPIV3Schema), []);
    const example = (JSON.parse(bundle.csv.annotations['alm-examples'] ?? '[]') as KubeObject[])[0];
    assert.deepEqual(validateValue(specSchema(crd.object), example?.spec), []);
    assert.ok(bundle.csv.relatedImages.some((i) => /bitnami\/memcached/.test(i.image)), JSON.stringify(bundle.csv.relatedImages));
    assertCovers(bundle, await everythingRendered(MEMCACHED), new Map());
    assert.equal(bundle.csv.minKubeVersion, undefined, 'memcached names no kubeVersion');

    await assert.rejects(helmBundle({ chart: MEMCACHED, kinds: ['Memcached', 'Common=charts/common'], version: '1.0.0', outputDir: join(work, 'x'), engine }), (e: unknown) => e instanceof InputError && /library chart/.test(e.message));
  });
});

describe('a subchart in an archive, named by its alias', () => {
  test('is shipped as that archive and renders as the subchart does', async () => {
    const root = join(work, 'shop');
    const kv = join(work, 'kv-src');
    await mkdir(join(kv, 'templates'), { recursive: true });
    await writeFile(join(kv, 'Chart.yaml'), 'apiVersion: v2\nname: kv\nversion: 1.0.0\n');
    await writeFile(join(kv, 'values.yaml'), '# -- how many copies\nreplicas: 1\n');
    await writeFile(join(kv, 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-kv\ndata:\n  replicas: {{ .Values.replicas | quote }}\n');
    await mkdir(join(root, 'templates'), { recursive: true });
    await mkdir(join(root, 'charts'), { recursive: true });
    await writeFile(join(root, 'Chart.yaml'), 'apiVersion: v2\nname: shop\nversion: 0.3.0\nkubeVersion: ">=1.25.0-0"\ndependencies:\n- name: kv\n  version: 1.0.0\n  alias: cache\n');
    await writeFile(join(root, 'values.yaml'), 'cache:\n  replicas: 2\n');
    await writeFile(join(root, 'templates', 'svc.yaml'), 'apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports: [{port: 80}]\n');
    await writeFile(join(root, 'charts', 'kv-1.0.0.tgz'), await packageChartDir(kv, 'kv'));
    const dir = join(work, 'shop-bundle');
    const res = await helmBundle({ chart: root, kinds: ['Shop', 'Cache=charts/cache'], outputDir: dir, engine });
    assert.equal(res.version, '0.3.0', "the chart's version");
    assert.deepEqual(res.kinds.map((k) => `${k.kind} ${k.chart} ${k.archive}`), ['Shop shop shop.tgz', 'Cache shop/charts/kv shop-cache.tgz']);
    const bundle = await loadBundleDir(dir);
    assert.equal(bundle.csv.minKubeVersion, '1.25.0');
    const files = filesOfConfigMap(bundle.others.find((o) => o.kind === 'ConfigMap')?.object as KubeObject);
    const archive = join(work, 'shop-cache.tgz');
    await writeFile(archive, files.get('charts/shop-cache.tgz') ?? Buffer.alloc(0));
    const req = { releaseName: 'r', namespace: 'n' };
    assert.equal((await engine.render({ ...req, chart: archive })).output, (await engine.render({ ...req, chart: root, subchart: 'cache' })).output);
    const cacheCrd = bundle.crds.find((c) => c.name === 'caches.shop.helm.binnacle.dev');
    assert.match(JSON.stringify(cacheCrd?.object), /how many copies/, 'the schema carries the helm-docs comment');
  });
});

describe('bad input names the chart file or the flag', () => {
  const opts = (extra: Partial<Parameters<typeof helmBundle>[0]>): Parameters<typeof helmBundle>[0] => ({ chart: PELORUS, kinds: ['Pelorus'], version: '1.0.0', outputDir: join(work, 'bad'), engine, ...extra });

  test('no such chart, a directory that is no chart', async () => {
    const missing = join(work, 'nope');
    await assert.rejects(helmBundle(opts({ chart: missing })), (e: unknown) => e instanceof InputError && e.file === missing && /does not exist/.test(e.message));
    await assert.rejects(helmBundle(opts({ chart: work })), (e: unknown) => e instanceof InputError && e.file === join(work, 'Chart.yaml'));
  });

  test('a kind that is not a Kind name, twice the same kind, no --kind', async () => {
    await assert.rejects(helmBundle(opts({ kinds: ['pelorus'] })), (e: unknown) => e instanceof UsageError && /--kind pelorus: "pelorus" is not a valid Kind name.*e\.g\. Pelorus/.test(e.message));
    await assert.rejects(helmBundle(opts({ kinds: ['My-Kind'] })), (e: unknown) => e instanceof UsageError && /not a valid Kind name/.test(e.message));
    await assert.rejects(helmBundle(opts({ kinds: ['A', 'A=charts/exporters'] })), (e: unknown) => e instanceof UsageError && /given twice/.test(e.message));
    await assert.rejects(helmBundle(opts({ kinds: [] })), (e: unknown) => e instanceof UsageError && /--kind is required/.test(e.message));
  });

  test('a subchart the chart does not have, a path that is not a subchart path', async () => {
    await assert.rejects(
      helmBundle(opts({ kinds: ['Pelorus', 'Exporter=charts/exportrs'] })),
      (e: unknown) => e instanceof InputError && e.file === join(PELORUS, 'Chart.yaml') && /--kind Exporter=charts\/exportrs: the chart has no subchart exportrs \(it has: charts\/exporters\)/.test(e.message),
    );
    await assert.rejects(helmBundle(opts({ kinds: ['Exporter=charts/'] })), (e: unknown) => e instanceof UsageError && /not a subchart path/.test(e.message));
  });

  test('a version a CSV does not accept, a group that is no DNS name', async () => {
    await assert.rejects(helmBundle(opts({ version: '1.0' })), (e: unknown) => e instanceof InputError && e.field === 'version' && /1\.0: expected a semantic version/.test(e.message));
    await assert.rejects(helmBundle(opts({ group: 'nodots' })), (e: unknown) => e instanceof UsageError && /--group nodots/.test(e.message));
  });
});
