/**
 * The operator developer's loop: `binnacle run bundle DIR|IMAGE`, `binnacle run bundle-upgrade
 * DIR|IMAGE`, `binnacle cleanup PACKAGE`, and the static scorecard `binnacle bundle check DIR`.
 * The work is in src/devloop and src/bundle/check.ts; these only parse flags.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { cacheDir } from '../../cluster/layout.js';
import { BinnacleError } from '../../util/errors.js';
import type { CliContext } from '../context.js';
import { outputOption, parseDuration } from '../flags.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';

interface RunFlags extends KubeFlags {
  namespace?: string;
  installMode?: string;
  serviceAccount?: string;
  timeout: number;
  indexImage?: string;
  insecure?: boolean;
}

interface CleanupFlags extends KubeFlags {
  deleteCrds?: boolean;
  deleteAll?: boolean;
  timeout: number;
}

async function registryClient(ctx: CliContext, insecure: boolean | undefined): Promise<import('../../oci/index.js').RegistryClient> {
  const { RegistryClient } = await import('../../oci/index.js');
  return new RegistryClient({ logger: ctx.logger, ...(insecure === true ? { insecure: true } : {}) });
}

export function registerRunBundleCommands(program: Command, ctx: CliContext): void {
  registerBundleCheckCommand(program, ctx);
  const run = program.command('run').description("The operator developer's loop: install one bundle, upgrade it, through the normal catalog path");
  const progress = (line: string): void => ctx.err(`${line}\n`);

  addKubeFlags(run.command('bundle <bundle>'))
    .description("Install one bundle (a directory, shipped in ConfigMaps with no registry, or an image) through a ClusterCatalog and a ClusterExtension; needs a Binnacle manager on the cluster. A package-manifest version directory takes its channels from the package file one level up; a package directory stands for its default channel's head")
    .option('-n, --namespace <ns>', 'install namespace (default: the package name)')
    .option('--install-mode <mode>', 'AllNamespaces | OwnNamespace | SingleNamespace=NS | MultiNamespace=NS1,NS2 (default: the CSV install modes decide)')
    .option('--service-account <name>', 'an existing ServiceAccount in the namespace to install through (default: one bound to cluster-admin is made)')
    .option('--timeout <duration>', 'how long to wait for the operator to be installed and healthy (e.g. 90s, 5m)', parseDuration, 300_000)
    .option('--index-image <ref>', 'add the bundle to this existing catalog image and serve the result')
    .option('--insecure', 'plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (bundle: string, flags: RunFlags) => {
      const timeout = flags.timeout;
      const { readBundleInput, readIndexImage, runBundle } = await import('../../devloop/index.js');
      const oci = await registryClient(ctx, flags.insecure);
      const cache = join(cacheDir(), 'images');
      const input = await readBundleInput(bundle, { cacheDir: cache, client: oci });
      const baseCatalog = flags.indexImage === undefined ? undefined : await readIndexImage(flags.indexImage, { cacheDir: cache, client: oci });
      await withCluster(flags, async (client) => {
        const r = await runBundle({
          client,
          input,
          timeoutMs: timeout,
          progress,
          ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
          ...(flags.installMode === undefined ? {} : { installMode: flags.installMode }),
          ...(flags.serviceAccount === undefined ? {} : { serviceAccount: flags.serviceAccount }),
          ...(baseCatalog === undefined ? {} : { baseCatalog }),
        });
        ctx.out(`installed ${r.bundle} (${input.packageName} ${r.version}) in namespace ${r.namespace}: ClusterExtension ${r.extension}, ClusterCatalog ${r.catalog}\nremove it with: binnacle cleanup ${input.packageName}\n`);
      });
    });

  addKubeFlags(run.command('bundle-upgrade <bundle>'))
    .description("Upgrade an operator installed by `run bundle` to this bundle (a directory, package-manifest version directory, package directory (its default channel's head), or an image), along its upgrade edges (replaces, skips, skipRange)")
    .option('--timeout <duration>', 'how long to wait for the upgrade to be installed and healthy (e.g. 90s, 5m)', parseDuration, 300_000)
    .option('--insecure', 'plain http for every registry (default: loopback, addresses of this machine and $BINNACLE_INSECURE_REGISTRIES)')
    .action(async (bundle: string, flags: RunFlags) => {
      const timeout = flags.timeout;
      const { readBundleInput, runBundleUpgrade } = await import('../../devloop/index.js');
      const input = await readBundleInput(bundle, { cacheDir: join(cacheDir(), 'images'), client: await registryClient(ctx, flags.insecure) });
      await withCluster(flags, async (client) => {
        const r = await runBundleUpgrade({ client, input, timeoutMs: timeout, progress });
        ctx.out(`upgraded ${input.packageName} from ${r.from} to ${r.version} (${r.bundle}) in namespace ${r.namespace}\n`);
      });
    });

  addKubeFlags(program.command('cleanup <package>'))
    .description('Remove an operator (and what `run bundle` made for it); its CRDs and custom resources only with --delete-crds. Says what goes first')
    .option('--delete-crds', 'also delete its CRDs, and so every custom resource of them')
    .option('--delete-all', 'delete its CRDs and the install namespace too')
    .option('--timeout <duration>', 'how long to wait for each removal (e.g. 90s, 3m)', parseDuration, 180_000)
    .action(async (pkg: string, flags: CleanupFlags) => {
      const timeout = flags.timeout;
      const { describePlan, planCleanup, runCleanup } = await import('../../devloop/index.js');
      await withCluster(flags, async (client) => {
        const plan = await planCleanup(client, pkg, { deleteCrds: flags.deleteCrds === true, deleteAll: flags.deleteAll === true });
        ctx.err(`${describePlan(plan).join('\n')}\n`);
        await runCleanup(client, plan, { timeoutMs: timeout, progress });
        ctx.out(`removed ${pkg}\n`);
      });
    });
}

/** `bundle check DIR`, added to the `bundle` group. */
export function registerBundleCheckCommand(program: Command, ctx: CliContext): void {
  const bundle = program.commands.find((c) => c.name() === 'bundle') ?? program.command('bundle');
  bundle
    .command('check <dir>')
    .description("Static scorecard (basic and OLM suites, what needs no running operator): spec and status descriptors, alm-examples against the CRD schemas; reads tests/scorecard/config.yaml and says which tests need a live cluster")
    .addOption(outputOption(['text', 'json'], 'text'))
    .action(async (dir: string, o: { output: string }) => {
      const [{ checkBundle }, { valueViolations }] = await Promise.all([import('../../bundle/check.js'), import('../../helm/schema/validate-value.js')]);
      const res = await checkBundle(dir, { validateValue: (schema, value) => valueViolations(schema, value) });
      if (o.output === 'json') ctx.out(`${JSON.stringify(res, null, 2)}\n`);
      else {
        const lines = [`bundle ${res.bundle}${res.config === undefined ? ' (no tests/scorecard/config.yaml: every static test)' : ` (tests from ${res.config})`}`];
        for (const t of res.results) {
          lines.push(`  ${t.state === 'pass' ? 'pass   ' : t.state === 'fail' ? 'FAIL   ' : 'not run'} ${t.name}${t.suite === '' ? '' : ` [${t.suite}]`}${t.reason === undefined ? '' : `: ${t.reason}`}`);
          for (const p of t.problems) lines.push(`          ${p}`);
        }
        ctx.out(`${lines.join('\n')}\n`);
      }
      const failed = res.results.filter((t) => t.state === 'fail').map((t) => t.name);
      if (failed.length > 0) throw new BinnacleError('terminal', 'BUNDLE_CHECK_FAILED', `${failed.length} test${failed.length === 1 ? '' : 's'} failed: ${failed.join(', ')}`);
    });
}
