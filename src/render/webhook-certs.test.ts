/**
 * The certificate port and render write nothing: the webhook certificates are read back from
 * their Secret (adopted with the CA while it stays fresh) or issued in memory, before render;
 * render takes them as data and adds their Secret as an object of the release. Over the one
 * fake cluster, which counts every write.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { FakeCluster, WRITE_VERBS } from '../kube/fake-cluster.test-helper.js';
import { loadBundleDir } from '../bundle/index.js';
import { createCertificateAuthority } from '../util/pki.js';
import { bundleWebhookCerts, webhookCertSecretName, webhookCerts } from './webhook-certs.js';
import { createRenderer } from './index.js';

const BUNDLE = join(import.meta.dirname, '..', 'bundle', 'testdata', 'webhook-operator');
const SERVICE = 'webhook-operator-controller-service';
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const DAY = 24 * 3600 * 1000;

function writes(cluster: FakeCluster): string[] {
  return cluster.log.filter((r) => WRITE_VERBS.has(r.verb)).map((r) => `${r.verb} ${r.kind} ${r.name}`);
}

describe('webhook certificates, before render', () => {
  test('a kept Secret is adopted with its CA (issued now: the serving certificate it lacks); read again, the same certificates and digest; nothing written', async () => {
    const cluster = new FakeCluster();
    const ca = await createCertificateAuthority('binnacle-webhooks-op', 730);
    cluster.put({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'ops', name: webhookCertSecretName('op') }, data: { 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem) } });
    const bundle = await loadBundleDir(BUNDLE);
    const reader = cluster.client({ user: 'installer' });
    const first = await webhookCerts(reader, { name: 'op' }, bundle, 'ops');
    assert.equal(first.serving[SERVICE]?.caPem, ca.certPem, 'the CA is the one the Secret keeps');
    assert.equal(first.issued, true, 'the serving certificate was missing, so one was issued (under the kept CA)');
    cluster.put(first.secret);
    const again = await webhookCerts(reader, { name: 'op' }, bundle, 'ops');
    assert.deepEqual([again.issued, again.digest, again.serving[SERVICE]?.certPem], [false, first.digest, first.serving[SERVICE]?.certPem]);
    assert.deepEqual(writes(cluster), []);
  });

  test('no Secret, or a CA within 30 days of expiry: new certificates, in memory', async () => {
    const cluster = new FakeCluster();
    const bundle = await loadBundleDir(BUNDLE);
    const reader = cluster.client();
    const made = await webhookCerts(reader, { name: 'op' }, bundle, 'ops');
    assert.equal(made.issued, true);
    cluster.put(made.secret);
    const late = await webhookCerts(reader, { name: 'op' }, bundle, 'ops', new Date(Date.now() + 710 * DAY));
    assert.equal(late.issued, true);
    assert.notEqual(late.serving[SERVICE]?.caPem, made.serving[SERVICE]?.caPem, 'a CA close to expiry is renewed');
    assert.deepEqual(writes(cluster), []);
  });

  test('render adds the Secret as an object of the release, serves the webhooks with the certificates given, and writes nothing', async () => {
    const cluster = new FakeCluster();
    const client = cluster.client({ user: 'installer' });
    const certs = await bundleWebhookCerts(BUNDLE, { format: 'registry+v1', installNamespace: 'ops', owner: { name: 'op' }, reader: client });
    assert.ok(certs !== undefined);
    const rendered = await createRenderer().bundle({
      dir: BUNDLE,
      name: 'op',
      spec: { source: { type: 'local', local: { path: BUNDLE } }, format: 'registry+v1', installNamespace: 'ops', watchNamespace: '' },
      digest: '',
      revision: 1,
      certs,
      client,
    });
    const secret = rendered.objects.find((o) => o.kind === 'Secret' && o.metadata.name === webhookCertSecretName('op'));
    assert.deepEqual(secret?.data, certs.secret.data);
    const hooks = rendered.objects.filter((o) => o.kind === 'ValidatingWebhookConfiguration' || o.kind === 'MutatingWebhookConfiguration');
    assert.deepEqual(
      hooks.flatMap((h) => (h.webhooks as { clientConfig: { caBundle: string } }[]).map((w) => w.clientConfig.caBundle)),
      [b64(certs.fallback.caPem), b64(certs.fallback.caPem)],
    );
    assert.deepEqual(writes(cluster), []);
  });
});
