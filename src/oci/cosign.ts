/**
 * Signatures stored as cosign stores them (cosign v2's default, which `cosign verify --key` reads):
 * for an artifact `repo@sha256:HEX`, the tag `repo:sha256-HEX.sig` holds an OCI manifest whose
 * layers are simple-signing payloads (`application/vnd.dev.cosign.simplesigning.v1+json`), each
 * with its base64 signature in the annotation `dev.cosignproject.cosign/signature`. The payload
 * names the signed manifest digest, so a signature cannot be moved to other content.
 *
 * Why this storage rather than Sigstore bundles as OCI referrers: Debian's `docker-registry`
 * (the local control plane's registry) has no referrers API, and tag storage works on every
 * registry; cosign v2 reads it by default. This module reads and writes that storage only;
 * checking a signature is src/oci/verify-signature.ts (with sigstore's own verifier).
 */
import { sha256Digest } from './digest.js';
import { MediaType, type Descriptor, type ImageManifest } from './manifest.js';
import { formatReference, isSha256Digest, type ImageReference } from './reference.js';
import type { RegistryClient } from './registry-client.js';
import { BinnacleError } from '../util/errors.js';
import { isRecord } from '../util/object.js';

export const COSIGN_SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';
export const SIMPLE_SIGNING_MEDIA_TYPE = 'application/vnd.dev.cosign.simplesigning.v1+json';
export const COSIGN_SIGNATURE_TYPE = 'cosign container image signature';
/** Most signature layers read for one artifact (each key rotation adds one). */
const MAX_SIGNATURES = 32;
/** Largest simple-signing payload read (cosign's are a few hundred bytes). */
const MAX_PAYLOAD_BYTES = 64 * 1024;

/** One signature as stored: the payload bytes and the raw signature over them. */
export interface StoredSignature {
  payload: Buffer;
  signature: Buffer;
  /** Digest of the payload layer, for messages. */
  layerDigest: string;
}

/** `sha256-HEX.sig`: the tag cosign keeps the signatures of `digest` under. */
export function signatureTag(digest: string): string {
  if (!isSha256Digest(digest)) throw new BinnacleError('input', 'OCI_BAD_DIGEST', `"${digest}" is not sha256:<64 hex digits>`);
  return `${digest.replace(':', '-')}.sig`;
}

/** The signature tag of `digest` in `ref`'s repository. */
export function signatureRef(ref: ImageReference, digest: string): ImageReference {
  return { ...ref, tag: signatureTag(digest), digest: undefined };
}

/** cosign's simple-signing payload for `digest` in `ref`'s repository (the bytes that are signed). */
export function simpleSigningPayload(ref: ImageReference, digest: string): Buffer {
  const doc = {
    critical: {
      identity: { 'docker-reference': `${ref.registry}/${ref.repository}` },
      image: { 'docker-manifest-digest': digest },
      type: COSIGN_SIGNATURE_TYPE,
    },
    optional: null,
  };
  return Buffer.from(JSON.stringify(doc), 'utf8');
}

/** The manifest digest a simple-signing payload vouches for, or why it is not one. */
export function payloadDigest(payload: Buffer): { digest: string } | { problem: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(payload.toString('utf8'));
  } catch {
    return { problem: 'the payload is not JSON' };
  }
  const critical = isRecord(doc) ? doc.critical : undefined;
  if (!isRecord(critical)) return { problem: 'the payload has no "critical" section' };
  if (critical.type !== COSIGN_SIGNATURE_TYPE) return { problem: `the payload's critical.type is ${JSON.stringify(critical.type)}, not "${COSIGN_SIGNATURE_TYPE}"` };
  const image = critical.image;
  const digest = isRecord(image) ? image['docker-manifest-digest'] : undefined;
  if (typeof digest !== 'string' || !isSha256Digest(digest)) return { problem: 'the payload names no sha256 manifest digest' };
  return { digest };
}

/** The signature manifest of `digest`, or undefined when the artifact has no signature tag. */
async function signatureManifest(client: RegistryClient, ref: ImageReference, digest: string): Promise<ImageManifest | undefined> {
  const sigRef = signatureRef(ref, digest);
  if ((await client.headManifest(sigRef)) === undefined) return undefined;
  const got = await client.getManifest(sigRef);
  if (got.manifest.kind !== 'manifest') {
    throw new BinnacleError('terminal', 'SIGNATURE_STORAGE', `${formatReference(sigRef)} is an index, not a cosign signature manifest`);
  }
  return got.manifest;
}

/** Every cosign signature stored for `digest` (an empty list when there is none). */
export async function readCosignSignatures(client: RegistryClient, ref: ImageReference, digest: string): Promise<StoredSignature[]> {
  const manifest = await signatureManifest(client, ref, digest);
  if (manifest === undefined) return [];
  const sigRef = signatureRef(ref, digest);
  const out: StoredSignature[] = [];
  for (const layer of manifest.layers.slice(0, MAX_SIGNATURES)) {
    const encoded = layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION];
    if (layer.mediaType !== SIMPLE_SIGNING_MEDIA_TYPE || encoded === undefined) continue;
    const payload = await client.getBlobBytes(sigRef, layer.digest, layer.size, MAX_PAYLOAD_BYTES);
    out.push({ payload, signature: Buffer.from(encoded, 'base64'), layerDigest: layer.digest });
  }
  return out;
}

function jsonBytes(doc: unknown): Buffer {
  return Buffer.from(JSON.stringify(doc), 'utf8');
}

/** The config blob of a signature image: layers as their own diff IDs (the payloads are not compressed). */
function signatureConfig(layers: Descriptor[]): Buffer {
  return jsonBytes({
    architecture: '',
    os: '',
    config: {},
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.digest) },
  });
}

/**
 * Adds a signature of `digest` to its signature tag, as `cosign sign` does: the signatures
 * already there are kept (several keys may sign, as during a key rotation); the same signature
 * is not added twice. Returns the signature manifest's reference.
 */
export async function attachCosignSignature(client: RegistryClient, ref: ImageReference, digest: string, payload: Buffer, signature: Buffer): Promise<{ ref: string; digest: string }> {
  const sigRef = signatureRef(ref, digest);
  const existing = (await signatureManifest(client, ref, digest))?.layers ?? [];
  const encoded = signature.toString('base64');
  const payloadDigestValue = sha256Digest(payload);
  const kept = existing.filter((l) => !(l.digest === payloadDigestValue && l.annotations?.[COSIGN_SIGNATURE_ANNOTATION] === encoded));
  const layer: Descriptor = { mediaType: SIMPLE_SIGNING_MEDIA_TYPE, digest: payloadDigestValue, size: payload.length, annotations: { [COSIGN_SIGNATURE_ANNOTATION]: encoded } };
  const layers = [...kept, layer];
  await client.uploadBlob(sigRef, { digest: payloadDigestValue, size: payload.length, open: () => payload });
  const config = signatureConfig(layers);
  const configDigest = sha256Digest(config);
  await client.uploadBlob(sigRef, { digest: configDigest, size: config.length, open: () => config });
  const manifest = jsonBytes({
    schemaVersion: 2,
    mediaType: MediaType.ociManifest,
    config: { mediaType: MediaType.ociConfig, size: config.length, digest: configDigest },
    layers,
  });
  const stored = await client.putManifest(sigRef, manifest, MediaType.ociManifest);
  return { ref: formatReference(sigRef), digest: stored };
}
