/**
 * Printing data for `-o json|yaml|table|text`. Commands build a value and a table view;
 * this module renders whichever the user asked for.
 */
import { createRequire } from 'node:module';
import { InputError } from './errors.js';

/** yaml is required on first use: commands that print no YAML do not pay for loading it. */
let yamlModule: typeof import('yaml') | undefined;
function yaml(): typeof import('yaml') {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return yamlModule;
}

export type OutputFormat = 'json' | 'yaml' | 'table' | 'text';

export function parseOutputFormat(value: string, allowed: readonly OutputFormat[]): OutputFormat {
  if ((allowed as readonly string[]).includes(value)) return value as OutputFormat;
  throw new InputError('OUTPUT_FORMAT', `${value}: expected one of ${allowed.join(', ')}`, { field: 'output' });
}

export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function toYaml(value: unknown): string {
  return yaml().stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** A plain aligned table, kubectl style: upper-case headers, two spaces between columns. */
export function toTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('   ').trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n') + '\n';
}
