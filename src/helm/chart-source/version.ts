/**
 * Chart versions and ranges the way Helm reads them (Masterminds semver v3): `>=1.2.0 <2`,
 * `>= 1.2, < 2`, `~1.2`, `^1.2`, `1.2.x`, `*`, `1.2 - 1.4`, `!=1.3.0`, `||`. The range grammar is
 * src/resolve/version-range's; what is Helm's own lives here:
 * - an empty range means `*`, the highest stable version;
 * - a version equal to the range text is taken first, before the text is read as a range;
 * - prereleases match only in an `||` alternative that itself names a prerelease
 *   (`>=1.2.0-0 <2` matches `1.5.0-rc.1`; `>=1.2.0 <2` does not);
 * - versions are lenient: `v1.2.3`, `1.2` (= 1.2.0), leading zeros.
 * OCI tags cannot hold `+`, so Helm stores version `1.2.3+build` under tag `1.2.3_build`.
 */
import semver from 'semver';
import { parseRange, type ParsedRange } from '../../resolve/version-range.js';

const LENIENT_VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** A chart version as Masterminds' NewVersion reads it, or undefined when it is not one. */
export function parseChartVersion(text: string): semver.SemVer | undefined {
  const m = LENIENT_VERSION.exec(text.trim());
  if (m === null) return undefined;
  const num = (s: string | undefined): number => (s === undefined ? 0 : Number.parseInt(s, 10));
  const canonical = `${num(m[1])}.${num(m[2])}.${num(m[3])}${m[4] ?? ''}${m[5] ?? ''}`;
  return semver.parse(canonical, { loose: true }) ?? undefined;
}

export interface ChartVersionRange {
  /** As written (trimmed); `*` when none was given. */
  text: string;
  test(version: semver.SemVer): boolean;
}

export type ChartRangeParse = { ok: true; value: ChartVersionRange } | { ok: false; reason: string };

/** A version with a prerelease part written in the range: a digit, `-`, then an identifier. */
const NAMES_PRERELEASE = /\d-[0-9A-Za-z]/;

export function parseChartVersionRange(text: string | undefined): ChartRangeParse {
  const trimmed = (text ?? '').trim() === '' ? '*' : (text ?? '').trim();
  const alternatives: ParsedRange[] = [];
  for (const alt of trimmed.split('||')) {
    const parsed = parseRange(alt, { includePrerelease: NAMES_PRERELEASE.test(alt) });
    if (!parsed.ok) return { ok: false, reason: `"${trimmed}" is not a valid version range` };
    alternatives.push(parsed.value);
  }
  return { ok: true, value: { text: trimmed, test: (v) => alternatives.some((a) => a.range.test(v)) } };
}

export interface SortedVersions {
  /** Valid versions, highest first, as written in the source. */
  valid: string[];
  /** What could not be read as a version (Helm skips these too). */
  invalid: string[];
}

export function sortChartVersions(versions: readonly string[]): SortedVersions {
  const valid: { text: string; v: semver.SemVer }[] = [];
  const invalid: string[] = [];
  for (const text of new Set(versions)) {
    const v = parseChartVersion(text);
    if (v === undefined) invalid.push(text);
    else valid.push({ text, v });
  }
  valid.sort((a, b) => b.v.compare(a.v) || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return { valid: valid.map((x) => x.text), invalid };
}

/**
 * The version Helm would pick from `available` for `range` (a version or a range; empty = `*`):
 * an exact textual match first, else the highest version in range. Undefined when none matches.
 * Throws nothing: an unreadable range is the caller's to report (parseChartVersionRange).
 */
export function selectChartVersion(available: readonly string[], range: string | undefined): string | undefined {
  const wanted = (range ?? '').trim();
  if (wanted !== '' && available.includes(wanted)) return wanted;
  const parsed = parseChartVersionRange(wanted);
  if (!parsed.ok) return undefined;
  for (const text of sortChartVersions(available).valid) {
    const v = parseChartVersion(text);
    if (v !== undefined && parsed.value.test(v)) return text;
  }
  return undefined;
}

/** Whether two version texts name the same version (`v1.2` and `1.2.0` do; build metadata counts). */
export function sameChartVersion(a: string, b: string): boolean {
  if (a === b) return true;
  const va = parseChartVersion(a);
  const vb = parseChartVersion(b);
  return va !== undefined && vb !== undefined && va.compare(vb) === 0 && va.compareBuild(vb) === 0;
}

/** The OCI tag Helm pushes a chart version under. */
export function versionToOciTag(version: string): string {
  return version.replaceAll('+', '_');
}

/** The chart version an OCI tag stands for. */
export function ociTagToVersion(tag: string): string {
  return tag.replaceAll('_', '+');
}
