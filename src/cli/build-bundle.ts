/**
 * `npm run build`'s last step: the compiled CLI (dist/cli/main.js and what it imports, as tsc
 * wrote it) bundled by esbuild into dist/cli-bundle/, which bin/binnacle.js runs when present.
 *
 * Why: start-up is most of a small command's time, and much of it is Node finding, reading and
 * linking many small files (commander and semver are CommonJS, a dozen files between them). The
 * bundle is ESM with code splitting: every `await import()` of the sources stays a separate
 * chunk, so a command still loads only its own group and what its action imports.
 *
 * What is inlined: Binnacle's own code, and the packages in INLINE (small, pure JavaScript, on
 * the path of every command). Every other package stays an import from node_modules, loaded
 * exactly as the unbundled dist/ loads it: `yaml` and `pino` are also required through
 * createRequire (two copies of `yaml` would not share its classes), esbuild and
 * @kubernetes/client-node find files of their own by path, and prom-client, tar and x509 are
 * only on the paths of commands that talk to clusters or registries anyway.
 *
 * Paths next to modules: each chunk sits in dist/cli-bundle/, as deep as dist/<area>/, so the
 * `import.meta.url`-relative paths of the sources (Helm's engine dir, dist/vendor/, the console's
 * web sources, the project root) resolve alike; the top-level help's index is copied beside it.
 *
 * usage: node --import tsx src/cli/build-bundle.ts [COMPILED_DIR [OUT_DIR]]   (default dist, dist/cli-bundle)
 */
import type { Plugin } from 'esbuild';
import { copyFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HELP_INDEX_FILE } from './help-index.js';

export const BUNDLE_DIR = 'cli-bundle';
const INLINE = new Set(['commander', 'semver', 'js-yaml']);

/** The package a bare specifier names (`semver/classes/semver.js` → semver, `@a/b/c` → @a/b). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

export interface BundleOptions {
  /** The CLI's entry: tsc's dist/cli/main.js (the build), or src/cli/main.ts (esbuild reads TypeScript too). */
  entry: string;
  /** Emptied first. */
  outDir: string;
  /** The top-level help's index (build-help-index.ts), copied beside the chunks. */
  helpIndex: string;
  /** More esbuild plugins, run before the bundle's own (a bench swaps a module this way: bench/cel.ts). */
  plugins?: Plugin[];
  /** More packages to inline besides INLINE. */
  inline?: readonly string[];
}

/** Bundles the CLI into `outDir`, one chunk per lazily imported part. */
export async function bundleCli(o: BundleOptions): Promise<void> {
  const { build } = await import('esbuild');
  const inline = new Set([...INLINE, ...(o.inline ?? [])]);
  await rm(o.outDir, { recursive: true, force: true });
  await build({
    entryPoints: [o.entry],
    outdir: o.outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    legalComments: 'inline',
    // Names stay as written when two modules' top-level names collide (errors take `new.target.name`).
    keepNames: true,
    plugins: [
      ...(o.plugins ?? []),
      {
        // commander requires child_process at load, only to spawn executable subcommands, which
        // Binnacle has none of; loading it (with net, dgram and their kin) costs every command
        // 2-3 ms of CPU. commander gets a stand-in that loads it on first use. (Before the next
        // plugin, which would make it an import.)
        name: 'commander-lazy-child-process',
        setup(b) {
          b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
            /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'lazy-child-process', namespace: 'binnacle-lazy' } : undefined,
          );
          b.onLoad({ filter: /.*/, namespace: 'binnacle-lazy' }, () => ({
            contents: "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });",
            loader: 'js',
          }));
        },
      },
      {
        name: 'node-modules-external-but-inline',
        setup(b) {
          // Bare specifiers (packages and node: builtins) stay imports unless INLINE names them.
          b.onResolve({ filter: /^[^./]/ }, (args) => (inline.has(packageOf(args.path)) ? undefined : { path: args.path, external: true }));
        },
      },
    ],
    // The inlined CommonJS packages require Node's builtins; an ES module has no `require` of its own.
    banner: { js: "import { createRequire as __binnacleCreateRequire } from 'node:module';\nconst require = __binnacleCreateRequire(import.meta.url);" },
  });
  await copyFile(o.helpIndex, path.join(o.outDir, HELP_INDEX_FILE));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const compiled = path.resolve(process.argv[2] ?? fileURLToPath(new URL('../../dist/', import.meta.url)));
  const out = path.resolve(process.argv[3] ?? path.join(compiled, BUNDLE_DIR));
  await bundleCli({ entry: path.join(compiled, 'cli', 'main.js'), outDir: out, helpIndex: path.join(compiled, 'cli', HELP_INDEX_FILE) });
  process.stdout.write(`CLI bundled in ${out}\n`);
}
