/**
 * `binnacle`: the command line. Each area of the pipeline registers its own subcommands
 * (see `commands/`); this file only wires them up and turns errors into exit codes:
 * 0 ok, 1 a failure the user caused or the cluster reported, 2 usage.
 *
 * Every command also takes the global flags (src/cli/flags.ts), before or after its name as
 * kubectl does. A usage error prints its one-line message and the command's usage line; an
 * error Binnacle expects (bad input, an unreachable cluster) prints one line; only a bug
 * prints a stack trace, and only with -v.
 */
import { BINNACLE_VERSION } from '../api/version.js';
import { Command, CommanderError } from 'commander';
import { BinnacleError } from '../util/errors.js';
import { namesProxy, useProxyFromEnv } from '../util/proxy-env.js';
import { collectDeadBuffersSooner, collectLikeGo } from './heap.js';
import { defaultContext, type CliContext } from './context.js';
import { addGlobalFlags, commandPath, leafCommands, usageLine, type GlobalFlags } from './flags.js';
import { registerCommands } from './commands/index.js';
import type { HelpEntry } from './help-index.js';

/** Commands that log JSON unless told otherwise: the long-running controllers. */
const JSON_LOGS = new Set(['binnacle manager', 'binnacle helm-operator run']);
const GLOBAL_KEYS = ['kubeconfig', 'context', 'verbose', 'logFormat'] as const;

/**
 * The program with every command, or only those of the group whose name is `only` (the first
 * argument), so a command pays for its own group alone; or, given `helpIndex`, placeholders
 * that list as every command does, for the top-level help alone (help-index.ts).
 */
export async function buildProgram(ctx: CliContext, only?: string, helpIndex?: readonly HelpEntry[]): Promise<Command> {
  const program = new Command('binnacle')
    .description('Operator lifecycle manager for Kubernetes: catalogs, bundles, resolution and installation.')
    .version(BINNACLE_VERSION)
    .configureOutput({ writeOut: (s) => ctx.out(s), writeErr: (s) => ctx.err(s) })
    .exitOverride();
  // Program flags go before the subcommand; a subcommand's own flags (the same global ones
  // included) go after its name.
  program.enablePositionalOptions();
  addGlobalFlags(program);
  if (helpIndex !== undefined) (await import('./help-index.js')).addIndexedCommands(program, helpIndex);
  else await registerCommands(program, ctx, only);
  for (const c of leafCommands(program)) {
    if (c === program) continue;
    addGlobalFlags(c);
    c.showHelpAfterError(usageLine(c));
  }
  program.showHelpAfterError(usageLine(program));
  program.hook('preAction', (_root, action) => {
    // Global flags given before the subcommand count unless the subcommand's own override them.
    for (const key of GLOBAL_KEYS) {
      const top: unknown = program.getOptionValue(key);
      if (action.getOptionValue(key) === undefined && top !== undefined) action.setOptionValue(key, top);
    }
    const g = action.opts<GlobalFlags>();
    ctx.configureLogging?.({ format: g.logFormat ?? (JSON_LOGS.has(commandPath(action)) ? 'json' : 'text'), verbose: g.verbose ?? 0 });
  });
  return program;
}

/** Errors of the environment the user can act on: a missing file, a refused connection. */
function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && /^E[A-Z]+$/.test((err as NodeJS.ErrnoException).code ?? '') && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}

export async function run(argv: readonly string[], ctx: CliContext = defaultContext()): Promise<number> {
  // Only a command name in first place narrows the groups: flags first (they may take values) load everything.
  const first = argv[0];
  // The top-level help alone (`binnacle`, `--help`, `-h`, `help`) is printed from the built index when
  // there is one; the version needs no command at all (it loaded every group, twice --help's time).
  const topHelp = argv.length === 0 || (argv.length === 1 && ['--help', '-h', 'help', '--version', '-V'].includes(first ?? ''));
  // Imported only for it: any other command has no use for the index.
  const index = topHelp ? (await import('./help-index.js')).loadHelpIndex() : undefined;
  const program = await buildProgram(ctx, first !== undefined && !first.startsWith('-') ? first : undefined, index);
  let current: Command | undefined;
  program.hook('preAction', (_root, action) => {
    current = action;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    return reportError(err, current, ctx);
  }
}

/** Says what went wrong, as the user can act on it, and answers the exit code. */
function reportError(err: unknown, current: Command | undefined, ctx: CliContext): number {
  if (err instanceof CommanderError) {
    // --help and --version surface as "errors" with exit code 0; commander printed the rest.
    return err.exitCode === 0 ? 0 : 2;
  }
  // An internal BinnacleError is a bug like any unexpected throw (below).
  if (err instanceof BinnacleError && err.errorClass !== 'internal') {
    ctx.err(`error: ${err.message}\n`);
    if (err.exitCode === 2 && current !== undefined) ctx.err(`${usageLine(current)}\n`);
    return err.exitCode;
  }
  if (isSystemError(err)) {
    ctx.err(`error: ${err.message}\n`);
    return 1;
  }
  // Anything else is a bug in Binnacle: say so, and show where with -v.
  const verbose = (current?.opts<GlobalFlags>().verbose ?? 0) > 0;
  const message = err instanceof Error ? err.message : String(err);
  ctx.err(`error: ${message}\n`);
  if (verbose && err instanceof Error && err.stack !== undefined) ctx.err(`${err.stack}\n`);
  else ctx.err('(this is a bug in binnacle; run again with -v for the stack trace, and please report it)\n');
  return 1;
}

/**
 * Output piped into a reader that stops early (`binnacle … | head`) ends quietly: the reader
 * has what it wanted, so the command stops with success instead of an unhandled EPIPE.
 */
export function exitQuietlyOnBrokenPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

/**
 * Outbound requests (registries, catalog servers, downloads; not the API server) go through the
 * proxy HTTPS_PROXY/HTTP_PROXY names, NO_PROXY excepted (src/util/proxy-env.ts), set up once for
 * the process here, and only when one is set. Answers the exit code of a proxy that is unusable.
 */
async function useEnvironmentProxy(): Promise<number | undefined> {
  if (!namesProxy()) return undefined;
  try {
    const warning = await useProxyFromEnv();
    if (warning !== undefined) process.stderr.write(`warning: ${warning}\n`);
    return undefined;
  } catch (err) {
    return reportError(err, undefined, defaultContext());
  }
}

const invokedDirectly = process.argv[1] !== undefined && /(?:main\.[jt]s|binnacle(?:\.[cm]?js)?)$/.test(process.argv[1]);
if (invokedDirectly) {
  collectLikeGo();
  collectDeadBuffersSooner();
  exitQuietlyOnBrokenPipe(process.stdout);
  exitQuietlyOnBrokenPipe(process.stderr);
  const code = (await useEnvironmentProxy()) ?? (await run(process.argv.slice(2)));
  // A command may have set a failing exit code itself (e.g. `cluster status` of an unhealthy cluster).
  if (code !== 0 || process.exitCode === undefined) process.exitCode = code;
}
