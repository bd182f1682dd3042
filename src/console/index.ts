/**
 * The console: a web UI for a person over the same pipeline the CLI drives. The server
 * (`server`, on util's safe HTTP server) serves the page, its bundled assets (`assets`, built
 * from `web/` by esbuild) and a JSON API (`api`) whose views each answer one page: catalogs and
 * packages (`catalog-view`, `graph`, `upgrade-path`), installed operators and their health
 * (`installed`, `inventory`, `health`), releases and drift (`release-timeline`, `drift`), custom
 * resources with generated forms (`resources`), live updates (`watch`). Every request passes
 * the gates first (`access`: Host allow-list, login token, trusted proxy; `security`: CSRF and
 * headers; `limits`) and then runs as the person (`identity`), never as the console itself.
 *
 * Imports: the layers below (util, kube, api, catalog, bundle, apply, installed, resolve,
 * cluster, declcfg) and the controllers' `plan`; `contract/` is the page/server contract that
 * both this server and the page (`web/`, its own tsconfig, browser only) import, and the page
 * imports nothing else here. Imported by: the CLI (`binnacle console`, `manager
 * --console-listen`) and `self` (the manager image ships the built assets, `ASSET_FILES`).
 */
export { startConsole, consoleHandler, parseListen, type ConsoleOptions, type RunningConsole, type ConsoleHandler } from './server.js';
export { clientForToken, type IdentityOptions } from './identity.js';
export { blockListOf, checkStart, parsePublicAddresses, type AccessOptions } from './access.js';
export { ensureConsoleAssets, ASSET_FILES } from './assets.js';
