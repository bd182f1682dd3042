/**
 * The console's page/server contract, the one place both ends import: the API's answers
 * (`api-types`, types and a few constants), its paths (`routes`, built here for the page and
 * answered by the server's router, `../api.ts`; `../routes.test.ts` holds the two together), and
 * forms generated from a CRD's OpenAPI schema (`schema-form`, built by the server's resource
 * views and drawn by the page).
 *
 * Both the server (src/console, Node) and the page (src/console/web, bundled for the browser by
 * esbuild and type-checked by its own tsconfig with DOM and no Node types) import it, so it must
 * stay pure: it imports nothing but its own modules, `util/yaml-values` (with `util/errors`) and
 * the `yaml` package, never Node built-ins, the server's modules or the page's.
 */
export * from './api-types.js';
export * from './routes.js';
export * from './schema-form.js';
