/**
 * `binnacle catalog validate|render|template|serve|build`: file-based catalogs, like `opm`.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  buildCatalogImage,
  formatFbc,
  imageBundleRenderer,
  loadFbcDir,
  render,
  renderBasicTemplate,
  renderSemverTemplate,
  startCatalogServer,
  storeCatalog,
  validateConfig,
  detectSourceKind,
  DEFAULT_MAX_FILE_BYTES,
  type DeclarativeConfig,
  type ImagePuller,
  type RenderFailure,
} from '../../catalog/index.js';
import { pullAndUnpack } from '../../oci/index.js';
import { BinnacleError, InputError, UsageError, ValidationResult } from '../../util/errors.js';
import { toJson } from '../../util/output.js';
import type { CliContext } from '../context.js';

const pull: ImagePuller = (ref, opts) => pullAndUnpack(ref, opts);
const DEFAULT_CACHE = path.join('.cache', 'images');

function fbcFormat(value: string): 'json' | 'yaml' {
  if (value === 'json' || value === 'yaml') return value;
  throw new UsageError(`-o ${value}: expected json or yaml`);
}

function parseSize(value: string): number {
  const m = /^(\d+)([KMG]i?B?)?$/i.exec(value.trim());
  if (m === null) throw new UsageError(`--max-file-size ${value}: expected a byte count such as 268435456 or 256Mi`);
  const unit = (m[2] ?? '').toUpperCase().charAt(0);
  const mult = unit === 'K' ? 1024 : unit === 'M' ? 1024 ** 2 : unit === 'G' ? 1024 ** 3 : 1;
  return Number(m[1]) * mult;
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port ${value}: expected a port number 0-65535`);
  return n;
}

function reportFailures(ctx: CliContext, failures: readonly RenderFailure[]): void {
  for (const f of failures) ctx.err(`error [${f.reason}]${f.package === undefined ? '' : ` package ${f.package}:`} ${f.message}\n`);
}

function counts(cfg: DeclarativeConfig): string {
  return `${cfg.packages.length} packages, ${cfg.channels.length} channels, ${cfg.bundles.length} bundles`;
}

/** Renders; throws when nothing rendered. `failed` counts sources/packages that did not. */
async function renderOrThrow(
  sources: readonly string[],
  opts: { maxFileSize: string; bundleImage?: string; cacheDir: string },
  ctx: CliContext,
): Promise<{ config: DeclarativeConfig; failed: number }> {
  const out = await render(sources, {
    maxFileBytes: parseSize(opts.maxFileSize),
    pull,
    cacheDir: opts.cacheDir,
    ...(opts.bundleImage === undefined ? {} : { bundleImage: opts.bundleImage }),
  });
  reportFailures(ctx, out.failures);
  for (const w of out.warnings) ctx.logger.warn({ package: w.package, reason: w.reason }, w.message);
  if (out.failures.length > 0 && out.config.packages.length === 0 && out.config.bundles.length === 0) {
    throw new BinnacleError('RENDER_FAILED', `nothing could be rendered from ${sources.join(', ')} (${out.failures.length} errors above)`);
  }
  return { config: out.config, failed: new Set(out.failures.map((f) => `${f.source}\0${f.package ?? ''}`)).size };
}

function partialFailure(failed: number): BinnacleError {
  return new BinnacleError('RENDER_PARTIAL', `${failed} sources or packages could not be rendered (errors above); the rest was rendered`);
}

export function registerCatalogCommands(program: Command, ctx: CliContext): void {
  const catalog = program.command('catalog').description('File-based catalogs: validate, render, templates, serve, build');

  catalog
    .command('validate')
    .description('Check a catalog against every opm validate rule; exits 1 and prints the problems when invalid')
    .argument('<source>', 'FBC directory or file (or any source render accepts)')
    .option('-o, --output <format>', 'text or json', 'text')
    .option('--max-file-size <bytes>', 'refuse catalog files larger than this', String(DEFAULT_MAX_FILE_BYTES))
    .option('--bundle-image <template>', 'image for bundles rendered from directories, e.g. quay.io/org/{package}:v{version}')
    .action(async (source: string, o: { output: string; maxFileSize: string; bundleImage?: string }) => {
      if (o.output !== 'text' && o.output !== 'json') throw new UsageError(`-o ${o.output}: expected text or json`);
      let tree = new ValidationResult(`catalog ${source}`);
      let cfg: DeclarativeConfig;
      if (source !== '-' && (await detectSourceKind(source)) === 'fbc') {
        const loaded = await loadFbcDir(source, { maxFileBytes: parseSize(o.maxFileSize) });
        tree = loaded.result;
        cfg = loaded.config;
      } else {
        const out = await render([source], { maxFileBytes: parseSize(o.maxFileSize), pull, cacheDir: DEFAULT_CACHE, ...(o.bundleImage === undefined ? {} : { bundleImage: o.bundleImage }) });
        const node = tree.child('render');
        for (const f of out.failures) node.error(f.reason, f.message, f.package === undefined ? {} : { field: `package ${f.package}` });
        cfg = out.config;
      }
      const { result } = validateConfig(cfg, 'model');
      tree.children.push(result);
      if (o.output === 'json') {
        ctx.out(toJson({ valid: tree.ok, packages: cfg.packages.length, channels: cfg.channels.length, bundles: cfg.bundles.length, problems: tree.all() }));
      } else if (tree.all().length === 0) ctx.out(`${source}: valid (${counts(cfg)})\n`);
      else ctx.out(`${tree.render()}\n`);
      if (!tree.ok) throw new BinnacleError('INVALID', `${source}: ${tree.errors().length} validation errors`);
    });

  catalog
    .command('render')
    .description('Render FBC dirs, bundle dirs, package-manifest trees or images into one file-based catalog')
    .argument('<sources...>', 'directories, image references, or - for FBC on standard input')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .option('--bundle-image <template>', 'image for bundles rendered from directories, e.g. quay.io/org/{package}:v{version}')
    .option('--max-file-size <bytes>', 'refuse catalog files larger than this', String(DEFAULT_MAX_FILE_BYTES))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .action(async (sources: string[], o: { output: string; bundleImage?: string; maxFileSize: string; cacheDir: string }) => {
      const format = fbcFormat(o.output);
      const { config, failed } = await renderOrThrow(sources, o, ctx);
      ctx.out(formatFbc(config, format));
      if (failed > 0) throw partialFailure(failed);
    });

  catalog
    .command('template')
    .description('Render an olm.template.basic or olm.semver template into a file-based catalog')
    .argument('<kind>', 'basic or semver')
    .argument('<file>', 'template file (YAML or JSON)')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .action(async (kind: string, file: string, o: { output: string; cacheDir: string }) => {
      const format = fbcFormat(o.output);
      if (kind !== 'basic' && kind !== 'semver') throw new UsageError(`template kind "${kind}": expected basic or semver`);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new InputError('TEMPLATE_READ', `cannot read: ${err instanceof Error ? err.message : String(err)}`, { file });
      }
      const renderImage = imageBundleRenderer({ pull, cacheDir: o.cacheDir });
      const cfg = kind === 'basic' ? await renderBasicTemplate(text, file, renderImage) : await renderSemverTemplate(text, file, renderImage);
      ctx.out(formatFbc(cfg, format));
    });

  catalog
    .command('serve')
    .description('Serve a catalog over HTTP (catalogd API: /api/v1/all, /api/v1/metas)')
    .argument('<source>', 'FBC directory or catalog image reference')
    .requiredOption('--port <port>', 'port to listen on (0 picks one)')
    .option('--address <address>', 'address to listen on', '127.0.0.1')
    .option('--store-dir <dir>', 'where the catalog is stored as JSON Lines (default: a temp dir)')
    .option('--max-file-size <bytes>', 'refuse catalog files larger than this', String(DEFAULT_MAX_FILE_BYTES))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .action(async (source: string, o: { port: string; address: string; storeDir?: string; maxFileSize: string; cacheDir: string }) => {
      const port = parsePort(o.port);
      const { config: cfg, failed } = await renderOrThrow([source], o, ctx);
      if (failed > 0) throw partialFailure(failed);
      const storeDir = o.storeDir ?? (await mkdtemp(path.join(tmpdir(), 'binnacle-catalog-')));
      const store = await storeCatalog(cfg, storeDir);
      const server = await startCatalogServer({ root: store, port, address: o.address, logger: ctx.logger });
      ctx.logger.info({ url: server.url, store: store.file, metas: store.metas.length }, 'serving catalog');
      ctx.out(`${server.url}/api/v1/all\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          void server.close().then(resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });

  catalog
    .command('build')
    .description('Validate a file-based catalog and build it into an OCI catalog image (/configs)')
    .argument('<dir>', 'FBC directory')
    .requiredOption('--tag <ref>', 'image reference to tag (and push) the image as')
    .option('--push', 'push the image to its registry')
    .option('--output <dir>', 'OCI layout directory to write the image into')
    .option('--max-file-size <bytes>', 'refuse catalog files larger than this', String(DEFAULT_MAX_FILE_BYTES))
    .action(async (dir: string, o: { tag: string; push?: boolean; output?: string; maxFileSize: string }) => {
      const r = await buildCatalogImage(dir, {
        tag: o.tag,
        push: o.push === true,
        maxFileBytes: parseSize(o.maxFileSize),
        ...(o.output === undefined ? {} : { outputDir: o.output }),
      });
      ctx.out(`built ${o.tag} ${r.image.manifestDigest} (layout ${r.image.layoutDir})\n`);
      if (r.pushed !== undefined) ctx.out(`pushed ${r.pushed}\n`);
    });
}
