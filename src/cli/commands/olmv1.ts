/**
 * `binnacle olmv1 import-history [EXTENSION]`: operator-controller's release history brought over
 * as Helm records of the releases Binnacle keeps for OLM v1 ClusterExtensions
 * (actions/olmv1-history.ts), one step of docs/from-olm-v1.md's move.
 */
import type { Command } from 'commander';
import type { ImportedHistory } from '../../actions/olmv1-history.js';
import { toJson, toTable } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { outputOption } from '../flags.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';

/** One line per extension, then what was refused, by Secret. */
export function importTable(results: readonly ImportedHistory[], dryRun: boolean): string {
  if (results.length === 0) return 'no OLM v1 ClusterExtension found\n';
  const rows = results.map((r) => [
    r.extension,
    r.release === '' ? '-' : `${r.namespace}/${r.release}`,
    r.skipped !== undefined ? `skipped: ${r.skipped}` : r.imported.length === 0 ? 'nothing to bring over' : `${dryRun ? 'would bring' : 'brought'} over ${r.imported.map((x) => `${x.revision} (${x.status}, ${x.chart})`).join(', ')}`,
    r.present.length === 0 ? '-' : r.present.join(', '),
    r.replaced.length === 0 ? '-' : r.replaced.join(', '),
    r.removed.length === 0 ? '-' : r.removed.join(', '),
  ]);
  const out = [toTable(['extension', 'release', 'revisions', 'already there', dryRun ? 'would replace' : 'replaced', dryRun ? 'would remove (not operator-controller’s)' : 'removed (not operator-controller’s)'], rows)];
  for (const r of results) for (const x of r.refused) out.push(`refused ${x.secret}: ${x.reason}\n`);
  return out.join('');
}

export function registerOlmv1Commands(program: Command, ctx: CliContext): void {
  const olmv1 = program.command('olmv1').description("Moving a cluster over from OLM v1's operator-controller (docs/from-olm-v1.md)");
  addKubeFlags(olmv1.command('import-history [extension]'))
    .description("Bring operator-controller's release history (its chunked Secrets) over as Helm records of the releases Binnacle keeps for each ClusterExtension; run before Binnacle first reconciles them")
    .option('--from-namespace <namespace>', "operator-controller's namespace, where it kept its records", 'olmv1-system')
    .option('--dry-run', 'say what would be written, write nothing')
    .option('--replace-foreign', "write over Helm records of the release's name that are not its BundleDeployment's (a release helm install made under that name); without it that extension is skipped, naming them")
    .addOption(outputOption(['table', 'json'], 'table'))
    .action(async (extension: string | undefined, flags: KubeFlags & { fromNamespace: string; dryRun?: boolean; replaceForeign?: boolean; output: string }) => {
      await withCluster(flags, async (client) => {
        const { importOlmv1History } = await import('../../actions/olmv1-history.js');
        const results = await importOlmv1History(client, { fromNamespace: flags.fromNamespace, dryRun: flags.dryRun === true, replaceForeign: flags.replaceForeign === true, ...(extension === undefined ? {} : { extension }) });
        if (flags.output === 'json') ctx.out(toJson(results));
        else ctx.out(importTable(results, flags.dryRun === true));
        if (results.some((r) => r.refused.length > 0 || r.skipped?.startsWith('failed: ') === true || r.foreign !== undefined)) process.exitCode = 1;
      });
    });
}
