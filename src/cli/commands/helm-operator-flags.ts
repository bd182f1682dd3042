/**
 * The flags of `binnacle helm-operator run`: every flag of operator-sdk v1.42.3's
 * `helm-operator run` (internal/helm/flags and controller-runtime's `--zap-*`), with its
 * meaning and default, so the manager container operator-sdk scaffolds runs unchanged.
 * Boolean flags take `--flag`, `--flag=true` or `--flag=false` as pflag's do. What Binnacle
 * cannot honour is accepted and named in one warning each (`warnings`).
 */
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import { InvalidArgumentError, type Command } from 'commander';
import { UsageError } from '../../util/errors.js';
import { goDurationMs } from '../../util/duration.js';
import { formatLogLine } from '../context.js';
import { parsePositiveInt } from '../flags.js';
import { DEFAULT_HELM_RECONCILES } from '../../controllers/helm-operator/watches.js';

/** pflag's (Go's strconv.ParseBool) booleans. */
export function parseGoBool(value: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw new InvalidArgumentError('Expected true or false.');
}

/** A Go duration (`1m`, `90s`, `1h30m`) as pflag's DurationVar reads it; `0` is allowed. */
function parseGoDuration(value: string): number {
  if (value.trim() === '0') return 0;
  const ms = goDurationMs(value);
  if (ms === undefined) throw new InvalidArgumentError('Expected a Go duration such as 1m, 90s or 1h30m.');
  return ms;
}

/** The flags as commander holds them. */
export interface RawRunFlags {
  watchesFile: string;
  watches?: string;
  reconcilePeriod: number;
  maxConcurrentReconciles: number;
  metricsBindAddress: string;
  metricsAddr?: string;
  healthProbeBindAddress: string;
  metricsSecure?: boolean;
  metricsRequireRbac?: boolean;
  leaderElect?: boolean;
  enableLeaderElection?: boolean;
  leaderElectionId?: string;
  leaderElectionNamespace?: string;
  suppressOverrideValues?: boolean;
  enableHttp2?: boolean;
  zapDevel?: boolean;
  zapEncoder?: string;
  zapLogLevel?: string;
  zapStacktraceLevel?: string;
  zapTimeEncoding?: string;
  watchNamespace?: string;
}

/** Adds operator-sdk's `helm-operator run` flags (and Binnacle's `--watches`, `--watch-namespace`). */
export function addHelmOperatorRunFlags(c: Command): Command {
  return c
    .option('--watches-file <file>', 'path to the watches file to use', './watches.yaml')
    .option('--watches <file>', 'the same as --watches-file (Binnacle\'s earlier name)')
    .option('--reconcile-period <duration>', 'default reconcile period for controllers (a watch\'s reconcilePeriod wins)', parseGoDuration, 60_000)
    .option('--max-concurrent-reconciles <n>', `maximum number of concurrent reconciles for controllers (default: ${DEFAULT_HELM_RECONCILES}, or the number of CPUs when more; operator-sdk's is the number of CPUs, but a reconcile here holds no thread while it waits on the API server)`, parsePositiveInt, DEFAULT_HELM_RECONCILES)
    .option('--metrics-bind-address <addr>', 'the address the metric endpoint binds to ("0" disables it)', ':8080')
    .option('--metrics-addr <addr>', 'deprecated: use --metrics-bind-address')
    .option('--health-probe-bind-address <addr>', 'the address the probe endpoint (/healthz, /readyz) binds to ("0" disables it)', ':8081')
    .option('--metrics-secure [bool]', 'serve the metrics endpoint over HTTPS', parseGoBool)
    .option('--metrics-require-rbac [bool]', 'allow /metrics only to callers whose token the API server authenticates and whose RBAC allows get on the path (needs --metrics-secure)', parseGoBool)
    .option('--leader-elect [bool]', 'elect a leader with a Lease before reconciling', parseGoBool)
    .option('--enable-leader-election [bool]', 'deprecated: use --leader-elect', parseGoBool)
    .option('--leader-election-id <name>', 'name of the leader Lease (default: $OPERATOR_NAME, else derived from the kinds)')
    .option('--leader-election-namespace <ns>', "namespace of the leader Lease (default: the Pod's own)")
    .option('--suppress-override-values [bool]', 'leave the override values out of OverrideValuesInUse events', parseGoBool)
    .option('--enable-http2 [bool]', 'enable HTTP/2 on the metrics server (not supported: Binnacle serves HTTP/1.1)', parseGoBool)
    .option('--zap-devel [bool]', 'development logging defaults (console encoder, debug level, stack traces from warn)', parseGoBool)
    .option('--zap-encoder <encoder>', 'log encoding: json or console')
    .option('--zap-log-level <level>', 'log level: debug, info, error, or an integer > 0 for more verbosity')
    .option('--zap-stacktrace-level <level>', 'level from which logs carry a stack trace: info, error or panic')
    .option('--zap-time-encoding <encoding>', 'time encoding: epoch, millis, nano, iso8601, rfc3339 or rfc3339nano')
    .option('--watch-namespace <list>', 'namespaces to serve, comma-separated (default: $WATCH_NAMESPACE; empty: all)');
}

/** Where the logs go and how they read (controller-runtime's zap options, on pino). */
export interface ZapSettings {
  /** pino level name. */
  level: 'trace' | 'debug' | 'info' | 'error' | 'fatal';
  format: 'json' | 'console';
  time: 'epoch' | 'millis' | 'nano' | 'iso8601' | 'rfc3339' | 'rfc3339nano';
  /** pino level name from which a record carries `stacktrace`. */
  stacktraceLevel: 'warn' | 'info' | 'error' | 'fatal';
}

export interface RunOptions {
  watchesFile: string;
  reconcilePeriodMs: number | undefined;
  maxConcurrentReconciles: number;
  /** undefined: not served ("0"). */
  metricsAddress: string | undefined;
  probeAddress: string | undefined;
  metricsSecure: boolean;
  metricsRequireRbac: boolean;
  leaderElection: { id: string | undefined; namespace: string | undefined } | undefined;
  suppressOverrideValues: boolean;
  /** undefined: no --zap-* flag was given (the CLI's own logging stays). */
  zap: ZapSettings | undefined;
  watchNamespace: string | undefined;
  /** One line each for flags accepted but not honoured. */
  warnings: string[];
}

const ZAP_LEVELS: Record<string, ZapSettings['level']> = { debug: 'debug', info: 'info', error: 'error' };
const ZAP_STACK_LEVELS: Record<string, ZapSettings['stacktraceLevel']> = { info: 'info', error: 'error', panic: 'fatal' };
const TIME_ENCODINGS = ['epoch', 'millis', 'nano', 'iso8601', 'rfc3339', 'rfc3339nano'] as const;

/** zap's level: a name, or an integer N > 0 (logr's V(N): 1 is debug, more is trace). */
function zapLevel(value: string): ZapSettings['level'] {
  const named = ZAP_LEVELS[value.toLowerCase()];
  if (named !== undefined) return named;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n > 0)) throw new UsageError(`--zap-log-level: invalid log level "${value}" (debug, info, error, or an integer > 0)`);
  return n === 1 ? 'debug' : 'trace';
}

function zapSettings(f: RawRunFlags): ZapSettings | undefined {
  const given = [f.zapDevel, f.zapEncoder, f.zapLogLevel, f.zapStacktraceLevel, f.zapTimeEncoding].some((v) => v !== undefined);
  if (!given) return undefined;
  const devel = f.zapDevel === true;
  const encoder = f.zapEncoder ?? (devel ? 'console' : 'json');
  if (encoder !== 'json' && encoder !== 'console') throw new UsageError(`--zap-encoder: invalid encoder value "${encoder}" (json or console)`);
  const time = f.zapTimeEncoding ?? 'rfc3339';
  if (!(TIME_ENCODINGS as readonly string[]).includes(time.toLowerCase())) throw new UsageError(`--zap-time-encoding: invalid time-encoding value "${time}" (${TIME_ENCODINGS.join(', ')})`);
  let stack: ZapSettings['stacktraceLevel'] = devel ? 'warn' : 'error';
  if (f.zapStacktraceLevel !== undefined) {
    const s = ZAP_STACK_LEVELS[f.zapStacktraceLevel.toLowerCase()];
    if (s === undefined) throw new UsageError(`--zap-stacktrace-level: invalid stacktrace level "${f.zapStacktraceLevel}" (info, error or panic)`);
    stack = s;
  }
  return { level: f.zapLogLevel === undefined ? (devel ? 'debug' : 'info') : zapLevel(f.zapLogLevel), format: encoder, time: time.toLowerCase() as ZapSettings['time'], stacktraceLevel: stack };
}

/** controller-runtime's bind address: "0" (or empty) serves nothing. */
function bindAddress(addr: string): string | undefined {
  return addr === '0' || addr === '' ? undefined : addr;
}

/**
 * The flags checked and combined as operator-sdk combines them. `changed(name)` says whether a
 * flag was given on the command line (pflag's Changed); `env` holds OPERATOR_NAME.
 */
export function resolveRunFlags(f: RawRunFlags, changed: (flag: string) => boolean, env: Record<string, string | undefined> = process.env): RunOptions {
  if (f.metricsRequireRbac === true && f.metricsSecure !== true) throw new UsageError('--metrics-secure flag is required when --metrics-require-rbac is present');
  if (f.leaderElect !== undefined && f.enableLeaderElection !== undefined) throw new UsageError('only one of --leader-elect and --enable-leader-election may be set');
  if (f.metricsAddr !== undefined && changed('metricsBindAddress')) throw new UsageError('only one of --metrics-addr and --metrics-bind-address may be set');
  if (f.watches !== undefined && changed('watchesFile')) throw new UsageError('only one of --watches and --watches-file may be set');
  const warnings: string[] = [];
  if (f.enableHttp2 === true) warnings.push('--enable-http2 is not supported: the metrics server speaks HTTP/1.1 only (what operator-sdk serves without this flag)');
  let reconcilePeriodMs: number | undefined = f.reconcilePeriod;
  if (reconcilePeriodMs === 0) {
    warnings.push('--reconcile-period=0 (never look again) is not supported: custom resources are looked at again every minute');
    reconcilePeriodMs = undefined;
  }
  const leaderElect = f.leaderElect ?? f.enableLeaderElection ?? false;
  const operatorName = env.OPERATOR_NAME;
  const id = f.leaderElectionId ?? (operatorName === undefined || operatorName === '' ? undefined : operatorName);
  return {
    watchesFile: f.watches ?? f.watchesFile,
    reconcilePeriodMs,
    maxConcurrentReconciles: f.maxConcurrentReconciles,
    metricsAddress: bindAddress(f.metricsAddr ?? f.metricsBindAddress),
    probeAddress: bindAddress(f.healthProbeBindAddress),
    metricsSecure: f.metricsSecure === true,
    metricsRequireRbac: f.metricsRequireRbac === true,
    leaderElection: leaderElect ? { id, namespace: f.leaderElectionNamespace } : undefined,
    suppressOverrideValues: f.suppressOverrideValues === true,
    zap: zapSettings(f),
    watchNamespace: f.watchNamespace,
    warnings,
  };
}

const PINO_LEVEL = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** The `"ts"` field as zap's time encoders write it. */
function zapTime(enc: ZapSettings['time']): () => string {
  const iso = (nano: boolean) => (): string => {
    const now = new Date();
    const s = now.toISOString();
    if (!nano) return s.replace(/\.\d{3}Z$/, 'Z');
    return s.replace(/Z$/, `${String(process.hrtime.bigint() % 1_000_000n).padStart(6, '0')}Z`);
  };
  const fns: Record<ZapSettings['time'], () => string> = {
    epoch: () => String(Date.now() / 1000),
    millis: () => String(Date.now()),
    nano: () => String(BigInt(Date.now()) * 1_000_000n),
    iso8601: () => new Date().toISOString(),
    rfc3339: iso(false),
    rfc3339nano: iso(true),
  };
  const fn = fns[enc];
  return () => `,"ts":${enc === 'epoch' || enc === 'millis' || enc === 'nano' ? fn() : JSON.stringify(fn())}`;
}

/**
 * A pino logger configured as controller-runtime's zap flags ask: level, json or console
 * encoding, time encoding, and a `stacktrace` on records at or above the stack-trace level.
 * `write` receives each line (stderr by default).
 */
export function zapLogger(z: ZapSettings, write: (line: string) => void = (l) => void process.stderr.write(l)): Logger {
  const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
  const stackFrom = PINO_LEVEL[z.stacktraceLevel];
  return pino(
    {
      level: z.level,
      base: undefined,
      // The console form is read by people: Binnacle's text line, with its own clock.
      ...(z.format === 'console' ? {} : { timestamp: zapTime(z.time), formatters: { level: (label: string) => ({ level: label }) } }),
      mixin: (_obj: object, level: number) => (level >= stackFrom ? { stacktrace: (new Error().stack ?? '').split('\n').slice(2).join('\n') } : {}),
    },
    { write: z.format === 'console' ? (line: string) => write(formatLogLine(line)) : write },
  );
}
