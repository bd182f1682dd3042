/** Pushing a built image (its OCI layout) to a registry: blobs first, then the manifest. */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { BuiltImage } from './build.js';
import { MediaType } from './manifest.js';
import { formatReference, parseReference, withDigest } from './reference.js';
import { RegistryClient } from './registry-client.js';

export interface PushResult {
  digest: string;
  /** The pushed image pinned by digest: `host/repo@sha256:…`. */
  ref: string;
}

export async function pushImage(
  image: BuiltImage,
  ref: string,
  client: RegistryClient = new RegistryClient(),
  opts: { mountFrom?: string } = {},
): Promise<PushResult> {
  const target = parseReference(ref);
  for (const layer of image.manifest.layers) {
    const path = image.blobPath(layer.digest);
    await client.uploadBlob(target, { digest: layer.digest, size: layer.size, open: () => createReadStream(path) }, opts);
  }
  const config = image.manifest.config;
  const configBytes = await readFile(image.blobPath(config.digest));
  await client.uploadBlob(target, { digest: config.digest, size: config.size, open: () => configBytes }, opts);
  const digest = await client.putManifest(target, image.manifestBytes, image.manifest.mediaType || MediaType.ociManifest);
  return { digest, ref: formatReference(withDigest(target, digest)) };
}
