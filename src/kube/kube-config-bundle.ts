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
import { nodeHttp } from '../util/node-http.js';

/** The package's generated API (dist/gen/…): models, serializers, API classes. */
const GENERATED = /[\\/]client-node[\\/]dist[\\/]gen[\\/]/;
const GENERATED_RESOLVED = Symbol('resolved');

/**
 * The package's dependencies that only some kubeconfigs need: OIDC (openid-client, rfc4648), the
 * gcp and azure auth providers (jsonpath-plus), a proxy-url (socks-proxy-agent, hpagent), fetch
 * (node-fetch, which brings whatwg-url and its Unicode tables), and a kubeconfig file's YAML
 * (js-yaml: a Pod's in-cluster configuration has none). Imported as they are, every process
 * holds them: 3.7 MB of V8 heap out of 14 (`helm-operator run`, idle). Each is bundled as a stand-in
 * that loads the real module on first use of any of its exports (lazyDependencyStub).
 */
const LAZY_DEPENDENCIES = ['openid-client', 'rfc4648', 'jsonpath-plus', 'socks-proxy-agent', 'hpagent', 'node-fetch', 'js-yaml'];

/**
 * A CommonJS stand-in for module `id` whose exports are `names`: esbuild reads an ES import of a CommonJS
 * module through getters over its exports' keys, so listing the keys loads nothing, and reading
 * one (a call, a `new`) loads the module with Node's require (which also loads ES modules).
 */
const lazyDependencyStub = (id: string, names: readonly string[]): string => `// Through a variable: a literal would be bundled, to this stand-in itself.
const id = ${JSON.stringify(id)};
const names = ${JSON.stringify(names)};
let real;
const load = () => (real ??= require(id));
const of = (m, k) => (k === 'default' && m[Symbol.toStringTag] !== 'Module' ? m : m[k]);
// The default export of a CommonJS module is the module itself: a function (node-fetch's fetch) is called through this.
module.exports = new Proxy(() => undefined, {
  apply: (_, self, args) => Reflect.apply(of(load(), 'default'), self, args),
  get: (_, k) => (k === '__esModule' ? false : of(load(), k)),
  has: (_, k) => names.includes(k),
  ownKeys: () => [...names, 'length', 'name'],
  getOwnPropertyDescriptor: (t, k) => (names.includes(k) ? { configurable: true, enumerable: true, writable: false, value: undefined } : Reflect.getOwnPropertyDescriptor(t, k)),
});
`;

/**
 * node:http, required, with its exports named as an ES import names them: every data property
 * (`Agent`, `request`, ...), not the getters (WebSocket, CloseEvent, MessageEvent), whose reading
 * is what loads undici.
 */
function nodeHttpStandIn(): string {
  const names = Object.entries(Object.getOwnPropertyDescriptors(nodeHttp))
    .filter(([name, d]) => 'value' in d && /^[A-Za-z_$][\w$]*$/.test(name))
    .map(([name]) => name);
  return `import { createRequire } from 'node:module';\nconst http = createRequire(import.meta.url)('node:http');\nexport default http;\nexport const { ${names.join(', ')} } = http;\n`;
}

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
    // The stand-ins' require, resolving from the bundle's own place as its imports do.
    banner: { js: "import { createRequire as __binnacleCreateRequire } from 'node:module';\nconst require = __binnacleCreateRequire(import.meta.url);" },
    plugins: [
      {
        // As Binnacle's own code takes it (util/node-http.ts says why): the package's default import of node:http, required.
        name: 'node-http-required',
        setup(b) {
          b.onResolve({ filter: /^(node:)?http$/ }, () => ({ path: 'node:http', namespace: 'binnacle-node-http' }));
          b.onLoad({ filter: /.*/, namespace: 'binnacle-node-http' }, () => ({ contents: nodeHttpStandIn(), loader: 'js' }));
        },
      },
      {
        name: 'client-node-dependencies-load-when-used',
        setup(b) {
          b.onResolve({ filter: new RegExp(`^(${LAZY_DEPENDENCIES.join('|')})$`) }, (args) => ({ path: args.path, namespace: 'binnacle-lazy-dependency' }));
          b.onLoad({ filter: /.*/, namespace: 'binnacle-lazy-dependency' }, (args) => {
            // The export names, from the module itself as this build's Node loads it.
            const names = Object.keys(require(args.path) as object).filter((k) => k !== 'default' && k !== '__esModule');
            return { contents: lazyDependencyStub(args.path, names), loader: 'js', resolveDir: pkgDir };
          });
        },
      },
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
