import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { ObjectReader } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { createCertificateAuthority, issueCertificate } from '../util/pki.js';
import { catalogTls, CATALOG_TLS_SECRET } from './catalog-tls.js';
import { SELF_LABELS } from './manifests.js';

const NS = 'ops';
const SERVICE = 'binnacle-catalogs';
const DAY = 24 * 3600 * 1000;
const NOW = new Date('2026-12-04T00:00:00Z');

/** A reader holding at most the one Secret. */
function holding(secret?: KubeObject): Pick<ObjectReader, 'find'> {
  return { find: <T extends KubeObject>() => Promise.resolve(secret as T | undefined) };
}

function pemOf(secret: KubeObject | undefined, key: string): string {
  const v = (secret?.data as Record<string, string> | undefined)?.[key];
  assert.ok(v !== undefined, `data.${key}`);
  return Buffer.from(v, 'base64').toString('utf8');
}

test("none yet: a CA and a serving certificate for the catalog Service's names, signed by that CA, in a kubernetes.io/tls Secret labelled Binnacle's", async () => {
  const tls = await catalogTls(holding(), NS, SERVICE, SELF_LABELS, NOW);
  assert.equal(tls.state, 'issued');
  assert.equal(tls.secret?.type, 'kubernetes.io/tls');
  assert.deepEqual(tls.secret?.metadata, { name: CATALOG_TLS_SECRET, namespace: NS, labels: SELF_LABELS });
  const cert = new X509Certificate(pemOf(tls.secret, 'tls.crt'));
  const ca = new X509Certificate(pemOf(tls.secret, 'ca.crt'));
  assert.equal(cert.checkHost('binnacle-catalogs.ops.svc'), 'binnacle-catalogs.ops.svc');
  assert.equal(cert.checkHost('binnacle-catalogs.ops.svc.cluster.local'), 'binnacle-catalogs.ops.svc.cluster.local');
  assert.equal(cert.checkHost('binnacle-catalogs.other.svc'), undefined);
  assert.ok(cert.verify(ca.publicKey), 'signed by the CA in ca.crt');
  assert.ok(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(pemOf(tls.secret, 'tls.key'))), 'tls.key is its key');
  assert.equal(tls.notAfter.getTime(), new Date(cert.validTo).getTime());
  assert.equal(tls.caPem, pemOf(tls.secret, 'ca.crt'));
});

test('Binnacle\'s own, fresh: kept as it is (the next install-self changes nothing); 30 days before expiry: a new serving certificate from the same CA, so clients that trust the CA keep working', async () => {
  const first = await catalogTls(holding(), NS, SERVICE, SELF_LABELS, NOW);
  const again = await catalogTls(holding(first.secret), NS, SERVICE, SELF_LABELS, new Date(NOW.getTime() + 300 * DAY));
  assert.equal(again.state, 'kept');
  assert.deepEqual(again.secret, first.secret);
  const late = await catalogTls(holding(first.secret), NS, SERVICE, SELF_LABELS, new Date(NOW.getTime() + 340 * DAY));
  assert.equal(late.state, 'issued');
  assert.notEqual(pemOf(late.secret, 'tls.crt'), pemOf(first.secret, 'tls.crt'));
  assert.equal(pemOf(late.secret, 'ca.crt'), pemOf(first.secret, 'ca.crt'), 'the same CA');
  assert.ok(new X509Certificate(pemOf(late.secret, 'tls.crt')).verify(new X509Certificate(pemOf(first.secret, 'ca.crt')).publicKey));
  assert.ok(late.notAfter.getTime() > NOW.getTime() + 700 * DAY);
});

test("Binnacle's own, for another Service name (the Secret copied from another namespace) or without its CA key: issued anew", async () => {
  const elsewhere = await catalogTls(holding(), 'other', SERVICE, SELF_LABELS, NOW);
  const moved = await catalogTls(holding({ ...elsewhere.secret!, metadata: { ...elsewhere.secret!.metadata, namespace: NS } }), NS, SERVICE, SELF_LABELS, NOW);
  assert.equal(moved.state, 'issued');
  assert.equal(new X509Certificate(pemOf(moved.secret, 'tls.crt')).checkHost('binnacle-catalogs.ops.svc'), 'binnacle-catalogs.ops.svc');
  const data = { ...(elsewhere.secret!.data as Record<string, string>) };
  delete data['ca.key'];
  const noKey = await catalogTls(holding({ ...elsewhere.secret!, data }), 'other', SERVICE, SELF_LABELS, NOW);
  assert.equal(noKey.state, 'issued');
  assert.notEqual(pemOf(noKey.secret, 'ca.crt'), pemOf(elsewhere.secret, 'ca.crt'));
});

/** A Secret as cert-manager writes it for a Certificate of that secretName: not labelled Binnacle's. */
async function theirs(hosts: string[], validDays: number): Promise<KubeObject> {
  const ca = await createCertificateAuthority('their-ca', 3650, NOW);
  const leaf = await issueCertificate(ca, { commonName: hosts[0] ?? 'x', hosts, usage: 'server', validDays, notBefore: NOW });
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: CATALOG_TLS_SECRET, namespace: NS, labels: { 'controller.cert-manager.io/fao': 'true' } }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(leaf.certPem), 'tls.key': b64(leaf.keyPem), 'ca.crt': b64(ca.certPem) } };
}

test("someone else's (cert-manager's) naming the Service and fresh: used as it is, nothing to apply; otherwise refused with the Secret, the field and the reason, never overwritten", async () => {
  const good = await theirs(['binnacle-catalogs.ops.svc'], 90);
  const used = await catalogTls(holding(good), NS, SERVICE, SELF_LABELS, NOW);
  assert.equal(used.state, 'provided');
  assert.equal(used.secret, undefined, 'not applied: not ours to change');
  assert.equal(used.caPem, pemOf(good, 'ca.crt'));
  await assert.rejects(catalogTls(holding(await theirs(['elsewhere.example'], 90)), NS, SERVICE, SELF_LABELS, NOW), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'SELF_CATALOG_TLS');
    assert.match(err.message, /^Secret ops\/binnacle-catalogs-tls \(not labelled app\.kubernetes\.io\/part-of=binnacle: someone else's\): data\.tls\.crt does not name binnacle-catalogs\.ops\.svc in its subjectAltName; fix it, or delete it and install-self makes one$/);
    return true;
  });
  await assert.rejects(catalogTls(holding(await theirs(['binnacle-catalogs.ops.svc'], 10)), NS, SERVICE, SELF_LABELS, NOW), /data\.tls\.crt expires 2026-12-14T00:00:00\.000Z, in less than 30 days/);
  const noKey = await theirs(['binnacle-catalogs.ops.svc'], 90);
  delete (noKey.data as Record<string, string>)['tls.key'];
  await assert.rejects(catalogTls(holding(noKey), NS, SERVICE, SELF_LABELS, NOW), /data\.tls\.crt and data\.tls\.key are needed/);
});

test("the CA is name-constrained to the catalog Service's names: a certificate its key signs for any other name is refused by a client that trusts it", async () => {
  const tls = await catalogTls(holding(), NS, SERVICE, SELF_LABELS, new Date());
  const ca = { certPem: pemOf(tls.secret, 'ca.crt'), keyPem: pemOf(tls.secret, 'ca.key') };
  const { createServer } = await import('node:tls');
  const { connect } = await import('node:tls');
  const handshake = async (leaf: { certPem: string; keyPem: string }, servername: string): Promise<void> => {
    const server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      await new Promise<void>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, servername, ca: ca.certPem }, () => {
          s.end();
          resolve();
        });
        s.on('error', reject);
      });
    } finally {
      server.close();
    }
  };
  await handshake({ certPem: pemOf(tls.secret, 'tls.crt'), keyPem: pemOf(tls.secret, 'tls.key') }, 'binnacle-catalogs.ops.svc');
  const evil = await issueCertificate(ca, { commonName: 'kubernetes.default.svc', hosts: ['kubernetes.default.svc'], usage: 'server' });
  await assert.rejects(handshake(evil, 'kubernetes.default.svc'), /permitted subtree violation|name constraint/i);
});
