/** `binnacle catalog publish`: bundle images and a catalog image from package directories. */
import type { Command } from 'commander';
import { toJson } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { outputOption } from '../flags.js';

export function registerPublishCommand(program: Command, ctx: CliContext): void {
  const catalog = program.commands.find((c) => c.name() === 'catalog') ?? program.command('catalog').description('File-based catalogs');
  catalog
    .command('publish <packageDir...>')
    .description('Build and push a bundle image for every version of each package, then a catalog image pointing at them by digest; a version directory (bundle or package-manifest layout) publishes that one bundle, in the channels its annotations or package file give it')
    .requiredOption('--registry <host>', 'registry host, e.g. 127.0.0.1:5000')
    .option('--repository <prefix>', 'repository prefix', 'binnacle')
    .option('--tag <ref>', 'catalog image tag (default <registry>/<repository>/catalog:latest)')
    .addOption(outputOption(['text', 'json'], 'text'))
    .action(async (dirs: string[], flags: { registry: string; repository: string; tag?: string; output: string }) => {
      const { publishPackages } = await import('../../publish/packages.js');
      const result = await publishPackages({
        packages: dirs,
        registry: flags.registry,
        repository: flags.repository,
        ...(flags.tag === undefined ? {} : { catalogTag: flags.tag }),
        onProgress: (line) => ctx.err(`• ${line}\n`),
      });
      if (flags.output === 'json') ctx.out(toJson({ catalog: result.catalog, bundles: result.bundles }));
      else ctx.out(`${result.catalog}\n`);
    });
}
