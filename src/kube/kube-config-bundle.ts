/**
 * Bundles @kubernetes/client-node's KubeConfig alone, tree-shaken (see kube-config.ts), for
 * `npm run build`. Its own dependencies stay imports of node_modules; only the package's files are
 * bundled, so that what is left of its generated API is what KubeConfig uses. The generated API's
 * modules are declared free of side effects (the package does not say so), else esbuild keeps all
 * of them: 726 modules and 630 KB, whose source V8 holds in every process's heap, against 41 KB.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The package's generated API (dist/gen/…): models, serializers, API classes. */
const GENERATED = /[\\/]client-node[\\/]dist[\\/]gen[\\/]/;
const GENERATED_RESOLVED = Symbol('resolved');

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
    plugins: [
      {
        name: 'client-node-generated-api-is-pure',
        setup(b) {
          b.onResolve({ filter: /.*/ }, async (args) => {
            if (args.pluginData === GENERATED_RESOLVED || (!GENERATED.test(args.importer) && !args.path.includes('/gen/'))) return undefined;
            const r = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: GENERATED_RESOLVED });
            return r.errors.length === 0 && !r.external && GENERATED.test(r.path) ? { path: r.path, sideEffects: false } : undefined;
          });
        },
      },
    ],
  });
}
