/** Every command group of the CLI, in the order `--help` lists them. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { registerClusterCommands } from './cluster.js';

export function registerCommands(program: Command, ctx: CliContext): void {
  registerClusterCommands(program, ctx);
}
