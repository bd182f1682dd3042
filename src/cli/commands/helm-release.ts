/**
 * `binnacle helm release CHART --kind Kind --template catalog.yaml --bundle-repository REPO
 * --catalog-image REF`: a chart operator's next version (see src/publish/helm-release). Prints the
 * edges chosen and why, the images pushed and the channel the version joined.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import type { Archetype } from '../../catalog-render/index.js';
import { definedFields } from '../../util/object.js';
import { toJson } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { collect, outputOption, withFlagNames } from '../flags.js';
import { addBundleFlags, bundleOptionsOf, type BundleFlags } from './helm-bundle.js';

const RELEASE_FLAGS = { version: '--version' };
const DEFAULT_CACHE = join('.cache', 'images');

interface Flags extends BundleFlags {
  kind: string[];
  template: string;
  bundleRepository: string;
  catalogImage: string;
  channel: Archetype;
  output: 'text' | 'json';
  version?: string;
  package?: string;
  outputDir?: string;
  catalogDir?: string;
  cacheDir: string;
  insecure?: boolean;
}

export function registerHelmReleaseCommand(helm: Command, ctx: CliContext): void {
  addBundleFlags(helm.command('release <chart>'))
    .description(
      "Release the next version of a chart operator: write the bundle for CHART's version (replaces/skipRange from what the catalog's semver template has), validate, build and push it, add it to the template, and build and push the catalog image",
    )
    .requiredOption('--kind <Kind[=charts/sub]>', 'a kind the chart serves, as for helm bundle (repeatable)', collect)
    .requiredOption('--template <file>', "the catalog's olm.semver template; the new bundle's image is added to it once the catalog is pushed")
    .requiredOption('--bundle-repository <repo>', 'repository the bundle image is pushed to, tagged v<version> (e.g. registry.example.com/org/beacon-bundle)')
    .requiredOption('--catalog-image <ref>', 'catalog image to build and push (e.g. registry.example.com/org/catalog:latest)')
    .option('--channel <archetype>', "the template's bundle list the version joins: stable, fast or candidate", 'stable')
    .option('--version <semver>', "the bundle's version (default: the chart's version)")
    .option('--package <name>', "package name (default: the template's package, else the chart's name)")
    .option('--output-dir <dir>', 'keep the bundle in this directory (default: a work folder)')
    .option('--catalog-dir <dir>', 'keep the rendered catalog (catalog.json) in this directory')
    .option('--cache-dir <dir>', 'where pulled bundle images are unpacked', DEFAULT_CACHE)
    .option('--insecure', 'use plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .addOption(outputOption(['text', 'json'], 'text'))
    .action(withFlagNames(RELEASE_FLAGS, async (chart: string, f: Flags) => {
      const [{ publishChartVersion, describeChangedDefault }, { RegistryClient }, { createRenderer }] = await Promise.all([import('../../publish/helm-release/index.js'), import('../../oci/index.js'), import('../../render/index.js')]);
      const res = await publishChartVersion({
        chart,
        // The chart's renders (RBAC, CRDs) go through the renderer's caching engine.
        engine: createRenderer().engine,
        kinds: f.kind,
        template: f.template,
        archetype: f.channel,
        bundleRepository: f.bundleRepository,
        catalogImage: f.catalogImage,
        cacheDir: f.cacheDir,
        client: new RegistryClient({ logger: ctx.logger, ...(f.insecure === true ? { insecure: true } : {}) }),
        onProgress: (line) => ctx.err(`• ${line}\n`),
        ...bundleOptionsOf(f),
        ...definedFields({
          version: f.version,
          packageName: f.package,
          outputDir: f.outputDir,
          catalogDir: f.catalogDir,
        }),
      });
      const { next, bundle } = res;
      if (f.output === 'json') {
        ctx.out(
          toJson({
            bundle: next.name,
            version: bundle.version,
            channel: next.channel,
            head: next.head ?? null,
            replaces: next.replaces ?? null,
            skipRange: next.skipRange ?? null,
            bundleImage: res.bundleImage,
            catalogImage: res.catalogImage,
            relatedImages: bundle.relatedImages,
            changedDefaults: res.changedDefaults,
            warnings: bundle.validation.warnings(),
          }),
        );
        return;
      }
      const lines = [
        `released ${next.name} into channel ${next.channel} of ${f.template}`,
        `  ${next.reason}`,
        `  bundle image:  ${res.bundleImage}`,
        `  catalog image: ${res.catalogImage}`,
        `  related images: ${bundle.relatedImages.map((i) => i.image).join(', ')}`,
        ...res.changedDefaults.map((d) => `warning: ${describeChangedDefault(d, next.head?.name ?? '')}`),
        ...bundle.notes.map((n) => `note: ${n}`),
      ];
      const warnings = bundle.validation.render();
      if (warnings !== '') lines.push('validation warnings:', warnings);
      ctx.out(`${lines.join('\n')}\n`);
    }));
}
