/**
 * The in-cluster manager's catalog API over HTTPS, as catalogd serves it: a certificate for the
 * catalog Service's names in a `kubernetes.io/tls` Secret (`tls.crt`, `tls.key`, `ca.crt`) that
 * the manager's Pod mounts (manifests.ts) and reads again when it changes (cli/tls-reload.ts).
 *
 * install-self makes it, as cert-manager or OpenShift's service CA does for catalogd: a CA of its
 * own, name-constrained to the Service's DNS names (kept, with its key, while fresh, so clients
 * that trust it keep working) and a serving
 * certificate for `binnacle-catalogs.<namespace>.svc`, issued anew 30 days before it expires (on
 * the next install-self). A Secret of that name that someone else made (not labelled Binnacle's,
 * e.g. cert-manager's for a Certificate of that secretName) is used as it is while it is fresh
 * and names the Service; otherwise install-self stops and says why rather than overwrite it.
 */
import type { ObjectReader } from '../kube/ports.js';
import type { KubeObject } from '../kube/types.js';
import { serviceDnsNames } from '../bundle/certs.js';
import { BinnacleError } from '../util/errors.js';
import type { CertificatePem } from '../util/pki.js';

export const CATALOG_TLS_SECRET = 'binnacle-catalogs-tls';
/** Where the manager's container mounts that Secret. */
export const CATALOG_TLS_DIR = '/etc/binnacle/catalogs-tls';
const PART_OF = 'app.kubernetes.io/part-of';

/** What install-self does about the catalog certificate. */
export interface CatalogTls {
  /** The Secret to apply with the installation; absent when someone else's is used as it is. */
  secret?: KubeObject;
  /** `issued` (new serving certificate), `kept` (Binnacle's, still fresh) or `provided` (someone else's, used as it is). */
  state: 'issued' | 'kept' | 'provided';
  /** When the serving certificate expires. */
  notAfter: Date;
  /** The CA clients verify the catalog Service with. */
  caPem?: string;
}

function unb64(s: unknown): string | undefined {
  return typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : undefined;
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

type Pki = typeof import('../util/pki.js');

/** What the Secret holds, decoded. */
interface Held {
  certPem?: string | undefined;
  keyPem?: string | undefined;
  caPem?: string | undefined;
  caKey?: string | undefined;
}

/** Someone else's Secret: used as it is while it is usable, or the reason it is not. */
function provided(pki: Pki, held: Held, where: string, dnsName: string, now: Date): CatalogTls {
  const refuse = (why: string): never => {
    throw new BinnacleError('input', 'SELF_CATALOG_TLS', `${where}: ${why}; fix it, or delete it and install-self makes one`);
  };
  if (held.certPem === undefined || held.keyPem === undefined) return refuse('data.tls.crt and data.tls.key are needed');
  if (!pki.certificateDnsNames(held.certPem).includes(dnsName)) return refuse(`data.tls.crt does not name ${dnsName} in its subjectAltName`);
  if (!pki.certificateFresh(held.certPem, now)) return refuse(`data.tls.crt expires ${pki.certificateNotAfter(held.certPem).toISOString()}, in less than 30 days`);
  return { state: 'provided', notAfter: pki.certificateNotAfter(held.certPem), ...(held.caPem === undefined ? {} : { caPem: held.caPem }) };
}

/** Binnacle's own: the CA kept while fresh, the serving certificate kept while fresh and naming the Service, else issued. */
async function own(pki: Pki, held: Held, hosts: string[], dnsName: string, namespace: string, now: Date): Promise<{ ca: CertificatePem; serving: CertificatePem; kept: boolean }> {
  const keptCa = held.caPem !== undefined && held.caKey !== undefined && pki.certificateFresh(held.caPem, now) ? { certPem: held.caPem, keyPem: held.caKey } : undefined;
  const { certPem, keyPem } = held;
  if (keptCa !== undefined && certPem !== undefined && keyPem !== undefined && pki.certificateFresh(certPem, now) && pki.certificateDnsNames(certPem).includes(dnsName)) {
    return { ca: keptCa, serving: { certPem, keyPem }, kept: true };
  }
  // Constrained to the Service's names: whoever reads its key (the manager's Role can read the
  // Secret) cannot make it vouch for any other name.
  const ca = keptCa ?? (await pki.createCertificateAuthority(`binnacle-catalogs-${namespace}`.slice(0, 64), 3650, now, hosts));
  return { ca, serving: await pki.issueCertificate(ca, { commonName: dnsName, hosts, usage: 'server', validDays: 365, notBefore: now }), kept: false };
}

/**
 * The catalog Service's certificate for an installation in `namespace` whose objects carry
 * `labels`: Binnacle's own kept or issued anew, or someone else's used as it is. Reads the
 * Secret; writes nothing.
 */
export async function catalogTls(reader: Pick<ObjectReader, 'find'>, namespace: string, service: string, labels: Record<string, string>, now: Date = new Date()): Promise<CatalogTls> {
  const pki = await import('../util/pki.js');
  const dnsName = `${service}.${namespace}.svc`;
  const live = await reader.find({ apiVersion: 'v1', kind: 'Secret', namespace, name: CATALOG_TLS_SECRET });
  const data = (live?.data ?? {}) as Record<string, unknown>;
  const held: Held = { certPem: unb64(data['tls.crt']), keyPem: unb64(data['tls.key']), caPem: unb64(data['ca.crt']), caKey: unb64(data['ca.key']) };
  if (live !== undefined && live.metadata.labels?.[PART_OF] !== labels[PART_OF]) {
    return provided(pki, held, `Secret ${namespace}/${CATALOG_TLS_SECRET} (not labelled ${PART_OF}=${labels[PART_OF] ?? ''}: someone else's)`, dnsName, now);
  }
  const { ca, serving, kept } = await own(pki, held, serviceDnsNames(service, namespace), dnsName, namespace, now);
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: CATALOG_TLS_SECRET, namespace, labels: { ...labels } },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem), 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem) },
  };
  return { secret, state: kept ? 'kept' : 'issued', notAfter: pki.certificateNotAfter(serving.certPem), caPem: ca.certPem };
}

/** When the catalog Service's certificate expires, and whether install-self would issue it anew now (undefined: no readable certificate). */
export async function catalogCertificateExpiry(reader: Pick<ObjectReader, 'find'>, namespace: string, now: Date = new Date()): Promise<{ notAfter: string; renewDue: boolean } | undefined> {
  const pki = await import('../util/pki.js');
  const live = await reader.find({ apiVersion: 'v1', kind: 'Secret', namespace, name: CATALOG_TLS_SECRET });
  const certPem = unb64((live?.data as Record<string, unknown> | undefined)?.['tls.crt']);
  if (certPem === undefined) return undefined;
  try {
    return { notAfter: pki.certificateNotAfter(certPem).toISOString(), renewDue: !pki.certificateFresh(certPem, now) };
  } catch {
    return undefined;
  }
}
