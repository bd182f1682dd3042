/**
 * Checking an artifact's cosign signatures against trusted public keys, with sigstore's own
 * verifier (`@sigstore/verify`): each stored signature becomes a Sigstore message-signature bundle
 * whose key hint names one trusted key, and the verifier checks it over the simple-signing payload.
 * Fulcio and Rekor are out of reach here, so there is no certificate, transparency-log entry or
 * timestamp to require: only keys given by the cluster admin are trusted (cosign's
 * `verify --key K --insecure-ignore-tlog`). A signature counts only when its payload names the
 * very manifest digest being pulled, so a signature of other content cannot be moved over.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { toMessageSignatureBundle } from '@sigstore/bundle';
import { Verifier, toSignedEntity, toTrustMaterial, type TrustMaterial } from '@sigstore/verify';
import { BinnacleError } from '../util/errors.js';
import { payloadDigest, readCosignSignatures, type StoredSignature } from './cosign.js';
import { formatReference, withDigest, type ImageReference } from './reference.js';
import type { RegistryClient } from './registry-client.js';

/** A trusted public key and the name it goes by in messages (e.g. the Secret key `cosign.pub`). */
export interface TrustedKey {
  name: string;
  key: KeyObject;
}

/** Why an artifact is refused: a stable reason for conditions, beside the code. */
export type SignatureRefusal = 'Unsigned' | 'SignatureMismatch';

/** An artifact whose signatures do not satisfy the policy; the message names it, its digest and why. */
export class SignatureVerificationError extends BinnacleError {
  constructor(
    readonly artifact: string,
    readonly digest: string,
    readonly reason: SignatureRefusal,
    detail: string,
  ) {
    // Transient: a signature may be pushed after its artifact, and the keys may be rotated in.
    super('transient', reason === 'Unsigned' ? 'SIGNATURE_MISSING' : 'SIGNATURE_INVALID', `${artifact} (digest ${digest}) is refused: ${detail}`);
  }
}

/** The key of one PEM public key; `what` names where it came from for the error. */
export function parsePublicKey(pem: string, what: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new BinnacleError('input', 'SIGNATURE_BAD_KEY', `${what}: not a PEM public key ("-----BEGIN PUBLIC KEY-----", as cosign generate-key-pair writes to cosign.pub)`);
  }
  const type = key.asymmetricKeyType;
  if (type !== 'ec' && type !== 'rsa') throw new BinnacleError('input', 'SIGNATURE_BAD_KEY', `${what}: a ${String(type)} key; expected an ECDSA or RSA public key`);
  return key;
}

function trustMaterial(keys: readonly TrustedKey[]): TrustMaterial {
  const byName = new Map(keys.map((k) => [k.name, k.key]));
  return toTrustMaterial({ mediaType: '', certificateAuthorities: [], ctlogs: [], tlogs: [], timestampAuthorities: [] }, (hint: string) => {
    const key = byName.get(hint);
    if (key === undefined) throw new BinnacleError('internal', 'SIGNATURE_KEY_HINT', `no trusted key named ${hint}`);
    return { publicKey: key, validFor: () => true };
  });
}

/** Whether `sig` verifies with `key` by sigstore's verifier. */
function verifiesWith(verifier: Verifier, sig: StoredSignature, key: TrustedKey): boolean {
  const bundle = toMessageSignatureBundle({ digest: createHash('sha256').update(sig.payload).digest(), signature: sig.signature, keyHint: key.name });
  try {
    verifier.verify(toSignedEntity(bundle, sig.payload));
    return true;
  } catch {
    return false;
  }
}

export interface VerifiedSignature {
  /** The trusted key that verified it. */
  keyName: string;
  /** The payload layer that holds it. */
  layerDigest: string;
}

/**
 * The first stored signature that a trusted key verifies and whose payload names `digest`;
 * otherwise a SignatureVerificationError saying what was found. `artifact` names it in messages.
 */
export function verifySignatures(artifact: string, digest: string, signatures: readonly StoredSignature[], keys: readonly TrustedKey[]): VerifiedSignature {
  if (keys.length === 0) throw new BinnacleError('input', 'SIGNATURE_NO_KEYS', `${artifact}: verification is required but no public key is given`);
  if (signatures.length === 0) throw new SignatureVerificationError(artifact, digest, 'Unsigned', 'it has no cosign signature');
  const verifier = new Verifier(trustMaterial(keys), { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
  const problems: string[] = [];
  for (const sig of signatures) {
    const named = payloadDigest(sig.payload);
    if ('problem' in named) {
      problems.push(`signature ${sig.layerDigest}: ${named.problem}`);
      continue;
    }
    const key = keys.find((k) => verifiesWith(verifier, sig, k));
    if (key === undefined) problems.push(`signature ${sig.layerDigest}: no trusted key (${keys.map((k) => k.name).join(', ')}) verifies it`);
    else if (named.digest !== digest) problems.push(`signature ${sig.layerDigest}: signed by ${key.name} for ${named.digest}, not for this digest`);
    else return { keyName: key.name, layerDigest: sig.layerDigest };
  }
  return mismatch(artifact, digest, problems);
}

function mismatch(artifact: string, digest: string, problems: string[]): never {
  throw new SignatureVerificationError(artifact, digest, 'SignatureMismatch', `no valid signature: ${problems.join('; ')}`);
}

/**
 * Reads the cosign signatures of `ref` at `digest` from its registry and verifies them with
 * `keys` (see verifySignatures).
 */
export async function verifyImageSignature(client: RegistryClient, ref: ImageReference, digest: string, keys: readonly TrustedKey[]): Promise<VerifiedSignature> {
  const artifact = formatReference({ ...ref, digest: undefined });
  const signatures = await readCosignSignatures(client, ref, digest);
  return verifySignatures(artifact, digest, signatures, keys);
}

/** The pinned reference a verified pull uses: `ref` at exactly the digest that was verified. */
export function verifiedReference(ref: ImageReference, digest: string): string {
  return formatReference(withDigest(ref, digest));
}
