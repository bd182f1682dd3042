/**
 * Reading manifest files: every YAML (or JSON) document of a file, parsed, with parse errors
 * turned into problems that name the file and line instead of exceptions.
 */
import { readFile } from 'node:fs/promises';
import type { Problem } from '../util/errors.js';
import { fastYamlDocuments, YamlAliasError, yamlPackage, yamlValue } from '../util/yaml.js';

export interface ParsedDocument {
  /** Position of the document inside its file, from 0. */
  index: number;
  value: unknown;
}

export interface ParsedFile {
  file: string;
  documents: ParsedDocument[];
  problems: Problem[];
}

/** Parses YAML text; empty documents (`---` with nothing after) are dropped. */
export function parseYamlDocuments(input: string, file: string): ParsedFile {
  // CRLF files are common; a `\` before `\r\n` must still escape the line break.
  const text = input.replace(/\r\n/g, '\n');
  const problems: Problem[] = [];
  const documents: ParsedDocument[] = [];
  // Plain YAML (no syntax error, duplicate key or anchor) is read by the fast reader; the rest, as before.
  const fast = fastYamlDocuments(text);
  if (fast !== undefined) {
    fast.forEach((value, index) => {
      if (value !== null && value !== undefined) documents.push({ index, value });
    });
    return { file, documents, problems };
  }
  let docs = parseDocs(text, true);
  const dups = docs.flatMap((d) => d.errors).filter((e) => e.code === 'DUPLICATE_KEY');
  if (dups.length > 0) {
    // A key given twice: the last one wins (as in Go), which is rarely what the author meant.
    for (const e of dups) {
      problems.push({ severity: 'warning', rule: 'yaml.duplicate-key', message: `${(e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')} (line ${e.linePos?.[0].line ?? '?'}); the last value is used`, file });
    }
    docs = parseDocs(text, false);
  }
  if (docs.some((d) => d.errors.length > 0)) {
    // Go's YAML parser accepts quoted scalars whose continuation lines are under-indented or
    // tab-indented, and published bundles rely on it. Retry with those lines re-indented,
    // which cannot change the value: leading whitespace of such lines is folded away.
    const relaxed = parseDocs(relaxQuotedIndentation(text), false);
    if (relaxed.every((d) => d.errors.length === 0)) docs = relaxed;
  }
  let index = 0;
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const line = e.linePos?.[0].line;
        problems.push({
          severity: 'error',
          rule: 'yaml.syntax',
          message: `not valid YAML${line === undefined ? '' : ` (line ${line})`}: ${(e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`,
          file,
        });
      }
      index++;
      continue;
    }
    // An alias without its anchor (`*a`), or an alias bomb (aliases as Go reads them: see
    // yamlValue), only fail here.
    let value: unknown;
    try {
      value = yamlValue(doc, file);
    } catch (err) {
      if (!(err instanceof YamlAliasError)) throw err;
      problems.push({ severity: 'error', rule: 'yaml.syntax', message: `not valid YAML (document ${index}): ${err.reason}`, file });
      index++;
      continue;
    }
    if (value !== null && value !== undefined) documents.push({ index, value });
    index++;
  }
  return { file, documents, problems };
}

function parseDocs(text: string, uniqueKeys: boolean): ReturnType<typeof import('yaml').parseAllDocuments> {
  return yamlPackage().parseAllDocuments(text, { uniqueKeys, prettyErrors: true, strict: false });
}

const QUOTE_START = /^([ \t]*)((?:-[ \t]+)*)((?:[^\s'"#-][^'"#]*?:[ \t]+)?)(["'])(.*)$/;

/** Re-indents the continuation lines of multi-line quoted scalars so a strict parser accepts them. */
export function relaxQuotedIndentation(text: string): string {
  const lines = text.split('\n');
  let open: { quote: string; minIndent: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (open !== undefined) {
      const rest = line.replace(/^[ \t]+/, '');
      if (rest !== '' && rest !== '\r') lines[i] = ' '.repeat(open.minIndent) + rest;
      if (closes(rest, open.quote)) open = undefined;
      continue;
    }
    const m = QUOTE_START.exec(line);
    if (m === null) continue;
    const indent = (m[1] ?? '').length;
    const dashes = (m[2] ?? '').length;
    const quote = m[4] ?? '"';
    if (!closes(m[5] ?? '', quote)) open = { quote, minIndent: indent + dashes + 2 };
  }
  return lines.join('\n');
}

/** Whether a quoted scalar that continues into `s` ends in it. */
function closes(s: string, quote: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote === '"' && c === '\\') {
      i++;
      continue;
    }
    if (c !== quote) continue;
    if (quote === "'" && s[i + 1] === "'") {
      i++;
      continue;
    }
    return true;
  }
  return false;
}

export async function readYamlFile(path: string, displayName: string): Promise<ParsedFile> {
  const text = await readFile(path, 'utf8');
  return parseYamlDocuments(text, displayName);
}
