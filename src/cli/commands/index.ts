/** Every command group of the CLI, in the order `--help` lists them. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerClusterCommands } from './cluster.js';
import { registerBundleCommands } from './bundle.js';
import { registerManagerCommands } from './manager.js';
import { registerOperatorCommands } from './operators.js';
import { registerHistoryCommand } from './history.js';
import { registerPublishCommand } from './publish.js';
import { registerPlanCommand } from './plan.js';
import { registerImageCommands } from './image.js';
import { registerCatalogCommands } from './catalog.js';
import { registerResolveCommands } from './resolve.js';
import { registerSourceCommands } from './source.js';
import { registerReleaseCommands } from './release.js';
import { registerHelmCommands } from './helm.js';
import { registerHelmOperatorCommands } from './helm-operator.js';
import { registerRunBundleCommands } from './run-bundle.js';
import { registerSelfCommands } from './self.js';
import { registerConsoleCommand } from './console.js';

export function registerCommands(program: Command, ctx: CliContext): void {
  registerClusterCommands(program, ctx);
  registerBundleCommands(program, ctx);
  registerManagerCommands(program, ctx);
  registerOperatorCommands(program, ctx);
  registerHistoryCommand(program, ctx);
  registerPlanCommand(program, ctx);
  registerImageCommands(program, ctx);
  registerCatalogCommands(program, ctx);
  registerPublishCommand(program, ctx);
  registerResolveCommands(program, ctx);
  registerSourceCommands(program, ctx);
  registerReleaseCommands(program, ctx);
  registerHelmCommands(program, ctx);
  registerHelmOperatorCommands(program, ctx);
  registerRunBundleCommands(program, ctx);
  registerSelfCommands(program, ctx);
  registerConsoleCommand(program, ctx);
}
