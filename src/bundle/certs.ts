/**
 * Serving certificates for webhook services. OLM issues its own CA and a certificate per
 * webhook service; Binnacle does the same through a `CertProvider`, so the converter stays
 * synchronous and tests can pass a fixed provider for byte-stable output.
 */
import type { RegistryV1Bundle } from './types.js';
import { webhookServiceName } from './names.js';

export interface ServingCert {
  /** PEM of the CA that signed `certPem`; becomes the `caBundle` of webhooks and CRDs. */
  caPem: string;
  certPem: string;
  keyPem: string;
}

export interface CertProvider {
  servingCert(req: { serviceName: string; namespace: string }): ServingCert;
}

/** One fixed certificate for every service: for tests and dry runs. */
export function staticCertProvider(cert: ServingCert): CertProvider {
  return { servingCert: () => cert };
}

export interface SelfSignedOptions {
  /** Start of validity; defaults to now. */
  now?: Date;
  validityDays?: number;
}

/** The DNS names a service is reached by inside the cluster. */
export function serviceDnsNames(serviceName: string, namespace: string): string[] {
  return [serviceName, `${serviceName}.${namespace}`, `${serviceName}.${namespace}.svc`, `${serviceName}.${namespace}.svc.cluster.local`];
}

/**
 * A CA and one serving certificate per webhook service of the bundle, made up front
 * (WebCrypto is asynchronous; conversion is not).
 */
export async function createSelfSignedCertProvider(
  bundle: RegistryV1Bundle,
  installNamespace: string,
  opts: SelfSignedOptions = {},
): Promise<CertProvider> {
  // Loaded on demand: X.509 support is heavy and only webhook bundles need it.
  const pki = await import('../util/pki.js');
  const now = opts.now ?? new Date();
  const days = opts.validityDays ?? 730;
  const ca = await pki.createCertificateAuthority(`olm-selfsigned-${bundle.name}`.slice(0, 64), days, now);
  const deployments = [...bundle.csv.webhooks.map((w) => w.deploymentName), ...bundle.csv.ownedAPIServices.map((a) => a.deploymentName ?? '')];
  const services = [...new Set(deployments.filter((d) => d !== '').map(webhookServiceName))].sort();
  const certs = new Map<string, ServingCert>();
  for (const svc of services) {
    const hosts = serviceDnsNames(svc, installNamespace);
    const leaf = await pki.issueCertificate(ca, { commonName: hosts[2] ?? svc, hosts, usage: 'server', validDays: days, notBefore: now });
    certs.set(svc, { caPem: ca.certPem, certPem: leaf.certPem, keyPem: leaf.keyPem });
  }
  return {
    servingCert: ({ serviceName }) => certs.get(serviceName) ?? { caPem: ca.certPem, certPem: '', keyPem: '' },
  };
}
