/** `binnacle resolve`: which bundles installing a package would take, or why it cannot. */
import type { Command } from 'commander';
import type { CatalogInput, Resolution, ResolveRequest, UpgradePolicy } from '../../resolve/index.js';
import { BinnacleError, UsageError } from '../../util/errors.js';
import { toJson, toTable, toYaml } from '../../util/output.js';
import { outputFormat, type CliContext } from '../context.js';
import { collect, outputOption } from '../flags.js';

interface ResolveOpts {
  catalog: string[];
  priority: string[];
  package: string[];
  channel: string[];
  version?: string;
  installed: string[];
  policy: string;
  allPackages?: boolean;
  output: string;
}


function parsePriorities(list: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of list) {
    const m = /^(.+)=(-?\d+)$/.exec(p);
    if (m === null) throw new UsageError(`--priority ${p}: expected NAME=INTEGER`);
    out.set(m[1] ?? '', Number(m[2]));
  }
  return out;
}

function parsePolicy(p: string): UpgradePolicy {
  if (p === 'CatalogProvided' || p === 'SelfCertified') return p;
  throw new UsageError(`--policy ${p}: expected CatalogProvided or SelfCertified`);
}

function rows(r: Resolution): string[][] {
  return r.bundles.map((b, i) => [String(i + 1), b.package, b.version, b.name, b.catalog, b.image]);
}

const HEADERS = ['order', 'package', 'version', 'bundle', 'catalog', 'image'];

function print(ctx: CliContext, format: string, value: unknown, table: () => string): void {
  const f = outputFormat(format, ['json', 'yaml', 'table', 'text']);
  if (f === 'json') ctx.out(toJson(value));
  else if (f === 'yaml') ctx.out(toYaml(value));
  else ctx.out(table());
}

export function registerResolveCommands(program: Command, ctx: CliContext): void {
  // Without this the program's own --version swallows `resolve --version RANGE`; program
  // options then go before the subcommand, which is where --help and --version belong anyway.
  program.enablePositionalOptions();
  program
    .command('resolve')
    .description('Choose the bundles to install for a package (dependencies first), or explain why none fit')
    .option('--catalog <source>', 'catalog directory, file (FBC or package layouts) or catalog server URL; repeatable', collect, [])
    .option('--priority <name=n>', 'priority of the catalog named NAME (its directory name or URL host); higher wins', collect, [])
    .option('--package <name>', 'package to install; repeatable', collect, [])
    .option('--channel <name>', 'only bundles in this channel; repeatable', collect, [])
    .option('--version <range>', 'version range, npm or Masterminds syntax (">=1.2, <2", "~1.2", "1.2.x")')
    .option('--installed <pkg@version|bundle>', 'a bundle already installed; repeatable', collect, [])
    .option('--policy <policy>', 'upgrade policy: CatalogProvided | SelfCertified', 'CatalogProvided')
    .option('--all-packages', "resolve every package's default channel, one at a time")
    .addOption(outputOption(['table', 'text', 'json', 'yaml'], 'table'))
    .action(async (opts: ResolveOpts) => {
      const [{ CatalogIndex, ResolutionError, parseInstalled, resolve }, { loadCatalog }] = await Promise.all([import('../../resolve/index.js'), import('../../resolve/catalog-source.js')]);
      if (opts.catalog.length === 0) throw new UsageError('give at least one --catalog');
      const packages = opts.package;
      if (opts.allPackages === true && packages.length > 0) throw new UsageError('--all-packages and --package do not go together');
      if (opts.allPackages !== true && packages.length === 0) throw new UsageError('give --package (or --all-packages)');
      const policy = parsePolicy(opts.policy);
      const priorities = parsePriorities(opts.priority);
      const catalogs: CatalogInput[] = [];
      for (const source of opts.catalog) {
        const loaded = await loadCatalog(source);
        const name = loaded.catalog.name;
        loaded.catalog.priority = priorities.get(name) ?? 0;
        for (const p of loaded.problems) ctx.logger.warn({ catalog: name }, p);
        catalogs.push(loaded.catalog);
      }
      const index = new CatalogIndex(catalogs);
      for (const w of index.warnings) ctx.logger.warn(w);
      const installed = opts.installed.map(parseInstalled);

      if (opts.allPackages === true) {
        const results = index.packages().map((pkg) => {
          const def = index.defaultChannel(pkg);
          const started = performance.now();
          try {
            const r = resolve({ catalogs: index, installed, requests: [{ package: pkg, channels: def === undefined ? [] : [def], upgradePolicy: policy }] });
            return { package: pkg, resolved: true, ms: performance.now() - started, bundles: r.bundles, explanation: [] as readonly string[] };
          } catch (err) {
            if (!(err instanceof ResolutionError)) throw err;
            return { package: pkg, resolved: false, ms: performance.now() - started, bundles: [], explanation: err.sentences };
          }
        });
        const ok = results.filter((r) => r.resolved).length;
        ctx.err(`resolved ${ok} of ${results.length} packages\n`);
        print(ctx, opts.output, { packages: results.map(({ ms: _ms, ...r }) => r) }, () =>
          toTable(
            ['package', 'resolved', 'bundles / explanation'],
            results.map((r) => [r.package, r.resolved ? 'yes' : 'no', r.resolved ? r.bundles.map((b) => `${b.package}@${b.version}`).join(' ') : r.explanation.join('; ')]),
          ),
        );
        return;
      }

      const requests: ResolveRequest[] = packages.map((p) => {
        const req: ResolveRequest = { package: p, channels: opts.channel, upgradePolicy: policy };
        if (opts.version !== undefined) req.versionRange = opts.version;
        return req;
      });
      try {
        const r = resolve({ catalogs: index, installed, requests });
        print(ctx, opts.output, { resolved: true, bundles: r.bundles }, () => toTable(HEADERS, rows(r)));
      } catch (err) {
        if (!(err instanceof ResolutionError)) throw err;
        print(ctx, opts.output, { resolved: false, explanation: err.sentences, facts: err.facts }, () => `cannot resolve:\n${err.sentences.map((s) => `  - ${s}`).join('\n')}\n`);
        // Data went to stdout; the exit code says it failed.
        throw new BinnacleError(err.errorClass, err.code, 'no set of bundles satisfies the request (see the explanation above)');
      }
    });
}
