/**
 * Bundle images: `/manifests` and `/metadata` as layers, with the annotations of
 * `metadata/annotations.yaml` as image labels (what `opm`/`operator-sdk` bundle images carry).
 * The bundle must load first, so a broken bundle never becomes an image.
 */
import { join } from 'node:path';
import { buildImage, pushImage, type BuiltImage, type PushResult, type RegistryClient } from '../oci/index.js';
import { InputError } from '../util/errors.js';
import { loadBundleDir } from './load.js';

export interface BuildBundleOptions {
  tag: string;
  /** OCI layout directory to write the image into; a temp directory when absent. */
  layoutDir?: string;
  push?: boolean;
  client?: RegistryClient;
}

export interface BuiltBundleImage {
  bundleName: string;
  labels: Record<string, string>;
  image: BuiltImage;
  pushed?: PushResult;
}

export async function buildBundleImage(dir: string, opts: BuildBundleOptions): Promise<BuiltBundleImage> {
  const bundle = await loadBundleDir(dir);
  if (bundle.layout !== 'bundle' || bundle.annotations === undefined) {
    throw new InputError('BUNDLE_BUILD_LAYOUT', 'a bundle image needs the bundle layout: manifests/ and metadata/annotations.yaml', { file: dir });
  }
  const labels = { ...bundle.annotations.all };
  const image = await buildImage({
    layers: [
      { dir: join(dir, 'manifests'), prefix: '/manifests' },
      { dir: join(dir, 'metadata'), prefix: '/metadata' },
    ],
    labels,
    tag: opts.tag,
    ...(opts.layoutDir === undefined ? {} : { outputDir: opts.layoutDir }),
  });
  const out: BuiltBundleImage = { bundleName: bundle.name, labels, image };
  if (opts.push === true) out.pushed = await pushImage(image, opts.tag, opts.client);
  return out;
}
