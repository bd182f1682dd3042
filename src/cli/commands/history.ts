/**
 * `binnacle history NAME`: what a ClusterExtension resolved and what was applied. Beside its
 * last resolutions (`status.history`: when, why, the catalog digests, the chosen bundles, the
 * outcome) it lists the Helm revisions of each BundleDeployment of its set — the records
 * `helm history` reads — so a change can be traced from catalog content to applied objects.
 */
import type { Command } from 'commander';
import type { ResolutionRecord } from '../../api/types.js';
import type { ExtensionHistory } from '../../actions/release-history.js';
import { toJson, toTable, toYaml } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { outputOption } from '../flags.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';

export type { ExtensionHistory, ReleaseHistory } from '../../actions/release-history.js';

function bundlesText(r: ResolutionRecord): string {
  return r.bundles.length === 0 ? '-' : r.bundles.map((b) => `${b.package}@${b.version}`).join(', ');
}

/** An explanation's sentences on one line: "no set of bundles satisfies the request: a; b". */
function oneLine(message: string): string {
  return message.replace(/:\s*\n\s*-\s*/, ': ').replace(/\s*\n\s*-\s*/g, '; ').replace(/\s*\n\s*/g, ' ');
}

function catalogsText(r: ResolutionRecord): string {
  return r.catalogs.map((c) => `${c.name}@${c.digest.replace(/^sha256:/, '').slice(0, 12)}`).join(', ');
}

/** The table view: resolutions first, then each release's revisions. */
export function historyTables(h: ExtensionHistory): string {
  const out: string[] = [];
  out.push(`Resolutions of ${h.name} (package ${h.package}), oldest first:\n`);
  if (h.resolutions.length === 0) out.push('  (none recorded yet)\n');
  else {
    out.push(
      toTable(
        ['time', 'reason', 'generation', 'outcome', 'bundles', 'catalogs', 'message'],
        h.resolutions.map((r) => [r.time, r.reason, String(r.generation), r.outcome, bundlesText(r), catalogsText(r), oneLine(r.message ?? '')]),
      ),
    );
  }
  for (const rel of h.releases) {
    out.push(`\nHelm revisions of release ${rel.namespace}/${rel.release} (package ${rel.package}; ${rel.neededBy}):\n`);
    if (rel.revisions.length === 0) out.push('  (no revisions yet)\n');
    else out.push(toTable(['revision', 'updated', 'status', 'chart', 'description'], rel.revisions.map((r) => [String(r.revision), r.lastDeployed, r.status, `${r.chart.name}-${r.chart.version}`, r.description])));
    // A record Binnacle cannot read is not history, but is said: someone wrote it (a gzip bomb, a forged revision).
    if (rel.refused.length > 0) out.push(`  records not read (not history):\n${rel.refused.map((r) => `    ${r.secret}: ${r.reason}\n`).join('')}`);
  }
  return out.join('');
}

export function registerHistoryCommand(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('history <name>'))
    .description("Show an operator's last resolutions (when, why, catalog digests, chosen bundles, outcome) beside the Helm revisions of its bundles")
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (name: string, flags: KubeFlags & { output: string }) => {
      const format = flags.output;
      await withCluster(flags, async (client) => {
        // Loaded here: the controllers' modules cost every other command's start-up.
        const { extensionHistory } = await import('../../actions/release-history.js');
        const h = await extensionHistory(client, name);
        if (format === 'json') ctx.out(toJson(h));
        else if (format === 'yaml') ctx.out(toYaml(h));
        else ctx.out(historyTables(h));
      });
    });
}
