/**
 * `binnacle plan` changes nothing (issue 13 §3). The case that wrote before: an install whose
 * bundle has webhooks, in a namespace where its certificate Secret already exists but holds no
 * usable certificate (expired, or from before a webhook was added) — planning "issued" new
 * certificates and stored them. The test records the resourceVersion of every object of every
 * kind an install touches, cluster-wide, runs `binnacle plan`, and compares.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bundleDeploymentName } from '../../src/api/names.js';
import { webhookCertSecretName } from '../../src/render/webhook-certs.js';
import { findCondition, type KubeObject } from '../../src/kube/types.js';
import { API_VERSION, type ClusterCatalog } from '../../src/api/types.js';
import { binnacle, eventually, uniqueName } from './env.js';
import { OperatorHarness } from './operators.js';

const PACKAGE = 'opentelemetry-operator'; // validating and mutating webhooks

/** Every kind an install creates or changes (and the ones Binnacle keeps its records in). */
const KINDS: [string, string][] = [
  ['v1', 'Namespace'],
  ['v1', 'Secret'],
  ['v1', 'ConfigMap'],
  ['v1', 'ServiceAccount'],
  ['v1', 'Service'],
  ['apps/v1', 'Deployment'],
  ['rbac.authorization.k8s.io/v1', 'Role'],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
  ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
  ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'],
  [API_VERSION, 'ClusterExtension'],
  [API_VERSION, 'BundleDeployment'],
];

let h: OperatorHarness;

/**
 * The resourceVersion of every object of KINDS. Objects already being deleted, and everything in
 * a namespace being deleted, are left out: a test before this one may still be cleaning up, and
 * the API server's own controllers finish that work while we look.
 */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const terminating = new Set(
    (await h.client.list('v1', 'Namespace')).items.filter((n) => n.metadata.deletionTimestamp !== undefined).map((n) => n.metadata.name ?? ''),
  );
  for (const [apiVersion, kind] of KINDS) {
    for (const o of (await h.client.list(apiVersion, kind)).items) {
      if (o.metadata.deletionTimestamp !== undefined || terminating.has(o.metadata.namespace ?? '')) continue;
      out.set(`${kind} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`, o.metadata.resourceVersion ?? '');
    }
  }
  return out;
}

function changes(before: Map<string, string>, after: Map<string, string>, goneNamespaces: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) out.push(before.has(k) ? `changed ${k}` : `created ${k}`);
  for (const k of before.keys()) {
    const namespace = /^\S+ ([^/]*)\//.exec(k)?.[1] ?? '';
    // Deleted by the API server with a namespace it was already deleting between the two looks.
    if (!after.has(k) && !goneNamespaces.has(namespace) && !goneNamespaces.has(k.replace(/^Namespace \//, ''))) out.push(`deleted ${k}`);
  }
  return out;
}

describe('binnacle plan writes nothing', { timeout: 900_000 }, () => {
  before(async () => {
    h = await OperatorHarness.start({ packages: [PACKAGE], prefix: 'plan' });
    await eventually(
      'the catalog serving',
      async () => (findCondition((await h.client.get<ClusterCatalog>({ apiVersion: API_VERSION, kind: 'ClusterCatalog', name: h.catalogName })).status?.conditions, 'Serving')?.status === 'True' ? true : undefined),
      300_000,
    );
  });
  after(() => h.stop());

  test('planning an install with webhooks, over a certificate Secret with no usable certificate, leaves every object as it was', async () => {
    const ns = uniqueName('plan');
    const name = uniqueName('otel');
    await h.client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    h.cleanup.push(() => h.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }));
    const secret = webhookCertSecretName(bundleDeploymentName(name, PACKAGE));
    await h.client.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: secret, namespace: ns }, type: 'Opaque', data: {} });
    // kube-controller-manager fills a new namespace with its default ServiceAccount and the
    // kube-root-ca.crt ConfigMap; both must be there before the first look, or they count as writes.
    await eventually('the namespace’s default ServiceAccount', () => h.client.find({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'default' }), 60_000);
    await eventually('the namespace’s kube-root-ca.crt', () => h.client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'kube-root-ca.crt' }), 60_000);

    const before = await snapshot();
    const planned = await binnacle('plan', PACKAGE, '--name', name, '-n', ns, '-o', 'json');
    assert.equal(planned.code, 0, planned.err);
    const plan = JSON.parse(planned.out) as { bundles: { bundle: { package: string }; objects: { action: string; kind: string }[] }[] };
    const objects = plan.bundles.flatMap((b) => b.objects);
    assert.ok(objects.some((o) => o.kind === 'ValidatingWebhookConfiguration' && o.action === 'create'), `the plan covers the webhooks: ${planned.out.slice(0, 2000)}`);
    const after = await snapshot();
    assert.ok(before.size > 50, `${before.size} objects compared`);
    const live = new Set((await h.client.list('v1', 'Namespace')).items.filter((n) => n.metadata.deletionTimestamp === undefined).map((n) => n.metadata.name ?? ''));
    const goneNamespaces = new Set([...before.keys()].filter((k) => k.startsWith('Namespace /')).map((k) => k.slice('Namespace /'.length)).filter((n) => !live.has(n)));
    assert.ok(!goneNamespaces.has(ns), 'the test’s own namespace is still there');
    assert.deepEqual(changes(before, after, goneNamespaces), [], 'plan wrote to the cluster');
    const stored = await h.client.get<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: secret });
    assert.deepEqual(stored.data ?? {}, {}, 'the certificate Secret is as it was');
  });
});
