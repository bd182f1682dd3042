/** What fetching a chart takes and gives. */
import type { Logger } from 'pino';
import type { AuthOption, RegistryClient } from '../../oci/index.js';
import type { ChartRef } from './reference.js';
import type { TrustedKey } from '../../oci/index.js';

export interface ChartSourceOptions {
  /** The content-addressed cache (the same directory src/source uses is fine). */
  cacheDir: string;
  /**
   * Allow `dir` and `archive` references, which read this machine's files (default false). The CLI
   * allows them; a controller must not, or a custom resource could read the controller's own files.
   */
  allowHostPaths?: boolean;
  /**
   * Credentials by host. Registries: any kind; default REGISTRY_AUTH_FILE, then the docker config.
   * Chart repositories: username/password, sent to the repository's own origin only; none by default.
   */
  auth?: AuthOption;
  /**
   * Require a cosign signature by one of these keys on the chart's OCI manifest, checked before
   * anything of it is downloaded or served from the cache. Only OCI charts can carry one: any
   * other reference is refused (Helm's `.prov` files are not supported).
   */
  verifyKeys?: readonly TrustedKey[];
  /** Largest chart archive, in bytes (default 100 MiB, Helm's own limit for a decompressed chart). */
  maxArchiveBytes?: number;
  /** Largest chart directory, file bytes in all (default 100 MiB). */
  maxTreeBytes?: number;
  /** Largest repository index.yaml (default 64 MiB). */
  maxIndexBytes?: number;
  /** Per HTTP request to a chart repository (default 5 minutes). */
  timeoutMs?: number;
  /** A registry client to use for oci:// charts (tests; sharing a token cache). */
  registryClient?: RegistryClient;
  logger?: Logger;
}

/** Listing versions writes nothing, so it needs no cache. */
export type ListVersionsOptions = Omit<ChartSourceOptions, 'cacheDir' | 'maxTreeBytes'>;

export interface FetchedChart {
  /** `<cacheDir>/charts/sha256/<hex>.tgz` or `<cacheDir>/trees/<hex>`: read it, never write it. */
  path: string;
  kind: 'archive' | 'dir';
  /** `sha256:<hex>` of the archive bytes, or src/source's tree digest for a directory. */
  digest: string;
  /** From the chart's Chart.yaml. */
  name: string;
  version: string;
  appVersion: string | undefined;
  /** The reference as asked for. */
  ref: ChartRef;
  /**
   * Where exactly it came from, pinned: `oci://host/repo/name:tag@sha256:<manifest>`, the
   * archive URL of a repository entry, or the local path.
   */
  source: string;
  /** oci:// only: the digest of the manifest the tag pointed at (what `helm push` printed). */
  manifestDigest?: string;
}

export const DEFAULT_MAX_ARCHIVE_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_TREE_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_INDEX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 5 * 60 * 1000;
