/**
 * Catalog sources → FBC (`opm render` and its templates): an FBC directory or file, a
 * `registry+v1` bundle directory, a package directory (package-manifest or bundle layout), a tree
 * of packages, or an image reference become one `DeclarativeConfig` (`render`); `render-fbc`
 * streams the same output for sources that are all FBC without holding the catalog; the basic
 * and semver templates (`template-basic`, `template-semver`) expand bundle image lists into
 * packages and channels.
 *
 * Talks down to `catalog` (load, validate, write, the model), `declcfg`, `bundle` (loading the
 * registry+v1 bundles it reads) and `util`. Images are pulled by an injected `ImagePuller`, so it
 * does not import `oci`. Used by the `catalog` CLI commands, the resolver's catalog sources,
 * `devloop` (run bundle) and `publish`; never by `catalog` or `catalog-store`.
 */
export {
  render,
  detectSourceKind,
  expandBundleImage,
  LABEL_CATALOG_CONFIGS,
  LABEL_BUNDLE_MEDIATYPE,
  type RenderOptions,
  type RenderOutput,
  type ConversionFailure,
  type ImagePuller,
  type PulledImage,
  type SourceKind,
} from './render.js';
export { allFbcSources, toFbc, type ToFbcResult } from './render-fbc.js';
export { fbcFromPackageDir, readUpdateGraphMode, type UpdateGraphMode, type PackageDirFbcResult } from './package-dir.js';
export { readBundleDir, defaultBundleRenderer, type BundleDirInfo, type BundleRenderer } from './bundle-dir.js';
export { expandBasicTemplate, SCHEMA_TEMPLATE_BASIC, type ImageBundleRenderer } from './template-basic.js';
export { expandSemverTemplate, parseSemverTemplate, SCHEMA_TEMPLATE_SEMVER, ARCHETYPES, type Archetype, type SemverTemplate } from './template-semver.js';
export { nextBundle, addBundleImage, archetypeBundles, channelFor, type NextBundle, type NextBundleRequest } from './template-semver-next.js';
export { imageBundleRenderer } from './image-bundles.js';
