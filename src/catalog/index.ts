/**
 * The file-based catalog (FBC): the wire format (`declcfg`), loading it from directories and
 * streams (`load`) and writing it back in opm's order (`write`), the linked model and every
 * `opm validate` rule (`model`, `validate`), rendering from FBC, bundle directories,
 * package-manifest trees and images (`render`), the basic and semver templates, the on-disk
 * store with its byte-offset index and the catalogd-style HTTP API (`store`, `server`), and
 * building catalog images (`build`). Talks to `bundle` (loading registry+v1 bundles) and `oci`
 * (pulling, building, pushing images); the ClusterCatalog controller serves catalogs through it.
 */
export * from '../declcfg/index.js';
export { decodeDocument, type DecodeResult, type FieldProblem } from './decode.js';
export {
  DEFAULT_MAX_FILE_BYTES,
  listCatalogFiles,
  loadFbcDir,
  loadFbcStream,
  readFbcDir,
  parseDocuments,
  type LoadOptions,
  type LoadResult,
} from './load.js';
export { orderedMetas, fbcChunks, toFbcJson, toFbcJsonLines, toFbcYaml, formatFbc, writeFbcFile, type FbcFormat, type OrderedMeta } from './write.js';
export { toModel, parseStrictSemver, isValidImageReference, type Model, type ModelPackage, type ModelChannel, type ModelBundle, type ModelChannelEntry } from './model.js';
export { validateConfig, validateModel, channelHead, ICON_MEDIA_TYPES } from './validate.js';
export {
  render,
  detectSourceKind,
  expandBundleImage,
  LABEL_CATALOG_CONFIGS,
  LABEL_BUNDLE_MEDIATYPE,
  type RenderOptions,
  type RenderOutput,
  type RenderFailure,
  type ImagePuller,
  type PulledImage,
  type SourceKind,
} from './render.js';
export { renderPackageDir, readUpdateGraphMode, type UpdateGraphMode, type PackageRenderResult } from './package-dir.js';
export { readBundleDir, defaultBundleRenderer, type BundleDirInfo, type BundleRenderer } from './bundle-dir.js';
export { renderBasicTemplate, SCHEMA_TEMPLATE_BASIC, type ImageBundleRenderer } from './template-basic.js';
export { renderSemverTemplate, parseSemverTemplate, SCHEMA_TEMPLATE_SEMVER, type SemverTemplate } from './template-semver.js';
export { imageBundleRenderer } from './image-bundles.js';
export { storeCatalog, openStoredCatalog, filterMetas, CATALOG_FILE, type StoredCatalog, type IndexedMeta, type MetaFilter } from './store.js';
export { createCatalogHandler, startCatalogServer, type CatalogLookup, type CatalogServer, type CatalogHandlerOptions, type StartCatalogServerOptions } from './server.js';
export { buildCatalogImage, CATALOG_CONFIGS_DIR, type BuildCatalogOptions, type BuildCatalogResult } from './build.js';
