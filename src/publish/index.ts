/**
 * Catalogs out as images: `catalog-image` validates an FBC directory and packs it into an OCI
 * image under `/configs` with the configs label OLM and catalogd look for (`binnacle catalog
 * build`); `packages` publishes a tree of operator packages as `opm index add` did, every
 * version a `registry+v1` bundle image and the whole a catalog image pointing at them by digest
 * (`binnacle publish`, the demo, e2e tests, benchmarks). Charts out as operators: `helm-bundle/`
 * turns a Helm chart into a `registry+v1` bundle run by Binnacle's Helm operator (`binnacle helm
 * bundle`), and `helm-release/` publishes a chart operator's next version into its catalog
 * (`binnacle helm release`); both take Helm's engine as a parameter and sit above `helm`.
 *
 * It sits above both sides it joins: `oci` (building and pushing images) and the catalog side
 * (`catalog` to load and validate, `catalog-render` to render package trees), plus `bundle`.
 * `oci` stays below and knows nothing of catalogs, which is why these files are not in `oci/`.
 * Imported only from the top: the CLI, self (the Helm operator's command in Binnacle's image,
 * helm-bundle/operator.ts), tests and benchmarks.
 */
export { buildCatalogImage, CATALOG_CONFIGS_DIR, type BuildCatalogOptions, type BuildCatalogResult } from './catalog-image.js';
export { publishPackages, type PublishOptions, type PublishResult } from './packages.js';
