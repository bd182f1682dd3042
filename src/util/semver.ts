/**
 * The one semantic-version module: strict versions as Go's blang/semver `Parse` reads them (CSV
 * `spec.version`, `olm.package` versions), its `ParseTolerant` (minKubeVersion, OpenShift
 * versions), and OLM's version ranges (`skipRange`, `olm.package.required`), which are blang's
 * `ParseRange` — not npm's: no `^`, `~` or hyphen ranges, `||` only between spaces, `x` the only
 * wildcard. User-facing constraints in Masterminds/npm syntax live in resolve/version-range.ts.
 */
// The SemVer class alone: the whole `semver` package costs tens of milliseconds of start-up.
import SemVer from 'semver/classes/semver.js';

/** Semver 2.0 exactly as blang/semver `Parse` accepts it: no `v`, all three parts, no leading zeros. */
export const STRICT_SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export function isStrictSemver(v: string): boolean {
  return STRICT_SEMVER.test(v);
}

/** Strict parse; undefined when `v` is not valid semver 2.0. */
export function parseStrictSemver(v: string): SemVer | undefined {
  if (!STRICT_SEMVER.test(v)) return undefined;
  try {
    return new SemVer(v);
  } catch {
    return undefined;
  }
}

/** Go's `ParseTolerant`: trims spaces and a leading `v`, pads `1.22` to `1.22.0`. */
export function parseTolerant(v: string): [number, number, number] | undefined {
  const s = v.trim().replace(/^v/, '');
  const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$/.exec(s);
  if (m === null) return undefined;
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

type Op = '=' | '!=' | '>' | '>=' | '<' | '<=';
interface Comparator {
  op: Op;
  version: SemVer;
}
export type OlmRange = Comparator[][];

const OPS: Record<string, Op> = { '': '=', '=': '=', '==': '=', '!': '!=', '!=': '!=', '>': '>', '>=': '>=', '<': '<', '<=': '<=' };

/** blang's splitAndTrim: split on spaces, except a space right after `>`, `<` or `=`. */
function tokens(s: string): string[] {
  const out: string[] = [];
  let last = 0;
  let lastChar = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === ' ' && !['>', '<', '='].includes(lastChar)) {
      if (last < i - 1) out.push(s.slice(last, i));
      last = i + 1;
    } else if (s[i] !== ' ') lastChar = s[i] ?? '';
  }
  if (last < s.length - 1) out.push(s.slice(last));
  return out.map((t) => t.replace(/ /g, ''));
}

function splitComparator(s: string): { op: string; v: string } | string {
  const i = s.search(/\d/);
  if (i < 0) return `Could not get version from string: "${s}"`;
  return { op: s.slice(0, i).trim(), v: s.slice(i) };
}

/** blang's wildcard expansion of one comparator holding an `x` (`1.x`, `>=1.2.x`, `!=1.x`). */
function expandWildcard(ap: string): string[] | string {
  const sc = splitComparator(ap);
  if (typeof sc === 'string') return sc;
  const parts = sc.v.split('.');
  const kind = parts[parts.length - 1] === 'x' ? parts.length : 0; // 2: minor wildcard, 3: patch
  let flat = sc.v.replace('.x.x', '.x').replace('.x', '.0');
  if (flat.split('.').length === 2) flat += '.0';
  const bump = (v: string, idx: number): string => {
    const ps = v.split('.');
    const n = Number.parseInt(ps[idx] ?? '', 10);
    if (!Number.isNaN(n)) ps[idx] = String(n + 1);
    return ps.join('.');
  };
  const inc = (): string => (kind === 3 ? bump(flat, 1) : kind === 2 ? bump(flat, 0) : '');
  switch (sc.op) {
    case '>':
      return [`>=${inc()}`];
    case '>=':
      return [`>=${flat}`];
    case '<':
      return [`<${flat}`];
    case '<=':
      return [`<${inc()}`];
    case '':
    case '=':
    case '==':
      return [`>=${flat}`, `<${inc()}`];
    case '!=':
    case '!':
      return [`<${flat}`, `>=${inc()}`];
    default:
      // blang drops an operator it does not know here, leaving the bare (equality) version.
      return [flat];
  }
}

/** Parses as blang/semver `ParseRange` does; a string is why not (its wording). */
export function parseOlmRange(s: string): OlmRange | string {
  const ts = tokens(s);
  const ors: string[][] = [];
  let last = 0;
  for (let i = 0; i < ts.length; i++) {
    if (ts[i] !== '||') continue;
    if (i === 0) return "First element in range is '||'";
    ors.push(ts.slice(last, i));
    last = i + 1;
  }
  if (last === ts.length) return ts.length === 0 ? 'the range is empty' : "Last element in range is '||'";
  ors.push(ts.slice(last));
  const out: OlmRange = [];
  for (const and of ors) {
    const expanded: string[] = [];
    for (const ap of and) {
      if (!ap.includes('x')) {
        expanded.push(ap);
        continue;
      }
      const e = expandWildcard(ap);
      if (typeof e === 'string') return e;
      expanded.push(...e);
    }
    const cs: Comparator[] = [];
    for (const ap of expanded) {
      const sc = splitComparator(ap);
      if (typeof sc === 'string') return sc;
      // Own keys only: `constructor1.0.0` names no operator (blang refuses it), not Object's constructor.
      const op = Object.hasOwn(OPS, sc.op) ? OPS[sc.op] : undefined;
      if (op === undefined) return `Could not parse comparator "${sc.op}" in "${ap}"`;
      const version = parseStrictSemver(sc.v);
      if (version === undefined) return `Could not parse Range "${ap}": Could not parse version "${sc.v}" in "${ap}"`;
      cs.push({ op, version });
    }
    out.push(cs);
  }
  return out;
}

/** Undefined when `range` parses as OLM parses it; otherwise why not. */
export function olmRangeProblem(range: string): string | undefined {
  const r = parseOlmRange(range);
  return typeof r === 'string' ? r : undefined;
}

function test(c: Comparator, v: SemVer): boolean {
  const d = v.compare(c.version);
  switch (c.op) {
    case '=':
      return d === 0;
    case '!=':
      return d !== 0;
    case '>':
      return d > 0;
    case '>=':
      return d >= 0;
    case '<':
      return d < 0;
    case '<=':
      return d <= 0;
  }
}

/** Whether `version` is in `range`, as OLM decides it (prereleases compared as plain versions). */
export function inOlmRange(version: SemVer | string, range: OlmRange): boolean {
  const v = typeof version === 'string' ? parseStrictSemver(version) : version;
  if (v === undefined) return false;
  return range.some((and) => and.every((c) => test(c, v)));
}

export function satisfiesOlmRange(version: string, range: string): boolean {
  const r = parseOlmRange(range);
  return typeof r !== 'string' && inOlmRange(version, r);
}
