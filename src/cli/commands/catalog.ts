/**
 * `binnacle catalog validate|render|template|serve|build`: file-based catalogs, like `opm`.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { DeclarativeConfig } from '../../catalog/index.js';
import type { ImagePuller, ConversionFailure } from '../../catalog-render/index.js';
import { BinnacleError, InputError, UsageError, ValidationResult } from '../../util/errors.js';
import { toJson } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { outputOption, parseBytes, parsePort } from '../flags.js';
import { keepYoungGenerationSmall } from '../heap.js';

const pull: ImagePuller = async (ref, opts) => (await import('../../oci/index.js')).pullAndUnpack(ref, opts);
const DEFAULT_CACHE = path.join('.cache', 'images');
/** The catalog loader's default cap (catalog/load.ts DEFAULT_MAX_FILE_BYTES), here so help needs no catalog code. */
const DEFAULT_MAX_FILE_SIZE = '256Mi';
const maxFileSizeHelp = 'refuse catalog files larger than this (bytes, or with Ki/Mi/Gi)';

function reportFailures(ctx: CliContext, failures: readonly ConversionFailure[]): void {
  for (const f of failures) ctx.err(`error [${f.reason}]${f.package === undefined ? '' : ` package ${f.package}:`} ${f.message}\n`);
}

function counts(cfg: DeclarativeConfig): string {
  return `${cfg.packages.length} packages, ${cfg.channels.length} channels, ${cfg.bundles.length} bundles`;
}

/** Renders; throws when nothing rendered. `failed` counts sources/packages that did not. */
async function renderOrThrow(
  sources: readonly string[],
  opts: { maxFileSize: number; bundleImage?: string; cacheDir: string },
  ctx: CliContext,
): Promise<{ config: DeclarativeConfig; failed: number }> {
  const { render } = await import('../../catalog-render/render.js');
  const out = await render(sources, {
    maxFileBytes: opts.maxFileSize,
    pull,
    cacheDir: opts.cacheDir,
    ...(opts.bundleImage === undefined ? {} : { bundleImage: opts.bundleImage }),
  });
  reportFailures(ctx, out.failures);
  for (const w of out.warnings) ctx.logger.warn({ package: w.package, reason: w.reason }, w.message);
  if (out.failures.length > 0 && out.config.packages.length === 0 && out.config.bundles.length === 0) throw renderFailed(sources, out.failures.length);
  return { config: out.config, failed: new Set(out.failures.map((f) => `${f.source}\0${f.package ?? ''}`)).size };
}

function renderFailed(sources: readonly string[], errors: number): BinnacleError {
  return new BinnacleError('input', 'RENDER_FAILED', `nothing could be rendered from ${sources.join(', ')} (${errors} errors above)`);
}

function partialFailure(failed: number): BinnacleError {
  return new BinnacleError('input', 'RENDER_PARTIAL', `${failed} sources or packages could not be rendered (errors above); the rest was rendered`);
}

export function registerCatalogCommands(program: Command, ctx: CliContext): void {
  const catalog = program.command('catalog').description('File-based catalogs: validate, render, templates, serve, build');

  catalog
    .command('validate')
    .description('Check a catalog against every opm validate rule; exits 1 and prints the problems when invalid')
    .argument('<source>', 'FBC directory or file (or any source render accepts)')
    .addOption(outputOption(['text', 'json'], 'text'))
    .option('--max-file-size <bytes>', maxFileSizeHelp, parseBytes, parseBytes(DEFAULT_MAX_FILE_SIZE))
    .option('--bundle-image <template>', 'image for bundles rendered from directories, e.g. quay.io/org/{package}:v{version}')
    .action(async (source: string, o: { output: string; maxFileSize: number; bundleImage?: string }) => {
      const [{ detectSourceKind }, { loadFbcForValidation, readInPart, validateConfig }] = await Promise.all([import('../../catalog-render/source-kind.js'), import('../../catalog/validate.js')]);
      let tree = new ValidationResult(`catalog ${source}`);
      let cfg: DeclarativeConfig;
      if (source !== '-' && (await detectSourceKind(source)) === 'fbc') {
        keepYoungGenerationSmall(); // the validation model is small: most of what is read is checked and dropped
        const loaded = await loadFbcForValidation(source, { maxFileBytes: o.maxFileSize });
        tree = loaded.result;
        cfg = loaded.config;
      } else {
        const { render } = await import('../../catalog-render/render.js');
        const out = await render([source], { maxFileBytes: o.maxFileSize, pull, cacheDir: DEFAULT_CACHE, ...(o.bundleImage === undefined ? {} : { bundleImage: o.bundleImage }) });
        const node = tree.child('render');
        for (const f of out.failures) node.error(f.reason, f.message, f.package === undefined ? {} : { field: `package ${f.package}` });
        cfg = out.config;
      }
      // A catalog read in part (a bound above) is not checked as a whole: what it lacks is not its fault.
      const { result } = readInPart(tree) ? { result: new ValidationResult('model').warning('fbc.model-not-checked', 'the catalog was not read to its end (above): its packages, channels and bundles were not checked together') } : validateConfig(cfg, 'model');
      tree.children.push(result);
      if (o.output === 'json') {
        ctx.out(toJson({ valid: tree.ok, packages: cfg.packages.length, channels: cfg.channels.length, bundles: cfg.bundles.length, problems: tree.all() }));
      } else if (tree.all().length === 0) ctx.out(`${source}: valid (${counts(cfg)})\n`);
      else ctx.out(`${tree.render()}\n`);
      if (!tree.ok) throw new BinnacleError('input', 'INVALID', `${source}: ${tree.errors().length} validation errors`);
    });

  catalog
    .command('render')
    .description('Render FBC dirs, bundle dirs, package-manifest trees or images into one file-based catalog')
    .argument('<sources...>', 'directories, image references, or - for FBC on standard input')
    .addOption(outputOption(['json', 'yaml'], 'json'))
    .option('--bundle-image <template>', 'image for bundles rendered from directories, e.g. quay.io/org/{package}:v{version}')
    .option('--max-file-size <bytes>', maxFileSizeHelp, parseBytes, parseBytes(DEFAULT_MAX_FILE_SIZE))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .action(async (sources: string[], o: { output: 'json' | 'yaml'; bundleImage?: string; maxFileSize: number; cacheDir: string }) => {
      const format = o.output;
      const { allFbcSources, toFbc } = await import('../../catalog-render/render-fbc.js');
      if (format === 'json' && (await allFbcSources(sources))) {
        // FBC in, JSON out: written record by record, without holding the catalog.
        keepYoungGenerationSmall();
        const r = await toFbc(sources, { maxFileBytes: o.maxFileSize }, ctx.out);
        reportFailures(ctx, r.failures);
        if (!r.rendered && r.failures.length > 0) throw renderFailed(sources, r.failures.length);
        const failed = new Set(r.failures.map((f) => f.source)).size;
        if (failed > 0) throw partialFailure(failed);
        return;
      }
      const { fbcChunks } = await import('../../catalog/write.js');
      const { config, failed } = await renderOrThrow(sources, o, ctx);
      for (const chunk of fbcChunks(config, format)) ctx.out(chunk);
      if (failed > 0) throw partialFailure(failed);
    });

  catalog
    .command('template')
    .description('Render an olm.template.basic or olm.semver template into a file-based catalog')
    .argument('<kind>', 'basic or semver')
    .argument('<file>', 'template file (YAML or JSON)')
    .addOption(outputOption(['json', 'yaml'], 'json'))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .action(async (kind: string, file: string, o: { output: 'json' | 'yaml'; cacheDir: string }) => {
      const format = o.output;
      const [{ formatFbc }, { imageBundleRenderer, expandBasicTemplate, expandSemverTemplate }] = await Promise.all([import('../../catalog/write.js'), import('../../catalog-render/index.js')]);
      if (kind !== 'basic' && kind !== 'semver') throw new UsageError(`template kind "${kind}": expected basic or semver`);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        throw new InputError('TEMPLATE_READ', `cannot read: ${err instanceof Error ? err.message : String(err)}`, { file });
      }
      const renderImage = imageBundleRenderer({ pull, cacheDir: o.cacheDir });
      const cfg = kind === 'basic' ? await expandBasicTemplate(text, file, renderImage) : await expandSemverTemplate(text, file, renderImage);
      ctx.out(formatFbc(cfg, format));
    });

  catalog
    .command('serve')
    .description('Serve a catalog over HTTP (catalogd API: /api/v1/all, /api/v1/metas)')
    .argument('<source>', 'FBC directory or catalog image reference')
    .requiredOption('--port <port>', 'port to listen on (0 picks one)', parsePort)
    .option('--address <address>', 'address to listen on', '127.0.0.1')
    .option('--store-dir <dir>', 'where the catalog is stored as JSON Lines (default: a temp dir)')
    .option('--max-file-size <bytes>', maxFileSizeHelp, parseBytes, parseBytes(DEFAULT_MAX_FILE_SIZE))
    .option('--cache-dir <dir>', 'where pulled images are unpacked', DEFAULT_CACHE)
    .action(async (source: string, o: { port: number; address: string; storeDir?: string; maxFileSize: number; cacheDir: string }) => {
      const { startCatalogServer, storeCatalog } = await import('../../catalog-store/index.js');
      const port = o.port;
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
    .option('--layout <dir>', 'OCI image layout directory to write the image into (as `image build --layout`)')
    .option('--max-file-size <bytes>', maxFileSizeHelp, parseBytes, parseBytes(DEFAULT_MAX_FILE_SIZE))
    .action(async (dir: string, o: { tag: string; push?: boolean; layout?: string; maxFileSize: number }) => {
      const { buildCatalogImage } = await import('../../publish/catalog-image.js');
      const r = await buildCatalogImage(dir, {
        tag: o.tag,
        push: o.push === true,
        maxFileBytes: o.maxFileSize,
        ...(o.layout === undefined ? {} : { outputDir: o.layout }),
      });
      ctx.out(`built ${o.tag} ${r.image.manifestDigest} (layout ${r.image.layoutDir})\n`);
      if (r.pushed !== undefined) ctx.out(`pushed ${r.pushed}\n`);
    });
}
