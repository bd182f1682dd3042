/**
 * Descriptions for values.yaml keys, from the comments chart authors already write:
 *
 * 1. helm-docs: a `# -- text` line in the comment block directly above a key, with the
 *    `#` lines after it as continuation (up to a `# @...` annotation such as `@default`);
 * 2. a description listed elsewhere under the key's dotted path: Bitnami's
 *    `## @param path [modifiers] text` and helm-docs' old `# path -- text`;
 * 3. otherwise the plain comment block directly above the key, without lines that are
 *    commented-out YAML (`# key: value`, `# - item`).
 *
 * "Directly above" means contiguous comment lines with no blank line between them and the
 * key, as helm-docs reads them. The document tree (yaml's Document API) gives each key's
 * position; comment text is read from the source lines above it, because the yaml library
 * attaches a comment that ends a nested block to that block, not to the key after it.
 */
import { isMap, isScalar, isSeq, type Document, type Node } from 'yaml';
import { childPath, itemsPath } from './paths.js';

export interface ValuesAnnotations {
  /** Values path (see paths.ts) → description. */
  descriptions: Map<string, string>;
  /** Paths of numbers written as floats (`1.0`, `1e3`), which infer as `number`, not `integer`. */
  floats: Set<string>;
}

const PROSE_KEYS = new Set(['ref', 'refs', 'see', 'note', 'e.g', 'eg', 'example', 'default', 'warning', 'important', 'info', 'docs', 'link', 'todo', 'deprecated', 'more info']);

function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function lineIndexOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function stripHashes(line: string): string {
  return line.trim().replace(/^#+\s?/, '');
}

/** A comment line that is commented-out YAML rather than prose. */
function looksLikeYaml(text: string): boolean {
  const m = /^\s*(?:-\s+)?(["']?[\w.\-/]+["']?):(\s|$)(.*)$/.exec(text);
  if (m !== null) {
    const key = (m[1] ?? '').replace(/["']/g, '').toLowerCase();
    if (PROSE_KEYS.has(key) || /^https?:/.test((m[3] ?? '').trim())) return false;
    return true;
  }
  return /^\s*-\s*$/.test(text) || /^\s*-\s+\S/.test(text) || /^\s*[{}[\]]/.test(text);
}

function helmDocs(block: readonly string[]): string | undefined {
  let start = -1;
  block.forEach((line, i) => {
    if (/^#+\s*--(\s|$)/.test(line.trim())) start = i;
  });
  if (start < 0) return undefined;
  const parts = [(block[start] ?? '').trim().replace(/^#+\s*--\s?/, '')];
  for (const line of block.slice(start + 1)) {
    const text = stripHashes(line);
    if (text.trimStart().startsWith('@')) break;
    parts.push(text);
  }
  const joined = parts.map((p) => p.trim()).filter((p) => p !== '').join(' ');
  return joined === '' ? undefined : joined;
}

function plainComment(block: readonly string[]): string | undefined {
  const kept: string[] = [];
  let inCode = false;
  for (const line of block) {
    const text = stripHashes(line);
    const trimmed = text.trim();
    if (trimmed === '' || /^[#=\-*_~]+$/.test(trimmed)) {
      inCode = false;
      continue;
    }
    if (trimmed.startsWith('@') || trimmed.startsWith('--')) continue;
    if (looksLikeYaml(text) || (inCode && /^\s{2,}\S/.test(text))) {
      inCode = true;
      continue;
    }
    inCode = false;
    kept.push(trimmed);
  }
  return kept.length === 0 ? undefined : kept.join('\n');
}

/** `## @param a.b text` and `# a.b -- text` lines anywhere in the file, by dotted path. */
function listedDescriptions(lines: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of lines) {
    const t = line.trim();
    const param = /^#+\s*@param\s+(\S+)\s+(.*)$/.exec(t);
    const old = param === null ? /^#+\s*([\w.\-/[\]]+)\s+--\s+(.+)$/.exec(t) : null;
    const m = param ?? old;
    if (m === null) continue;
    const text = (m[2] ?? '').replace(/^\[[^\]]*\]\s*/, '').trim();
    if (text !== '' && !out.has(m[1] ?? '')) out.set(m[1] ?? '', text);
  }
  return out;
}

/** The dotted form Bitnami and old helm-docs use: map keys joined by dots, list levels left out. */
function dottedPath(segments: readonly string[]): string {
  return segments.filter((s) => s !== '[]').join('.');
}

export function annotateValues(document: Document, source: string): ValuesAnnotations {
  const lines = source.split('\n');
  const starts = lineStarts(source);
  const listed = listedDescriptions(lines);
  const out: ValuesAnnotations = { descriptions: new Map(), floats: new Set() };

  const blockAbove = (keyOffset: number): string[] => {
    const lineNo = lineIndexOf(starts, keyOffset);
    const line = lines[lineNo] ?? '';
    const col = keyOffset - (starts[lineNo] ?? 0);
    // Only a key that starts its line (after list dashes) owns the comments above it.
    if (!/^[\s-]*$/.test(line.slice(0, col))) return [];
    const block: string[] = [];
    for (let i = lineNo - 1; i >= 0; i--) {
      const t = (lines[i] ?? '').trim();
      if (!t.startsWith('#')) break;
      block.unshift(t);
    }
    return block;
  };

  /** The key's description (the first found for a path wins): helm-docs' comment, else the listed one, else the plain comment above it. */
  const describe = (keyOffset: number | undefined, p: string, segs: string[]): void => {
    if (keyOffset === undefined || out.descriptions.has(p)) return;
    const block = blockAbove(keyOffset);
    const text = helmDocs(block) ?? listed.get(dottedPath(segs)) ?? plainComment(block);
    if (text !== undefined) out.descriptions.set(p, text);
  };

  const walk = (node: Node | null | undefined, path: string, segments: string[]): void => {
    if (node === null || node === undefined) return;
    if (isScalar(node)) {
      if (typeof node.value === 'number' && /[.eE]|inf|nan/i.test(node.source ?? '')) out.floats.add(path);
      return;
    }
    if (isSeq(node)) {
      for (const item of node.items) walk(item as Node, itemsPath(path), [...segments, '[]']);
      return;
    }
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const keyNode = pair.key as Node | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : undefined;
      if (key === undefined || key === '<<') continue;
      const p = childPath(path, key);
      const segs = [...segments, key];
      describe(keyNode?.range?.[0], p, segs);
      walk(pair.value as Node | null, p, segs);
    }
  };
  walk(document.contents, '', []);
  return out;
}
