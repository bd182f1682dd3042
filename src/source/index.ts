/**
 * Bundle sources: turning where a BundleDeployment says its bundle comes from (an OCI image, a git
 * repository at a branch, tag or commit, an HTTP tarball, ConfigMaps, or a local directory) into a
 * file tree in a content-addressed cache, `<cacheDir>/trees/<digest-hex>/` — rukpak's "unpacker".
 * It talks to registries through src/oci, to git remotes through the git CLI, to HTTP servers, and
 * to the API server (ConfigMaps, pull Secrets) through src/kube's KubeClient. Trees are written by
 * an atomic rename, reused when present, and never contain anything that leads out of them:
 * traversal paths, escaping links, devices and oversized trees are refused, naming the entry.
 *
 * Error codes (BinnacleError.code) it adds to src/oci's `OCI_*`:
 * - `INVALID`: the source spec (ValidationError, every problem with its field path);
 * - `SOURCE_UNSAFE_LINK` / `SOURCE_UNSAFE_TYPE` / `SOURCE_UNSAFE_PATH` / `SOURCE_TOO_LARGE`: a tree
 *   entry that is refused (UnsafeEntryError names the entry);
 * - `SOURCE_NOT_DIRECTORY`, `SOURCE_LOCAL_MISSING`: a local path; `SOURCE_HOST_PATH_DENIED`: a local or
 *   `file://` source without `allowHostPaths`;
 * - `SOURCE_GIT_REPOSITORY` (cannot be read), `SOURCE_GIT_UNKNOWN_REF`, `SOURCE_GIT_DIRECTORY`,
 *   `SOURCE_GIT_FETCH`, `SOURCE_GIT`, `SOURCE_GIT_UNAVAILABLE` (no git binary);
 * - `SOURCE_HTTP_FETCH` (network), `SOURCE_HTTP_STATUS` (non-2xx), `SOURCE_DIGEST_MISMATCH`;
 * - `SOURCE_CONFIGMAP_NOT_FOUND`, `SOURCE_CONFIGMAP_INVALID`, `SOURCE_CONFIGMAP_CONFLICT`;
 * - `SOURCE_PULL_SECRET_NOT_FOUND`, `SOURCE_PULL_SECRET`; `SOURCE_NO_CLIENT` (needs a cluster);
 * - `SIGNATURE_MISSING` / `SIGNATURE_INVALID` (a `verify` policy refuses the image: unsigned, or no
 *   trusted key verifies a signature for its digest), `SIGNATURE_NO_KEYS` / `SIGNATURE_BAD_KEY` (the
 *   key Secret, naming the field); a `verify` on a source that cannot carry a signature is `INVALID`;
 * - `SOURCE_SECRET_FORBIDDEN` (the reading identity may not get the Secret a source names; the
 *   message names both), `SOURCE_SECRET_NOT_FOUND`, `SOURCE_SECRET` (a basic-auth Secret without
 *   username/password).
 */
export type {
  BundleSource,
  ImageSource,
  GitSource,
  HttpSource,
  ConfigMapsSource,
  ConfigMapRef,
  LocalSource,
  SourceType,
  ProgressEvent,
  UnpackOptions,
  ResolvedSource,
  UnpackedSource,
} from './types.js';
export { parseBundleSource, bundleSourceFrom, bundleSourceToJson, imageRefCredentialProblem, CREDENTIALS_INSTEAD, type ParsedSource, type ParseSourceOptions } from './validate.js';
export { unpackSource, describeSource } from './unpack.js';
export { gcSources, treeDir, commitTree, workDir, type GcSourcesResult } from './cache.js';
export { digestTree, copyTree, DEFAULT_MAX_TREE_BYTES, type TreeDigest, type TreeLimits, type TreeEntryReason } from './tree.js';
export { parseDockerConfig, pullSecretCredentials } from './image.js';
export { secretReader, readSecret, basicAuthFromSecret, type SecretReader, type SecretRef } from './secrets.js';
export { fetchConfigMaps } from './configmaps.js';
export { CONFIGMAPS_IMAGE_SCHEME, formatConfigMapsImage, parseConfigMapsImage } from './configmaps-ref.js';
export { parseVerifyPolicy, verifyPolicyToJson, trustedKeysFromSecret, unverifiableSourceReason, VERIFY_PROVIDERS, type VerifyPolicy } from './verify.js';
export { verifiedImageRef } from './image.js';
