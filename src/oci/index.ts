/**
 * OCI images without Docker. Binnacle builds catalog and bundle images itself (deterministic
 * layers and manifests in an OCI layout), pushes them to and pulls them from any registry that
 * speaks the distribution API (with anonymous, Basic and Bearer-token auth), verifies every byte
 * against its digest, and unpacks pulled images safely into a content-addressed cache that the
 * catalog, bundle and source code read from. It signs images and verifies their signatures as
 * cosign does (cosign.ts, sign.ts, verify-signature.ts). It talks to registries over HTTP(S), to the local
 * disk, and (for tests and local clusters) to a `docker-registry` process it starts on loopback.
 */
export { parseReference, formatReference, withDigest, isSha256Digest, isValidImageReference, DOCKER_HUB, DOCKER_HUB_API, isRegistryHost, type ImageReference } from './reference.js';
export { sha256Digest, DigestMismatchError, verifyStream } from './digest.js';
export {
  MediaType,
  MANIFEST_ACCEPT,
  ManifestError,
  parseManifestDocument,
  parseImageConfig,
  manifestToJson,
  selectPlatform,
  DEFAULT_PLATFORM,
  type Descriptor,
  type ImageManifest,
  type ImageIndex,
  type ImageConfig,
  type Platform,
} from './manifest.js';
export { credentialsFromAuthFiles, defaultAuthFiles, parseChallenges, basicAuthHeader, type Credentials, type AuthOption } from './auth.js';
export {
  RegistryClient,
  INSECURE_REGISTRIES_ENV,
  insecureByDefault,
  type RegistryClientOptions,
  type ManifestResult,
  type ResolvedImage,
  type BlobSource,
  type UploadOutcome,
} from './registry-client.js';
export { buildImage, type BuildImageOptions, type BuiltImage, type LayerSpec } from './build.js';
export { readImageLayout, writeLayoutBlob, writeLayoutIndex } from './layout.js';
export { pushImage, type PushResult } from './push.js';
export { pullAndUnpack, cachedTrees, type PullOptions, type PulledImage } from './pull.js';
export { gcCache, type GcResult } from './cache.js';
export { imageLabelDir, isInside } from './image-path.js';
export { unpackTarSafely, UnsafeEntryError, DEFAULT_MAX_BYTES, type UnpackLimits, type UnpackResult, type UnsafeReason } from './unpack.js';
export { startLocalRegistry, registryBinary, findDebianTool, type LocalRegistry, type LocalRegistryOptions } from './local-registry.js';
export {
  COSIGN_SIGNATURE_ANNOTATION,
  SIMPLE_SIGNING_MEDIA_TYPE,
  signatureTag,
  signatureRef,
  simpleSigningPayload,
  readCosignSignatures,
  attachCosignSignature,
  type StoredSignature,
} from './cosign.js';
export {
  SignatureVerificationError,
  parsePublicKey,
  verifySignatures,
  verifyImageSignature,
  type TrustedKey,
  type SignatureRefusal,
  type VerifiedSignature,
} from './verify-signature.js';
export { generateSigningKeyPair, parsePrivateKey, publicKeyPem, signImage, type KeyPairPem, type SignResult } from './sign.js';
export { parseRegistriesConf, pullSources, registriesConf, REGISTRIES_CONF_ENV, type RegistriesConf, type PullSource } from './registries-conf.js';
