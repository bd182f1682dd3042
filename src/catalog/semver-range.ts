/**
 * Version ranges as OLM parses them (Go's blang/semver `ParseRange`), not as npm does: `||`
 * separates alternatives, spaces join comparators (`>=1.0.0 <2.0.0`), operators are
 * `> >= < <= = == != !`, and `x`/`X`/`*` wildcards expand (`1.x`, `>=1.2.x`). npm's `^`, `~` and
 * hyphen ranges are not valid: OLM would refuse them, so validation does too.
 */
import semver from 'semver';

const OPERATORS = ['>=', '<=', '!=', '==', '>', '<', '=', '!'] as const;

const STRICT_SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
const WILDCARD = /^(0|[1-9]\d*)(?:\.(?:0|[1-9]\d*|[xX*]))?(?:\.(?:0|[1-9]\d*|[xX*]))?$/;

/** Tokens of one AND part; an operator separated from its version by spaces is re-attached. */
function comparators(part: string): string[] {
  const raw = part.split(/\s+/).filter((t) => t !== '');
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const t = raw[i] ?? '';
    if ((OPERATORS as readonly string[]).includes(t) && i + 1 < raw.length) {
      out.push(t + (raw[i + 1] ?? ''));
      i++;
    } else out.push(t);
  }
  return out;
}

function validComparator(c: string): boolean {
  const op = OPERATORS.find((o) => c.startsWith(o)) ?? '';
  const v = c.slice(op.length);
  if (STRICT_SEMVER.test(v)) return true;
  // Wildcards need at least one wildcard component; `1.2` without one is not a version.
  return WILDCARD.test(v) && /[xX*]/.test(v);
}

/** Undefined when `range` parses as OLM parses it; otherwise why not. */
export function olmRangeProblem(range: string): string | undefined {
  if (range.trim() === '') return 'range is empty';
  for (const part of range.split('||')) {
    const cs = comparators(part.trim());
    if (cs.length === 0) return 'empty alternative around "||"';
    for (const c of cs) {
      if (!validComparator(c)) return `"${c}" is not an operator (>, >=, <, <=, =, !=) followed by a full semver version or wildcard`;
    }
  }
  return undefined;
}

/** An npm `semver` range with the same meaning, for matching versions (wildcards map directly). */
export function toNpmRange(range: string): string {
  return range
    .split('||')
    .map((p) => comparators(p.trim()).map((c) => (c.startsWith('==') ? c.slice(1) : c)).join(' '))
    .join(' || ');
}

export function satisfiesOlmRange(version: string, range: string): boolean {
  return olmRangeProblem(range) === undefined && semver.satisfies(version, toNpmRange(range), { includePrerelease: true });
}
