/**
 * The command line's shared vocabulary: the global flags every command takes (named as
 * kubectl names them) and the parsers that check a flag's value as it is read, so a bad value
 * is a one-line error that names the flag and the accepted form.
 *
 * Cheap on purpose: `binnacle --help` loads this file and commander, nothing else.
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { durationMs } from '../util/duration.js';
import { errorMessage, InputError, UsageError } from '../util/errors.js';
import { TLS_PROFILE_NAMES } from '../util/tls-profile.js';
import { DEFAULT_BURST } from '../kube/rate-limit.js';

// --- library options said as flags -----------------------------------------------------

/**
 * Library code names the option it refuses (an InputError whose `field` is the option's name,
 * such as `version`) and never a flag; the command says it as the flag the user typed. An
 * InputError about an option in `flags` becomes a UsageError (`--version 1.x: expected …`);
 * anything else is passed on as it is.
 */
export function asFlagError(err: unknown, flags: Readonly<Record<string, string>>): unknown {
  if (!(err instanceof InputError) || err.file !== undefined || err.field === undefined) return err;
  const flag = flags[err.field];
  return flag === undefined ? err : new UsageError(`${flag} ${err.detail}`);
}

/** `fn`, with its errors about the options in `flags` said as those flags (see asFlagError). */
export function withFlagNames<A extends unknown[], R>(flags: Readonly<Record<string, string>>, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      throw asFlagError(err, flags);
    }
  };
}

// --- value parsers (commander argParsers) -----------------------------------------------
// Commander prints "error: option '--workers <n>' argument 'abc' is invalid. <message>".

/** A whole number ≥ 1. */
/** A repeatable flag's values, in order (after its `--no-` form, which sets false, the list starts again). */
export const collect = (v: string, prev?: string[] | boolean): string[] => [...(Array.isArray(prev) ? prev : []), v];

/** A repeatable StringSlice flag (`-a a,b -a c`), as Helm's pflag parses it. */
export const collectSlice = (v: string, prev: string[] = []): string[] => [...prev, ...v.split(',').filter((s) => s !== '')];

export function parsePositiveInt(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('Expected a positive whole number, such as 4.');
  return n;
}

/** Long-running processes render Helm charts on up to two threads (one per core, at most two). */
export function defaultHelmEngineThreads(): number {
  return Math.min(2, availableParallelism());
}

/** The flags of a process that renders Helm charts for others (manager, helm-operator run): its engine threads and each render's bounds. */
export interface HelmEngineFlags {
  helmEngineThreads: number;
  helmRenderMemory: number;
  helmRenderTimeout: number;
}

/**
 * Adds the Helm engine flags. Defaults fit two threads and the manager in install-self's 1 GiB:
 * 256 MiB of engine memory a thread (the corpus's largest render needs 109 MiB), 2 minutes a render.
 * `defaults.threads`: another default thread count (`helm-operator run`: one, see there).
 */
export function addHelmEngineFlags(c: Command, defaults: { threads?: number } = {}): Command {
  return c
    .option('--helm-engine-threads <n>', "threads that render Helm charts side by side (each runs one instance of Helm's engine, started only when the others are busy)", parsePositiveInt, defaults.threads ?? defaultHelmEngineThreads())
    .option('--helm-render-memory <MiB>', "the most memory one render may use in Helm's engine; past it the render fails alone and the memory comes back", parsePositiveInt, 256)
    .option('--helm-render-timeout <duration>', 'the longest one render may take; past it the render fails alone', parseDuration, 120_000);
}

/** What configureHelmEngine takes from those flags. */
export function helmEngineOptionsOf(flags: HelmEngineFlags): { threads: number; memoryLimitBytes: number; callTimeoutMs: number } {
  return { threads: flags.helmEngineThreads, memoryLimitBytes: flags.helmRenderMemory * 1024 * 1024, callTimeoutMs: flags.helmRenderTimeout };
}

/** `--kube-api-qps`: requests a second, or a negative number (client-go's -1) for no client-side limit. */
export function parseQps(value: string): number {
  const n = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n === 0) throw new InvalidArgumentError('Expected requests a second, such as 50 or 12.5, or -1 for no client-side limit.');
  return n;
}

/** The client-side rate limit flags of a long-running process (the manager, `helm-operator run`). */
export interface KubeApiRateFlags {
  kubeApiQps: number;
  kubeApiBurst: number;
}

/**
 * Adds `--kube-api-qps` and `--kube-api-burst`, the names controller-runtime operators (Cluster
 * API's among them) give client-go's QPS and Burst. The limit holds for each identity the process
 * acts as (src/kube/rate-limit.ts and docs/api-server-load.md say why these defaults).
 */
export function addKubeApiRateFlags(c: Command): Command {
  return c
    .option(
      '--kube-api-qps <qps>',
      'requests a second to the API server, per identity the process acts as (its own, each ServiceAccount it impersonates), after a burst of --kube-api-burst; -1 (the default, as controller-runtime\'s): no client-side limit, the API server\'s Priority and Fairness alone (its 429s are waited out)',
      parseQps,
      -1,
    )
    .option('--kube-api-burst <n>', 'requests to the API server one identity may send at once before --kube-api-qps holds it back', parsePositiveInt, DEFAULT_BURST);
}

/**
 * Adds OLM v1's `--tls-profile`, `--tls-custom-version`, `--tls-custom-ciphers` and
 * `--tls-custom-curves` (operator-controller's and catalogd's): the TLS profile of the servers
 * the command runs (util/tls-profile.ts). `tlsSettings(flags)` checks what was given.
 */
export function addTlsProfileFlags(c: Command): Command {
  return c
    .option('--tls-profile <name>', `the TLS profile of the HTTPS servers (metrics, catalog API), Mozilla's: one of ${TLS_PROFILE_NAMES.join(', ')} (default intermediate: TLS 1.2 with forward-secret AEAD ciphers, or 1.3)`)
    .option('--tls-custom-version <version>', 'the lowest TLS version with --tls-profile=custom: TLSv1.0, TLSv1.1, TLSv1.2 (default) or TLSv1.3')
    .option('--tls-custom-ciphers <list>', "ciphers with --tls-profile=custom, comma-separated, Go's names (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, ...); TLS 1.2 ones restrict TLS 1.2 and below, as Go's do, and TLS 1.3 ones (TLS_AES_128_GCM_SHA256, ...) restrict TLS 1.3, which Go does not (default: Node's)")
    .option('--tls-custom-curves <list>', 'key-exchange groups with --tls-profile=custom, comma-separated: X25519MLKEM768, X25519, prime256v1 (or secp256r1), secp384r1, secp521r1, SecP256r1MLKEM768, SecP384r1MLKEM1024 (default: Node\'s)');
}

/** A whole number ≥ 0. */
export function parseNonNegativeInt(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('Expected a whole number ≥ 0, such as 0 or 3.');
  return n;
}

export { durationMs };

/** A positive duration (see `durationMs` in util/duration.ts), in milliseconds. */
export function parseDuration(value: string): number {
  const ms = durationMs(value);
  if (ms === undefined || ms <= 0) throw new InvalidArgumentError('Expected a positive duration such as 30s, 5m or 1h (a bare number is seconds).');
  return ms;
}

/** A byte count, plain or with a K/M/G (decimal) or Ki/Mi/Gi (binary) suffix. */
export function parseBytes(value: string): number {
  const m = /^(\d+)(K|Ki|M|Mi|G|Gi)?B?$/i.exec(value.trim());
  const unit = m === null ? undefined : ({ '': 1, k: 1e3, ki: 1024, m: 1e6, mi: 1024 ** 2, g: 1e9, gi: 1024 ** 3 } as Record<string, number>)[(m[2] ?? '').toLowerCase()];
  if (m === null || unit === undefined || Number(m[1]) <= 0) throw new InvalidArgumentError('Expected a positive byte count such as 268435456, 256Mi or 1Gi.');
  return Number(m[1]) * unit;
}

/** A TCP port, 0 (any free one) to 65535. */
export function parsePort(value: string): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n > 65535) throw new InvalidArgumentError('Expected a port number 0-65535 (0 picks a free one).');
  return n;
}

/** A parser that accepts only `allowed` (for `-o/--output` and other enumerations). */
export function oneOf<T extends string>(allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if ((allowed as readonly string[]).includes(value)) return value as T;
    throw new InvalidArgumentError(`Expected one of: ${allowed.join(', ')}.`);
  };
}

/** `-o, --output <format>` with its accepted formats checked when the flag is read. */
export function outputOption(allowed: readonly string[], defaultValue: string): Option {
  return new Option('-o, --output <format>', `output format: ${allowed.join(' | ')}`).default(defaultValue).argParser(oneOf(allowed));
}

// --- global flags --------------------------------------------------------------------------

/** The flags of every command, as `opts()` holds them. */
export interface GlobalFlags {
  kubeconfig?: string;
  context?: string;
  /** -v: 1, -vv: 2, … */
  verbose?: number;
  logFormat?: 'text' | 'json';
  /** Deadline of one API request in ms; 0: none (kubectl's --request-timeout). */
  requestTimeout?: number;
}

/** kubectl's --request-timeout: a duration, or 0 for no deadline. */
export function parseRequestTimeout(value: string): number {
  if (value.trim() === '0') return 0;
  const ms = durationMs(value);
  if (ms === undefined || ms <= 0) throw new InvalidArgumentError('Expected a duration such as 30s or 2m (a bare number is seconds), or 0 for no deadline.');
  return ms;
}

const countVerbosity = (_: string, previous: number | undefined): number => (previous ?? 0) + 1;

/** Adds the global flags a command does not define itself. */
export function addGlobalFlags(c: Command): Command {
  const has = (long: string): boolean => c.options.some((o) => o.long === long);
  if (!has('--kubeconfig')) c.option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)');
  if (!has('--context')) c.option('--context <name>', 'kubeconfig context (default: its current context)');
  if (!has('--verbose')) c.option('-v, --verbose', 'log more (info; -vv debug, -vvv trace)', countVerbosity);
  if (!has('--request-timeout')) c.option('--request-timeout <duration>', 'how long one API request may take (e.g. 30s, 2m; 0: no deadline; default 60s)', parseRequestTimeout);
  if (!has('--log-format')) c.addOption(new Option('--log-format <format>', 'log format on stderr: text | json').argParser(oneOf(['text', 'json'] as const)));
  return c;
}

/** Every command that runs something (has no subcommands), depth first. */
export function leafCommands(c: Command): Command[] {
  return c.commands.length === 0 ? [c] : c.commands.flatMap(leafCommands);
}

/** `binnacle release apply`: the command's full name, for messages. */
export function commandPath(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x !== null; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}

/** The one usage line of a command: `usage: binnacle install [options] <package>`. */
export function usageLine(c: Command): string {
  return `usage: ${commandPath(c)} ${c.usage()}\n(run \`${commandPath(c)} --help\` for every flag)`;
}

/**
 * A certificate and its key named by two flags (the console's --tls-cert/--tls-key, the
 * manager's --catalog-tls-cert/--catalog-tls-key): both or neither, each readable PEM; a refusal
 * names the flag and the file. Undefined when neither is given.
 */
export async function readTlsPair(files: { cert?: string | undefined; key?: string | undefined }, flags: { cert: string; key: string }): Promise<{ certPem: string; keyPem: string } | undefined> {
  if ((files.cert === undefined) !== (files.key === undefined)) throw new UsageError(`${flags.cert} and ${flags.key} go together`);
  if (files.cert === undefined || files.key === undefined) return undefined;
  const { readFile } = await import('node:fs/promises');
  const read = async (flag: string, file: string): Promise<string> => {
    const pem = await readFile(file, 'utf8').catch((err: unknown) => {
      throw new UsageError(`${flag} ${file}: cannot be read: ${errorMessage(err)}`);
    });
    if (!pem.includes('-----BEGIN ')) throw new UsageError(`${flag} ${file}: not PEM`);
    return pem;
  };
  return { certPem: await read(flags.cert, files.cert), keyPem: await read(flags.key, files.key) };
}
