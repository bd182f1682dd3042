/**
 * What every command gets from the CLI: a logger (to stderr, so stdout stays data) and
 * helpers to print data in the format the user chose.
 *
 * Logs are for people by default: one short line each, warnings and errors only unless `-v`
 * (info), `-vv` (debug) or `-vvv` (trace). `--log-format json` writes pino's JSON lines, what
 * `binnacle manager` writes by default. BINNACLE_LOG_LEVEL, when set, fixes the level.
 * The logger (and pino) is only built when a command first logs; the level is checked before the command runs.
 */
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import { envLogLevel, LOG_LEVEL_ENV } from '../util/log-level.js';
import { parseOutputFormat, toJson, toTable, toYaml, type OutputFormat } from '../util/output.js';
import { asFlagError } from './flags.js';

export interface CliContext {
  logger: Logger;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Set from the global flags before a command runs (contexts built by tests keep their logger). */
  configureLogging?: (o: LogSettings) => void;
}

export interface LogSettings {
  format: 'text' | 'json';
  /** How many -v were given. */
  verbose: number;
}

const LEVELS = ['warn', 'info', 'debug', 'trace'] as const;

/** The pino level for these settings: JSON logs are for machines and start at info. */
export function logLevel(s: LogSettings, env: string | undefined = process.env[LOG_LEVEL_ENV]): string {
  if (env !== undefined && env !== '') return envLogLevel(env);
  const base = s.format === 'json' ? 1 : 0;
  return LEVELS[Math.min(base + s.verbose, LEVELS.length - 1)] ?? 'trace';
}

const LABEL: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  if (typeof v === 'object' && v !== null && 'message' in v && typeof v.message === 'string') return JSON.stringify(v.message);
  return JSON.stringify(v) ?? String(v);
}

/** One pino JSON line as a human reads it: `18:43:12 WARN  catalog x is not reachable  url=…`. */
export function formatLogLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { level, time, msg, pid: _pid, hostname: _host, ...fields } = rec;
  const when = typeof time === 'number' ? new Date(time).toTimeString().slice(0, 8) : '';
  const label = (LABEL[typeof level === 'number' ? level : 30] ?? String(level)).padEnd(5);
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${fieldText(v)}`)
    .join(' ');
  return `${when} ${label} ${typeof msg === 'string' ? msg : ''}${rest === '' ? '' : `  ${rest}`}\n`;
}

export function defaultContext(): CliContext {
  const settings: LogSettings = { format: 'text', verbose: 0 };
  let logger: Logger | undefined;
  const err = (text: string): void => void process.stderr.write(text);
  return {
    get logger(): Logger {
      if (logger === undefined) {
        // pino is CommonJS: required on first use, so commands that never log never load it.
        const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');
        const level = logLevel(settings);
        logger =
          settings.format === 'json'
            ? pino({ level, base: undefined }, pino.destination({ dest: 2, sync: true }))
            : pino({ level, base: undefined }, { write: (line: string) => err(formatLogLine(line)) });
      }
      return logger;
    },
    out: (text) => void process.stdout.write(text),
    err,
    configureLogging: (o) => {
      settings.format = o.format;
      settings.verbose = o.verbose;
      logger = undefined;
      // Checked before the command runs: a bad BINNACLE_LOG_LEVEL is a usage error at start, not
      // when (or whether) the command first logs.
      logLevel(settings);
    },
  };
}

/** A command's data result: a value for json/yaml and a table view for humans. */
export interface DataView {
  value: unknown;
  headers: readonly string[];
  rows: readonly (readonly string[])[];
}

/** `-o`'s value, checked; a bad one is said as the flag. */
export function outputFormat(value: string, allowed: readonly OutputFormat[]): OutputFormat {
  try {
    return parseOutputFormat(value, allowed);
  } catch (err) {
    throw asFlagError(err, { output: '-o' });
  }
}

export function printData(ctx: CliContext, format: string, view: DataView): void {
  const f: OutputFormat = outputFormat(format, ['json', 'yaml', 'table']);
  if (f === 'json') ctx.out(toJson(view.value));
  else if (f === 'yaml') ctx.out(toYaml(view.value));
  else ctx.out(toTable(view.headers, view.rows));
}
