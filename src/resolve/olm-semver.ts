/**
 * OLM's CEL function `semver_compare(a, b)` (operator-framework/api `pkg/constraints/cel.go`):
 * both values are printed as Go prints them (`fmt.Sprint`), read as versions the tolerant way
 * (blang/semver `ParseTolerant`: spaces and a leading `v` dropped, leading zeros trimmed, a short
 * `1` or `1.2` filled up with `.0`), and compared as semver does: -1, 0 or 1. A value that does
 * not read as a version is an error, so the rule does not hold.
 */
import semver from 'semver';

/** How Go's `fmt.Sprint` prints a float64: shortest digits, exponent form from 1e+06 up or below 1e-04. */
function goFloat(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [digits = '', exp = '0'] = n.toExponential().split('e');
  const e = Number(exp);
  if (e < -4 || e >= 6) return `${digits}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return String(n);
}

/** The text Go would print for a scalar CEL value; undefined for lists, maps and null, which never read as versions. */
function goPrint(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return goFloat(v);
  if (typeof v === 'boolean') return String(v);
  return undefined;
}

/** blang/semver's ParseTolerant over node-semver's strict parser; undefined when it is not a version. */
export function parseTolerantVersion(v: unknown): semver.SemVer | undefined {
  const text = goPrint(v);
  if (text === undefined) return undefined;
  const parts = text.trim().replace(/^v/, '').split('.');
  // SplitN(s, ".", 3): the third part keeps its dots (pre-release and build metadata).
  const split = parts.length > 3 ? [...parts.slice(0, 2), parts.slice(2).join('.')] : parts;
  const trimmed = split.map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, '');
    return t === '' || !/^[0-9]/.test(t) ? `0${t}` : t;
  });
  if (trimmed.length < 3) {
    if (/[+-]/.test(trimmed[trimmed.length - 1] ?? '')) return undefined;
    while (trimmed.length < 3) trimmed.push('0');
  }
  return semver.parse(trimmed.join('.')) ?? undefined;
}

/** What `semver_compare` says of a value that is not a version. */
export function notAVersion(v: unknown): string {
  const what = typeof v === 'string' ? `"${v}"` : v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a map' : (goPrint(v) ?? typeof v);
  return `semver_compare: ${what} is not a version`;
}

/** `semver_compare(a, b)`: -1, 0 or 1; a string naming the value that is not a version otherwise. */
export function olmSemverCompare(a: unknown, b: unknown): number | { error: string } {
  const va = parseTolerantVersion(a);
  if (va === undefined) return { error: notAVersion(a) };
  const vb = parseTolerantVersion(b);
  if (vb === undefined) return { error: notAVersion(b) };
  return semver.compare(va, vb);
}
