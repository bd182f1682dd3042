/**
 * The `binnacle` command line: the top of the stack. `main` wires every command group together
 * and turns errors into exit codes (0 ok, 1 a failure the user caused or the cluster reported,
 * 2 usage); `commands/` holds one module per group, each registering its subcommands and
 * importing what its actions need only when one runs, so a small command starts fast; `context`
 * (logger, output formats), `flags` (the global flags and flag parsers), `kube` (finding the
 * cluster as kubectl does), `heap` (V8's collector set like Go's) and the build steps
 * (`build-help-index`, `build-bundle`: the help index and the esbuild bundle that
 * `bin/binnacle.js` runs).
 *
 * It may import any folder of src/: it is where the pipeline's parts (catalog, catalog-render,
 * catalog-store, publish, bundle, helm, resolve, apply, controllers, console, ...) meet the user.
 * Nothing in src/ imports it, so no layer depends on how it is invoked; only tests drive it
 * (through `run`), and `bin/binnacle.js` starts it.
 */
export { run, buildProgram } from './main.js';
export { defaultContext, type CliContext } from './context.js';
