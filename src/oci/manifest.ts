/**
 * OCI and Docker v2 manifest, index and image-config documents: media types, wire types and the
 * checks that turn untrusted registry JSON into them. Everything arrives as `unknown`.
 */
import { MAX_NESTING, nestsDeeperThan } from '../util/nesting.js';
import { BinnacleError } from '../util/errors.js';
import { isSha256Digest } from './reference.js';
import { isRecord } from '../util/object.js';

export const MediaType = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayerTar: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  // A Helm chart as `helm push` stores it: this config, the chart's .tgz as one layer (or the
  // legacy media type), and maybe its provenance file.
  helmConfig: 'application/vnd.cncf.helm.config.v1+json',
  helmChart: 'application/vnd.cncf.helm.chart.content.v1.tar+gzip',
  helmChartLegacy: 'application/tar+gzip',
  helmProvenance: 'application/vnd.cncf.helm.chart.provenance.v1.prov',
} as const;

export const MANIFEST_ACCEPT = [MediaType.ociIndex, MediaType.ociManifest, MediaType.dockerManifestList, MediaType.dockerManifest] as const;
export const UNPACKABLE_LAYER_TYPES: ReadonlySet<string> = new Set([
  MediaType.ociLayerGzip,
  MediaType.ociLayerTar,
  MediaType.ociLayerZstd,
  MediaType.dockerLayerGzip,
]);

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: Platform;
}

export interface ImageManifest {
  kind: 'manifest';
  schemaVersion: 2;
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  kind: 'index';
  schemaVersion: 2;
  mediaType: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageConfig {
  architecture: string;
  os: string;
  labels: Record<string, string>;
  diffIds: string[];
}

/** A registry (or cache) document is not what its media type promises. */
export class ManifestError extends BinnacleError {
  constructor(what: string, field: string, reason: string) {
    super('terminal', 'OCI_BAD_MANIFEST', `${what}: ${field}: ${reason}`);
  }
}

function parseJson(what: string, bytes: Uint8Array): unknown {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new ManifestError(what, '(document)', `not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (nestsDeeperThan(value)) throw new ManifestError(what, '(document)', `nests deeper than ${MAX_NESTING} levels`);
  return value;
}

function stringMap(what: string, field: string, v: unknown): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw new ManifestError(what, field, 'expected an object of strings');
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') throw new ManifestError(what, `${field}.${k}`, 'expected a string');
    out[k] = val;
  }
  return out;
}

function parsePlatform(what: string, field: string, v: unknown): Platform | undefined {
  if (v === undefined) return undefined;
  if (!isRecord(v) || typeof v.architecture !== 'string' || typeof v.os !== 'string') {
    throw new ManifestError(what, field, 'expected {architecture, os} strings');
  }
  return { architecture: v.architecture, os: v.os, ...(typeof v.variant === 'string' ? { variant: v.variant } : {}) };
}

export function parseDescriptor(what: string, field: string, v: unknown): Descriptor {
  if (!isRecord(v)) throw new ManifestError(what, field, 'expected a descriptor object');
  if (typeof v.mediaType !== 'string') throw new ManifestError(what, `${field}.mediaType`, 'expected a string');
  if (typeof v.digest !== 'string' || !isSha256Digest(v.digest)) {
    throw new ManifestError(what, `${field}.digest`, 'expected sha256:<64 hex digits>');
  }
  if (typeof v.size !== 'number' || !Number.isSafeInteger(v.size) || v.size < 0) {
    throw new ManifestError(what, `${field}.size`, 'expected a non-negative integer');
  }
  const annotations = stringMap(what, `${field}.annotations`, v.annotations);
  const platform = parsePlatform(what, `${field}.platform`, v.platform);
  return {
    mediaType: v.mediaType,
    digest: v.digest,
    size: v.size,
    ...(annotations === undefined ? {} : { annotations }),
    ...(platform === undefined ? {} : { platform }),
  };
}

/**
 * Parse a manifest or index. `contentType` is the registry's Content-Type (or the descriptor's
 * media type); the document's own `mediaType` wins when present, and shape decides otherwise.
 */
export function parseManifestDocument(what: string, bytes: Uint8Array, contentType?: string): ImageManifest | ImageIndex {
  const doc = parseJson(what, bytes);
  if (!isRecord(doc)) throw new ManifestError(what, '(document)', 'expected a JSON object');
  if (doc.schemaVersion !== 2) {
    throw new ManifestError(what, 'schemaVersion', `expected 2, got ${JSON.stringify(doc.schemaVersion)} (Docker schema 1 manifests are not supported)`);
  }
  const mediaType = typeof doc.mediaType === 'string' ? doc.mediaType : (contentType ?? '');
  const annotations = stringMap(what, 'annotations', doc.annotations);
  const isIndex = mediaType === MediaType.ociIndex || mediaType === MediaType.dockerManifestList || (mediaType === '' && Array.isArray(doc.manifests));
  if (isIndex) {
    if (!Array.isArray(doc.manifests)) throw new ManifestError(what, 'manifests', 'expected an array');
    const manifests = doc.manifests.map((m, i) => parseDescriptor(what, `manifests[${i}]`, m));
    return { kind: 'index', schemaVersion: 2, mediaType: mediaType || MediaType.ociIndex, manifests, ...(annotations ? { annotations } : {}) };
  }
  if (mediaType !== '' && mediaType !== MediaType.ociManifest && mediaType !== MediaType.dockerManifest) {
    throw new ManifestError(what, 'mediaType', `"${mediaType}" is not an image manifest or index`);
  }
  const config = parseDescriptor(what, 'config', doc.config);
  if (!Array.isArray(doc.layers)) throw new ManifestError(what, 'layers', 'expected an array');
  const layers = doc.layers.map((l, i) => parseDescriptor(what, `layers[${i}]`, l));
  return { kind: 'manifest', schemaVersion: 2, mediaType: mediaType || MediaType.ociManifest, config, layers, ...(annotations ? { annotations } : {}) };
}

export function parseImageConfig(what: string, bytes: Uint8Array): ImageConfig {
  const doc = parseJson(what, bytes);
  if (!isRecord(doc)) throw new ManifestError(what, '(document)', 'expected a JSON object');
  const config = doc.config;
  if (config !== undefined && config !== null && !isRecord(config)) throw new ManifestError(what, 'config', 'expected an object');
  const labels = stringMap(what, 'config.Labels', config?.Labels) ?? {};
  const rootfs = doc.rootfs;
  let diffIds: string[] = [];
  if (isRecord(rootfs) && Array.isArray(rootfs.diff_ids)) {
    diffIds = rootfs.diff_ids.map((d, i) => {
      if (typeof d !== 'string') throw new ManifestError(what, `rootfs.diff_ids[${i}]`, 'expected a string');
      return d;
    });
  }
  return {
    architecture: typeof doc.architecture === 'string' ? doc.architecture : '',
    os: typeof doc.os === 'string' ? doc.os : '',
    labels,
    diffIds,
  };
}

/** The wire form of a manifest we write: no `kind` discriminator, fields in a fixed order. */
export function manifestToJson(m: ImageManifest | ImageIndex): string {
  if (m.kind === 'index') {
    return JSON.stringify({ schemaVersion: 2, mediaType: m.mediaType, manifests: m.manifests, ...(m.annotations ? { annotations: m.annotations } : {}) });
  }
  return JSON.stringify({
    schemaVersion: 2,
    mediaType: m.mediaType,
    config: m.config,
    layers: m.layers,
    ...(m.annotations ? { annotations: m.annotations } : {}),
  });
}

export const DEFAULT_PLATFORM: Platform = { architecture: 'amd64', os: 'linux' };

/** The index entry for `platform`; a variant is only compared when the caller asks for one. */
export function selectPlatform(index: ImageIndex, platform: Platform = DEFAULT_PLATFORM): Descriptor | undefined {
  return index.manifests.find(
    (m) =>
      m.platform !== undefined &&
      m.platform.os === platform.os &&
      m.platform.architecture === platform.architecture &&
      (platform.variant === undefined || m.platform.variant === platform.variant),
  );
}

export function platformString(p: Platform): string {
  return `${p.os}/${p.architecture}${p.variant === undefined ? '' : `/${p.variant}`}`;
}
