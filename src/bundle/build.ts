/**
 * Bundle images: `/manifests` and `/metadata` as layers, with the annotations of
 * `metadata/annotations.yaml` as image labels (what `opm`/`operator-sdk` bundle images carry).
 * A package-manifest version directory (or package directory: its default channel's head) is
 * staged in the bundle layout first, its annotations made from the package file as opm makes
 * them. The bundle must load first, so a broken bundle never becomes an image.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { buildImage, pushImage, type BuiltImage, type PushResult, type RegistryClient } from '../oci/index.js';
import { InputError } from '../util/errors.js';
import { loadBundleDir } from './load.js';
import { registryV1Annotations, type RegistryV1Bundle } from './types.js';

/**
 * The annotations (and image labels) of a bundle: its own `metadata/annotations.yaml`, or for
 * the package-manifest layout, made from the package file: the channels that reach it (or
 * `channels`, when the caller knows them from a rendered catalog) and the default channel when
 * it is one of them. A version no channel reaches cannot become a bundle image.
 */
export function bundleAnnotations(bundle: RegistryV1Bundle, channels?: readonly string[]): Record<string, string> {
  const own = bundle.annotations;
  const pm = bundle.packageManifest;
  const chosen = channels ?? own?.channels ?? pm?.channels ?? [];
  if (chosen.length === 0) {
    if (pm !== undefined) throw new InputError('BUNDLE_NO_CHANNEL', `no channel's currentCSV reaches ${bundle.name} along replaces/skips: add it to a channel`, { file: pm.file, field: 'channels' });
    throw new InputError('BUNDLE_NO_CHANNEL', `${bundle.name} has no channels: a bundle needs metadata/annotations.yaml, or a <package>.package.yaml one level up whose channels reach it`, { file: bundle.dir });
  }
  if (bundle.packageName === '') throw new InputError('BUNDLE_NO_PACKAGE', 'has no package name: add metadata/annotations.yaml, or a <package>.package.yaml one level up', { file: bundle.dir });
  return registryV1Annotations({ packageName: bundle.packageName, channels: chosen, defaultChannel: own?.defaultChannel ?? pm?.defaultChannel, extra: own?.all });
}

/**
 * Writes a package-manifest bundle in the bundle layout under `root`: its manifest files in
 * `manifests/`, `annotations` in `metadata/annotations.yaml`.
 */
export async function stageBundleLayout(bundle: RegistryV1Bundle, root: string, annotations: Record<string, string>): Promise<void> {
  await mkdir(join(root, 'manifests'), { recursive: true });
  await mkdir(join(root, 'metadata'), { recursive: true });
  if (bundle.layout === 'bundle') {
    await cp(join(bundle.dir, 'manifests'), join(root, 'manifests'), { recursive: true });
    await cp(join(bundle.dir, 'metadata'), join(root, 'metadata'), { recursive: true });
  } else {
    for (const f of new Set(bundle.objects.map((o) => o.file))) await cp(join(bundle.dir, f), join(root, 'manifests', f));
  }
  if (bundle.annotations === undefined) await writeFile(join(root, 'metadata', 'annotations.yaml'), stringify({ annotations }));
}

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
  if (bundle.layout === 'bundle' && bundle.annotations === undefined) {
    throw new InputError('BUNDLE_BUILD_LAYOUT', 'a bundle image needs the bundle layout: manifests/ and metadata/annotations.yaml', { file: dir });
  }
  const labels = bundle.annotations === undefined ? bundleAnnotations(bundle) : { ...bundle.annotations.all };
  // A package-manifest directory is staged in the bundle layout; a bundle directory is used as it is.
  const staging = bundle.layout === 'bundle' ? undefined : await mkdtemp(join(tmpdir(), 'binnacle-bundle-build-'));
  try {
    const root = staging ?? bundle.dir;
    if (staging !== undefined) await stageBundleLayout(bundle, staging, labels);
    const image = await buildImage({
      layers: [
        { dir: join(root, 'manifests'), prefix: '/manifests' },
        { dir: join(root, 'metadata'), prefix: '/metadata' },
      ],
      labels,
      tag: opts.tag,
      ...(opts.layoutDir === undefined ? {} : { outputDir: opts.layoutDir }),
    });
    const out: BuiltBundleImage = { bundleName: bundle.name, labels, image };
    if (opts.push === true) out.pushed = await pushImage(image, opts.tag, opts.client);
    return out;
  } finally {
    if (staging !== undefined) await rm(staging, { recursive: true, force: true });
  }
}
