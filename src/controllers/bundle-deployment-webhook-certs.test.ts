/**
 * Webhook certificates across an upgrade of Binnacle itself: an install whose certificates'
 * Secret was written by Binnacle before it was an object of the release (render wrote it, with
 * only its owner labels, outside the release) is upgraded with the real certificate port and
 * renderer over the one fake cluster. The Secret is adopted with its CA, so the webhook
 * configurations' caBundle is unchanged and the installed webhooks keep working; from then on the
 * Secret is an object of the release: owned, and deleted with it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pino } from 'pino';
import { ReleaseRecords } from '../apply/index.js';
import { crdOf } from '../apply/crd.test-helper.js';
import { API_VERSION, FINALIZER_CLEANUP, LABEL_OWNER_KIND, LABEL_OWNER_NAME } from '../api/types.js';
import { serviceDnsNames } from '../bundle/certs.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { createRenderer } from '../render/index.js';
import { webhookCertSecretName } from '../render/webhook-certs.js';
import { createCertificateAuthority, issueCertificate } from '../util/pki.js';
import { BundleDeploymentReconciler } from './bundle-deployment.js';

const logger = pino({ level: 'silent' });
const BUNDLE = join(import.meta.dirname, '..', 'bundle', 'testdata', 'webhook-operator');
const SERVICE = 'webhook-operator-controller-service';
const SECRET = webhookCertSecretName('op');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/**
 * The Secret as Binnacle wrote it before the certificates were an object of the release
 * (render/webhook-certs.ts's persistentCertProvider, up to commit e8e4244): a CA and one
 * certificate per webhook service, applied by render with its owner's labels only.
 */
async function secretAsWrittenByRender(namespace: string): Promise<{ secret: KubeObject; caPem: string }> {
  const ca = await createCertificateAuthority('binnacle-webhooks-op', 730);
  const hosts = serviceDnsNames(SERVICE, namespace);
  const leaf = await issueCertificate(ca, { commonName: hosts[2] ?? SERVICE, hosts, usage: 'server', validDays: 365 });
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SECRET, namespace, labels: { [LABEL_OWNER_KIND]: 'BundleDeployment', [LABEL_OWNER_NAME]: 'op' } },
    type: 'Opaque',
    data: { 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem), [`${SERVICE}.crt`]: b64(leaf.certPem), [`${SERVICE}.key`]: b64(leaf.keyPem) },
  };
  return { secret, caPem: ca.certPem };
}

function caBundles(cluster: FakeCluster): string[] {
  return ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].flatMap((kind) =>
    cluster.all(kind).flatMap((o) => ((o.webhooks ?? []) as { clientConfig?: { caBundle?: string } }[]).map((w) => w.clientConfig?.caBundle ?? '')),
  );
}

function setup(): { cluster: FakeCluster; reconciler: (o?: { secretInRelease?: boolean }) => BundleDeploymentReconciler } {
  const cluster = new FakeCluster();
  for (const ns of ['operators', 'binnacle-system']) cluster.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  cluster.put(crdOf({ group: 'binnacle.dev', kind: 'BundleDeployment', plural: 'bundledeployments' }, {}, { scope: 'Cluster', version: 'v1alpha1' }));
  cluster.put(crdOf({ group: 'operators.coreos.com', kind: 'OperatorCondition', plural: 'operatorconditions' }, {}, { version: 'v2' }));
  // The webhook service's endpoints are ready (the operator's pod serves them).
  cluster.put({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { namespace: 'operators', name: `${SERVICE}-1`, labels: { 'kubernetes.io/service-name': SERVICE } }, endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }] });
  cluster.put({
    apiVersion: API_VERSION,
    kind: 'BundleDeployment',
    metadata: { name: 'op', uid: 'u1', finalizers: [FINALIZER_CLEANUP] },
    spec: { source: { type: 'configMaps', configMaps: [{ namespace: 'operators', name: 'op-bundle' }] }, format: 'registry+v1', installNamespace: 'operators', watchNamespace: '' },
  });
  const client = cluster.client({ user: 'manager' });
  const records = new ReleaseRecords({ client, namespace: 'binnacle-system', logger });
  const renderer = createRenderer();
  return {
    cluster,
    reconciler: (o = {}) =>
      new BundleDeploymentReconciler({
        client,
        engine: { records, pollIntervalMs: 10, renderer },
        cacheDir: '/cache',
        healthTimeoutMs: 500,
        ports: {
          unpack: () => Promise.resolve({ dir: BUNDLE, digest: `sha256:${'c'.repeat(64)}`, resolved: { type: 'configMaps' } }),
          recordEvent: () => Promise.resolve(),
          // The release as Binnacle made it before: the certificates' Secret not one of its objects.
          ...(o.secretInRelease === false ? { render: (format, ctx) => renderer.bundle({ ...ctx, spec: { ...ctx.spec, format }, ...(ctx.certs === undefined ? {} : { certs: { ...ctx.certs, secret: undefined } }) }) } : {}),
        },
      }),
  };
}

const req = { key: 'op', name: 'op' };
const ctx = { logger, signal: new AbortController().signal };

describe('webhook certificates made before they were objects of the release', () => {
  test('an upgrade adopts the Secret render wrote, with its CA: the webhook configurations keep their caBundle, and the Secret becomes an object of the release, deleted with it', async () => {
    const { cluster, reconciler } = setup();
    const before = await secretAsWrittenByRender('operators');
    cluster.put(before.secret);
    // Revision 1, as installed before: its webhooks trust the CA in the Secret, which is not one of its objects.
    await reconciler({ secretInRelease: false }).reconcile(req, ctx);
    assert.deepEqual(caBundles(cluster), [b64(before.caPem), b64(before.caPem)], 'the installed webhooks trust the CA the Secret keeps');
    const writesBefore = cluster.log.filter((r) => r.name === SECRET && r.verb !== 'get').length;

    // Binnacle upgraded, and the BundleDeployment changed: an upgrade, rendered with the real ports.
    const bd = cluster.get({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: 'op' });
    assert.ok(bd !== undefined);
    cluster.put({ ...bd, spec: { ...(bd.spec as Record<string, unknown>), config: { env: [{ name: 'UPGRADED', value: '1' }] } } });
    await reconciler().reconcile(req, ctx);

    const status = cluster.get({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: 'op' })?.status as { revision?: number; appliedObjects?: { kind: string; name: string }[] } | undefined;
    assert.equal(status?.revision, 2, 'the upgrade was deployed');
    assert.deepEqual(caBundles(cluster), [b64(before.caPem), b64(before.caPem)], 'the caBundle is unchanged: the installed webhooks keep working');
    const after = cluster.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'operators', name: SECRET });
    const data = after?.data as Record<string, string> | undefined;
    assert.equal(data?.['ca.crt'], b64(before.caPem), 'the CA is kept');
    assert.equal(data?.[`${SERVICE}.crt`], (before.secret.data as Record<string, string>)[`${SERVICE}.crt`], 'and the serving certificate, still fresh');
    assert.equal(after?.metadata.annotations?.['meta.helm.sh/release-name'], 'op', 'the Secret is now marked as an object of the release');
    assert.ok(status?.appliedObjects?.some((r) => r.kind === 'Secret' && r.name === SECRET), 'and listed with what the release applied');
    assert.ok(cluster.log.filter((r) => r.name === SECRET && r.verb !== 'get').length > writesBefore, 'written by the release (apply), not by render');

    // Deleted with the release, as every other object.
    const live = cluster.get({ apiVersion: API_VERSION, kind: 'BundleDeployment', name: 'op' });
    assert.ok(live !== undefined);
    cluster.put({ ...live, metadata: { ...live.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
    await reconciler().reconcile(req, ctx);
    assert.equal(cluster.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'operators', name: SECRET }), undefined, 'the certificates went with the release');
  });
});
