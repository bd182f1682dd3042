import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { loadBundleDir } from './load.js';
import { convertRegistryV1, type ConvertOptions } from './convert.js';
import { createSelfSignedCertProvider, staticCertProvider } from './certs.js';
import { BinnacleError, ValidationError } from '../util/errors.js';
import type { DeploymentOverrides } from './overrides.js';

const testdata = join(fileURLToPath(new URL('.', import.meta.url)), 'testdata');
const certProvider = staticCertProvider({
  caPem: '-----BEGIN CERTIFICATE-----\nTEST-CA\n-----END CERTIFICATE-----\n',
  certPem: '-----BEGIN CERTIFICATE-----\nTEST-SERVING\n-----END CERTIFICATE-----\n',
  keyPem: '-----BEGIN PRIVATE KEY-----\nTEST-KEY\n-----END PRIVATE KEY-----\n',
});

/** Compares with testdata/golden/<name>.yaml; UPDATE_GOLDEN=1 rewrites the file. */
async function golden(name: string, objects: unknown[]): Promise<void> {
  const text = objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
  const file = join(testdata, 'golden', `${name}.yaml`);
  if (process.env.UPDATE_GOLDEN === '1') {
    await mkdir(join(testdata, 'golden'), { recursive: true });
    await writeFile(file, text);
  }
  assert.equal(text, await readFile(file, 'utf8'), `output differs from ${file} (UPDATE_GOLDEN=1 to accept)`);
}

type Obj = Record<string, unknown>;
/** Walks into untyped objects: keys for mappings, numbers for lists. */
function get(o: unknown, ...path: (string | number)[]): unknown {
  let cur = o;
  for (const k of path) {
    if (typeof k === 'number') cur = Array.isArray(cur) ? cur[k] : undefined;
    else cur = typeof cur === 'object' && cur !== null && !Array.isArray(cur) ? (cur as Obj)[k] : undefined;
  }
  return cur;
}
const list = (o: unknown, ...path: (string | number)[]): unknown[] => {
  const v = get(o, ...path);
  return Array.isArray(v) ? v : [];
};
const find = (objs: Obj[], kind: string, name?: string): Obj[] => objs.filter((o) => o.kind === kind && (name === undefined || get(o, 'metadata', 'name') === name));
const one = (objs: Obj[], kind: string, name?: string): Obj => {
  const found = find(objs, kind, name)[0];
  assert.ok(found !== undefined, `no ${kind} ${name ?? ''}`);
  return found;
};

async function render(dir: string, opts: Omit<ConvertOptions, 'certProvider'>): Promise<{ mode: string; objects: Obj[] }> {
  const b = await loadBundleDir(join(testdata, dir));
  const out = convertRegistryV1(b, { ...opts, certProvider });
  return { mode: out.installMode, objects: out.objects };
}

describe('convertRegistryV1', () => {
  it('AllNamespaces: permissions become cluster roles with namespace list rights', async () => {
    const { mode, objects } = await render('webhook-operator', { installNamespace: 'operators', watchNamespaces: [] });
    assert.equal(mode, 'AllNamespaces');
    assert.equal(find(objects, 'Role').length, 0);
    assert.equal(find(objects, 'ClusterRole').length, 3);
    const lifted = find(objects, 'ClusterRole').find((r) => list(r, 'rules').some((x) => list(x, 'resources').includes('namespaces')));
    assert.ok(lifted !== undefined);
    const dep = one(objects, 'Deployment');
    assert.equal(get(dep, 'spec', 'template', 'metadata', 'annotations', 'olm.targetNamespaces'), '');
    assert.equal(get(dep, 'spec', 'template', 'metadata', 'annotations', 'olm.operatorNamespace'), 'operators');
    assert.equal(get(one(objects, 'ValidatingWebhookConfiguration'), 'webhooks', 0, 'namespaceSelector'), undefined);
    await golden('webhook-operator-all-namespaces', objects);
  });

  it('OwnNamespace: Roles in the install namespace', async () => {
    const { mode, objects } = await render('webhook-operator', { installNamespace: 'operators', watchNamespaces: ['operators'] });
    assert.equal(mode, 'OwnNamespace');
    assert.deepEqual(find(objects, 'Role').map((r) => get(r, 'metadata', 'namespace')), ['operators']);
    await golden('webhook-operator-own-namespace', objects);
  });

  it('SingleNamespace: Roles in the watched namespace bound to the operator account', async () => {
    const { mode, objects } = await render('webhook-operator', { installNamespace: 'operators', watchNamespaces: ['team-a'] });
    assert.equal(mode, 'SingleNamespace');
    const rb = one(objects, 'RoleBinding');
    assert.equal(get(rb, 'metadata', 'namespace'), 'team-a');
    assert.deepEqual(rb.subjects, [{ kind: 'ServiceAccount', name: 'webhook-operator', namespace: 'operators' }]);
    const hook = one(objects, 'MutatingWebhookConfiguration');
    assert.deepEqual(get(hook, 'webhooks', 0, 'namespaceSelector', 'matchExpressions', 0, 'values'), ['team-a']);
    await golden('webhook-operator-single-namespace', objects);
  });

  it('MultiNamespace: one Role and RoleBinding per namespace', async () => {
    const { mode, objects } = await render('webhook-operator', { installNamespace: 'operators', watchNamespaces: ['team-b', 'team-a'] });
    assert.equal(mode, 'MultiNamespace');
    assert.deepEqual(find(objects, 'Role').map((r) => get(r, 'metadata', 'namespace')), ['team-a', 'team-b']);
    assert.equal(get(one(objects, 'Deployment'), 'spec', 'template', 'metadata', 'annotations', 'olm.targetNamespaces'), 'team-a,team-b');
    await golden('webhook-operator-multi-namespace', objects);
  });

  it('webhooks: service, secret, caBundle, and certificates mounted where OLM mounts them', async () => {
    const { objects } = await render('webhook-operator', { installNamespace: 'operators', watchNamespaces: [] });
    const svc = one(objects, 'Service', 'webhook-operator-controller-service');
    assert.deepEqual(get(svc, 'spec', 'ports'), [{ name: '443', port: 443, targetPort: 9443 }]);
    assert.deepEqual(get(svc, 'spec', 'selector'), { 'control-plane': 'webhook-operator' });
    assert.equal(one(objects, 'Secret', 'webhook-operator-controller-service-cert').type, 'kubernetes.io/tls');
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nTEST-CA\n-----END CERTIFICATE-----\n').toString('base64');
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const h = get(one(objects, kind), 'webhooks', 0);
      assert.equal(get(h, 'clientConfig', 'caBundle'), ca);
      assert.equal(get(h, 'clientConfig', 'service', 'name'), 'webhook-operator-controller-service');
    }
    const pod = get(one(objects, 'Deployment'), 'spec', 'template', 'spec');
    const mounts = list(pod, 'containers', 0, 'volumeMounts').map((m) => `${String(get(m, 'name'))}:${String(get(m, 'mountPath'))}`);
    assert.deepEqual(mounts, ['config:/etc/config', 'webhook-cert:/tmp/k8s-webhook-server/serving-certs', 'apiservice-cert:/apiserver.local.config/certificates']);
    assert.deepEqual(list(pod, 'volumes').map((v) => get(v, 'name')), ['config', 'webhook-cert', 'apiservice-cert']);
    // other manifests move to the install namespace; cluster-scoped ones stay cluster-scoped
    assert.equal(get(one(objects, 'ConfigMap'), 'metadata', 'namespace'), 'operators');
    assert.equal(get(one(objects, 'PriorityClass'), 'metadata', 'namespace'), undefined);
  });

  it('conversion webhook wiring and v1beta1 CRDs upgraded to v1', async () => {
    const { objects } = await render('conversion-operator/1.0.0', { installNamespace: 'ops', watchNamespaces: [''] });
    const conv = get(one(objects, 'CustomResourceDefinition', 'things.example.com'), 'spec', 'conversion');
    assert.equal(get(conv, 'strategy'), 'Webhook');
    assert.deepEqual(get(conv, 'webhook', 'clientConfig', 'service'), { namespace: 'ops', name: 'conversion-operator-service', path: '/convert', port: 443 });
    assert.deepEqual(get(conv, 'webhook', 'conversionReviewVersions'), ['v1', 'v1beta1']);
    const old = one(objects, 'CustomResourceDefinition', 'olds.legacy.example.com');
    assert.equal(old.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(get(old, 'spec', 'scope'), 'Namespaced');
    assert.equal(get(old, 'spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'type'), 'object');
    assert.equal(get(old, 'spec', 'versions', 0, 'additionalPrinterColumns', 0, 'jsonPath'), '.metadata.creationTimestamp');
    // owned API services: an APIService with the CA, and the aggregated-API-server RBAC
    const api = one(objects, 'APIService', 'v1.metrics.example.com');
    assert.equal(get(api, 'spec', 'service', 'name'), 'conversion-operator-service');
    assert.equal(typeof get(api, 'spec', 'caBundle'), 'string');
    assert.equal(get(one(objects, 'ClusterRoleBinding', 'conversion-operator-service-system:auth-delegator'), 'roleRef', 'name'), 'system:auth-delegator');
    assert.equal(get(one(objects, 'RoleBinding', 'conversion-operator-service-auth-reader'), 'metadata', 'namespace'), 'kube-system');
    assert.deepEqual(get(one(objects, 'Service', 'conversion-operator-service'), 'spec', 'ports'), [{ name: '443', port: 443, targetPort: 9443 }]);
    await golden('conversion-operator-all-namespaces', objects);
  });

  it('overrides: env, volumes, tolerations, resources, nodeSelector, affinity, annotations', async () => {
    const overrides: DeploymentOverrides = {
      env: [{ name: 'LOG_LEVEL', value: 'debug' }, { name: 'HTTP_PROXY', value: 'http://proxy:3128' }],
      envFrom: [{ configMapRef: { name: 'extra' } }],
      volumes: [{ name: 'trusted-ca', configMap: { name: 'ca-bundle' } }],
      volumeMounts: [{ name: 'trusted-ca', mountPath: '/etc/pki/ca' }],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ops', effect: 'NoSchedule' }],
      resources: { limits: { cpu: '1', memory: '256Mi' } },
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } },
      annotations: { 'kubectl.kubernetes.io/default-container': 'ignored', 'example.com/owner': 'ops' },
    };
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const out = convertRegistryV1(b, { installNamespace: 'operators', watchNamespaces: [], overrides, certProvider });
    const dep = one(out.objects, 'Deployment');
    const c = get(dep, 'spec', 'template', 'spec', 'containers', 0);
    assert.deepEqual(list(c, 'env').map((e) => `${String(get(e, 'name'))}=${JSON.stringify(get(e, 'value') ?? '')}`), ['WATCH_NAMESPACE=""', 'LOG_LEVEL="debug"', 'HTTP_PROXY="http://proxy:3128"']);
    assert.deepEqual(get(c, 'resources'), { limits: { cpu: '1', memory: '256Mi' } });
    // the pod's own annotation wins over the override
    assert.equal(get(dep, 'spec', 'template', 'metadata', 'annotations', 'kubectl.kubernetes.io/default-container'), 'manager');
    assert.equal(get(dep, 'metadata', 'annotations', 'example.com/owner'), 'ops');
    await golden('webhook-operator-overrides', [dep]);
  });

  it('refuses an install mode the CSV does not support, naming the field', async () => {
    const b = await loadBundleDir(join(testdata, 'conversion-operator', '1.0.0'));
    assert.throws(
      () => convertRegistryV1(b, { installNamespace: 'ops', watchNamespaces: ['ops'] }),
      (e: unknown) => e instanceof BinnacleError && e.code === 'BUNDLE_INSTALL_MODE' && /OwnNamespace/.test(e.message) && /spec\.installModes/.test(e.message),
    );
  });

  it('refuses a bundle whose webhook points at a missing deployment', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const broken = { ...b, csv: { ...b.csv, webhooks: b.csv.webhooks.map((w) => ({ ...w, deploymentName: 'gone' })) } };
    assert.throws(
      () => convertRegistryV1(broken, { installNamespace: 'ops', watchNamespaces: [] }),
      (e: unknown) => e instanceof ValidationError && e.result.errors().some((p) => p.rule === 'render.webhook-deployment' && p.field === 'spec.webhookdefinitions[0].deploymentName'),
    );
  });

  it('is deterministic', async () => {
    const a = await render('webhook-operator', { installNamespace: 'operators', watchNamespaces: ['team-a'] });
    const b = await render('webhook-operator', { installNamespace: 'operators', watchNamespaces: ['team-a'] });
    assert.equal(JSON.stringify(a.objects), JSON.stringify(b.objects));
  });
});

describe('createSelfSignedCertProvider', () => {
  it('issues a serving certificate for each webhook service, signed by its CA', async () => {
    const b = await loadBundleDir(join(testdata, 'webhook-operator'));
    const p = await createSelfSignedCertProvider(b, 'operators', { now: new Date('2026-01-01T00:00:00Z') });
    const cert = p.servingCert({ serviceName: 'webhook-operator-controller-service', namespace: 'operators' });
    const leaf = new X509Certificate(cert.certPem);
    const ca = new X509Certificate(cert.caPem);
    assert.ok(leaf.verify(ca.publicKey));
    assert.ok(leaf.checkHost('webhook-operator-controller-service.operators.svc') !== undefined);
    assert.match(cert.keyPem, /BEGIN PRIVATE KEY/);
  });
});
