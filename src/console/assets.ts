/**
 * The page's script and style, bundled by esbuild from `src/console/web/` into
 * `.cache/console/`. The style is `web/styles.css`: PatternFly's core CSS (its base and tokens,
 * and the stylesheets of the components the page draws) then Binnacle's own `web/app.css`. `npm run build` builds them; `binnacle console` builds them on start when
 * they are missing or older than their sources, so a checkout works without a separate step.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { BinnacleError, errorMessage } from '../util/errors.js';
import type { Plugin } from 'esbuild';

/** The frontend sources (the same path from src/console and dist/console). */
export const WEB_SOURCE_DIR = join(import.meta.dirname, '..', '..', 'src', 'console', 'web');
/** The page/server contract the page imports (src/console/contract): a change there rebuilds the page too. */
const CONTRACT_SOURCE_DIR = join(WEB_SOURCE_DIR, '..', 'contract');

export const ASSET_FILES = ['app.js', 'app.css'] as const;

/**
 * Top-level rules of PatternFly's base stylesheet the page does without: its web fonts (the
 * page uses the system's fonts, so nothing is fetched from elsewhere and no font file is served),
 * its icon fonts (Font Awesome, pficon) and the themes it never turns on (dark, high contrast,
 * felt, glass), which are most of its size.
 */
const DROPPED_BASE_RULES = /@font-face|pf-v6-theme-|\.fa[sbrl]?\b|\.sr-only|pficon/;

/** Keeps the top-level rules of compiled (comment-free) CSS for which `keep(prelude)` holds. */
export function filterTopLevelRules(css: string, keep: (prelude: string) => boolean): string {
  const out: string[] = [];
  let i = 0;
  while (i < css.length) {
    const open = css.indexOf('{', i);
    if (open < 0) break;
    let depth = 1;
    let j = open + 1;
    while (depth > 0 && j < css.length) {
      const c = css[j++];
      if (c === '{') depth++;
      else if (c === '}') depth--;
    }
    if (keep(css.slice(i, open).trim())) out.push(css.slice(i, j).trim());
    i = j;
  }
  return out.join('\n');
}

/** esbuild plugin: PatternFly's base stylesheet without DROPPED_BASE_RULES; fails the build if any url() is left (the CSP allows no other origin, and nothing else is served). */
const patternflyBase: Plugin = {
  name: 'patternfly-base',
  setup(build) {
    build.onLoad({ filter: /[\\/]@patternfly[\\/]patternfly[\\/].*\.css$/ }, async (args) => {
      let css = await readFile(args.path, 'utf8');
      if (/patternfly-base\.css$/.test(args.path)) css = filterTopLevelRules(css, (prelude) => !DROPPED_BASE_RULES.test(prelude));
      if (css.includes('url(')) return { errors: [{ text: `${args.path} refers to a file by url(), which the console does not serve` }] };
      return { contents: css, loader: 'css' };
    });
  },
};

async function newestSource(dirs: readonly string[]): Promise<number> {
  let newest = 0;
  for (const dir of dirs.filter((d) => existsSync(d))) {
    for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
      if (!e.isFile()) continue;
      newest = Math.max(newest, (await stat(join(e.parentPath, e.name))).mtimeMs);
    }
  }
  return newest;
}

/** PatternFly's package.json (its version changes the style), or undefined when it is not installed. */
function patternflyManifest(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('@patternfly/patternfly/package.json');
  } catch {
    return undefined;
  }
}

async function isFresh(out: string, sources: string): Promise<boolean> {
  if (!ASSET_FILES.every((f) => existsSync(join(out, f)))) return false;
  if (!existsSync(sources)) return true; // an installed copy without sources: use what was built
  const built = Math.min(...(await Promise.all(ASSET_FILES.map(async (f) => (await stat(join(out, f))).mtimeMs))));
  const pf = patternflyManifest();
  return built >= Math.max(await newestSource([sources, CONTRACT_SOURCE_DIR]), pf === undefined ? 0 : (await stat(pf)).mtimeMs);
}

/**
 * Builds the assets into `outDir` unless they are up to date there; answers the folder. The
 * caller says where (the CLI: `.cache/console`, src/cli/build-console-assets.ts and `binnacle console`).
 */
export async function ensureConsoleAssets(opts: { outDir: string; force?: boolean }): Promise<string> {
  const out = opts.outDir;
  if (opts.force !== true && (await isFresh(out, WEB_SOURCE_DIR))) return out;
  if (!existsSync(join(WEB_SOURCE_DIR, 'main.ts'))) throw new BinnacleError('terminal', 'CONSOLE_ASSETS_MISSING', `the console's assets are not in ${out} and its sources are not in ${WEB_SOURCE_DIR}; run \`npm run build\``);
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (err) {
    throw new BinnacleError('terminal', 'CONSOLE_ASSETS_MISSING', `the console's assets are not built and esbuild is not installed (${errorMessage(err)}); run \`npm install\` then \`npm run build\``);
  }
  await mkdir(out, { recursive: true });
  await esbuild.build({
    entryPoints: [join(WEB_SOURCE_DIR, 'main.ts')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    outfile: join(out, 'app.js'),
    logLevel: 'silent',
    legalComments: 'none',
  });
  await esbuild.build({
    entryPoints: [join(WEB_SOURCE_DIR, 'styles.css')],
    bundle: true,
    minify: true,
    outfile: join(out, 'app.css'),
    logLevel: 'silent',
    legalComments: 'none',
    plugins: [patternflyBase],
  });
  return out;
}
