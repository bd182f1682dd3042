/**
 * `.helmignore`, as Helm's loader reads it (helm.sh/helm `pkg/ignore`), so that a chart
 * directory is packaged with exactly the files `helm package` and Helm's directory loader
 * take from it. The rules are Helm's, quirks included:
 * - one pattern a line; blank lines and `#` comments are skipped; `**` is refused;
 * - patterns are Go's `filepath.Match` (`*`, `?`, `[...]`, `\` escapes; `*` and `?` never
 *   match `/`);
 * - a pattern with a `/` matches the whole path from the chart root (a leading `/` is dropped),
 *   one without matches the last path element only; a trailing `/` matches directories only;
 * - rules are tried in order and the first match ignores the path; a negated rule (`!p`)
 *   ignores every path it does *not* match, as Helm does;
 * - `templates/.?*` (dot files under templates/) is always ignored.
 */
import { InputError } from '../../util/errors.js';

export interface IgnoreRules {
  /** Whether Helm leaves out `path` (slash-separated, relative to the chart root). */
  ignores(path: string, isDir: boolean): boolean;
}

interface Rule {
  raw: string;
  negate: boolean;
  mustDir: boolean;
  /** Match the whole path (true) or only its last element. */
  wholePath: boolean;
  re: RegExp;
}

/** The default rule Helm adds before a chart's own. */
const DEFAULT_RULES = ['templates/.?*'];

const escapeRe = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * Go's `filepath.Match` pattern as a RegExp, or an error message for a pattern Go calls
 * malformed (`ErrBadPattern`).
 */
export function globToRegExp(pattern: string): RegExp | string {
  let out = '';
  let i = 0;
  const bad = 'syntax error in pattern';
  while (i < pattern.length) {
    const c = pattern.charAt(i);
    if (c === '*') {
      out += '[^/]*';
      i++;
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '\\') {
      if (i + 1 >= pattern.length) return bad;
      out += escapeRe(pattern.charAt(i + 1));
      i += 2;
    } else if (c === '[') {
      i++;
      let negate = false;
      if (pattern.charAt(i) === '^') {
        negate = true;
        i++;
      }
      const ranges: string[] = [];
      let first = true;
      for (;;) {
        if (i >= pattern.length) return bad;
        if (pattern.charAt(i) === ']' && !first) {
          i++;
          break;
        }
        first = false;
        const lo = readClassChar(pattern, i);
        if (lo === undefined) return bad;
        i = lo.next;
        if (pattern.charAt(i) === '-') {
          const hi = readClassChar(pattern, i + 1);
          if (hi === undefined) return bad;
          i = hi.next;
          // Go accepts an empty range (z-a); it matches nothing.
          if (hi.ch >= lo.ch) ranges.push(`${escapeRe(lo.ch)}-${escapeRe(hi.ch)}`);
        } else {
          ranges.push(escapeRe(lo.ch));
        }
      }
      // Unlike `*` and `?`, Go lets a class match the separator.
      out += `[${negate ? '^' : ''}${ranges.join('')}]`;
    } else {
      out += escapeRe(c);
      i++;
    }
  }
  return new RegExp(`^${out}$`);
}

function readClassChar(pattern: string, i: number): { ch: string; next: number } | undefined {
  const c = pattern.charAt(i);
  if (c === '' || c === ']' || c === '-') return undefined;
  if (c === '\\') {
    const e = pattern.charAt(i + 1);
    return e === '' ? undefined : { ch: e, next: i + 2 };
  }
  return { ch: c, next: i + 1 };
}

function parseRule(line: string, where: { file: string; line: number } | undefined): Rule | undefined {
  const raw = line.trim();
  if (raw === '' || raw.startsWith('#')) return undefined;
  const fail = (message: string): never => {
    throw new InputError('HELMIGNORE_PATTERN', `${JSON.stringify(raw)}: ${message}`, where === undefined ? {} : { file: where.file, field: `line ${where.line}` });
  };
  if (raw.includes('**')) fail('double-star (**) syntax is not supported');
  let rule = raw;
  const negate = rule.startsWith('!');
  if (negate) rule = rule.slice(1);
  const mustDir = rule.endsWith('/');
  if (mustDir) rule = rule.slice(0, -1);
  const wholePath = rule.includes('/');
  if (rule.startsWith('/')) rule = rule.slice(1);
  // Helm checks the whole line (with its `!` and `/`) compiles before taking it apart.
  if (typeof globToRegExp(raw) === 'string') fail('syntax error in pattern');
  const re = globToRegExp(rule);
  if (typeof re === 'string') return fail(re);
  return { raw, negate, mustDir, wholePath, re };
}

class Rules implements IgnoreRules {
  constructor(private readonly rules: readonly Rule[]) {}

  ignores(path: string, isDir: boolean): boolean {
    if (path === '' || path === '.' || path === './') return false;
    const base = path.split('/').pop() ?? path;
    for (const r of this.rules) {
      const matches = r.re.test(r.wholePath ? path : base);
      if (r.negate) {
        if (r.mustDir && !isDir) return true;
        if (!matches) return true;
        continue;
      }
      if (r.mustDir && !isDir) continue;
      if (matches) return true;
    }
    return false;
  }
}

/** The rules of a `.helmignore` file's text (after Helm's default rule). */
export function parseHelmignore(text: string, file = '.helmignore'): IgnoreRules {
  const rules: Rule[] = [];
  for (const d of DEFAULT_RULES) {
    const r = parseRule(d, undefined);
    if (r !== undefined) rules.push(r);
  }
  text.split(/\r?\n/).forEach((line, i) => {
    const r = parseRule(line, { file, line: i + 1 });
    if (r !== undefined) rules.push(r);
  });
  return new Rules(rules);
}
