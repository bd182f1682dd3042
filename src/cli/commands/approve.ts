/**
 * `binnacle approve NAME [--digest D]`: approves the plan a ClusterExtension (or, with
 * `--helm-operator`, a HelmOperator) on `upgradeApproval: Manual` shows, by its digest
 * (`actions/approve.ts`). Without --digest, the digest shown now, printed with what it does.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';

export function registerApproveCommand(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('approve <name>'))
    .description('Approve the plan an extension (or HelmOperator) on manual upgrade approval shows: status.pendingPlan, by its digest')
    .option('--digest <sha256>', 'the digest of the plan you looked at (default: the one shown now)')
    .option('--helm-operator', 'NAME is a HelmOperator')
    .action(async (name: string, flags: KubeFlags & { digest?: string; helmOperator?: boolean }) => {
      await withCluster(flags, async (client) => {
        const { approvePlan, planSummary } = await import('../../actions/approve.js');
        const r = await approvePlan(client, { kind: flags.helmOperator === true ? 'HelmOperator' : 'ClusterExtension', name, ...(flags.digest === undefined ? {} : { digest: flags.digest }) });
        ctx.err(`• ${r.kind} ${name}: ${planSummary(r.plan)}\n`);
        ctx.out(`approved plan ${r.digest}\n`);
      });
    });
}
