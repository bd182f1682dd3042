/**
 * Ranges that catalogs carry (skipRange, olm.package.required, olm.constraint package) are OLM's
 * grammar, blang/semver: `parseCatalogRange` below, over util/semver.ts.
 *
 * Version ranges as users write them (a ClusterExtension's or a request's versionRange): npm style (`>=1.2.0 <2.0.0`, `^1`, `~1.2`,
 * `1.2.x`, `1.2 - 1.4`, `||`) and Masterminds style, which also separates ANDed terms with
 * commas, allows a space after an operator (`>= 1.2`) and has `!=`. Masterminds text is
 * rewritten into an npm range for the `semver` package, so both read the same.
 */
import semver from 'semver';
import { BinnacleError } from '../util/errors.js';
import { inOlmRange, parseOlmRange } from '../util/semver.js';

/** Each `!=` doubles an alternative's npm form: more than this many in one alternative are refused. */
export const MAX_EXCLUSIONS = 8;

export interface ParsedRange {
  /** As the user wrote it, for messages. */
  text: string;
  range: semver.Range;
}

export type RangeParse = { ok: true; value: ParsedRange } | { ok: false; reason: string };

/** Rewrites one `||` alternative; `!=X` expands the alternative into `<X` and `>X` copies. */
function rewriteAlternative(alt: string): string[] {
  const terms = alt
    .replace(/,/g, ' ')
    .replace(/(>=|<=|!=|=>|=<|>|<|=|~>|~|\^)\s+/g, '$1')
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '');
  let outs: string[][] = [[]];
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i] ?? '';
    if (terms[i + 1] === '-' && terms[i + 2] !== undefined) {
      // Hyphen ranges stay as they are: `1.2 - 1.4`.
      const h = `${t} - ${terms[i + 2] ?? ''}`;
      outs = outs.map((o) => [...o, h]);
      i += 2;
      continue;
    }
    if (t.startsWith('!=')) {
      if (outs.length >= 2 ** MAX_EXCLUSIONS) {
        throw new BinnacleError('input', 'VERSION_RANGE_TOO_COMPLEX', `"${alt.trim()}" excludes more than ${MAX_EXCLUSIONS} versions with "!="; split the range or narrow it with "<" and ">"`);
      }
      const v = t.slice(2);
      outs = outs.flatMap((o) => [
        [...o, `<${v}`],
        [...o, `>${v}`],
      ]);
      continue;
    }
    const fixed = t.startsWith('=>') ? `>=${t.slice(2)}` : t.startsWith('=<') ? `<=${t.slice(2)}` : t.startsWith('~>') ? `~${t.slice(2)}` : t;
    outs = outs.map((o) => [...o, fixed]);
  }
  return outs.map((o) => o.join(' '));
}

/**
 * Converts Masterminds syntax into an npm range string (npm syntax passes through). Throws a
 * `VERSION_RANGE_TOO_COMPLEX` BinnacleError when `!=` terms would multiply it past 2^MAX_EXCLUSIONS.
 */
export function toNpmRange(text: string): string {
  return text
    .split('||')
    .flatMap((alt) => rewriteAlternative(alt))
    .join(' || ');
}

/**
 * Parses a range. `includePrerelease` lets `>=1.0.0` match `1.1.0-rc.1`, which is how OLM
 * treats `skipRange` and `olm.package.required` (blang/semver ranges).
 */
export function parseRange(text: string, options: { includePrerelease?: boolean } = {}): RangeParse {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, reason: 'the version range is empty' };
  try {
    const range = new semver.Range(toNpmRange(trimmed), { loose: true, includePrerelease: options.includePrerelease ?? false });
    return { ok: true, value: { text: trimmed, range } };
  } catch (err) {
    if (err instanceof BinnacleError) return { ok: false, reason: err.message };
    return { ok: false, reason: `"${text}" is not a valid version range` };
  }
}

export function inRange(version: semver.SemVer, range: ParsedRange): boolean {
  return range.range.test(version);
}

/** Parses a bundle version leniently (`v1.2.3`, `1.2`); undefined when it is not a version. */
export function parseVersion(text: string): semver.SemVer | undefined {
  const v = semver.parse(text, { loose: true }) ?? semver.coerce(text, { includePrerelease: true });
  return v ?? undefined;
}

/** A range in OLM's own grammar, ready to test versions with. */
export interface CatalogRange {
  text: string;
  test: (version: semver.SemVer) => boolean;
}

/**
 * Ranges that catalogs carry — `skipRange`, `olm.package.required` and `olm.constraint` package
 * ranges — as OLM parses them: blang/semver `ParseRange` (util/semver.ts, the grammar the catalog
 * validator checks), not npm's. `~1.2`, `^1`, `>=1` or `>=1.0` are not ranges there.
 */
export function parseCatalogRange(text: string): { ok: true; value: CatalogRange } | { ok: false; reason: string } {
  const r = parseOlmRange(text);
  if (typeof r === 'string') return { ok: false, reason: `"${text}" is not a version range OLM can parse (blang/semver): ${r}` };
  return { ok: true, value: { text: text.trim(), test: (v) => inOlmRange(v, r) } };
}
