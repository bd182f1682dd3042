/**
 * What the API server accepts for `format` and `pattern`.
 *
 * Formats: the set apiextensions-apiserver validates (`supportedFormats`, compared after
 * removing dashes, as go-openapi normalises them), plus the numeric OpenAPI formats Kubernetes
 * itself uses. Patterns: Go's RE2 syntax, which lacks look-around, back-references, atomic
 * groups and possessive quantifiers, and spells `\uXXXX` as `\x{XXXX}`.
 */
import type { SchemaType } from './types.js';

const STRING_FORMATS = new Set([
  'bsonobjectid', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'cidr', 'mac', 'uuid', 'uuid3', 'uuid4', 'uuid5',
  'isbn', 'isbn10', 'isbn13', 'creditcard', 'ssn', 'hexcolor', 'rgbcolor', 'byte', 'password', 'date', 'duration', 'datetime',
]);
const NUMBER_FORMATS = new Set(['int32', 'int64', 'float', 'double']);

/** Whether Kubernetes knows `format` for a node of type `type` (int-or-string counts as both). */
export function formatKnown(format: string, type: SchemaType | 'int-or-string' | undefined): boolean {
  const f = format.replaceAll('-', '').toLowerCase();
  const stringy = type === 'string' || type === 'int-or-string';
  const numeric = type === 'integer' || type === 'number' || type === 'int-or-string';
  return (stringy && STRING_FORMATS.has(f)) || (numeric && NUMBER_FORMATS.has(f));
}

/** Why `pattern` would not compile as Go RE2 (or as a JavaScript RegExp), or undefined. */
export function patternProblem(pattern: string): string | undefined {
  if (/\(\?<?[=!]/.test(pattern)) return 'look-around assertions are not supported by RE2';
  if (/\(\?>/.test(pattern)) return 'atomic groups are not supported by RE2';
  if (/(^|[^\\])(\\\\)*\\[1-9]/.test(pattern) || /\\k</.test(pattern)) return 'back-references are not supported by RE2';
  if (/[*+?}]\+/.test(pattern.replace(/\\./g, ''))) return 'possessive quantifiers are not supported by RE2';
  if (/(^|[^\\])(\\\\)*\\u[0-9a-fA-F{]/.test(pattern)) return '\\u escapes are not RE2 syntax (RE2 writes \\x{...})';
  try {
    new RegExp(pattern);
  } catch (err) {
    return `not a valid regular expression: ${err instanceof Error ? err.message : String(err)}`;
  }
  return undefined;
}

const FORMAT_CHECKS: Record<string, (s: string) => boolean> = {
  ipv4: (s) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s),
  ipv6: (s) => s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s),
  datetime: (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s),
  byte: (s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0,
  email: (s) => /^[^@\s]+@[^@\s]+$/.test(s),
  hostname: (s) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(s) && s.length <= 253,
  uri: (s) => /^([A-Za-z][A-Za-z0-9+.-]*:|\/)\S*$/.test(s),
};

/**
 * A rough check of a string against the formats the API server validates most often; formats
 * it does not model pass. Used to keep the chart's own defaults valid, not as a full validator.
 */
export function formatAccepts(format: string, value: string): boolean {
  const check = FORMAT_CHECKS[format.replaceAll('-', '').toLowerCase()];
  return check === undefined ? true : check(value);
}
