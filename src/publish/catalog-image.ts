/**
 * `catalog build`: validates a file-based catalog, then packs it into an OCI image under
 * `/configs` with the label `operators.operatorframework.io.index.configs.v1=/configs`
 * (what OLM and catalogd look for), and pushes it when asked. Uses `src/oci`.
 */
import { buildImage, pushImage, type BuiltImage, type RegistryClient } from '../oci/index.js';
import { ValidationError, type ValidationResult } from '../util/errors.js';
import { loadFbcDir, type LoadOptions } from '../catalog/load.js';
import { LABEL_CATALOG_CONFIGS } from '../catalog-render/render.js';
import { validateConfig } from '../catalog/validate.js';

export const CATALOG_CONFIGS_DIR = '/configs';

export interface BuildCatalogOptions extends LoadOptions {
  tag: string;
  push?: boolean;
  /** OCI layout directory to write the image into (default: a new temp directory). */
  outputDir?: string;
  /** The client that pushes (default: one with the default auth and plain http to loopback only). */
  client?: RegistryClient;
}

export interface BuildCatalogResult {
  image: BuiltImage;
  /** `host/repo@sha256:…` when pushed. */
  pushed: string | undefined;
  warnings: ValidationResult;
}

/** Validates `dir` (throws `ValidationError` with the whole tree when invalid), builds, pushes. */
export async function buildCatalogImage(dir: string, opts: BuildCatalogOptions): Promise<BuildCatalogResult> {
  const loaded = await loadFbcDir(dir, opts);
  if (!loaded.result.ok) throw new ValidationError(loaded.result);
  const { result } = validateConfig(loaded.config, `catalog ${dir}`);
  if (!result.ok) throw new ValidationError(result);
  const image = await buildImage({
    layers: [{ dir, prefix: CATALOG_CONFIGS_DIR }],
    labels: { [LABEL_CATALOG_CONFIGS]: CATALOG_CONFIGS_DIR },
    tag: opts.tag,
    ...(opts.outputDir === undefined ? {} : { outputDir: opts.outputDir }),
  });
  const pushed = opts.push === true ? (await pushImage(image, opts.tag, opts.client)).ref : undefined;
  return { image, pushed, warnings: result };
}
