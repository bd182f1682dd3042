/** The shapes the source module speaks: where a bundle comes from, and what unpacking it gave. */
import type { Logger } from 'pino';
import type { ObjectReader } from '../kube/ports.js';
import type { SecretReader } from './secrets.js';
import type { VerifyPolicy } from './verify.js';

export interface ImageSource {
  type: 'image';
  ref: string;
  /** A `kubernetes.io/dockerconfigjson` Secret with credentials for the image's registry. */
  pullSecret?: { namespace: string; name: string };
  /** Talk plain HTTP to the registry (loopback registries are plain HTTP already). */
  insecure?: boolean;
  /** Pull only what a trusted key signed (`spec.source.verify`); checked before the cache is used. */
  verify?: VerifyPolicy;
}

export interface GitSource {
  type: 'git';
  repository: string;
  /** Exactly one of the three. */
  ref: { branch?: string; tag?: string; commit?: string };
  /** A subdirectory of the repository that holds the bundle. */
  directory?: string;
  /** A basic-auth Secret (`username`, `password`) for an http(s) remote; credentials never go in the URL. */
  secret?: { namespace: string; name: string };
}

export interface HttpSource {
  type: 'http';
  url: string;
  /** Hex sha256 of the downloaded archive; checked when given. */
  sha256?: string;
  /** A basic-auth Secret (`username`, `password`) sent as Basic auth; credentials never go in the URL. */
  secret?: { namespace: string; name: string };
}

export interface ConfigMapRef {
  namespace: string;
  name: string;
  /** Directory (relative) the ConfigMap's keys land in; default the root. */
  path?: string;
}

export interface ConfigMapsSource {
  type: 'configMaps';
  configMaps: ConfigMapRef[];
}

export interface LocalSource {
  type: 'local';
  path: string;
}

export type BundleSource = ImageSource | GitSource | HttpSource | ConfigMapsSource | LocalSource;
export type SourceType = BundleSource['type'];

export interface ProgressEvent {
  phase: string;
  bytes?: number;
  total?: number;
}

export interface UnpackOptions {
  cacheDir: string;
  /** Needed for configMaps sources; reads the Secrets a source names when `secrets` is not given. */
  client?: Pick<ObjectReader, 'get' | 'list'>;
  /**
   * Reads the Secrets a source names (pull secrets, basic-auth Secrets). A controller passes the
   * installing identity's reader (src/source/secrets.ts), so a spec can use only the Secrets that
   * identity may read; without it, `client` reads them as whoever it is (the CLI's user).
   */
  secrets?: SecretReader;
  logger: Logger;
  onProgress?: (p: ProgressEvent) => void;
  /** Largest tree (sum of file sizes) accepted; default 1 GiB. */
  maxBytes?: number;
  /**
   * Allow sources that read this machine's files: `local`, and git `file://` repositories
   * (default false). The CLI allows them; a controller must not, or a BundleDeployment could copy
   * the controller's own files (its service-account token) into a bundle.
   */
  allowHostPaths?: boolean;
  /** Per-request timeout for HTTP downloads (default 5 minutes). */
  timeoutMs?: number;
}

/** What a source resolved to: the immutable identity behind a possibly moving reference. */
export interface ResolvedSource {
  type: SourceType;
  image?: { ref: string; digest: string };
  git?: { repository: string; commit: string };
  http?: { url: string; sha256: string };
}

export interface UnpackedSource {
  /** `<cacheDir>/trees/<digest-hex>`: read it, never write it. */
  dir: string;
  /** `sha256:<hex>` over the tree: sorted paths, types, modes and contents. */
  digest: string;
  resolved: ResolvedSource;
}
