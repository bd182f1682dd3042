/**
 * Where a bundle comes from: a local directory, or a bundle image that is pulled and unpacked
 * into the content-addressed cache (via `src/oci`). Images carry the annotations as labels too,
 * which stand in for a missing `metadata/annotations.yaml`.
 */
import { stat } from 'node:fs/promises';
import { parseReference, pullAndUnpack, type PullOptions } from '../oci/index.js';
import { InputError } from '../util/errors.js';
import { ANNOTATION_PACKAGE } from './types.js';

export interface BundleSource {
  /** Directory holding the bundle files. */
  dir: string;
  /** The image reference given, when it was one. */
  image?: string;
  digest?: string;
  labels: Record<string, string>;
  /** Package name from the image labels, if any. */
  packageName?: string;
}

export type Puller = (ref: string, opts: PullOptions) => Promise<{ digest: string; dir: string; labels: Record<string, string> }>;

export async function resolveBundleSource(arg: string, opts: { cacheDir: string; pull?: Puller; client?: PullOptions['client'] }): Promise<BundleSource> {
  const st = await stat(arg).catch(() => undefined);
  if (st?.isDirectory() === true) return { dir: arg, labels: {} };
  const notFound = (cause?: unknown): InputError =>
    new InputError('BUNDLE_NOT_FOUND', 'is neither a bundle directory nor an image reference', { file: arg, ...(cause === undefined ? {} : { cause }) });
  if (st !== undefined || /^(\.{0,2}\/|~)/.test(arg)) throw notFound();
  try {
    parseReference(arg);
  } catch (e) {
    throw notFound(e);
  }
  const pull = opts.pull ?? pullAndUnpack;
  const pulled = await pull(arg, { cacheDir: opts.cacheDir, ...(opts.client === undefined ? {} : { client: opts.client }) });
  const pkg = pulled.labels[ANNOTATION_PACKAGE];
  return { dir: pulled.dir, image: arg, digest: pulled.digest, labels: pulled.labels, ...(pkg === undefined ? {} : { packageName: pkg }) };
}
