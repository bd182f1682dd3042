/**
 * Every command group of the CLI, in the order `--help` lists them. Each module is imported only
 * when one of its commands is wanted: `binnacle catalog validate` loads and builds the `catalog`
 * group alone (start-up is most of a small command's time); `--help`, or a name no group has,
 * loads them all.
 */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

type Register = (program: Command, ctx: CliContext) => void;

/** A module's registration and the top-level commands it adds to (cli.test.ts checks the names). */
export interface Registrar {
  commands: readonly string[];
  load: () => Promise<Register>;
}

export const REGISTRARS: readonly Registrar[] = [
  { commands: ['cluster'], load: async () => (await import('./cluster.js')).registerClusterCommands },
  { commands: ['bundle'], load: async () => (await import('./bundle.js')).registerBundleCommands },
  { commands: ['manager'], load: async () => (await import('./manager.js')).registerManagerCommands },
  { commands: ['install', 'upgrade', 'uninstall', 'status', 'rollback'], load: async () => (await import('./operators.js')).registerOperatorCommands },
  { commands: ['history'], load: async () => (await import('./history.js')).registerHistoryCommand },
  { commands: ['plan'], load: async () => (await import('./plan.js')).registerPlanCommand },
  { commands: ['approve'], load: async () => (await import('./approve.js')).registerApproveCommand },
  { commands: ['image'], load: async () => (await import('./image.js')).registerImageCommands },
  { commands: ['sign'], load: async () => (await import('./sign.js')).registerSignCommands },
  { commands: ['catalog'], load: async () => (await import('./catalog.js')).registerCatalogCommands },
  { commands: ['catalog'], load: async () => (await import('./publish.js')).registerPublishCommand },
  { commands: ['resolve'], load: async () => (await import('./resolve.js')).registerResolveCommands },
  { commands: ['source'], load: async () => (await import('./source.js')).registerSourceCommands },
  { commands: ['release'], load: async () => (await import('./release.js')).registerReleaseCommands },
  { commands: ['helm'], load: async () => (await import('./helm.js')).registerHelmCommands },
  { commands: ['helm-operator'], load: async () => (await import('./helm-operator.js')).registerHelmOperatorCommands },
  { commands: ['bundle', 'run', 'cleanup'], load: async () => (await import('./run-bundle.js')).registerRunBundleCommands },
  { commands: ['install-self', 'build-node-base', 'build-self-image', 'release-self', 'status-self', 'uninstall-self'], load: async () => (await import('./self.js')).registerSelfCommands },
  { commands: ['olmv1'], load: async () => (await import('./olmv1.js')).registerOlmv1Commands },
  { commands: ['console'], load: async () => (await import('./console.js')).registerConsoleCommand },
];

/** Registers the groups that define `only` (a top-level command name), or every group. */
export async function registerCommands(program: Command, ctx: CliContext, only?: string): Promise<void> {
  const wanted = only === undefined || !REGISTRARS.some((r) => r.commands.includes(only)) ? REGISTRARS : REGISTRARS.filter((r) => r.commands.includes(only));
  const registers = await Promise.all(wanted.map((r) => r.load()));
  for (const register of registers) register(program, ctx);
}
