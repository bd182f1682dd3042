/**
 * `.indexignore` files, as opm reads them: gitignore-style patterns that apply to the directory
 * holding the file and below. Supports `*`, `?`, `**`, a leading `/` (anchored), a trailing `/`
 * (directories only) and `!` (re-include). The last matching rule wins.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

interface Rule {
  /** Directory (relative to the walk root, `/`-separated, '' for the root) the rule applies under. */
  base: string;
  regex: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

function globToRegex(glob: string, anchored: boolean): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === '*') {
      if (glob.charAt(i + 1) === '*') {
        // `**/` matches any number of directories; a trailing `**` matches everything.
        i++;
        if (glob.charAt(i + 1) === '/') {
          i++;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // Unanchored patterns without a slash match a name at any depth.
  return new RegExp(anchored ? `^${re}(?:/.*)?$` : `^(?:.*/)?${re}(?:/.*)?$`);
}

export function parseIndexIgnore(text: string, base: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    const dirOnly = line.endsWith('/');
    if (dirOnly) line = line.slice(0, -1);
    const anchored = line.startsWith('/') || line.slice(0, -1).includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    rules.push({ base, regex: globToRegex(line, anchored), negate, dirOnly });
  }
  return rules;
}

export class IndexIgnore {
  private readonly rules: Rule[] = [];

  /** Reads `dir/.indexignore` when `present`; `root` is the walk root. */
  async addFrom(root: string, dir: string, present: boolean): Promise<void> {
    if (!present) return;
    const text = await readFile(path.join(dir, '.indexignore'), 'utf8');
    this.rules.push(...parseIndexIgnore(text, path.relative(root, dir).split(path.sep).join('/')));
  }

  addRules(text: string, base = ''): void {
    this.rules.push(...parseIndexIgnore(text, base));
  }

  /** `rel` is relative to the walk root. */
  ignores(rel: string, isDir: boolean): boolean {
    const p = rel.split(path.sep).join('/');
    let ignored = false;
    for (const r of this.rules) {
      if (r.base !== '' && !p.startsWith(`${r.base}/`)) continue;
      const sub = r.base === '' ? p : p.slice(r.base.length + 1);
      if (r.dirOnly && !isDir && !r.regex.test(path.posix.dirname(sub))) continue;
      if (r.regex.test(sub)) ignored = !r.negate;
    }
    return ignored;
  }
}
