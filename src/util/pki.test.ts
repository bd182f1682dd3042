import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createCertificateAuthority, createKeyPair, issueCertificate } from './pki.js';

test('issued certificates chain to their CA and carry the requested names', async () => {
  const ca = await createCertificateAuthority('binnacle-test-ca');
  const server = await issueCertificate(ca, {
    commonName: 'kube-apiserver',
    hosts: ['localhost', '127.0.0.1', 'kubernetes.default.svc'],
    usage: 'server',
  });
  const caCert = new X509Certificate(ca.certPem);
  const cert = new X509Certificate(server.certPem);
  assert.equal(caCert.ca, true);
  assert.equal(cert.ca, false);
  assert.ok(cert.verify(caCert.publicKey), 'leaf is signed by the CA');
  assert.ok(cert.checkIssued(caCert));
  assert.match(cert.subjectAltName ?? '', /DNS:localhost/);
  assert.match(cert.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
  assert.match(cert.subject, /CN=kube-apiserver/);
  // The key in keyPem is the private half of the certificate's public key.
  const key = createPrivateKey(server.keyPem);
  assert.ok(cert.checkPrivateKey(key));
});

test('client certificates carry organizations (Kubernetes groups)', async () => {
  const ca = await createCertificateAuthority('ca');
  const admin = await issueCertificate(ca, { commonName: 'admin', organizations: ['system:masters'], usage: 'client' });
  const cert = new X509Certificate(admin.certPem);
  assert.match(cert.subject, /O=system:masters/);
  assert.match(cert.subject, /CN=admin/);
  assert.ok(cert.keyUsage?.includes('1.3.6.1.5.5.7.3.2'), 'clientAuth usage');
  assert.ok(!cert.keyUsage?.includes('1.3.6.1.5.5.7.3.1'), 'no serverAuth usage');
});

test('key pairs round-trip through PEM', async () => {
  const kp = await createKeyPair();
  const priv = createPrivateKey(kp.privateKeyPem);
  assert.equal(priv.asymmetricKeyType, 'ec');
  assert.match(kp.publicKeyPem, /^-----BEGIN PUBLIC KEY-----/);
});
