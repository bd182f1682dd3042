/**
 * Webhook serving certificates, made before render and kept as an object of the release: the
 * CA and one certificate per webhook service live in a Secret next to the install
 * (`<owner>-binnacle-webhook-certs`), which the release applies, owns, prunes and deletes like
 * every other object. This port only reads: it reuses the Secret's certificates while they are
 * valid for more than 30 days (`RENEW_BEFORE_MS`; an install made before they were release objects is adopted with
 * its CA, so installed webhooks keep working), and otherwise issues new ones in memory. Render
 * takes what it answers as data and writes nothing; the digest of the certificates is part of
 * the release's inputs, so new certificates are an upgrade and the same ones a repair.
 */
import { createHash } from 'node:crypto';
import type { ObjectReader } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { webhookServiceName } from '../bundle/names.js';
import { serviceDnsNames } from '../bundle/certs.js';
import type { RegistryV1Bundle, ServingCert } from '../bundle/index.js';
import type { WebhookCertData } from './index.js';
// pki (x509 and ASN.1 libraries, ~15 MiB resident) is loaded only when an install has webhooks:
// a helm-operator never does.
import type { CertificatePem } from '../util/pki.js';

export function webhookCertSecretName(owner: string): string {
  return `${owner}-binnacle-webhook-certs`.slice(0, 253);
}

/** The certificates of one install, as data for render (each service's, by name), the Secret that keeps them, and their digest. */
export interface WebhookCerts extends WebhookCertData {
  /** The Secret (an object of the release) that keeps the CA and every service's certificate and key. */
  secret: KubeObject;
  /** sha256 of the certificates: part of the release's inputs. */
  digest: string;
  /** Whether they were issued now (none kept, or too close to expiry) rather than read back. */
  issued: boolean;
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

function unb64(s: string | undefined): string | undefined {
  return s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');
}

/** The webhook services of a bundle, by their Service names. */
export function webhookServices(bundle: RegistryV1Bundle): string[] {
  return [...new Set(bundle.csv.webhooks.map((w) => webhookServiceName(w.deploymentName)))].sort();
}

/**
 * The certificates for `bundle`'s webhooks installed by `owner` in `namespace`: those its
 * Secret keeps while fresh, new ones otherwise. Reads the Secret (as `reader`); writes nothing.
 */
export async function webhookCerts(reader: Pick<ObjectReader, 'find'>, owner: { name: string }, bundle: RegistryV1Bundle, namespace: string, now: Date = new Date()): Promise<WebhookCerts> {
  const name = webhookCertSecretName(owner.name);
  const { certificateFresh, createCertificateAuthority, issueCertificate } = await import('../util/pki.js');
  const existing = await reader.find({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  const data = (existing?.data ?? {}) as Record<string, string>;
  let ca: CertificatePem | undefined;
  const caCert = unb64(data['ca.crt']);
  const caKey = unb64(data['ca.key']);
  if (caCert !== undefined && caKey !== undefined && certificateFresh(caCert, now)) ca = { certPem: caCert, keyPem: caKey };
  let issued = ca === undefined;
  ca ??= await createCertificateAuthority(`binnacle-webhooks-${owner.name}`.slice(0, 64), 730, now);
  const serving: Record<string, ServingCert> = {};
  const out: Record<string, string> = { 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem) };
  for (const svc of webhookServices(bundle)) {
    let certPem = issued ? undefined : unb64(data[`${svc}.crt`]);
    let keyPem = issued ? undefined : unb64(data[`${svc}.key`]);
    if (!certificateFresh(certPem, now) || keyPem === undefined) {
      const hosts = serviceDnsNames(svc, namespace);
      const leaf = await issueCertificate(ca, { commonName: hosts[2] ?? svc, hosts, usage: 'server', validDays: 365, notBefore: now });
      certPem = leaf.certPem;
      keyPem = leaf.keyPem;
      issued = true;
    }
    serving[svc] = { caPem: ca.certPem, certPem: certPem ?? '', keyPem };
    out[`${svc}.crt`] = b64(certPem ?? '');
    out[`${svc}.key`] = b64(keyPem);
  }
  const digest = `sha256:${createHash('sha256').update(JSON.stringify(Object.entries(out).sort())).digest('hex')}`;
  return {
    serving,
    fallback: { caPem: ca.certPem, certPem: '', keyPem: '' },
    secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', data: out },
    digest,
    issued,
  };
}

/** A reader of nothing: certificates for an offline render (`binnacle bundle render`) are always new. */
export const NO_SECRETS: Pick<ObjectReader, 'find'> = { find: () => Promise.resolve(undefined) };

/**
 * The certificates a bundle in `dir` needs before it is rendered: undefined unless it is a
 * registry+v1 bundle with webhooks. Loads the bundle's manifests to find its webhook services.
 */
export async function bundleWebhookCerts(dir: string, o: { format: string; installNamespace: string; packageName?: string | undefined; owner: { name: string }; reader: Pick<ObjectReader, 'find'>; now?: Date }): Promise<WebhookCerts | undefined> {
  if (o.format !== 'registry+v1') return undefined;
  const { loadBundleDir } = await import('../bundle/index.js');
  const bundle = await loadBundleDir(dir, o.packageName === undefined ? {} : { packageName: o.packageName });
  if (bundle.csv.webhooks.length === 0) return undefined;
  return webhookCerts(o.reader, o.owner, bundle, o.installNamespace, o.now);
}
