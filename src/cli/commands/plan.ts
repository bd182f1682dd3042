/**
 * `binnacle plan PACKAGE`: the bundles an install would choose and the object-level diff,
 * changing nothing: planning reads, puts each object to a server-side dry run and asks
 * SubjectAccessReviews; its render writes nothing (webhook certificates already issued are
 * read, new ones never issued), so it needs no dry-run view of the client. For each CRD
 * the cluster has, the CRD upgrade-safety verdict; with --service-account, the RBAC it lacks.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { cacheDir } from '../../cluster/layout.js';
import type { ObjectAction, Plan } from '../../actions/plan.js';
import { UsageError } from '../../util/errors.js';
import { toJson, toYaml } from '../../util/output.js';
import type { CliContext } from '../context.js';
import { collect, outputOption } from '../flags.js';
import { addKubeFlags, clientFor, type KubeFlags } from '../kube.js';

const MARK: Record<ObjectAction, string> = { create: '+', update: '~', unchanged: '=', delete: '-' };

/** The text view: each bundle's objects, CRD verdicts and missing RBAC, then the counts. */
export function planText(result: Plan, serviceAccount: string | undefined): string {
  const out: string[] = [];
  for (const b of result.bundles) {
    const change = b.from === undefined ? 'install' : b.from === b.bundle.version ? 'keep' : `upgrade from ${b.from}`;
    out.push(`${b.bundle.name} (${b.bundle.package} ${b.bundle.version}, catalog ${b.bundle.catalog}): ${change}\n`);
    for (const o of b.objects) {
      const where = o.namespace === undefined ? '' : `${o.namespace}/`;
      out.push(`  ${MARK[o.action]} ${o.kind} ${where}${o.name}${o.changes === undefined ? '' : `: ${o.changes.slice(0, 6).join(', ')}${o.changes.length > 6 ? ', …' : ''}`}\n`);
    }
    for (const c of b.crdSafety) out.push(c.safe ? `  CRD ${c.crd}: upgrade safe\n` : `  CRD ${c.crd}: unsafe, the manager will refuse it:\n${c.problems.map((p) => `    - ${p.message} (${p.rule})\n`).join('')}`);
    if (b.missingPermissions !== undefined) {
      out.push(b.missingPermissions.length === 0 ? `  RBAC: ${serviceAccount ?? ''} lacks nothing\n` : `  RBAC ${serviceAccount ?? ''} lacks:\n${b.missingPermissions.map((m) => `    - ${m}\n`).join('')}`);
    }
  }
  const counts = result.bundles.flatMap((b) => b.objects).reduce<Record<string, number>>((acc, o) => ({ ...acc, [o.action]: (acc[o.action] ?? 0) + 1 }), {});
  out.push(`${counts.create ?? 0} to create, ${counts.update ?? 0} to change, ${counts.delete ?? 0} to delete, ${counts.unchanged ?? 0} unchanged\n`);
  return out.join('');
}

export function registerPlanCommand(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('plan <package>'))
    .description('Show what installing or upgrading PACKAGE would do: chosen bundles and the object-level diff against the cluster')
    .option('--name <name>', 'ClusterExtension name (default: the package name)')
    .option('-n, --namespace <ns>', 'install namespace (default: the package name)')
    .option('--channel <channel>', 'channel (repeatable)', collect)
    .option('--version <range>', 'version range')
    .option('--policy <policy>', 'CatalogProvided or SelfCertified')
    .option('--watch-namespace <ns>', 'namespace the operator watches')
    .option('--service-account <name>', 'the ServiceAccount (in the install namespace) the install runs as: list the RBAC it lacks')
    .addOption(outputOption(['text', 'json', 'yaml'], 'text'))
    .action(async (pkg: string, flags: KubeFlags & { name?: string; namespace?: string; channel?: string[]; version?: string; policy?: string; watchNamespace?: string; serviceAccount?: string; output: string }) => {
      if (flags.policy !== undefined && flags.policy !== 'CatalogProvided' && flags.policy !== 'SelfCertified') throw new UsageError(`--policy ${flags.policy}: expected CatalogProvided or SelfCertified`);
      const { plan } = await import('../../actions/plan.js');
      const client = await clientFor(flags);
      try {
        const result = await plan(
          client,
          {
            name: flags.name ?? pkg,
            packageName: pkg,
            namespace: flags.namespace ?? pkg,
            ...(flags.channel === undefined ? {} : { channels: flags.channel }),
            ...(flags.version === undefined ? {} : { version: flags.version }),
            ...(flags.policy === undefined ? {} : { policy: flags.policy }),
            ...(flags.watchNamespace === undefined ? {} : { watchNamespace: flags.watchNamespace }),
            ...(flags.serviceAccount === undefined ? {} : { serviceAccount: flags.serviceAccount }),
          },
          { cacheDir: join(cacheDir(), 'plan'), logger: ctx.logger },
        );
        if (flags.output === 'json') return ctx.out(toJson(result));
        if (flags.output === 'yaml') return ctx.out(toYaml(result));
        for (const w of result.warnings) ctx.err(`warning: ${w}\n`);
        ctx.out(planText(result, flags.serviceAccount));
      } finally {
        client.close();
      }
    });
}
