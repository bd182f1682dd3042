/** `binnacle install-self | status-self | uninstall-self`: the manager inside the current cluster. */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { printData, type CliContext } from '../context.js';
import { outputOption, parseDuration } from '../flags.js';
import { addKubeFlags, withCluster, type KubeFlags } from '../kube.js';

interface SelfFlags extends KubeFlags {
  namespace: string;
  output: string;
}

const self = (): Promise<typeof import('../../self/index.js')> => import('../../self/index.js');

export function registerSelfCommands(program: Command, ctx: CliContext): void {
  addKubeFlags(program.command('install-self'))
    .description("Install Binnacle's manager into the current cluster: namespace, CRDs, least-privilege RBAC, Deployment (leader election, probes, metrics), catalog Service; idempotent, repairs a half-installed state")
    .option('-n, --namespace <ns>', 'namespace of the manager', 'binnacle-system')
    .option('--image <ref>', 'the manager image (default: the release image of this version)')
    .option('--timeout <duration>', 'how long the CRDs may take to be served (e.g. 60s, 2m)', parseDuration, 60_000)
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (flags: SelfFlags & { image?: string; timeout: number }) => {
      const { installSelf } = await self();
      await withCluster(flags, async (client) => {
        const r = await installSelf(client, { namespace: flags.namespace, ...(flags.image === undefined ? {} : { image: flags.image }), timeoutMs: flags.timeout });
        if (r.repaired.length > 0) ctx.err(`• half-installed: re-created ${r.repaired.join(', ')}\n`);
        printData(ctx, flags.output, { value: r, headers: ['kind', 'name', 'namespace', 'state'], rows: r.objects.map((o) => [o.kind, o.name, o.namespace ?? '', o.note === undefined ? o.state : `${o.state} (${o.note})`]) });
        ctx.err(`• Binnacle ${r.image} installed in namespace ${r.namespace}; check it with \`binnacle status-self\`\n`);
      });
    });

  program
    .command('build-self-image')
    .description("Build Binnacle's manager image with Binnacle's own OCI builder (no Docker) and push it: compiled output, production dependencies and Helm's engine on a Node base image")
    .requiredOption('--base <ref@digest>', 'the Node base image, by reference and digest')
    .requiredOption('-t, --tag <ref>', 'where to push the image (registry/repository:tag)')
    .option('--root <dir>', 'the built repository (after `npm ci && npm run build`)', '.')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (flags: { base: string; tag: string; root: string; output: string }) => {
      const { buildSelfImage } = await import('../../self/image.js');
      const img = await buildSelfImage({ root: resolve(flags.root), base: flags.base, target: flags.tag });
      printData(ctx, flags.output, { value: img, headers: ['image', 'base', 'layers'], rows: [[img.ref, img.base, String(img.layers)]] });
      ctx.err(`• install it with \`binnacle install-self --image ${img.ref}\`\n`);
    });

  addKubeFlags(program.command('status-self'))
    .description("Show Binnacle's installation in the current cluster: each object, the manager Deployment, the leader, installed extensions")
    .option('-n, --namespace <ns>', 'namespace of the manager', 'binnacle-system')
    .addOption(outputOption(['table', 'json', 'yaml'], 'table'))
    .action(async (flags: SelfFlags) => {
      const { statusSelf } = await self();
      await withCluster(flags, async (client) => {
        const st = await statusSelf(client, { namespace: flags.namespace });
        printData(ctx, flags.output, { value: st, headers: ['kind', 'name', 'namespace', 'present'], rows: st.objects.map((o) => [o.kind, o.name, o.namespace ?? '', o.present ? 'yes' : 'no']) });
        if (flags.output === 'table') {
          ctx.err(`• ${st.state}${st.image === undefined ? '' : `, image ${st.image}`}; manager ${st.available ? 'available' : 'not available'} (${st.readyReplicas} ready)${st.leader === undefined ? '' : `, leader ${st.leader}`}; ${st.extensions.length} extension(s)\n`);
        }
        if (st.state === 'not-installed') ctx.err('• Binnacle is not installed in this cluster: run `binnacle install-self`\n');
        if (st.state === 'partial') ctx.err(`• half-installed (missing ${st.missing.join(', ')}): run \`binnacle install-self\` to repair\n`);
        if (st.state !== 'installed') process.exitCode = 1;
      });
    });

  addKubeFlags(program.command('uninstall-self'))
    .description('Remove Binnacle from the current cluster; refuses while extensions are installed unless --force (which uninstalls them first)')
    .option('-n, --namespace <ns>', 'namespace of the manager', 'binnacle-system')
    .option('--force', 'uninstall the installed extensions too')
    .option('--timeout <duration>', 'with --force: how long the manager may take to uninstall the extensions (e.g. 120s, 5m)', parseDuration, 120_000)
    .action(async (flags: KubeFlags & { namespace: string; force?: boolean; timeout: number }) => {
      const { uninstallSelf } = await self();
      await withCluster(flags, async (client) => {
        const r = await uninstallSelf(client, { namespace: flags.namespace, force: flags.force === true, timeoutMs: flags.timeout });
        for (const e of r.extensions) ctx.err(`• removed ${e}\n`);
        for (const o of r.orphaned) ctx.err(`• no manager finished ${o}: its finalizers were removed\n`);
        ctx.err(r.deleted.length === 0 ? '• Binnacle was not installed\n' : `• deleted ${r.deleted.length} objects\n`);
      });
    });
}
