/**
 * Binnacle's manager image, built by Binnacle's own OCI builder with no Docker: the compiled
 * output (dist/, bin/), the production dependencies (the lock file's non-dev packages) and
 * Helm's engines (.cache/helm-wasm: helm.wasm and the static helm-engine) as one layer under /opt/binnacle, on a Node base image given
 * by reference and digest. The Dockerfile at the repository root produces the same layout.
 *
 * The `helm-operator` variant is the drop-in for operator-sdk's helm-operator base image
 * (quay.io/operator-framework/helm-operator): the same program, but its entry point is
 * `helm-operator run --watches-file=./watches.yaml` in /opt/helm as numeric user 1001, HOME
 * /opt/helm, so a project's Dockerfile (`COPY watches.yaml helm-charts ${HOME}/`) and its
 * Deployment's arguments (appended to the entry point) stay as they are.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ASSET_FILES } from '../console/assets.js';
import { buildImage, parseReference, pushImage, RegistryClient, type PushResult } from '../oci/index.js';
import { BinnacleError, InputError } from '../util/errors.js';
import { BINNACLE_IMAGE_ROOT, HELM_OPERATOR_COMMAND, HELM_OPERATOR_NODE_OPTIONS } from '../publish/helm-bundle/operator.js';
import { NATIVE_ENGINE_FILE } from '../helm-engine/engine.js';

export const IMAGE_ROOT = BINNACLE_IMAGE_ROOT;

/** operator-sdk's helm-operator image: its working directory and HOME, where projects copy watches.yaml and helm-charts/. */
export const HELM_OPERATOR_HOME = '/opt/helm';
/** The arguments operator-sdk's helm-operator image runs, after the program; a Deployment's args are appended. */
export const HELM_OPERATOR_RUN_ARGS: readonly string[] = ['helm-operator', 'run', '--watches-file=./watches.yaml'];
/** operator-sdk's helm-operator image runs as uid 1001 (group 0): numeric, so `runAsNonRoot` can check it. */
export const HELM_OPERATOR_USER = '1001';

/** The manager image (`binnacle manager`), or the helm-operator base image. */
export type SelfImageVariant = 'manager' | 'helm-operator';

export interface RuntimeConfig {
  Entrypoint: string[];
  Cmd: string[];
  WorkingDir: string;
  User: string;
  Env: string[];
}

/**
 * V8's flags for the manager in the image, given to `node` itself (NODE_OPTIONS refuses V8 flags,
 * and setting them once V8 runs is undefined behaviour; `helm-operator run` has its own,
 * HELM_OPERATOR_NODE_FLAGS). `--optimize-for-size` keeps V8's
 * heap nearer what is live: measured with bench/helm-operator.ts at 100 CRs, `helm-operator run`'s
 * Node process peaked ~15 MiB lower (about 127 against 142 MiB over four runs each), its converge
 * CPU within the runs' noise. `--no-maglev`: the tiers Node 20 had (Maglev, V8's mid-tier
 * compiler, is on by default since Node 22); bench/install on Node 24.22.3, 100 extensions at once:
 * 96 → 86 MiB when ready (one run without, two with), the peak within the runs' noise (192 without;
 * 183 and 198 with), the time to install them the same. Not taken: `--no-opt` (no TurboFan, whose
 * code the process then never touches, 6 MiB of Node's binary resident): bench/catalog-scale.ts
 * --only binnacle --modes defaults, one round with and one without, twice
 * (bench/results/catalog-scale/2026-12-07T21-11-12Z-586dd8e.json to …21-15-10Z-586dd8e.json):
 * idle 83 and 85 → 76 MiB, steady 99 and 96 → 88, peak 127 and 129 → 118 and 122, but Serving
 * 8.9 and 7.5 → 11.3 and 8.8 s (CPU 7.7 and 6.6 → 9.4 and 7.3 s; `--node-flags '--optimize-for-size
 * --no-maglev --no-opt'`). catalogd, in that bench's runs of the same day (…18-59-13Z-b7f821c.json,
 * …19-15-42Z-abe18ef.json), serves in 8.2 and 8.4 s and holds 64.6 and 65.8 MiB steady: steady
 * memory would still be about 1.35 times catalogd's, and Serving no longer as soon.
 */
export const NODE_FLAGS: readonly string[] = ['--optimize-for-size', '--no-maglev'];

/**
 * glibc's allocator settings for Binnacle's processes in the image (the base is Debian's, glibc).
 * Node's memory outside V8's heap (buffers, streams, zlib, TLS) comes from malloc, which by
 * default keeps what is freed: a 1 MiB buffer freed raises the size below which allocations are
 * carved from the arenas instead of mapped (up to 32 MiB), and freed arena memory is returned only
 * above 128 KiB at the top of one. A fixed 128 KiB threshold maps large buffers and unmaps them
 * when freed, trimming above 128 KiB returns freed tops, and two arenas stop each thread (libuv's
 * pool, V8's workers) growing one of its own. bench/catalog-scale.ts, three catalogs of 68 MB
 * served by the manager, with and without, one round each in one sitting
 * (bench/results/catalog-scale/2026-12-06T19-30-49Z-fecf660.json and …19-33-01Z-fecf660.json):
 * steady 154 → 126 MiB at defaults and 148 → 119 with one catalog at a time, peak 209 → 196 and
 * 191 → 172; time to Serving and the queries within one round's noise. glibc only: on a musl base
 * the variables do nothing; a derived image may set its own.
 */
export const MALLOC_ENV: readonly string[] = ['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072', 'MALLOC_TRIM_THRESHOLD_=131072'];

/** MALLOC_ENV as a process environment's entries: for benches that run Binnacle as its image does. */
export function mallocEnv(): Record<string, string> {
  return Object.fromEntries(MALLOC_ENV.map((e) => e.split('=') as [string, string]));
}

/** The image config's runtime settings of `variant`, over the base image's environment. */
export function runtimeConfig(variant: SelfImageVariant, baseEnvironment: readonly string[]): RuntimeConfig {
  const own = ['NODE_ENV=', 'BINNACLE_HELM_WASM_DIR=', ...MALLOC_ENV.map((e) => e.slice(0, e.indexOf('=') + 1)), ...(variant === 'helm-operator' ? ['HOME=', 'USER_NAME=', 'USER_UID=', 'NODE_OPTIONS='] : [])];
  const env = [...baseEnvironment.filter((e) => !own.some((p) => e.startsWith(p))), 'NODE_ENV=production', `BINNACLE_HELM_WASM_DIR=${IMAGE_ROOT}/.cache/helm-wasm`, ...MALLOC_ENV];
  const program = ['node', ...NODE_FLAGS, `${IMAGE_ROOT}/bin/binnacle.js`];
  if (variant === 'manager') return { Entrypoint: program, Cmd: ['manager'], WorkingDir: IMAGE_ROOT, User: '65532:65532', Env: env };
  return {
    Entrypoint: [...HELM_OPERATOR_COMMAND, ...HELM_OPERATOR_RUN_ARGS],
    // Empty, not the base's (node's is ["node"]): a Deployment's args are what follows the entry point.
    Cmd: [],
    WorkingDir: HELM_OPERATOR_HOME,
    User: HELM_OPERATOR_USER,
    Env: [...env, `HOME=${HELM_OPERATOR_HOME}`, 'USER_NAME=helm', `USER_UID=${HELM_OPERATOR_USER}`, `NODE_OPTIONS=${HELM_OPERATOR_NODE_OPTIONS}`],
  };
}

export interface SelfImageOptions {
  /** The repository root holding dist/, bin/, node_modules/ and package-lock.json. */
  root: string;
  /** The Node base image by reference and digest: `docker.io/library/node:20-slim@sha256:…`. */
  base: string;
  /** Where to push: `registry/repo:tag`. */
  target: string;
  client?: RegistryClient;
  /** Where Helm's engine is (default `<root>/.cache/helm-wasm`). */
  helmWasmDir?: string;
  /** The console's built assets (default: <root>/.cache/console, where `npm run build` writes them). */
  consoleAssetsDir?: string;
  /** Which image (default `manager`). */
  variant?: SelfImageVariant;
}

/** The lock file's production packages: every `node_modules/…` entry not marked dev. */
export function productionPackages(lockText: string): string[] {
  const lock = JSON.parse(lockText) as { packages?: Record<string, { dev?: boolean; devOptional?: boolean }> };
  return Object.entries(lock.packages ?? {})
    .filter(([path, p]) => path.startsWith('node_modules/') && p.dev !== true && p.devOptional !== true)
    .map(([path]) => path)
    .sort();
}

/** The layer's tree, hard-linked from the repository (nothing is copied). */
function stage(o: SelfImageOptions, dir: string): void {
  const need = [join(o.root, 'dist', 'cli', 'main.js'), join(o.root, 'bin', 'binnacle.js'), join(o.root, 'package-lock.json')];
  for (const f of need) if (!existsSync(f)) throw new BinnacleError('terminal', 'SELF_IMAGE_INPUT_MISSING', `${f} is missing: run \`npm ci && npm run build\` first`);
  const wasm = o.helmWasmDir ?? join(o.root, '.cache', 'helm-wasm');
  // Both of Helm's engines: the native helm-engine (static, run as a child process: the default,
  // and what keeps `helm-operator run` within operator-sdk's 128 MiB) and helm.wasm (BINNACLE_HELM_ENGINE=wasm).
  for (const f of ['helm.wasm', NATIVE_ENGINE_FILE]) {
    if (!existsSync(join(wasm, f))) throw new BinnacleError('terminal', 'SELF_IMAGE_INPUT_MISSING', `${join(wasm, f)} is missing: run \`bash hack/build-tools.sh helm-wasm\``);
  }
  // The console's built page (manager --console-listen): the image has neither its sources nor esbuild to build it.
  const consoleAssets = o.consoleAssetsDir ?? join(o.root, '.cache', 'console');
  for (const f of ASSET_FILES) if (!existsSync(join(consoleAssets, f))) throw new BinnacleError('terminal', 'SELF_IMAGE_INPUT_MISSING', `${join(consoleAssets, f)} is missing: run \`npm run build\``);
  const link = (from: string, to: string): void => {
    mkdirSync(dirname(to), { recursive: true });
    execFileSync('cp', ['-al', from, to]);
  };
  link(join(o.root, 'dist'), join(dir, 'dist'));
  link(join(o.root, 'bin'), join(dir, 'bin'));
  link(join(o.root, 'package.json'), join(dir, 'package.json'));
  // Their directories, not a symlink to them (`cp -a` copies a link as a link, pointing out of the image).
  link(realpathSync(wasm), join(dir, '.cache', 'helm-wasm'));
  link(realpathSync(consoleAssets), join(dir, '.cache', 'console'));
  for (const pkg of productionPackages(readFileSync(join(o.root, 'package-lock.json'), 'utf8'))) {
    // Nested packages come with their parent; hoisted ones one by one.
    if (existsSync(join(dir, pkg)) || !existsSync(join(o.root, pkg))) continue;
    link(join(o.root, pkg), join(dir, pkg));
  }
}

export interface SelfImage extends PushResult {
  base: string;
  layers: number;
}

export async function buildSelfImage(o: SelfImageOptions): Promise<SelfImage> {
  const baseRef = parseReference(o.base);
  if (baseRef.digest === undefined) throw new InputError('SELF_IMAGE_BASE_DIGEST', `${o.base}: give the Node base image by reference and digest (…@sha256:…)`, { field: 'base' });
  const client = o.client ?? new RegistryClient();
  const resolved = await client.resolveImage(baseRef);
  const baseConfig = JSON.parse((await client.getBlobBytes(baseRef, resolved.manifest.config.digest, resolved.manifest.config.size)).toString('utf8')) as Record<string, unknown>;
  const work = await mkdtemp(join(tmpdir(), 'binnacle-self-image-'));
  try {
    const tree = join(work, 'tree');
    mkdirSync(tree);
    stage(o, tree);
    const variant = o.variant ?? 'manager';
    const layers = [{ dir: tree, prefix: IMAGE_ROOT }];
    if (variant === 'helm-operator') {
      // An empty /opt/helm, as operator-sdk's WORKDIR leaves it, for the project's files.
      mkdirSync(join(work, 'home'));
      layers.push({ dir: join(work, 'home'), prefix: HELM_OPERATOR_HOME });
    }
    const built = await buildImage({
      layers,
      labels: { 'org.opencontainers.image.title': variant === 'manager' ? 'binnacle' : 'binnacle-helm-operator', 'org.opencontainers.image.base.name': o.base, 'org.opencontainers.image.base.digest': resolved.digest },
      outputDir: join(work, 'layout'),
      base: { manifest: resolved.manifest, config: baseConfig },
      config: runtimeConfig(variant, ((baseConfig.config ?? {}) as { Env?: string[] }).Env ?? []),
    });
    // The base's layers go to the target repository first: mounted on the same registry, else copied.
    const target = parseReference(o.target);
    const sameRegistry = target.registry === baseRef.registry;
    for (const layer of resolved.manifest.layers) {
      await client.uploadBlob(
        target,
        {
          digest: layer.digest,
          size: layer.size,
          open: () => {
            const out = new PassThrough();
            client.getBlob(baseRef, layer.digest, layer.size).then(
              (r) => r.pipe(out),
              (err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err))),
            );
            return out;
          },
        },
        sameRegistry ? { mountFrom: baseRef.repository } : {},
      );
    }
    const baseDigests = new Set(resolved.manifest.layers.map((l) => l.digest));
    const own = { ...built, manifest: { ...built.manifest, layers: built.manifest.layers.filter((l) => !baseDigests.has(l.digest)) } };
    const pushed = await pushImage(own, o.target, client);
    // pushImage PUT the manifest with every layer (built.manifestBytes); the filtered list only skipped re-uploading the base's.
    return { ...pushed, base: o.base, layers: built.manifest.layers.length };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
