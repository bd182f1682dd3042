/**
 * operator-controller's registry+v1 conversion goldens, rendered by Binnacle and compared field
 * for field. The bundles and the expected objects are operator-controller v1.11.0's
 * `test/regression/convert/testdata/` (vendored unchanged in test/vendor/operator-controller-v1.11.0,
 * checked byte for byte by olmv1-vendor.test.ts); CASES are the cases of its
 * `test/regression/convert/generate-manifests.go` (lines 67-283), with the same install namespace,
 * watch namespace and deployment configuration (in the JSON form a ClusterExtension's
 * `config.inline.deploymentConfig` and a BundleDeployment's `spec.config` take it).
 *
 * Each case is rendered twice:
 * 1. **conversion**: `convertRegistryV1` with no certificate provider, as generate-manifests.go
 *    renders (it passes none). Equal to the golden after NORMALIZE only.
 * 2. **render**: the BundleDeployment's render path (`Renderer.bundle`, src/render), which
 *    always issues webhook certificates and adds the OperatorCondition. Equal to the golden
 *    after NORMALIZE and the DELIBERATE additions, each applied to the golden by a named step.
 *
 * No name is mapped: Binnacle names everything as operator-controller does (the RBAC made from
 * CSV permissions by the same hash, src/bundle/names.ts permissionObjectName). Objects are
 * matched by kind, namespace and name; their order is not compared (an object set is applied
 * as a set), the order inside each object is. Every NORMALIZE and DELIBERATE rule must change
 * something in some case, so a rule that no longer applies fails the last test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { convertRegistryV1, decodeOverrides, defaultWatchNamespaces, loadBundleDir, type RegistryV1Bundle, type ServingCert } from '../../src/bundle/index.js';
import { addOperatorCondition } from '../../src/bundle/operator-condition.js';
import { certSecretName, webhookServiceName } from '../../src/bundle/names.js';
import type { BundleDeploymentSpec } from '../../src/api/types.js';
import { isKubeObject, type KubeObject } from '../../src/kube/types.js';
import { createRenderer } from '../../src/render/index.js';
import { readYaml } from '../../src/util/yaml.js';
import { OLMV1_VENDOR_DIR, REPO_ROOT } from './olmv1-vendor.test-helper.js';

const TESTDATA = join(REPO_ROOT, OLMV1_VENDOR_DIR, 'test/regression/convert/testdata');

interface Case {
  /** generate-manifests.go's testCaseName: the folder under expected-manifests/<bundle>/. */
  name: string;
  bundle: string;
  installNamespace: string;
  /** Empty: none given (the bundle's default, AllNamespaces for both bundles here). */
  watchNamespace: string;
  deploymentConfig?: Record<string, unknown>;
}

const CASES: readonly Case[] = [
  { name: 'all-namespaces', bundle: 'argocd-operator.v0.6.0', installNamespace: 'argocd-system', watchNamespace: '' },
  { name: 'single-namespace', bundle: 'argocd-operator.v0.6.0', installNamespace: 'argocd-system', watchNamespace: 'argocd-watch' },
  { name: 'own-namespace', bundle: 'argocd-operator.v0.6.0', installNamespace: 'argocd-system', watchNamespace: 'argocd-system' },
  { name: 'all-webhook-types', bundle: 'webhook-operator.v0.0.5', installNamespace: 'webhook-system', watchNamespace: '' },
  {
    name: 'with-deploymentconfig-options',
    bundle: 'argocd-operator.v0.6.0',
    installNamespace: 'argocd-system',
    watchNamespace: '',
    deploymentConfig: {
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [
        { key: 'some/key', operator: 'Equal', effect: 'NoSchedule' },
        { key: 'someother/key', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 },
      ],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
      env: [
        { name: 'CUSTOM_ENV_VAR', value: 'custom-value' },
        { name: 'LOG_LEVEL', value: 'debug' },
      ],
      envFrom: [{ prefix: 'test' }, { configMapRef: { name: 'configmapForTest' } }, { secretRef: { name: 'secretForTest' } }],
      volumes: [
        { name: 'test-configmap-volume', configMap: { name: 'testVolumeConfigMap' } },
        { name: 'test-emptydir-volume', emptyDir: {} },
      ],
      volumeMounts: [{ name: 'test-configmap-volume', mountPath: '/test-volume-mount', readOnly: true }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }],
                matchFields: [{ key: 'key', operator: 'In', values: ['val1', 'val2'] }],
              },
            ],
          },
        },
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'test-app' } }, topologyKey: 'topKey', namespaces: ['test', 'test2'] }],
        },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'test-app-2' } }, topologyKey: 'topKey2' } }],
        },
      },
      annotations: { foo: 'bar', testkey: 'testval' },
    },
  },
  { name: 'with-empty-affinity', bundle: 'argocd-operator.v0.6.0', installNamespace: 'argocd-system', watchNamespace: '', deploymentConfig: { affinity: {} } },
  { name: 'with-empty-affinity-subtype', bundle: 'argocd-operator.v0.6.0', installNamespace: 'argocd-system', watchNamespace: '', deploymentConfig: { affinity: { nodeAffinity: {} } } },
];

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How often each rule changed something, over every case and both renders. */
const fired = new Map<string, number>();
const fire = (rule: string): void => void fired.set(rule, (fired.get(rule) ?? 0) + 1);

/**
 * Rules that make equal what the API server treats as equal, applied to both sides. Each
 * changes only what its reason names.
 */
const NORMALIZE: Record<string, string> = {
  status: "Go's typed objects write their zero status (`status: {}`, a Service's `loadBalancer: {}`); status is the API server's to write, never applied",
  nulls: 'Go writes an unset struct-valued field as null (`metadata.creationTimestamp: null`), and Binnacle keeps the null a bundle file has; null and absent are the same to the API server',
  'cluster-scoped-namespace':
    "operator-controller gives the webhook configurations, which are cluster-scoped, the install namespace (generators.go BundleValidatingWebhookResourceGenerator, CreateValidatingWebhookConfigurationResource(name, opts.InstallNamespace)); the API server drops a cluster-scoped object's namespace, and Binnacle does not set one",
};

function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (!isObj(v)) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null) {
      fire('nulls');
      continue;
    }
    out[k] = dropNulls(x);
  }
  return out;
}

/** The cluster-scoped kinds a registry+v1 render makes. */
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'APIService', 'PriorityClass']);

function normalize(o: KubeObject): KubeObject {
  const { status, ...rest } = o;
  if (status !== undefined) fire('status');
  const n = dropNulls(rest) as KubeObject;
  if (CLUSTER_SCOPED.has(n.kind) && n.metadata.namespace !== undefined) {
    fire('cluster-scoped-namespace');
    const { namespace: _ns, ...meta } = n.metadata;
    n.metadata = meta;
  }
  return n;
}

/** A fixed serving certificate for the render path (the same for every service). */
const CERT: ServingCert = {
  caPem: '-----BEGIN CERTIFICATE-----\nTEST-CA\n-----END CERTIFICATE-----\n',
  certPem: '-----BEGIN CERTIFICATE-----\nTEST-SERVING\n-----END CERTIFICATE-----\n',
  keyPem: '-----BEGIN PRIVATE KEY-----\nTEST-KEY\n-----END PRIVATE KEY-----\n',
};
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** operator-controller's certificate volumes (generators.go certVolumeConfigs), as any certificate provider mounts them. */
const CERT_VOLUMES = [
  { name: 'webhook-cert', path: '/tmp/k8s-webhook-server/serving-certs', cert: 'tls.crt', key: 'tls.key' },
  { name: 'apiservice-cert', path: '/apiserver.local.config/certificates', cert: 'apiserver.crt', key: 'apiserver.key' },
];

interface Deliberate {
  why: string;
  /** The golden (normalized) as Binnacle's render path should make it: the rule's additions applied. */
  apply(golden: KubeObject[], bundle: RegistryV1Bundle, c: Case): KubeObject[];
}

/** What a Deployment's pod spec holds, for the certificate step. */
function podSpecOf(d: KubeObject): { volumes?: Json[]; containers?: Json[] } {
  const spec = d.spec as { template?: { spec?: { volumes?: Json[]; containers?: Json[] } } } | undefined;
  return spec?.template?.spec ?? {};
}

/** operator-controller's ensureCorrectDeploymentCertVolumes under a certificate provider whose Secret is `secretName` (keys tls.crt, tls.key). */
function mountCertificate(deployment: KubeObject, secretName: string): void {
  const pod = podSpecOf(deployment);
  const remove = new Set(CERT_VOLUMES.map((v) => v.name));
  const paths = new Set(CERT_VOLUMES.map((v) => v.path));
  const mountsOf = (ct: Json): Json[] => (ct.volumeMounts as Json[] | undefined) ?? [];
  for (const ct of pod.containers ?? []) for (const m of mountsOf(ct)) if (paths.has(String(m.mountPath))) remove.add(String(m.name));
  pod.volumes = [
    ...(pod.volumes ?? []).filter((v) => !remove.has(String(v.name))),
    ...CERT_VOLUMES.map((v) => ({ name: v.name, secret: { secretName, items: [{ key: 'tls.crt', path: v.cert }, { key: 'tls.key', path: v.key }] } })),
  ];
  for (const ct of pod.containers ?? []) ct.volumeMounts = [...mountsOf(ct).filter((m) => !remove.has(String(m.name))), ...CERT_VOLUMES.map((v) => ({ name: v.name, mountPath: v.path }))];
}

/** The CA as OLM v0 writes it: in each admission webhook's clientConfig, and in a CRD's conversion webhook's. */
function injectCa(o: KubeObject, caBundle: string): void {
  if (o.kind === 'ValidatingWebhookConfiguration' || o.kind === 'MutatingWebhookConfiguration') {
    for (const w of (o.webhooks as Json[] | undefined) ?? []) (w.clientConfig as Json).caBundle = caBundle;
  }
  if (o.kind === 'CustomResourceDefinition') {
    const conv = (o.spec as Json).conversion as { strategy?: string; webhook?: { clientConfig?: Json } } | undefined;
    if (conv?.strategy === 'Webhook' && conv.webhook?.clientConfig !== undefined) conv.webhook.clientConfig.caBundle = caBundle;
  }
}

/**
 * Objects and fields Binnacle adds on purpose, each applied to the golden. They change the
 * render path only; the conversion alone equals the golden.
 */
const DELIBERATE: Record<string, Deliberate> = {
  'own-namespace-permissions': {
    why: "OLM v0 grants a CSV's namespaced permissions in the operator's own namespace (its install strategy) and copies them to each target namespace (OperatorGroup); OLM v1 only to the targets, so a SingleNamespace operator watching another namespace has no rights in its own (its leader-election lock, Binnacle Helm operators' trusted release records). Binnacle's render keeps v0's grant: each Role and RoleBinding the golden puts in the watch namespace, also in the install namespace (src/bundle/convert.ts ownNamespaceRoles)",
    apply: (golden, _bundle, c) => {
      if (c.watchNamespace === '' || c.watchNamespace === c.installNamespace) return golden;
      const copies = golden
        .filter((o) => (o.kind === 'Role' || o.kind === 'RoleBinding') && o.metadata.namespace === c.watchNamespace)
        .map((o) => ({ ...structuredClone(o), metadata: { ...structuredClone(o.metadata), namespace: c.installNamespace } }));
      if (copies.length > 0) fire('own-namespace-permissions');
      return [...golden, ...copies];
    },
  },
  'operator-condition': {
    why: "OLM v0 gives every operator an OperatorCondition named for its CSV, a Role and RoleBinding that let the operator's ServiceAccounts update it, and OPERATOR_CONDITION_NAME in each container (operator-lib reads it for Upgradeable); OLM v1 dropped it, Binnacle keeps it so v0 operators run unchanged. Applied with Binnacle's own step (src/bundle/operator-condition.ts addOperatorCondition)",
    apply: (golden, bundle, c) => {
      const out = addOperatorCondition(bundle, c.installNamespace, golden);
      if (out.length !== golden.length) fire('operator-condition');
      return out;
    },
  },
  'webhook-certificates': {
    why: "Binnacle issues each webhook Service's serving certificate itself, as OLM v0 does, where OLM v1 needs cert-manager or OpenShift's service CA. The goldens are rendered with no certificate provider; with one, operator-controller mounts the certificate Secret `<service>-cert` (keys tls.crt, tls.key) at both certificate paths in place of the bundle's own volume there (generators.go ensureCorrectDeploymentCertVolumes). Binnacle then writes the CA into each webhook's and conversion webhook's clientConfig.caBundle (OLM v0's way; cert-manager would inject it from an annotation) and makes the Secret (kubernetes.io/tls, with OLM v0's olmCAKey)",
    apply: (golden, bundle, c) => {
      const served = new Set(bundle.csv.webhooks.map((w) => w.deploymentName));
      if (served.size === 0) return golden;
      fire('webhook-certificates');
      const out = golden.map((o) => structuredClone(o));
      for (const o of out) {
        if (o.kind === 'Deployment' && served.has(o.metadata.name ?? '')) mountCertificate(o, certSecretName(webhookServiceName(o.metadata.name ?? '')));
        injectCa(o, b64(CERT.caPem));
      }
      for (const svc of [...new Set([...served].map(webhookServiceName))].sort()) {
        out.push({
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'kubernetes.io/tls',
          metadata: { name: certSecretName(svc), namespace: c.installNamespace },
          data: { 'tls.crt': b64(CERT.certPem), 'tls.key': b64(CERT.keyPem), olmCAKey: b64(CERT.caPem) },
        });
      }
      return out;
    },
  },
};

function keyOf(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace === undefined ? '' : `${o.metadata.namespace}/`}${o.metadata.name ?? ''}`;
}

/** Every difference, one line each: an object only on one side, or a field path with both values. */
function differences(expected: readonly KubeObject[], actual: readonly KubeObject[]): string[] {
  const exp = new Map(expected.map((o) => [keyOf(o), o]));
  const act = new Map(actual.map((o) => [keyOf(o), o]));
  const out: string[] = [];
  for (const k of exp.keys()) if (!act.has(k)) out.push(`${k}: missing from Binnacle's objects`);
  for (const k of act.keys()) if (!exp.has(k)) out.push(`${k}: only in Binnacle's objects`);
  if (exp.size !== expected.length || act.size !== actual.length) out.push('the same kind, namespace and name twice');
  const walk = (k: string, path: string, a: unknown, b: unknown): void => {
    if (isObj(a) && isObj(b)) {
      for (const f of new Set([...Object.keys(a), ...Object.keys(b)])) walk(k, `${path}.${f}`, a[f], b[f]);
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => walk(k, `${path}[${i}]`, x, b[i]));
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push(`${k} ${path}: operator-controller ${JSON.stringify(a) ?? 'absent'}, Binnacle ${JSON.stringify(b) ?? 'absent'}`);
    }
  };
  for (const [k, a] of exp) {
    const b = act.get(k);
    if (b !== undefined) walk(k, '', a, b);
  }
  return out;
}

function goldenOf(c: Case): KubeObject[] {
  const dir = join(TESTDATA, 'expected-manifests', c.bundle, c.name);
  const files = readdirSync(dir).sort();
  assert.ok(files.length > 0, `no expected objects in ${dir}`);
  return files.map((f) => {
    const v = readYaml(readFileSync(join(dir, f), 'utf8'), f);
    assert.ok(isKubeObject(v), `${f} is a Kubernetes object`);
    return v;
  });
}

const bundleDir = (c: Case): string => join(TESTDATA, 'bundles', c.bundle);

function converted(c: Case, bundle: RegistryV1Bundle): KubeObject[] {
  const watch = c.watchNamespace === '' ? defaultWatchNamespaces(bundle, c.installNamespace) : [c.watchNamespace];
  assert.ok(watch !== undefined, 'the bundle has a default install mode');
  const decoded = c.deploymentConfig === undefined ? undefined : decodeOverrides(c.deploymentConfig, 'deploymentConfig');
  assert.deepEqual(decoded?.problems ?? [], []);
  const out = convertRegistryV1(bundle, { installNamespace: c.installNamespace, watchNamespaces: watch, ...(decoded === undefined ? {} : { overrides: decoded.overrides }) });
  return out.objects.filter(isKubeObject);
}

async function rendered(c: Case): Promise<KubeObject[]> {
  const spec: BundleDeploymentSpec = {
    source: { type: 'local', local: { path: bundleDir(c) } },
    format: 'registry+v1',
    installNamespace: c.installNamespace,
    ...(c.watchNamespace === '' ? {} : { watchNamespace: c.watchNamespace }),
    ...(c.deploymentConfig === undefined ? {} : { config: c.deploymentConfig }),
  };
  const out = await createRenderer().bundle({ dir: bundleDir(c), spec, name: c.name, digest: '', revision: 1, certs: { serving: {}, fallback: CERT } });
  return out.objects;
}

for (const c of CASES) {
  test(`${c.bundle} ${c.name}: the conversion (no certificate provider, as generate-manifests.go) is operator-controller's golden`, async () => {
    const bundle = await loadBundleDir(bundleDir(c));
    const ours = converted(c, bundle).map(normalize);
    assert.deepEqual(differences(goldenOf(c).map(normalize), ours), []);
  });

  test(`${c.bundle} ${c.name}: the BundleDeployment's render is the golden plus Binnacle's deliberate additions`, async () => {
    const bundle = await loadBundleDir(bundleDir(c));
    let expected = goldenOf(c).map(normalize);
    for (const rule of Object.values(DELIBERATE)) expected = rule.apply(expected, bundle, c).map(normalize);
    assert.deepEqual(differences(expected, (await rendered(c)).map(normalize)), []);
  });
}

test('every normalization and every deliberate difference is used by some case, and each golden case is run', () => {
  for (const rule of [...Object.keys(NORMALIZE), ...Object.keys(DELIBERATE)]) assert.ok((fired.get(rule) ?? 0) > 0, `rule ${rule} changed nothing: remove it`);
  const folders = readdirSync(join(TESTDATA, 'expected-manifests')).flatMap((b) => readdirSync(join(TESTDATA, 'expected-manifests', b)).map((n) => `${b}/${n}`));
  assert.deepEqual(folders.sort(), CASES.map((c) => `${c.bundle}/${c.name}`).sort());
});
