/**
 * Rendering the bundle behind an image reference, for templates: a local bundle directory is
 * read in place (handy for tests and offline work); anything else is pulled with `pull`.
 */
import { stat } from 'node:fs/promises';
import { BinnacleError } from '../util/errors.js';
import type { Bundle } from '../declcfg/index.js';
import { defaultBundleRenderer, readBundleDir } from './bundle-dir.js';
import { LABEL_BUNDLE_MEDIATYPE, type ImagePuller } from './render.js';
import type { ImageBundleRenderer } from './template-basic.js';

export function imageBundleRenderer(opts: { pull?: ImagePuller; cacheDir: string }): ImageBundleRenderer {
  return async (image: string): Promise<Bundle[]> => {
    let dir: string | undefined;
    const local = await stat(image).catch(() => undefined);
    if (local?.isDirectory() === true) dir = image;
    else {
      if (opts.pull === undefined) throw new BinnacleError('input', 'TEMPLATE_IMAGE', `${image}: not a local bundle directory, and image pulling is not available`);
      const pulled = await opts.pull(image, { cacheDir: opts.cacheDir });
      if (pulled.labels[LABEL_BUNDLE_MEDIATYPE] === undefined) {
        throw new BinnacleError('input', 'TEMPLATE_IMAGE', `${image}: not a bundle image (no ${LABEL_BUNDLE_MEDIATYPE} label)`);
      }
      dir = pulled.dir;
    }
    const info = await readBundleDir(dir);
    const packageName = info.annotationPackage ?? '';
    return [await defaultBundleRenderer(info, { packageName, image })];
  };
}
