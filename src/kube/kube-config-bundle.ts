/**
 * Bundles @kubernetes/client-node's KubeConfig alone, tree-shaken (see kube-config.ts), for
 * `npm run build`. Its own dependencies stay imports of node_modules; only the package's files are
 * bundled, so that what is left of its generated API is what KubeConfig uses.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export async function bundleKubeConfig(outFile: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const pkgDir = dirname(require.resolve('@kubernetes/client-node/package.json'));
  const pkg = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const { build } = await import('esbuild');
  await build({
    stdin: { contents: `export { KubeConfig } from ${JSON.stringify(join(pkgDir, 'dist', 'config.js'))};`, resolveDir: pkgDir, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    treeShaking: true,
    external: Object.keys(pkg.dependencies ?? {}),
    outfile: outFile,
    logLevel: 'warning',
    legalComments: 'inline',
  });
}
