/**
 * Building images without Docker: each layer is a directory placed under a path inside the
 * image, written as a deterministic gzipped tar; then the OCI image config and manifest. All
 * blobs land in an OCI image layout directory, so a build can be pushed, kept as `--output`, or
 * read back later. Same input, same bytes, same digest.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, constants as zlibConstants } from 'node:zlib';
import { InputError } from '../util/errors.js';
import { sha256Digest } from './digest.js';
import { writeLayoutBlob, writeLayoutIndex, type BuiltImage } from './layout.js';
import { MediaType, manifestToJson, type Descriptor, type ImageManifest, type Platform } from './manifest.js';
import { entryHeader, filePadding, TAR_END, type TarEntry } from './tar-writer.js';

export interface LayerSpec {
  /** Directory on disk whose contents become the layer. */
  dir: string;
  /** Where those contents sit inside the image, e.g. `/configs`. */
  prefix: string;
}

export interface BuildImageOptions {
  layers: LayerSpec[];
  labels: Record<string, string>;
  /** RFC 3339 time for the config's `created`; left out when not given (it would change the digest). */
  created?: string;
  platform?: Platform;
  /** OCI layout directory to write into (created); default a new temp directory. */
  outputDir?: string;
  /** Tag recorded in the layout's index.json (`org.opencontainers.image.ref.name`). */
  tag?: string;
  /**
   * An image to build on: its layers come first in the manifest (their blobs stay in the
   * registry, not in the layout) and its config is kept, with `config` merged over it.
   */
  base?: { manifest: ImageManifest; config: Record<string, unknown> };
  /** Runtime settings of the image config (Entrypoint, Cmd, Env, WorkingDir, User). */
  config?: { Entrypoint?: string[]; Cmd?: string[]; Env?: string[]; WorkingDir?: string; User?: string };
}

export type { BuiltImage };

interface FsEntry {
  entry: TarEntry;
  /** Source file for `file` entries. */
  source?: string;
}

function layerRoot(prefix: string): string {
  const p = posix.normalize(`/${prefix}`).replace(/\/+$/, '');
  if (p.split('/').includes('..')) throw new InputError('OCI_BAD_LAYER', `layer prefix "${prefix}" must not contain ".."`);
  return p.slice(1);
}

/** Every entry of a layer, parents first, siblings sorted by name: the order is the determinism. */
async function collectEntries(spec: LayerSpec): Promise<FsEntry[]> {
  const out: FsEntry[] = [];
  const root = layerRoot(spec.prefix);
  if (root !== '') {
    const parts = root.split('/');
    for (let i = 1; i <= parts.length; i++) out.push({ entry: { type: 'dir', path: parts.slice(0, i).join('/'), mode: 0o755 } });
  }
  let rootStat;
  try {
    rootStat = await lstat(spec.dir);
  } catch (err) {
    throw new InputError('OCI_BAD_LAYER', `cannot read layer directory: ${err instanceof Error ? err.message : String(err)}`, { file: spec.dir });
  }
  if (!rootStat.isDirectory()) throw new InputError('OCI_BAD_LAYER', 'layer source is not a directory', { file: spec.dir });

  const walk = async (dir: string, inImage: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      const abs = join(dir, name);
      const path = inImage === '' ? name : `${inImage}/${name}`;
      const st = await lstat(abs);
      const mode = st.mode & 0o7777;
      if (st.isDirectory()) {
        out.push({ entry: { type: 'dir', path, mode } });
        await walk(abs, path);
      } else if (st.isFile()) {
        out.push({ entry: { type: 'file', path, mode, size: st.size }, source: abs });
      } else if (st.isSymbolicLink()) {
        out.push({ entry: { type: 'symlink', path, mode: 0o777, target: await readlink(abs) } });
      } else {
        throw new InputError('OCI_BAD_LAYER', 'only files, directories and symlinks can go into a layer (this is a socket, FIFO or device)', { file: abs });
      }
    }
  };
  await walk(spec.dir, root);
  return out;
}

async function* tarStream(entries: FsEntry[]): AsyncGenerator<Buffer> {
  for (const { entry, source } of entries) {
    yield entryHeader(entry);
    if (entry.type === 'file' && source !== undefined) {
      // Small files in one read: a stream per file costs more than the bytes for typical manifests.
      const chunks: AsyncIterable<unknown> | Buffer[] = entry.size < 1024 * 1024 ? [await readFile(source)] : createReadStream(source);
      let written = 0;
      for await (const chunk of chunks) {
        const buf = chunk as Buffer;
        written += buf.length;
        if (written > entry.size) throw new InputError('OCI_BAD_LAYER', 'file grew while the layer was being written', { file: source });
        yield buf;
      }
      if (written !== entry.size) throw new InputError('OCI_BAD_LAYER', 'file shrank while the layer was being written', { file: source });
      yield filePadding(entry.size);
    }
  }
  yield TAR_END;
}

/** Hashes what passes through: the uncompressed tar (diff_id) before gzip, the blob after. */
class Hasher extends Transform {
  readonly hash = createHash('sha256');
  size = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    cb(null, chunk);
  }
}

async function writeLayer(spec: LayerSpec, layoutDir: string): Promise<{ descriptor: Descriptor; diffId: string }> {
  const entries = await collectEntries(spec);
  const tmp = join(layoutDir, `.layer-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const raw = new Hasher();
  const packed = new Hasher();
  // zlib's gzip header carries no name and mtime 0, so the compressed bytes are reproducible too.
  // Level 6 (zlib's default): level 9 made the corpus build several times slower for a 1% smaller layer.
  const gzip = createGzip({ level: 6, memLevel: zlibConstants.Z_DEFAULT_MEMLEVEL });
  await pipeline(Readable.from(tarStream(entries)), raw, gzip, packed, createWriteStream(tmp));
  const digest = `sha256:${packed.hash.digest('hex')}`;
  await mkdir(join(layoutDir, 'blobs', 'sha256'), { recursive: true });
  await rename(tmp, join(layoutDir, 'blobs', 'sha256', digest.slice(7)));
  return { descriptor: { mediaType: MediaType.ociLayerGzip, digest, size: packed.size }, diffId: `sha256:${raw.hash.digest('hex')}` };
}

export async function buildImage(opts: BuildImageOptions): Promise<BuiltImage> {
  const platform = opts.platform ?? { architecture: 'amd64', os: 'linux' };
  const layoutDir = opts.outputDir ?? (await mkdtemp(join(tmpdir(), 'binnacle-image-')));
  await mkdir(layoutDir, { recursive: true });
  try {
    const layers: Descriptor[] = [];
    const diffIds: string[] = [];
    for (const spec of opts.layers) {
      const { descriptor, diffId } = await writeLayer(spec, layoutDir);
      layers.push(descriptor);
      diffIds.push(diffId);
    }
    const baseConfig = opts.base?.config ?? {};
    const baseRuntime = (baseConfig.config ?? {}) as Record<string, unknown>;
    const allLabels = { ...((baseRuntime.Labels ?? {}) as Record<string, string>), ...opts.labels };
    const labels = Object.fromEntries(Object.entries(allLabels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const baseDiffIds = ((baseConfig.rootfs as { diff_ids?: string[] } | undefined)?.diff_ids ?? []);
    const baseHistory = (baseConfig.history ?? []) as unknown[];
    const config = {
      ...baseConfig,
      ...(opts.created === undefined ? {} : { created: opts.created }),
      architecture: platform.architecture,
      os: platform.os,
      ...(platform.variant === undefined ? {} : { variant: platform.variant }),
      config: { ...baseRuntime, ...(opts.config ?? {}), Labels: labels },
      rootfs: { type: 'layers', diff_ids: [...baseDiffIds, ...diffIds] },
      ...(opts.base === undefined ? {} : { history: [...baseHistory, ...diffIds.map(() => ({ created_by: 'binnacle: layer', comment: 'built by Binnacle' }))] }),
    };
    if (opts.base !== undefined) layers.unshift(...opts.base.manifest.layers);
    const configBytes = Buffer.from(JSON.stringify(config));
    const configDescriptor = await writeLayoutBlob(layoutDir, configBytes, MediaType.ociConfig);
    const manifest: ImageManifest = { kind: 'manifest', schemaVersion: 2, mediaType: MediaType.ociManifest, config: configDescriptor, layers };
    const manifestBytes = Buffer.from(manifestToJson(manifest));
    const manifestDescriptor = await writeLayoutBlob(layoutDir, manifestBytes, MediaType.ociManifest);
    await writeLayoutIndex(layoutDir, [
      {
        ...manifestDescriptor,
        platform,
        ...(opts.tag === undefined ? {} : { annotations: { 'org.opencontainers.image.ref.name': opts.tag } }),
      },
    ]);
    return {
      layoutDir,
      manifestDigest: sha256Digest(manifestBytes),
      manifest,
      manifestBytes,
      blobPath: (digest) => join(layoutDir, 'blobs', 'sha256', digest.slice(digest.indexOf(':') + 1)),
    };
  } catch (err) {
    if (opts.outputDir === undefined) await rm(layoutDir, { recursive: true, force: true });
    throw err;
  }
}
