/**
 * The file-based catalog (FBC) itself: its wire format (`declcfg`, re-exported), checking each
 * record against its schema (`decode`), loading it from directories and streams with opm's
 * `.indexignore` rules (`load`, `indexignore`), writing it back in opm's order (`write`), and the
 * linked model with every `opm validate` rule (`model`, `validate`, listed in `RULES.md`), and the
 * lighter copy a manager resolves on (`resolution-view`).
 *
 * The bottom of the catalog side: it imports only `declcfg`, `util` and `oci/reference` (image
 * reference syntax). Everything that makes or moves catalogs builds on it and is never imported
 * by it: `catalog-render` (sources and templates → FBC), `catalog-store` (the indexed store and
 * its HTTP API), `publish` (catalog and bundle images), the resolver and the controllers.
 */
export * from '../declcfg/index.js';
export { decodeDocument, type DecodeResult, type FieldProblem } from './decode.js';
export {
  DEFAULT_MAX_FILE_BYTES,
  listCatalogFiles,
  DEFAULT_MAX_CATALOG_BYTES,
  loadFbcDir,
  loadFbcStream,
  readFbcDir,
  parseDocuments,
  type LoadOptions,
  type LoadResult,
} from './load.js';
export { orderedMetas, fbcChunks, toFbcJson, toFbcJsonLines, toFbcYaml, formatFbc, writeFbcFile, type FbcFormat, type OrderedMeta } from './write.js';
export { toModel, parseStrictSemver, isValidImageReference, type Model, type ModelPackage, type ModelChannel, type ModelBundle, type ModelChannelEntry } from './model.js';
export { validateConfig, validateModel, channelHead, ICON_MEDIA_TYPES, TOLERATED_RULES, RULES_SINCE_OPM_1_47, RULES_CATALOGD_SERVES, blockingErrors, servingBlockers } from './validate.js';
export { resolutionView } from './resolution-view.js';
