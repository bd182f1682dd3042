/**
 * Pulling an image into the cache and unpacking it: resolve the reference to one platform's
 * manifest, fetch and verify every blob into `<cacheDir>/blobs`, then unpack the layers in order
 * into a temporary directory that is renamed to `<cacheDir>/fs/<manifest-hex>` only when all of
 * it succeeded. A tree already there is reused; a reference by digest whose blobs are cached needs
 * no network at all.
 */
import { rename, rm, mkdir, readdir } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { BinnacleError } from '../util/errors.js';
import { verifyStream } from './digest.js';
import { blobPath, exists, putBlobBytes, putBlobStream, readCachedBlob, tempName, treePath } from './cache.js';
import {
  DEFAULT_PLATFORM,
  MediaType,
  UNPACKABLE_LAYER_TYPES,
  parseImageConfig,
  parseManifestDocument,
  selectPlatform,
  type Descriptor,
  type ImageManifest,
  type Platform,
} from './manifest.js';
import { formatReference, parseReference, withDigest, type ImageReference } from './reference.js';
import { RegistryClient } from './registry-client.js';
import { DEFAULT_MAX_BYTES, unpackTarSafely } from './unpack.js';

export interface PullOptions {
  cacheDir: string;
  client?: RegistryClient;
  /** Most uncompressed bytes of all layers together (default 1 GiB). */
  maxBytes?: number;
  platform?: Platform;
}

export interface PulledImage {
  /** Digest of the platform image manifest the tree was unpacked from. */
  digest: string;
  /** The unpacked file tree. */
  dir: string;
  /** `config.Labels` of the image. */
  labels: Record<string, string>;
}

/** The platform manifest from the cache, when the reference is a digest we already hold. */
async function cachedManifest(cacheDir: string, digest: string, platform: Platform): Promise<{ digest: string; manifest: ImageManifest } | undefined> {
  const bytes = await readCachedBlob(cacheDir, digest);
  if (bytes === undefined) return undefined;
  const doc = parseManifestDocument(`cached manifest ${digest}`, bytes);
  if (doc.kind === 'manifest') return { digest, manifest: doc };
  const child = selectPlatform(doc, platform);
  return child === undefined ? undefined : cachedManifest(cacheDir, child.digest, platform);
}

async function resolve(ref: ImageReference, opts: PullOptions, client: () => RegistryClient): Promise<{ digest: string; manifest: ImageManifest }> {
  const platform = opts.platform ?? DEFAULT_PLATFORM;
  if (ref.digest !== undefined) {
    const hit = await cachedManifest(opts.cacheDir, ref.digest, platform);
    if (hit !== undefined) return hit;
  }
  const resolved = await client().resolveImage(ref, platform);
  if (resolved.index !== undefined) await putBlobBytes(opts.cacheDir, resolved.index.bytes);
  await putBlobBytes(opts.cacheDir, resolved.manifestBytes);
  return { digest: resolved.digest, manifest: resolved.manifest };
}

/** Pulls and unpacks an image; where from is the client's (its registries.conf; by default the one in effect). */
export async function pullAndUnpack(refString: string, opts: PullOptions): Promise<PulledImage> {
  const ref = parseReference(refString);
  let lazyClient: RegistryClient | undefined = opts.client;
  const client = (): RegistryClient => (lazyClient ??= new RegistryClient({ registries: 'system' }));
  return pullFrom(ref, opts, client);
}

/**
 * The layers a pull unpacks, in order: every layer of an image; of a Helm chart artifact (as
 * `helm push` stores it, the way Flux's OCIRepository and `helm install oci://` read charts), its
 * chart archive only, which unpacks to `<chart>/` where format helm finds it (`findChart`), and
 * not its provenance file.
 */
function layersToUnpack(ref: ImageReference, manifest: ImageManifest): Descriptor[] {
  if (manifest.config.mediaType === MediaType.helmConfig) {
    const charts = manifest.layers.filter((l) => l.mediaType === MediaType.helmChart || l.mediaType === MediaType.helmChartLegacy);
    if (charts.length !== 1) throw new BinnacleError('input', 'OCI_UNSUPPORTED_LAYER', `${formatReference(ref)}: a Helm chart artifact with ${charts.length} chart layers (${MediaType.helmChart}); expected one`);
    return charts;
  }
  for (const [i, layer] of manifest.layers.entries()) {
    if (!UNPACKABLE_LAYER_TYPES.has(layer.mediaType)) {
      throw new BinnacleError('input', 'OCI_UNSUPPORTED_LAYER', `${formatReference(ref)}: layers[${i}] has media type ${layer.mediaType}, which cannot be unpacked`);
    }
  }
  return manifest.layers;
}

async function pullFrom(ref: ImageReference, opts: PullOptions, client: () => RegistryClient): Promise<PulledImage> {
  const { digest, manifest } = await resolve(ref, opts, client);
  const pinned = withDigest(ref, digest);

  const configBytes =
    (await readCachedBlob(opts.cacheDir, manifest.config.digest)) ??
    (await client().getBlobBytes(pinned, manifest.config.digest, manifest.config.size));
  await putBlobBytes(opts.cacheDir, configBytes);
  const config = parseImageConfig(`config of ${formatReference(pinned)}`, configBytes);
  // Like containerd, the platform only chooses among an index's entries: a single-platform image is
  // taken as it is (catalog and bundle images are data, whatever machine built them).

  const dir = treePath(opts.cacheDir, digest);
  if (await exists(dir)) return { digest, dir, labels: config.labels };

  const layers = layersToUnpack(ref, manifest);
  for (const layer of layers) {
    const path = blobPath(opts.cacheDir, layer.digest);
    if (await exists(path)) {
      // Cached earlier: check it before its bytes reach the tar parser.
      await pipeline(verifyStream(createReadStream(path), `cached layer ${path}`, layer.digest, layer.size), new Writable({ write: (_c, _e, cb) => cb() }));
    } else {
      await putBlobStream(opts.cacheDir, layer.digest, await client().getBlob(pinned, layer.digest, layer.size));
    }
  }

  const fsDir = join(opts.cacheDir, 'fs');
  await mkdir(fsDir, { recursive: true });
  const tmp = tempName(fsDir, digest.slice(7, 19));
  const budget = { bytes: 0, entries: 0 };
  try {
    for (const layer of layers) {
      await unpackTarSafely(createReadStream(blobPath(opts.cacheDir, layer.digest)), tmp, {
        maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES,
        budget,
        source: `layer ${layer.digest} of ${formatReference(ref)}`,
      });
    }
    if (layers.length === 0) await mkdir(tmp, { recursive: true });
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    // Another pull of the same image won the rename: its tree is as good as ours.
    if (await exists(dir)) return { digest, dir, labels: config.labels };
    throw err;
  }
  return { digest, dir, labels: config.labels };
}

/** Digests of the unpacked trees in a cache (for callers choosing what `gcCache` keeps). */
export async function cachedTrees(cacheDir: string): Promise<string[]> {
  const names = await readdir(join(cacheDir, 'fs')).catch(() => [] as string[]);
  return names.filter((n) => /^[a-f0-9]{64}$/.test(n)).map((n) => `sha256:${n}`);
}
