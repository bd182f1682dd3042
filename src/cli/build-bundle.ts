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
 * What every command loads is one file: esbuild makes a chunk of each set of modules the same
 * lazy imports reach, and does not merge those main.js imports statically (errors, flags, the
 * logging context, commander, ...) into it, though every command loads them at start: they came
 * as ten chunks, and Node's cost per module (resolving, reading, linking each file and each of
 * its imports) made them 5 ms of CPU of every command's start-up, `--version`'s included. They
 * are bundled again into STARTUP_CHUNK (mergeStartupChunks), which every other chunk imports
 * instead. And the banner below, which gives a chunk a `require`, is kept only in the chunks that
 * use one (the inlined CommonJS packages'): creating it in each of the thirty chunks
 * `catalog validate` loads cost another millisecond.
 *
 * Comments: the build's tsc drops them (tsconfig.build.json's removeComments), so the bundle
 * keeps none, and the build stops at a chunk that is not all Latin-1 (assertLatin1Chunks). V8
 * holds a module's source for as long as the module lives, one byte a character only while every
 * character is Latin-1: the doc comments esbuild keeps had arrows and section signs in them, which
 * made the manager's chunk two bytes a character (209 KB on disk, 419 KB in V8's heap). Measured
 * with the manager idle on the local control plane (two runs each, Node 24.22.3, diagnostics, not
 * stored): V8's heap used 16.6 → 16.1 MiB.
 *
 * Paths next to modules: each chunk sits in dist/cli-bundle/, as deep as dist/<area>/, so the
 * `import.meta.url`-relative paths of the sources (Helm's engine dir, dist/vendor/, the console's
 * web sources, the project root) resolve alike; the top-level help's index is copied beside it.
 *
 * usage: node --import tsx src/cli/build-bundle.ts [COMPILED_DIR [OUT_DIR]]   (default dist, dist/cli-bundle)
 */
import type { Metafile, Plugin } from 'esbuild';
import { copyFile, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BinnacleError } from '../util/errors.js';
import { HELP_INDEX_FILE } from './help-index.js';

export const BUNDLE_DIR = 'cli-bundle';
/** The one chunk of the modules main.js imports statically (see mergeStartupChunks). */
export const STARTUP_CHUNK = 'startup.js';
const INLINE = new Set(['commander', 'semver', 'js-yaml']);
/** What a chunk begins with so that it has a `require` (the inlined CommonJS packages call it). */
const REQUIRE_BANNER = "import { createRequire as __binnacleCreateRequire } from 'node:module';\nconst require = __binnacleCreateRequire(import.meta.url);";

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
  const { metafile } = await build({
    metafile: true,
    entryPoints: [o.entry],
    outdir: o.outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    legalComments: 'inline',
    // No keepNames: it wraps every named function, closures made in hot loops included, in a call
    // that sets its name, which cost a fifth of unpacking a 68 MB catalog (1.8 s against 1.45 s,
    // the same code bundled both ways). What it was for, error classes named as written where two
    // modules' names collide (errors take `new.target.name`), build-bundle.test.ts checks instead.
    keepNames: false,
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
        // The YAML reader (util/yaml.ts) uses js-yaml's loader alone; the package's entry
        // (dist/js-yaml.mjs) also builds its writer at import, a quarter of its 104 KB. That import
        // gets the loader's own files of the package (lib/, which dist/ is built from) instead.
        // Any other importer gets the package as it is.
        name: 'js-yaml-loader-only',
        setup(b) {
          b.onResolve({ filter: /^js-yaml$/ }, (args) => (/[\\/]util[\\/]yaml\.[jt]s$/.test(args.importer) ? { path: 'js-yaml-loader', namespace: 'binnacle-js-yaml' } : undefined));
          b.onLoad({ filter: /.*/, namespace: 'binnacle-js-yaml' }, () => {
            const lib = path.join(path.dirname(createRequire(import.meta.url).resolve('js-yaml/package.json')), 'lib');
            const parts = { loader: 'loader.js', Type: 'type.js', Schema: 'schema.js', FAILSAFE_SCHEMA: 'schema/failsafe.js', YAMLException: 'exception.js' };
            const imports = Object.entries(parts).map(([name, file]) => `import ${name} from ${JSON.stringify(path.join(lib, file))};`);
            const names = 'Type, Schema, FAILSAFE_SCHEMA, YAMLException';
            const contents = `${imports.join('\n')}\nexport const load = loader.load, loadAll = loader.loadAll;\nexport { ${names} };\nexport default { load, loadAll, ${names} };\n`;
            return { contents, loader: 'js', resolveDir: lib };
          });
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
    banner: { js: REQUIRE_BANNER },
  });
  await dropUnusedRequireBanners(o.outDir);
  await mergeStartupChunks(o.outDir, metafile, path.join(o.outDir, `${path.basename(o.entry).replace(/\.[cm]?[jt]s$/, '')}.js`));
  await copyFile(o.helpIndex, path.join(o.outDir, HELP_INDEX_FILE));
}

/** Takes the banner out of every chunk that does not say `require` (whatever it says it for: a word in a string keeps it too). */
async function dropUnusedRequireBanners(outDir: string): Promise<void> {
  for (const f of (await readdir(outDir)).filter((n) => n.endsWith('.js'))) {
    const file = path.join(outDir, f);
    const text = await readFile(file, 'utf8');
    if (!text.startsWith(REQUIRE_BANNER)) continue;
    const rest = text.slice(REQUIRE_BANNER.length);
    if (!/\brequire\b/.test(rest)) await writeFile(file, rest.replace(/^\n/, ''));
  }
}

/**
 * Bundles the chunks `main` imports statically, and those they import, into STARTUP_CHUNK, and
 * points every chunk's imports of them there: they are all loaded before any command runs, so one
 * file holds what they held, each module still once. esbuild gives every exported name of a
 * split build's chunks a name of its own; two alike would make `export *` drop both, so the
 * build stops instead.
 */
async function mergeStartupChunks(outDir: string, metafile: Metafile, main: string): Promise<void> {
  const outputs = new Map(Object.entries(metafile.outputs).map(([p, out]) => [path.resolve(p), out]));
  const merged = new Set<string>();
  const todo = [main];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    const out = outputs.get(file);
    if (out === undefined) throw new BinnacleError('internal', 'BUNDLE_BUILD', `esbuild's metafile has no output ${file}`);
    for (const i of out.imports) {
      const chunk = path.resolve(i.path);
      if (i.kind === 'import-statement' && i.external !== true && !merged.has(chunk)) {
        merged.add(chunk);
        todo.push(chunk);
      }
    }
  }
  if (merged.size === 0) return;
  const exported = new Set<string>();
  for (const chunk of merged) {
    for (const name of outputs.get(chunk)?.exports ?? []) {
      if (exported.has(name) || name === 'default') throw new BinnacleError('internal', 'BUNDLE_BUILD', `the start-up chunks export '${name}' twice (or as a default): they cannot be merged into ${STARTUP_CHUNK}`);
      exported.add(name);
    }
  }
  const target = path.join(outDir, STARTUP_CHUNK);
  if (outputs.has(target)) throw new BinnacleError('internal', 'BUNDLE_BUILD', `esbuild wrote a chunk named ${STARTUP_CHUNK} itself`);
  const { build } = await import('esbuild');
  await build({
    stdin: { contents: [...merged].map((c) => `export * from './${path.basename(c)}';`).join('\n'), resolveDir: outDir, sourcefile: 'startup-entry.js', loader: 'js' },
    outfile: target,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    legalComments: 'inline',
    // Not keepNames, as the split build: build-bundle.test.ts checks this merged output for renamed error classes.
    // Only the chunks are bundled again: packages and Node's modules stay the imports they were,
    // and so does a lazy chunk a start-up module imports dynamically (bundled in, its module
    // would exist twice, with two states).
    plugins: [
      {
        name: 'startup-external',
        setup: (b) => b.onResolve({ filter: /.*/ }, (args) => (/^[^./]/.test(args.path) || args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined)),
      },
    ],
  });
  const names = [...merged].map((c) => path.basename(c));
  for (const f of (await readdir(outDir)).filter((n) => n.endsWith('.js') && n !== STARTUP_CHUNK)) {
    const file = path.join(outDir, f);
    if (names.includes(f)) {
      await rm(file);
      continue;
    }
    const text = await readFile(file, 'utf8');
    // Chunk names carry a hash: "./chunk-ABCD1234.js" in quotes is an import of that chunk.
    const pointed = names.reduce((t, n) => t.split(`"./${n}"`).join(`"./${STARTUP_CHUNK}"`), text);
    if (pointed !== text) await writeFile(file, pointed);
  }
}

/**
 * Stops the build at a chunk with a character beyond Latin-1, naming its file and line: V8 would
 * hold that chunk's whole source two bytes a character for as long as its module lives (see the
 * header). esbuild escapes such characters in code but not in the comments it keeps, which the
 * production build's tsc drops; a bundle made from the TypeScript sources keeps them, so this is
 * for the production build's bundle.
 */
export async function assertLatin1Chunks(outDir: string): Promise<void> {
  for (const f of (await readdir(outDir)).filter((n) => n.endsWith('.js')).sort()) {
    const text = await readFile(path.join(outDir, f), 'utf8');
    const at = text.search(/[\u0100-\u{10ffff}]/u);
    if (at < 0) continue;
    const line = text.slice(0, at).split('\n').length;
    const code = text.codePointAt(at)?.toString(16).toUpperCase().padStart(4, '0');
    throw new BinnacleError('internal', 'BUNDLE_BUILD', `${path.join(outDir, f)}:${line}: U+${code} is beyond Latin-1, so V8 would hold this chunk two bytes a character: write it as ASCII`);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const compiled = path.resolve(process.argv[2] ?? fileURLToPath(new URL('../../dist/', import.meta.url)));
  const out = path.resolve(process.argv[3] ?? path.join(compiled, BUNDLE_DIR));
  await bundleCli({ entry: path.join(compiled, 'cli', 'main.js'), outDir: out, helpIndex: path.join(compiled, 'cli', HELP_INDEX_FILE) });
  await assertLatin1Chunks(out);
  process.stdout.write(`CLI bundled in ${out}\n`);
}
