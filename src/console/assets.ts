/**
 * The page's script and style, bundled by esbuild from `src/console/web/` into
 * `.cache/console/`. `npm run build` builds them; `binnacle console` builds them on start when
 * they are missing or older than their sources, so a checkout works without a separate step.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheDir } from '../cluster/layout.js';
import { BinnacleError, errorMessage } from '../util/errors.js';

/** The frontend sources (the same path from src/console and dist/console). */
export const WEB_SOURCE_DIR = join(import.meta.dirname, '..', '..', 'src', 'console', 'web');

export function assetsDir(): string {
  return join(cacheDir(), 'console');
}

export const ASSET_FILES = ['app.js', 'app.css'] as const;

async function newestSource(dir: string): Promise<number> {
  let newest = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    newest = Math.max(newest, (await stat(join(e.parentPath, e.name))).mtimeMs);
  }
  return newest;
}

async function isFresh(out: string, sources: string): Promise<boolean> {
  if (!ASSET_FILES.every((f) => existsSync(join(out, f)))) return false;
  if (!existsSync(sources)) return true; // an installed copy without sources: use what was built
  const built = Math.min(...(await Promise.all(ASSET_FILES.map(async (f) => (await stat(join(out, f))).mtimeMs))));
  return built >= (await newestSource(sources));
}

/** Builds the assets unless they are up to date; answers their folder. */
export async function ensureConsoleAssets(opts: { outDir?: string; force?: boolean } = {}): Promise<string> {
  const out = opts.outDir ?? assetsDir();
  if (opts.force !== true && (await isFresh(out, WEB_SOURCE_DIR))) return out;
  if (!existsSync(join(WEB_SOURCE_DIR, 'main.ts'))) throw new BinnacleError('CONSOLE_ASSETS_MISSING', `the console's assets are not in ${out} and its sources are not in ${WEB_SOURCE_DIR}; run \`npm run build\``);
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (err) {
    throw new BinnacleError('CONSOLE_ASSETS_MISSING', `the console's assets are not built and esbuild is not installed (${errorMessage(err)}); run \`npm install\` then \`npm run build\``);
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
  await writeFile(join(out, 'app.css'), await readFile(join(WEB_SOURCE_DIR, 'app.css')));
  return out;
}
