/**
 * Signing with a local key, as `cosign sign --key` does (without a transparency log): the
 * artifact's manifest digest goes into a simple-signing payload, signed with ECDSA P-256 over
 * SHA-256 (an ASN.1 signature, as cosign writes), and stored under the artifact's signature tag
 * (src/oci/cosign.ts). Keys are PEM: a PKCS#8 private key, encrypted with a passphrase when one is
 * given, and the SPKI public key that `cosign verify --key` and a verification Secret take.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { BinnacleError } from '../util/errors.js';
import { attachCosignSignature, payloadDigest, readCosignSignatures, signatureRef, simpleSigningPayload } from './cosign.js';
import { formatReference, parseReference, withDigest } from './reference.js';
import type { RegistryClient } from './registry-client.js';

export interface KeyPairPem {
  /** `-----BEGIN (ENCRYPTED) PRIVATE KEY-----`. */
  privateKey: string;
  /** `-----BEGIN PUBLIC KEY-----`. */
  publicKey: string;
}

/** A new ECDSA P-256 key pair; the private key is encrypted (AES-256-CBC, PKCS#8) when `passphrase` is not empty. */
export function generateSigningKeyPair(passphrase = ''): KeyPairPem {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const priv = passphrase === '' ? privateKey.export({ type: 'pkcs8', format: 'pem' }) : privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase });
  return { privateKey: priv.toString(), publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** The private key of a PEM file; `what` names the file for errors. */
export function parsePrivateKey(pem: string, what: string, passphrase = ''): KeyObject {
  if (pem.includes('ENCRYPTED SIGSTORE PRIVATE KEY') || pem.includes('ENCRYPTED COSIGN PRIVATE KEY')) {
    throw new BinnacleError(
      'input',
      'SIGNATURE_BAD_KEY',
      `${what}: cosign's own encrypted key format is not read; make a key with "binnacle sign generate-key", or export a PKCS#8 PEM key`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem', ...(passphrase === '' ? {} : { passphrase }) });
  } catch (err) {
    const encrypted = pem.includes('ENCRYPTED PRIVATE KEY');
    const hint = encrypted ? (passphrase === '' ? 'it is encrypted: give its passphrase (BINNACLE_SIGN_PASSWORD)' : 'wrong passphrase') : 'not a PEM private key';
    throw new BinnacleError('input', 'SIGNATURE_BAD_KEY', `${what}: ${hint}`, { cause: err });
  }
  if (key.asymmetricKeyType !== 'ec' && key.asymmetricKeyType !== 'rsa') {
    throw new BinnacleError('input', 'SIGNATURE_BAD_KEY', `${what}: a ${String(key.asymmetricKeyType)} key; expected ECDSA or RSA`);
  }
  return key;
}

/** The PEM public key of a private key (what goes into the verification Secret). */
export function publicKeyPem(privateKey: KeyObject): string {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
}

export interface SignResult {
  /** The signed artifact, pinned by digest. */
  signed: string;
  digest: string;
  /** Where the signature is stored (`repo:sha256-HEX.sig`). */
  signatureRef: string;
  /** False when this key had signed that digest already (nothing was added, as cosign's dupe detection). */
  added: boolean;
}

/**
 * Signs what `refString` names (a tag is resolved to its manifest or index digest, which is what
 * cosign signs and what a verified pull checks) and stores the signature beside it.
 */
export async function signImage(client: RegistryClient, refString: string, key: KeyObject): Promise<SignResult> {
  const ref = parseReference(refString);
  const digest = ref.digest ?? (await client.getManifest(ref)).digest;
  const signed = formatReference(withDigest(ref, digest));
  const publicKey = createPublicKey(key);
  const existing = await readCosignSignatures(client, ref, digest);
  const already = existing.some((s) => {
    const named = payloadDigest(s.payload);
    return 'digest' in named && named.digest === digest && verify('sha256', s.payload, publicKey, s.signature);
  });
  if (already) return { signed, digest, signatureRef: formatReference(signatureRef(ref, digest)), added: false };
  const payload = simpleSigningPayload(ref, digest);
  const signature = sign('sha256', payload, key);
  const stored = await attachCosignSignature(client, ref, digest, payload, signature);
  return { signed, digest, signatureRef: stored.ref, added: true };
}
