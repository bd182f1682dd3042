/**
 * Webhook serving certificates that survive reconciles: Binnacle keeps the CA and one
 * certificate per webhook service in a Secret next to the install, reuses them while they are
 * valid for more than 30 days, and issues new ones otherwise. Without this, every reconcile
 * would render new certificates and churn the release.
 */
import type { KubeClient } from '../kube/client.js';
import { webhookServiceName } from '../bundle/names.js';
import type { CertProvider, RegistryV1Bundle, ServingCert } from '../bundle/index.js';
import { serviceDnsNames } from '../bundle/certs.js';
// pki (x509 and ASN.1 libraries, ~15 MiB resident) is loaded only when an install has webhooks:
// a helm-operator never does.
import type { CertificatePem } from '../util/pki.js';
import { LABEL_OWNER_KIND, LABEL_OWNER_NAME } from '../api/types.js';

const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

export function webhookCertSecretName(owner: string): string {
  return `${owner}-binnacle-webhook-certs`.slice(0, 253);
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

function unb64(s: string | undefined): string | undefined {
  return s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');
}

function fresh(certPem: string | undefined, certificateNotAfter: (pem: string) => Date): boolean {
  if (certPem === undefined || certPem === '') return false;
  try {
    return certificateNotAfter(certPem).getTime() - Date.now() > RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

export async function persistentCertProvider(client: KubeClient, owner: { kind: string; name: string }, bundle: RegistryV1Bundle, namespace: string): Promise<CertProvider> {
  const ref = { apiVersion: 'v1', kind: 'Secret', namespace, name: webhookCertSecretName(owner.name) };
  const { certificateNotAfter, createCertificateAuthority, issueCertificate } = await import('../util/pki.js');
  const existing = await client.find(ref);
  const data = (existing?.data ?? {}) as Record<string, string>;
  let ca: CertificatePem | undefined;
  const caCert = unb64(data['ca.crt']);
  const caKey = unb64(data['ca.key']);
  if (caCert !== undefined && caKey !== undefined && fresh(caCert, certificateNotAfter)) ca = { certPem: caCert, keyPem: caKey };
  const renewedCa = ca === undefined;
  ca ??= await createCertificateAuthority(`binnacle-webhooks-${owner.name}`.slice(0, 64), 730);
  const services = [...new Set(bundle.csv.webhooks.map((w) => webhookServiceName(w.deploymentName)))].sort();
  const certs = new Map<string, ServingCert>();
  const out: Record<string, string> = { 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem) };
  let changed = renewedCa;
  for (const svc of services) {
    let certPem = unb64(data[`${svc}.crt`]);
    let keyPem = unb64(data[`${svc}.key`]);
    if (renewedCa || !fresh(certPem, certificateNotAfter) || keyPem === undefined) {
      const hosts = serviceDnsNames(svc, namespace);
      const leaf = await issueCertificate(ca, { commonName: hosts[2] ?? svc, hosts, usage: 'server', validDays: 365 });
      certPem = leaf.certPem;
      keyPem = leaf.keyPem;
      changed = true;
    }
    certs.set(svc, { caPem: ca.certPem, certPem: certPem ?? '', keyPem });
    out[`${svc}.crt`] = b64(certPem ?? '');
    out[`${svc}.key`] = b64(keyPem);
  }
  if (changed || existing === undefined) {
    await client.apply(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: ref.name, namespace, labels: { [LABEL_OWNER_KIND]: owner.kind, [LABEL_OWNER_NAME]: owner.name } },
        type: 'Opaque',
        data: out,
      },
      { force: true },
    );
  }
  const caPem = ca.certPem;
  return { servingCert: ({ serviceName }) => certs.get(serviceName) ?? { caPem, certPem: '', keyPem: '' } };
}
