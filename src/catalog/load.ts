/**
 * Loads a file-based catalog from a directory tree or a stream into a `DeclarativeConfig`, as
 * opm's declcfg.LoadFS does: every file is read, whatever its name, except `.indexignore` files
 * and what they exclude. A file whose first non-blank character is `{` is a stream of JSON
 * objects; any other is YAML, split into documents at `---` lines as Kubernetes' YAML reader
 * splits them. So a text file that is not FBC (release notes, a README) is an error, as in opm:
 * list it in `.indexignore`. An empty file is nothing; a document that is empty (blank lines, only
 * comments, `---` twice) is a record without a schema. Every problem is collected with its file,
 * line, document and field; files over the size limit are refused unread. Only regular files
 * are read (not a device, a FIFO, a socket), and never more bytes than the limits allow, per
 * file and per catalog, whatever a file's size says.
 */
import { isUtf8 } from 'node:buffer';
import { constants, type Stats } from 'node:fs';
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { BinnacleError, ValidationError, ValidationResult } from '../util/errors.js';
import { emptyDeclarativeConfig, type DeclarativeConfig } from '../declcfg/index.js';
import { decodeDocument, type Decoded } from './decode.js';
import { IndexIgnore } from './indexignore.js';
import { MAX_NESTING, treeShape } from '../util/nesting.js';
import { BudgetedResult, expandedItems, jsonItems, OverBudget, ParseBudget, PRESCAN_BYTES, YAML_PACKAGE_WEIGHT, yamlItemsAtMost } from './parse-budget.js';
import { fastYamlDocument, YamlAliasError, yamlPackage, yamlValue } from '../util/yaml.js';
import { fileKindOf } from '../util/file-kind.js';

/** Default per-file limit: well above any real catalog file, well below exhausting memory. */
export const DEFAULT_MAX_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Default bound on one catalog's files together (bytes read, whatever their sizes said): a catalog
 * is held whole in memory while it loads, and the manager then serves it from memory, in a pod
 * limited to 1 GiB (self/manifests.ts) and loading two at once (`--catalog-workers`). Chosen from
 * the largest catalogs measured on the development machine: bench/catalog-scale's catalog of
 * OperatorHub's size (the operatorhub-2021 corpus rendered and copied to 4,700 bundles, each with
 * its manifests as `olm.bundle.object`: heavier than today's catalogs) is 112.9 MB in one file and
 * grows the heap by 92 MiB when loaded; its default catalogs of 2,820 bundles are 67.8 MB each;
 * the corpus itself renders to 24.1 MB (and OpenShift's three default catalogs are about 60 MB
 * together, says that bench). 512 MiB loads the largest with a margin of 4.5 times, and is the
 * bound the resolver already took for a catalog a server sends (resolve/catalog-source.ts): a
 * catalog Binnacle serves is one it can also read back. A `maxFileBytes` above it raises it (one
 * file that large is a catalog that large). It bounds bytes; what they parse into is bounded from
 * it (parse-budget.ts: records shaped to take many times their size in heap, 20 MB of empty
 * objects in one record 427 MiB, are refused before they are parsed).
 */
export const DEFAULT_MAX_CATALOG_BYTES = 512 * 1024 * 1024;

export interface LoadOptions {
  /** Files (and streams) larger than this are refused with a clear error. */
  maxFileBytes?: number;
  /** A catalog whose files together hold more bytes than this is refused (default `DEFAULT_MAX_CATALOG_BYTES`). */
  maxCatalogBytes?: number;
}

export interface LoadResult {
  config: DeclarativeConfig;
  /** Every parse and field problem; `ok` when there are none. */
  result: ValidationResult;
  files: number;
}

/** One parsed document with where it came from. */
export interface SourceDocument {
  value: unknown;
  /** 1-based line of the document start. */
  line: number;
  /** 0-based index of the document in its file. */
  index: number;
}

/**
 * A JSON document's text as it is in its file, and its byte range there: handed to a record
 * sink beside the parsed value, not kept by the loader.
 */
export interface RawJson {
  text: string;
  start: number;
  end: number;
}

/** Where a loader puts each decoded record; `raw` for documents of a JSON file on disk. */
export type RecordSink = (record: Decoded, file: string, raw: RawJson | undefined) => void;

/** The sink that gathers records into a `DeclarativeConfig`. */
export function configSink(cfg: DeclarativeConfig): RecordSink {
  return (d) => {
    switch (d.kind) {
      case 'package':
        cfg.packages.push(d.value);
        break;
      case 'channel':
        cfg.channels.push(d.value);
        break;
      case 'bundle':
        cfg.bundles.push(d.value);
        break;
      case 'deprecation':
        cfg.deprecations.push(d.value);
        break;
      case 'other':
        cfg.others.push(d.value);
    }
  };
}

/** Files with the usual catalog extensions; opm (and `listCatalogFiles`) read every file. */
export function isCatalogFile(name: string): boolean {
  return /\.(json|ya?ml)$/i.test(name);
}

/** The line of byte `offset`, counting newlines on from an earlier known position. */
function lineAt(bytes: Buffer, offset: number, from: { offset: number; line: number }): number {
  let line = from.line;
  for (let k = bytes.indexOf(10, from.offset); k >= 0 && k < offset; k = bytes.indexOf(10, k + 1)) line++;
  return line;
}

const PRETTY_END = Buffer.from('\n}');

/**
 * A parsed JSON document, or a report when it nests too deep to be walked (see util/nesting.ts);
 * its items are charged to `budget` (which throws OverBudget past its bound).
 */
function checkedJsonDocument(doc: SourceDocument, file: string, result: ValidationResult, budget: ParseBudget | undefined): SourceDocument | undefined {
  const shape = treeShape(doc.value);
  if (!shape.deeper) {
    budget?.charge(shape.items, `${file}:${doc.line}`, result);
    return doc;
  }
  result.error('fbc.parse', `document ${doc.index} nests deeper than ${MAX_NESTING} levels`, { file: `${file}:${doc.line}` });
  return undefined;
}

/**
 * Where the JSON value at `start` ends: its closing bracket matched, or a bare scalar's blank;
 * -1 when the bytes end first (more may come).
 */
function valueEnd(bytes: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < bytes.length; i++) {
    const ch = bytes[i];
    if (inString) {
      if (ch === 92) i++; // backslash: skip the escaped char
      else if (ch === 34) inString = false;
      continue;
    }
    if (ch === 34) inString = true;
    else if (ch === 123 || ch === 91) depth++;
    else if (ch === 125 || ch === 93) {
      depth--;
      if (depth <= 0) return i + 1;
    } else if (depth === 0 && (ch === 10 || ch === 32)) return i; // a bare scalar ends at whitespace
  }
  return -1;
}

/**
 * Splits UTF-8 bytes of concatenated JSON values (`{..}{..}` or one per line), given whole or in
 * chunks as read, and hands each parsed value to `each`, in order. A value that does not parse
 * is reported and the split goes on with the next one. Works on bytes and decodes one document
 * at a time, so a large catalog file is held neither whole nor as a string (twice its size once
 * it has a character outside Latin-1), and each document may be dropped once taken. Byte
 * scanning is safe in UTF-8: the bytes of `"`, `\\`, braces and blanks never occur inside a
 * multi-byte character.
 */
export class JsonDocumentSplitter {
  /** Bytes not yet split, and the line its first byte is on. */
  private pending: Buffer = Buffer.alloc(0);
  /** Where `pending` lives: reused from chunk to chunk, grown only for a document larger than it. */
  private store: Buffer = Buffer.alloc(0);
  /** The byte offset of `pending`'s first byte in the whole input. */
  private offset = 0;
  private line = 1;
  private index = 0;
  /**
   * Pretty-printed JSON (opm's output, Binnacle's) ends each top-level object at the first "}"
   * that starts a line: nested ones are indented, and strings hold no raw line breaks. So a slice
   * up to there that parses is exactly the object, found without scanning it here. Once a file is
   * seen not to be laid out that way, its documents are scanned (trying again could cost
   * quadratic time).
   */
  private pretty = true;

  constructor(
    private readonly file: string,
    private readonly result: ValidationResult,
    private readonly each: (doc: SourceDocument, raw: RawJson) => void,
    /** What the documents may parse into: a large one is counted on its bytes before it is parsed. */
    private readonly budget?: ParseBudget,
  ) {}

  /** Takes the chunk's bytes; the chunk itself is not kept, so its buffer may be reused. */
  push(chunk: Buffer): void {
    const kept = this.pending.length;
    if (kept === 0) this.pending = chunk;
    else {
      // What is pending starts the store (see `split`).
      if (this.store.length < kept + chunk.length) {
        const grown = Buffer.allocUnsafe(Math.max(kept + chunk.length, 2 * this.store.length));
        this.pending.copy(grown);
        this.store = grown;
      }
      chunk.copy(this.store, kept);
      this.pending = this.store.subarray(0, kept + chunk.length);
    }
    this.split(false);
  }

  end(): void {
    this.split(true);
    this.pending = Buffer.alloc(0);
  }

  private split(final: boolean): void {
    const bytes = this.pending;
    let pos = { offset: 0, line: this.line };
    const lineOf = (offset: number): number => {
      pos = { offset, line: lineAt(bytes, offset, pos) };
      return pos.line;
    };
    let i = 0;
    const n = bytes.length;
    while (i < n) {
      const c = bytes[i] ?? 0;
      if (c === 32 || c === 9 || c === 10 || c === 13) {
        i++;
        continue;
      }
      if (c === 0xef && (i + 2 < n || final)) {
        if (bytes[i + 1] === 0xbb && bytes[i + 2] === 0xbf) {
          i += 3; // a byte-order mark is not content
          continue;
        }
      } else if (c === 0xef) break; // a byte-order mark, perhaps: wait for its other bytes
      const start = i;
      const end = this.documentEnd(bytes, start, final, lineOf);
      if (end === undefined) break; // the document goes on in bytes not read yet
      i = end.end;
      if (end.value !== undefined) this.emit(end.value.parsed, lineOf(start), { text: end.value.text, start: this.offset + start, end: this.offset + i });
      else this.parse(bytes, start, i, lineOf);
      this.index++;
    }
    // Keep what is not split yet, and the line it starts on.
    this.line = lineAt(bytes, i, pos);
    this.offset += i;
    if (i >= n) this.pending = Buffer.alloc(0);
    else {
      // The rest moves to the front of the store (it may be the caller's chunk, not to be kept).
      if (this.store.length < n - i) this.store = Buffer.allocUnsafe(Math.max(n - i, 2 * this.store.length));
      bytes.copy(this.store, 0, i, n);
      this.pending = this.store.subarray(0, n - i);
    }
  }

  /** Where the document at `start` ends (with its value when the pretty layout found it), or undefined to wait for more. */
  private documentEnd(bytes: Buffer, start: number, final: boolean, lineOf: (offset: number) => number): { end: number; value?: { parsed: unknown; text: string } } | undefined {
    if (this.pretty && bytes[start] === 123) {
      const close = bytes.indexOf(PRETTY_END, start);
      if (close < 0 && !final) return undefined;
      if (close >= 0) {
        this.prescan(bytes, start, close + 2, lineOf);
        const text = bytes.toString('utf8', start, close + 2);
        try {
          return { end: close + 2, value: { parsed: JSON.parse(text) as unknown, text } };
        } catch {
          // Not laid out that way after all.
        }
      }
    }
    this.pretty = false;
    const end = valueEnd(bytes, start);
    if (end >= 0) return { end };
    return final ? { end: bytes.length } : undefined;
  }

  /** Refuses a large document whose bytes hold more items than the budget has left, before it is parsed. */
  private prescan(bytes: Buffer, start: number, end: number, lineOf: (offset: number) => number): void {
    if (this.budget !== undefined && end - start > PRESCAN_BYTES) this.budget.check(jsonItems(bytes, start, end), `${this.file}:${lineOf(start)}`, this.result);
  }

  private parse(bytes: Buffer, start: number, end: number, lineOf: (offset: number) => number): void {
    this.prescan(bytes, start, end, lineOf);
    let value: unknown;
    const text = bytes.toString('utf8', start, end);
    try {
      value = JSON.parse(text) as unknown;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.result.error('fbc.parse', `document ${this.index} is not valid JSON: ${reason}`, { file: `${this.file}:${lineOf(start)}` });
      return;
    }
    this.emit(value, lineOf(start), { text, start: this.offset + start, end: this.offset + end });
  }

  private emit(value: unknown, line: number, raw: RawJson): void {
    const doc = checkedJsonDocument({ value, line, index: this.index }, this.file, this.result, this.budget);
    if (doc !== undefined) this.each(doc, raw);
  }
}

/** Every document of UTF-8 bytes of concatenated JSON values, to `each` (see `JsonDocumentSplitter`). */
export function eachJsonDocument(bytes: Buffer, file: string, result: ValidationResult, each: (doc: SourceDocument, raw: RawJson) => void, budget?: ParseBudget): void {
  const splitter = new JsonDocumentSplitter(file, result, each, budget);
  splitter.push(bytes);
  splitter.end();
}

/** Every document of a text of concatenated JSON values (see `eachJsonDocument`). */
export function parseJsonStream(text: string, file: string, result: ValidationResult, budget?: ParseBudget): SourceDocument[] {
  const docs: SourceDocument[] = [];
  eachJsonDocument(Buffer.from(text, 'utf8'), file, result, (doc) => docs.push(doc), budget);
  return docs;
}

/** One YAML document of a file: its text and the 1-based line it starts on. */
interface YamlChunk {
  text: string;
  line: number;
}

/**
 * Splits YAML at document separators as Kubernetes' YAMLReader (opm's loader) does: a line that
 * starts with `---` ends a document that has text; the first `---` of a document belongs to it, so
 * two in a row make a document of its own. A separator followed by anything but a comment is an
 * error, returned with its line (the split stops there). Each document goes to `each` as it is
 * found, its text a slice of `text`: neither the lines nor the documents are held as arrays (a
 * file of millions of short lines or documents would take many times its size before any is read).
 */
export function eachYamlDocument(text: string, each: (chunk: YamlChunk) => void): { line: number; text: string } | undefined {
  let docStart = -1; // offset of the current document's first line, -1 when it has none yet
  let start = 1;
  let lineNo = 0;
  const flush = (end: number): void => {
    const body = text.slice(docStart, end);
    each({ text: body.endsWith('\n') ? body : `${body}\n`, line: start });
    docStart = -1;
  };
  for (let pos = 0; pos < text.length; ) {
    const nl = text.indexOf('\n', pos);
    const next = nl < 0 ? text.length : nl + 1;
    lineNo++;
    if (text.startsWith('---', pos)) {
      const rest = text.slice(pos + 3, next).trim();
      if (rest !== '' && !rest.startsWith('#')) return { line: lineNo, text: rest };
      if (docStart >= 0) {
        flush(pos);
        pos = next;
        continue;
      }
    }
    if (docStart < 0) {
      docStart = pos;
      start = lineNo;
    }
    pos = next;
  }
  if (docStart >= 0) flush(text.length);
  return undefined;
}

/** Every document of `text` (see `eachYamlDocument`), and a bad separator's line. */
export function splitYamlDocuments(text: string): { chunks: YamlChunk[]; bad: { line: number; text: string } | undefined } {
  const chunks: YamlChunk[] = [];
  const bad = eachYamlDocument(text, (c) => chunks.push(c));
  return { chunks, bad };
}

/**
 * Parses multi-document YAML; a broken document is reported with its line, the others are kept.
 * An empty document (blank, only comments) is kept as `null`: a record without a schema. Each
 * document's items are charged to `budget`: a large one's counted on its text before it is read,
 * one the `yaml` package reads (heavier) on its text, at YAML_PACKAGE_WEIGHT, before it is read.
 */
export function parseYamlStream(text: string, file: string, result: ValidationResult, budget?: ParseBudget): SourceDocument[] {
  const out: SourceDocument[] = [];
  eachYamlSourceDocument(text, file, result, (doc) => out.push(doc), budget);
  return out;
}

/** Every document of multi-document YAML to `each`, as it is read (see `parseYamlStream`). */
function eachYamlSourceDocument(text: string, file: string, result: ValidationResult, each: (doc: SourceDocument) => void, budget: ParseBudget | undefined): void {
  let index = -1;
  const bad = eachYamlDocument(text, (chunk) => {
    index++;
    const where = `${file}:${chunk.line}`;
    if (budget !== undefined && chunk.text.length > PRESCAN_BYTES) budget.check(yamlItemsAtMost(chunk.text), where, result);
    const fast = fastYamlDocument(chunk.text);
    if (fast !== undefined) {
      // js-yaml declines a document with anchors: this value is a tree.
      if (budget !== undefined) budget.charge(treeShape(fast.value, Infinity).items, where, result);
      each({ value: fast.value, line: chunk.line, index });
      return;
    }
    // The yaml package's tree of it must fit what is left (it is dropped once read); the value,
    // with its aliases written out as the store writes it, is what the catalog is charged.
    budget?.check(YAML_PACKAGE_WEIGHT * yamlItemsAtMost(chunk.text), where, result);
    const { LineCounter, parseDocument } = yamlPackage();
    const lineCounter = new LineCounter();
    const doc = parseDocument(chunk.text, { lineCounter, uniqueKeys: false });
    const err = doc.errors[0];
    if (err !== undefined) {
      const at = chunk.line - 1 + lineCounter.linePos(err.pos[0]).line;
      result.error('fbc.parse', `document ${index} is not valid YAML: ${err.message.split('\n')[0] ?? err.code}`, { file: `${file}:${at}` });
      return;
    }
    try {
      const value = yamlValue(doc, `${file}:${chunk.line}`) ?? null;
      if (budget !== undefined) budget.charge(expandedItems(value, budget.maxItems - budget.items), where, result);
      each({ value, line: chunk.line, index });
    } catch (e) {
      if (!(e instanceof YamlAliasError)) throw e;
      result.error('fbc.parse', `document ${index} cannot be read: ${e.reason}`, { file: `${file}:${chunk.line}` });
    }
  });
  if (bad !== undefined) result.error('fbc.parse', `invalid YAML document separator: ${bad.text} (only a comment may follow "---")`, { file: `${file}:${bad.line}` });
}

/**
 * JSON when the text's first non-blank character is `{`, YAML otherwise, as opm's YAML-or-JSON
 * decoder (Kubernetes' GuessJSONStream) decides. An empty text has no documents.
 */
export function parseDocuments(text: string, file: string, result: ValidationResult, budget?: ParseBudget): SourceDocument[] {
  const first = /\S/.exec(text);
  if (first !== null && first[0] === '{') return parseJsonStream(text, file, result, budget);
  return parseYamlStream(text, file, result, budget);
}

/** Decodes one document of `file` to `sink`; field problems go under the record's subject. */
function decodeTo(sink: RecordSink, doc: SourceDocument, file: string, result: ValidationResult, raw: RawJson | undefined): void {
  const d = decodeDocument(doc.value);
  if (d.problems.length > 0) {
    const node = result.child(`${d.subject} (document ${doc.index})`);
    for (const p of d.problems) node.error('fbc.field', p.message, { file: `${file}:${doc.line}`, field: p.field });
    return;
  }
  if (d.decoded !== undefined) sink(d.decoded, file, raw);
}

/** Adds the decoded documents of one file to `cfg`; field problems go under the record's subject. */
export function addDocuments(cfg: DeclarativeConfig, docs: readonly SourceDocument[], file: string, result: ValidationResult): void {
  const sink = configSink(cfg);
  for (const doc of docs) decodeTo(sink, doc, file, result, undefined);
}

export function tooLargeMessage(size: number, limit: number): string {
  return `file is ${size} bytes, over the ${limit}-byte limit for one catalog file (split the catalog into smaller files or raise --max-file-size)`;
}

/** Parses one text (already read) into `cfg`. */
export function loadText(cfg: DeclarativeConfig, text: string, file: string, result: ValidationResult): void {
  addDocuments(cfg, parseDocuments(text, file, result), file, result);
}

/** Parses one text (already read, not JSON from a file's bytes) to `sink`, each document decoded as it is read. */
function loadTextTo(sink: RecordSink, text: string, file: string, result: ValidationResult, budget: ParseBudget | undefined): void {
  const each = (doc: SourceDocument): void => decodeTo(sink, doc, file, result, undefined);
  const first = /\S/.exec(text);
  if (first !== null && first[0] === '{') eachJsonDocument(Buffer.from(text, 'utf8'), file, result, each, budget);
  else eachYamlSourceDocument(text, file, result, each, budget);
}

/**
 * The first byte that is not ASCII blank (nor a byte-order mark): whether a file is JSON, as
 * `parseDocuments` decides it, without decoding. Undefined when that takes a decoded text:
 * a non-ASCII character first (a Unicode space, say), or only blanks.
 */
function firstAsciiContent(bytes: Buffer): number | undefined {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  for (; i < bytes.length; i++) {
    const c = bytes[i] ?? 0;
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    return c < 0x80 ? c : undefined;
  }
  return undefined;
}

/**
 * Parses one file's bytes (UTF-8) to `sink`. A JSON file is decoded document by document, each
 * handed on before the next is parsed, so loading holds the bytes and what the sink keeps, not
 * also a string of the whole file and every raw document. `raw` says whether the sink gets each
 * JSON document's text and byte range (they are offsets in the file only when `bytes` is all of it).
 */
function loadBytesTo(sink: RecordSink, bytes: Buffer, file: string, result: ValidationResult, raw: boolean, budget: ParseBudget | undefined): void {
  if (firstAsciiContent(bytes) === 123) {
    eachJsonDocument(bytes, file, result, (doc, r) => decodeTo(sink, doc, file, result, raw ? r : undefined), budget);
    return;
  }
  const text = bytes.toString('utf8');
  // A byte-order mark is not content (TextDecoder drops it too).
  loadTextTo(sink, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, file, result, budget);
}

/** Parses one file's bytes (UTF-8) into `cfg` (see `loadBytesTo`). */
export function loadBytes(cfg: DeclarativeConfig, bytes: Buffer, file: string, result: ValidationResult): void {
  loadBytesTo(configSink(cfg), bytes, file, result, false, undefined);
}

async function walk(root: string, dir: string, ignore: IndexIgnore, files: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  await ignore.addFrom(root, dir, entries.some((e) => e.name === '.indexignore'));
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = path.join(dir, e.name);
    const rel = path.relative(root, full);
    if (e.name === '.indexignore') continue;
    if (ignore.ignores(rel, e.isDirectory())) continue;
    if (e.isDirectory()) await walk(root, full, ignore, files);
    else if (e.isFile()) files.push(full);
  }
}

/** Every file under `root`, sorted, after `.indexignore` rules: opm reads them all. */
export async function listCatalogFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  await walk(root, root, new IndexIgnore(), files);
  return files;
}

/** The text of `buf`, or undefined when it is not UTF-8 (a binary file). */
const NOT_UTF8 = 'file is not UTF-8 text (opm: "yaml: invalid leading UTF-8 octet"); a file that is not part of the catalog belongs in .indexignore';
/** Files above this size are read in chunks when they are JSON (catalog.json of a whole index: tens of MB). */
const STREAM_FROM_BYTES = 4 * 1024 * 1024;
/**
 * Each chunk's documents are parsed and handed on in one synchronous stretch between two reads,
 * and the peak grew with the chunk: at 1 MiB (about 60 records of real bundles) unpacking the
 * catalog-scale bench's three catalogs (one 68 MB file each) in one process peaked at 121 MiB RSS,
 * at 128 KiB at 104 (medians of six, the kernel's high-water mark; a diagnostic, not a stored
 * bench), for about 1% more CPU; 64 KiB gave the same peak for 8% more. Why is not established:
 * the same slices of a file read whole, the event loop turning between them, did not lower it.
 */
const CHUNK_BYTES = 128 * 1024;

/** More bytes were read from a file than it may give (its size may have said less: it grew, or is not what it says). */
class ReadPastBound extends Error {}

/**
 * The bytes of an open file in chunks, from its start, at most `max` of them: past that it throws
 * ReadPastBound, having read one byte more. A chunk is valid until the next is asked for. Two
 * buffers take turns: the next chunk is read while the caller works on this one (read one after
 * the other, the thread waited on each read).
 */
async function* fileChunks(fh: FileHandle, max: number): AsyncGenerator<Buffer> {
  let [current, spare] = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
  let position = 0;
  const readNext = (buf: Buffer): ReturnType<FileHandle['read']> => fh.read(buf, 0, Math.min(CHUNK_BYTES, max + 1 - position), position);
  let next = readNext(current);
  try {
    for (;;) {
      const { bytesRead } = await next;
      if (bytesRead === 0) return;
      position += bytesRead;
      if (position > max) throw new ReadPastBound();
      const chunk = current.subarray(0, bytesRead);
      [current, spare] = [spare, current];
      next = readNext(current);
      yield chunk;
    }
  } finally {
    await next.catch(() => undefined); // a read still under way when the caller stopped
  }
}

/** All of an open file's bytes, or ReadPastBound past `max` (reading one byte more); `size` (its stat) is only a first guess. */
async function readAtMost(fh: FileHandle, size: number, max: number): Promise<Buffer> {
  let buf = Buffer.allocUnsafe(Math.min(size, max) + 1);
  let n = 0;
  for (;;) {
    if (n === buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(Math.max(2 * buf.length, 64 * 1024), max + 1));
      buf.copy(grown, 0, 0, n);
      buf = grown;
    }
    const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
    if (bytesRead === 0) return buf.subarray(0, n);
    n += bytesRead;
    if (n > max) throw new ReadPastBound();
  }
}

/** How many bytes at the end of `buf` start a UTF-8 character that goes on in the next chunk. */
function openUtf8Tail(buf: Buffer): number {
  let k = 0; // continuation bytes at the end
  while (k < 3 && k < buf.length && ((buf[buf.length - 1 - k] ?? 0) & 0xc0) === 0x80) k++;
  const lead = buf[buf.length - 1 - k];
  if (lead === undefined || lead < 0xc0) return 0;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return size > k + 1 ? k + 1 : 0;
}

/** Whether the file is UTF-8 throughout, read in chunks (a character may span two). */
async function isUtf8File(fh: FileHandle, max: number): Promise<boolean> {
  let carry = Buffer.alloc(0);
  for await (const chunk of fileChunks(fh, max)) {
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const open = openUtf8Tail(bytes);
    if (!isUtf8(bytes.subarray(0, bytes.length - open))) return false;
    carry = Buffer.from(bytes.subarray(bytes.length - open));
  }
  return carry.length === 0 || isUtf8(carry);
}

/**
 * Loads a large JSON file in chunks, each document added as it is split, so neither the file
 * nor a string of it is held: it is read once to check it is UTF-8 (as a whole file is checked
 * before anything of it is taken) and once to load it, each time at most `max` bytes (else
 * ReadPastBound). The bytes loaded (0 when it is not UTF-8), or undefined when the file is not
 * JSON (YAML is read whole).
 */
async function streamJsonFile(sink: RecordSink, fh: FileHandle, file: string, result: ValidationResult, max: number, budget: ParseBudget): Promise<number | undefined> {
  const chunks = fileChunks(fh, max);
  const first = await chunks.next();
  await chunks.return(undefined);
  if (first.done === true || firstAsciiContent(first.value) !== 123) return undefined;
  if (!(await isUtf8File(fh, max))) {
    result.error('fbc.parse', NOT_UTF8, { file });
    return 0;
  }
  const splitter = new JsonDocumentSplitter(file, result, (doc, raw) => decodeTo(sink, doc, file, result, raw), budget);
  let loaded = 0;
  for await (const chunk of fileChunks(fh, max)) {
    loaded += chunk.length;
    splitter.push(chunk);
  }
  splitter.end();
  return loaded;
}

/** Loads every catalog file under `root`. Never throws for bad content: read `result`. */
export async function loadFbcDir(root: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const cfg = emptyDeclarativeConfig();
  const { result, files } = await scanFbcDir(root, configSink(cfg), opts);
  return { config: cfg, result, files };
}

/**
 * Reads every catalog file under `root` (a directory or one file) and hands each record to
 * `sink`, with its text and byte range when it is a JSON document (see `RecordSink`). Never
 * throws for bad content: read `result`. Reads only regular files (a device, a FIFO, a socket is
 * a problem, unread), and never more bytes than the limits, whatever a file's size says: each
 * file at most `maxFileBytes`, all together at most `maxCatalogBytes`; past that the catalog is
 * refused (a problem) and the files after it are not read. Nor more than the bytes may parse
 * into (parse-budget.ts): past one item per BYTES_PER_ITEM bytes of that bound, or
 * MAX_LOAD_PROBLEMS problems, the catalog is refused the same way.
 */
export async function scanFbcDir(root: string, sink: RecordSink, opts: LoadOptions = {}): Promise<{ result: ValidationResult; files: number }> {
  // A per-file bound given above the catalog's raises it: one file that large is a catalog that large.
  const limits = { file: opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES, catalog: Math.max(opts.maxCatalogBytes ?? DEFAULT_MAX_CATALOG_BYTES, opts.maxFileBytes ?? 0) };
  const budget = new ParseBudget(limits.catalog);
  const result = new BudgetedResult(`catalog ${root}`, budget);
  let st;
  try {
    st = await stat(root);
  } catch (err) {
    throw new BinnacleError('input', 'CATALOG_NOT_FOUND', `${root}: cannot read catalog: ${err instanceof Error ? err.message : String(err)}`);
  }
  const files = st.isDirectory() ? await listCatalogFiles(root) : [root];
  let total = 0;
  try {
    for (const file of files) {
      const read = await loadCatalogFile(sink, file, result, limits, total, budget);
      if (read === undefined) break; // over the catalog's bound: refused, the rest unread
      total += read;
    }
  } catch (err) {
    if (!(err instanceof OverBudget)) throw err; // reported: the catalog is refused, the rest unread
  }
  budget.close(); // what the caller adds to the result later is not the loader's
  return { result, files: files.length };
}


function notRegular(st: Stats, file: string, result: ValidationResult): void {
  result.error('fbc.not-regular-file', `is ${fileKindOf(st)}, not a regular file: only regular files are read as catalog files`, { file });
}

/** The problems after which the loader stops reading a catalog: what it answers then is part of it. */
const STOPPED_READING: ReadonlySet<string> = new Set(['fbc.catalog-too-large', 'fbc.too-many-values', 'fbc.too-many-problems']);

/** Whether the loader stopped before the end of the catalog (its result says why). */
export function readInPart(result: ValidationResult): boolean {
  return result.all().some((p) => STOPPED_READING.has(p.rule));
}

function catalogTooLarge(limit: number, file: string, result: ValidationResult): void {
  result.error(
    'fbc.catalog-too-large',
    `the catalog's files hold more than ${limit} bytes together, over the limit for one catalog (it is held whole in memory while it is loaded and served); this file and any after it were not loaded: split the catalog into smaller catalogs`,
    { file },
  );
}

/**
 * Loads one file of a catalog of which `total` bytes were read before it; the bytes it read, or
 * undefined when the catalog is over its bound (reported). A problem of the file's own (not a
 * regular file, too large, not UTF-8) is reported and counts what was read of it.
 */
async function loadCatalogFile(sink: RecordSink, file: string, result: ValidationResult, limits: { file: number; catalog: number }, total: number, budget: ParseBudget): Promise<number | undefined> {
  const before = await stat(file);
  if (!before.isFile()) {
    notRegular(before, file, result);
    return 0;
  }
  // Opened without waiting (a FIFO put here since the stat would hold open until a writer came), then checked again.
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) {
      notRegular(st, file, result);
      return 0;
    }
    if (st.size > limits.file) {
      result.error('fbc.file-too-large', tooLargeMessage(st.size, limits.file), { file });
      return 0;
    }
    const left = limits.catalog - total;
    if (st.size > left) {
      catalogTooLarge(limits.catalog, file, result);
      return undefined;
    }
    const max = Math.min(limits.file, left);
    try {
      const streamed = st.size > STREAM_FROM_BYTES ? await streamJsonFile(sink, fh, file, result, max, budget) : undefined;
      if (streamed !== undefined) return streamed;
      const bytes = await readAtMost(fh, st.size, max);
      if (!isUtf8(bytes)) result.error('fbc.parse', NOT_UTF8, { file });
      else loadBytesTo(sink, bytes, file, result, true, budget);
      return bytes.length;
    } catch (err) {
      if (!(err instanceof ReadPastBound)) throw err;
      if (max < limits.file) {
        catalogTooLarge(limits.catalog, file, result);
        return undefined;
      }
      result.error('fbc.file-too-large', `more than ${limits.file} bytes were read from the file (its size said ${st.size}), over the limit for one catalog file`, { file });
      return max;
    }
  } finally {
    await fh.close();
  }
}

/** Loads a stream (e.g. stdin) of JSON or YAML documents; refuses more than the limit. */
export async function loadFbcStream(stream: Readable, name: string, opts: LoadOptions = {}): Promise<LoadResult> {
  const limit = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const budget = new ParseBudget(limit);
  const result = new BudgetedResult(`catalog ${name}`, budget);
  const cfg = emptyDeclarativeConfig();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > limit) {
      stream.destroy();
      result.error('fbc.file-too-large', tooLargeMessage(size, limit), { file: name });
      return { config: cfg, result, files: 1 };
    }
    chunks.push(buf);
  }
  try {
    loadBytesTo(configSink(cfg), Buffer.concat(chunks), name, result, false, budget);
  } catch (err) {
    if (!(err instanceof OverBudget)) throw err; // reported: the rest unread
  }
  budget.close();
  return { config: cfg, result, files: 1 };
}

/** Loads and throws a `ValidationError` (exit 1, tree of problems) when anything is wrong. */
export async function readFbcDir(root: string, opts: LoadOptions = {}): Promise<DeclarativeConfig> {
  const loaded = await loadFbcDir(root, opts);
  if (!loaded.result.ok) throw new ValidationError(loaded.result);
  return loaded.config;
}
