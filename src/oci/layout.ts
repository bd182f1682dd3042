/**
 * OCI image layout directories (`oci-layout`, `index.json`, `blobs/sha256/…`): where builds put
 * their blobs, what `--output` of a build is, and what can be read back for a push.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { sha256Digest, DigestMismatchError } from './digest.js';
import { MediaType, parseManifestDocument, type Descriptor, type ImageManifest } from './manifest.js';

/** An image as a build leaves it: a layout directory holding every blob, and its manifest. */
export interface BuiltImage {
  /** OCI image layout directory holding every blob of the image. */
  layoutDir: string;
  manifestDigest: string;
  manifest: ImageManifest;
  manifestBytes: Buffer;
  /** Path of a blob in the layout. */
  blobPath: (digest: string) => string;
}

export async function writeLayoutBlob(layoutDir: string, bytes: Buffer, mediaType: string): Promise<Descriptor> {
  const digest = sha256Digest(bytes);
  const dir = join(layoutDir, 'blobs', 'sha256');
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
  await writeFile(tmp, bytes);
  await rename(tmp, join(dir, digest.slice(7)));
  return { mediaType, digest, size: bytes.length };
}

export async function writeLayoutIndex(layoutDir: string, manifests: Descriptor[]): Promise<void> {
  await writeFile(join(layoutDir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(join(layoutDir, 'index.json'), JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociIndex, manifests }));
}

/**
 * Read the image a layout holds (its only manifest, or the one tagged `tag`), verifying the
 * manifest bytes against the digest index.json names.
 */
export async function readImageLayout(layoutDir: string, tag?: string): Promise<BuiltImage> {
  const indexFile = join(layoutDir, 'index.json');
  let indexBytes: Buffer;
  try {
    indexBytes = await readFile(indexFile);
  } catch (err) {
    throw new InputError('OCI_BAD_LAYOUT', `not an OCI image layout (${err instanceof Error ? err.message : String(err)})`, { file: indexFile });
  }
  const index = parseManifestDocument(indexFile, indexBytes, MediaType.ociIndex);
  if (index.kind !== 'index') throw new InputError('OCI_BAD_LAYOUT', 'expected an image index', { file: indexFile });
  const candidates = index.manifests.filter(
    (m) => m.mediaType === MediaType.ociManifest && (tag === undefined || m.annotations?.['org.opencontainers.image.ref.name'] === tag),
  );
  const chosen = candidates[0];
  if (chosen === undefined || (tag === undefined && candidates.length > 1)) {
    throw new InputError('OCI_BAD_LAYOUT', tag === undefined ? `expected exactly one image manifest, found ${candidates.length}` : `no manifest tagged "${tag}"`, {
      file: indexFile,
      field: 'manifests',
    });
  }
  const blobPath = (digest: string): string => join(layoutDir, 'blobs', 'sha256', digest.slice(digest.indexOf(':') + 1));
  const manifestBytes = await readFile(blobPath(chosen.digest));
  const actual = sha256Digest(manifestBytes);
  if (actual !== chosen.digest) throw new DigestMismatchError(`layout manifest ${chosen.digest}`, chosen.digest, actual);
  const manifest = parseManifestDocument(blobPath(chosen.digest), manifestBytes, chosen.mediaType);
  if (manifest.kind !== 'manifest') throw new InputError('OCI_BAD_LAYOUT', 'expected an image manifest', { file: blobPath(chosen.digest) });
  return { layoutDir, manifestDigest: chosen.digest, manifest: manifest satisfies ImageManifest, manifestBytes, blobPath };
}
