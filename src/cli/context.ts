/**
 * What every command gets from the CLI: a logger (to stderr, so stdout stays data) and
 * helpers to print data in the format the user chose.
 */
import { pino, type Logger } from 'pino';
import { parseOutputFormat, toJson, toTable, toYaml, type OutputFormat } from '../util/output.js';

export interface CliContext {
  logger: Logger;
  out: (text: string) => void;
  err: (text: string) => void;
}

export function defaultContext(level = process.env.BINNACLE_LOG_LEVEL ?? 'info'): CliContext {
  const logger = pino({ level, base: undefined }, pino.destination({ dest: 2, sync: true }));
  return {
    logger,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  };
}

/** A command's data result: a value for json/yaml and a table view for humans. */
export interface DataView {
  value: unknown;
  headers: readonly string[];
  rows: readonly (readonly string[])[];
}

export function printData(ctx: CliContext, format: string, view: DataView): void {
  const f: OutputFormat = parseOutputFormat(format, ['json', 'yaml', 'table']);
  if (f === 'json') ctx.out(toJson(view.value));
  else if (f === 'yaml') ctx.out(toYaml(view.value));
  else ctx.out(toTable(view.headers, view.rows));
}
