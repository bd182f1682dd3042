/**
 * Serving catalogs: the store keeps one catalog on disk as a single JSON Lines file in opm's
 * order, with an in-memory index of byte ranges per record (`store`); the catalogd-style HTTP API
 * (`/api/v1/all`, `/api/v1/metas?schema=&package=&name=`, ETags, gzip) streams those ranges
 * straight from the file (`server`).
 *
 * Talks down to `catalog` (the write order and record checks), `declcfg` and `util` (the hardened
 * HTTP server); knows nothing of rendering or images. Used by the ClusterCatalog controller and
 * the manager (which serve every catalog) and by `binnacle catalog serve`.
 */
export { storeCatalog, openStoredCatalog, filterMetas, CATALOG_FILE, type StoredCatalog, type IndexedMeta, type MetaFilter } from './store.js';
export { unpackCatalog, type UnpackedCatalog } from './unpack.js';
export { createCatalogHandler, startCatalogServer, type CatalogLookup, type CatalogServer, type CatalogHandlerOptions, type StartCatalogServerOptions } from './server.js';
