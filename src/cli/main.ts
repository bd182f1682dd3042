/**
 * `binnacle`: the command line. Each area of the pipeline registers its own subcommands
 * (see `commands/`); this file only wires them up and turns errors into exit codes:
 * 0 ok, 1 a failure the user caused or the cluster reported, 2 usage.
 */
import { Command, CommanderError } from 'commander';
import { BinnacleError } from '../util/errors.js';
import { defaultContext, type CliContext } from './context.js';
import { registerCommands } from './commands/index.js';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('binnacle')
    .description('Operator lifecycle manager for Kubernetes: catalogs, bundles, resolution and installation.')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  registerCommands(program, ctx);
  return program;
}

export async function run(argv: readonly string[], ctx: CliContext = defaultContext()): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version surface as "errors" with exit code 0.
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof BinnacleError) {
      ctx.err(`error: ${err.message}\n`);
      return err.exitCode;
    }
    ctx.err(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}

const invokedDirectly = process.argv[1] !== undefined && /(?:main\.[jt]s|binnacle(?:\.js)?)$/.test(process.argv[1]);
if (invokedDirectly) {
  const code = await run(process.argv.slice(2));
  // A command may have set a failing exit code itself (e.g. `cluster status` of an unhealthy cluster).
  if (code !== 0 || process.exitCode === undefined) process.exitCode = code;
}
