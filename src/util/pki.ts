/**
 * A small PKI for Binnacle's own certificates: the local control plane's CA, serving and client
 * certificates, and webhook serving certificates for installed operators. ECDSA P-256 keys
 * (fast to generate, accepted by every Kubernetes component), PEM in and out.
 */
// @peculiar/x509 depends on tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { AsnConvert } from '@peculiar/asn1-schema';
import { GeneralName, GeneralSubtree, GeneralSubtrees, id_ce_nameConstraints, NameConstraints } from '@peculiar/asn1-x509';
import { BinnacleError } from './errors.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const crypto = webcrypto;
x509.cryptoProvider.set(crypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const KEY_ALGORITHM: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;

export interface CertificatePem {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses for the subjectAltName extension. */
  hosts?: string[];
  usage: 'server' | 'client' | 'server-and-client';
  validDays?: number;
  /** Fixes the validity window start, for reproducible output in tests. */
  notBefore?: Date;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function pemBody(text: string, label: string): Buffer {
  const re = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`);
  const m = re.exec(text);
  if (m?.[1] === undefined) throw new BinnacleError('input', 'PEM_INVALID', `no ${label} block in PEM`);
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

function serial(): string {
  // Positive 128-bit serial: clear the top bit.
  const b = randomBytes(16);
  b[0] = (b[0] ?? 0) & 0x7f;
  return b.toString('hex');
}

function escapeDn(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, '\\$1');
}

function distinguishedName(commonName: string, organizations: readonly string[] = []): string {
  return [...organizations.map((o) => `O=${escapeDn(o)}`), `CN=${escapeDn(commonName)}`].join(', ');
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
}

async function exportPrivateKey(key: CryptoKey): Promise<string> {
  return pem('PRIVATE KEY', await crypto.subtle.exportKey('pkcs8', key));
}

async function importPrivateKey(keyPem: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('pkcs8', pemBody(keyPem, 'PRIVATE KEY'), KEY_ALGORITHM, true, ['sign']);
}

/**
 * The nameConstraints extension (RFC 5280 4.2.1.10), critical: certificates this CA signs are
 * valid only for DNS names within `permittedDns` (OpenSSL, Go and browsers enforce it).
 */
function permittedDnsOnly(permittedDns: readonly string[]): x509.Extension {
  const constraints = new NameConstraints({ permittedSubtrees: new GeneralSubtrees(permittedDns.map((dNSName) => new GeneralSubtree({ base: new GeneralName({ dNSName }) }))) });
  return new x509.Extension(id_ce_nameConstraints, true, AsnConvert.serialize(constraints));
}

/** A self-signed certificate authority; with `permittedDns`, one that can vouch for those DNS names only. */
export async function createCertificateAuthority(commonName: string, validDays = 3650, notBefore = new Date(), permittedDns?: readonly string[]): Promise<CertificatePem> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: distinguishedName(commonName),
    notBefore: new Date(notBefore.getTime() - 60_000),
    notAfter: new Date(notBefore.getTime() + validDays * DAY_MS),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...(permittedDns === undefined ? [] : [permittedDnsOnly(permittedDns)]),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportPrivateKey(keys.privateKey) };
}

/** A leaf certificate signed by `ca`. */
export async function issueCertificate(ca: CertificatePem, opts: IssueOptions): Promise<CertificatePem> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importPrivateKey(ca.keyPem);
  const keys = await generateKeys();
  const usages: string[] = [];
  if (opts.usage !== 'client') usages.push(x509.ExtendedKeyUsage.serverAuth);
  if (opts.usage !== 'server') usages.push(x509.ExtendedKeyUsage.clientAuth);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(usages),
    await x509.AuthorityKeyIdentifierExtension.create(caCert),
  ];
  const hosts = opts.hosts ?? [];
  if (hosts.length > 0) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) === 0 ? 'dns' : 'ip', value: h }))),
    );
  }
  const start = opts.notBefore ?? new Date();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: distinguishedName(opts.commonName, opts.organizations),
    issuer: caCert.subject,
    notBefore: new Date(start.getTime() - 60_000),
    notAfter: new Date(start.getTime() + (opts.validDays ?? 365) * DAY_MS),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportPrivateKey(keys.privateKey) };
}

/** A bare key pair (e.g. the service-account token signing key): PKCS#8 private, SPKI public. */
export async function createKeyPair(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const keys = await generateKeys();
  return {
    privateKeyPem: await exportPrivateKey(keys.privateKey),
    publicKeyPem: pem('PUBLIC KEY', await crypto.subtle.exportKey('spki', keys.publicKey)),
  };
}

/** When the certificate in `certPem` stops being valid. */
export function certificateNotAfter(certPem: string): Date {
  return new x509.X509Certificate(certPem).notAfter;
}

/** How long before expiry Binnacle's own certificates are issued anew (webhooks', the catalog Service's). */
export const RENEW_BEFORE_MS = 30 * DAY_MS;

/** Whether `certPem` is a certificate valid for more than `RENEW_BEFORE_MS` after `now` (false for anything unreadable). */
export function certificateFresh(certPem: string | undefined, now: Date = new Date()): boolean {
  if (certPem === undefined || certPem === '') return false;
  try {
    return certificateNotAfter(certPem).getTime() - now.getTime() > RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

/** The DNS names of the certificate's subjectAltName (none when it has none or is unreadable). */
export function certificateDnsNames(certPem: string): string[] {
  try {
    const san = new x509.X509Certificate(certPem).getExtension(x509.SubjectAlternativeNameExtension);
    return (san?.names.items ?? []).filter((n) => n.type === 'dns').map((n) => n.value);
  } catch {
    return [];
  }
}
