/**
 * A bound on what a catalog's bytes parse into, beside the bound on the bytes (load.ts). A
 * catalog's author chooses its shape, and memory follows the shape, not the bytes: measured on
 * Node 24 (loadFbcDir, V8 heap after GC, holding the result), real catalogs take 0.86 bytes of
 * heap a byte and hold one item (below) per 83 bytes (the operatorhub-2021 corpus rendered, 24 MB,
 * and bench/catalog-scale's copies of it of 2,820 and 4,700 bundles, 68 and 113 MB: 82.7 bytes an
 * item in each, 70 bytes of heap an item), while 20 MB shaped to be small items take many
 * times their size: an array of `{}` 21 bytes of heap a byte (427 MiB, peak RSS 1 GiB), of `[]`
 * 13, arrays nested 250 deep 27, one-key objects or small numbers 4 to 5, tiny records 5, and
 * documents `{}` (each a problem) 174 (3.5 GiB).
 *
 * The item: one per object or array, one per member of an object, one per item of an array. Each
 * costs heap whatever its bytes (8 to 32 bytes in those shapes, 70 in real records, which carry
 * their strings), so a catalog may hold at most one item per BYTES_PER_ITEM bytes of its byte
 * bound: 8.4 million at the default 512 MiB, six times the 1.37 million of the OperatorHub-size
 * catalog (4,700 bundles). At that bound the heaviest shape measured takes no more than a real
 * catalog at the byte bound (about 440 MiB); the real ratio (83) is rounded down to 64 for
 * catalogs denser than those measured (compact JSON, fewer descriptions). Raising the byte bound
 * (--max-file-size) raises it in proportion.
 *
 * Items are counted before the heap is spent: a document over PRESCAN_BYTES is counted on its
 * bytes (JSON) or its text (YAML, an upper bound) before it is parsed, a smaller one on its value
 * as its nesting is checked (at most one small document's worth spent past the bound). Problems
 * are bounded too (each takes about 500 bytes of heap and a line of a ClusterCatalog's condition):
 * past MAX_LOAD_PROBLEMS the catalog is refused.
 */
import { ValidationResult, type Problem } from '../util/errors.js';

/** Bytes of a catalog's byte bound per item it may parse into (see the module comment). */
export const BYTES_PER_ITEM = 64;

/** Problems a catalog's loading may report before it is refused. */
export const MAX_LOAD_PROBLEMS = 1000;

/** Documents larger than this (bytes) are counted before they are parsed. */
export const PRESCAN_BYTES = 256 * 1024;

/**
 * What the `yaml` package's syntax tree takes per node, in items: it reads a YAML document
 * js-yaml declines (a syntax error, an anchor), at about 207 bytes of heap a node (a flow
 * sequence of `{}`) against 32 for JSON.parse's value.
 */
export const YAML_PACKAGE_WEIGHT = 8;

/** The items a catalog whose bytes are bounded by `catalogBytes` may parse into. */
export function itemLimitFor(catalogBytes: number): number {
  return Math.floor(catalogBytes / BYTES_PER_ITEM);
}

/**
 * The items of the JSON text in `bytes[start, end)`, counted on its bytes: objects and arrays
 * (`{`, `[`), and their members and items (a comma between two, one more in a container that is
 * not empty). Exactly what `treeShape` counts for valid JSON without repeated keys.
 */
export function jsonItems(bytes: Buffer, start = 0, end = bytes.length): number {
  let n = 0;
  let inString = false;
  let opened = false;
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 32 || c === 10 || c === 13 || c === 9) continue;
    if (opened) {
      opened = false;
      if (c !== 125 && c !== 93) n++; // the first member or item
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      n++;
      opened = true;
    } else if (c === 44) n++;
  }
  return n;
}

/**
 * At least the items of a YAML text, counted on its characters without reading it: every line,
 * flow indicator (`,` `[` `{`) and block indicator (`- `, `: `, `? `) may start a node, and a node
 * is at most two items (itself, and its place in what holds it: `- - - x` nests three sequences
 * on one line). Quoted and block scalars are not told apart, so it overcounts (about 4 times on
 * the corpus in YAML).
 */
export function yamlItemsAtMost(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 44 || c === 91 || c === 123) n++;
    else if (c === 45 || c === 58 || c === 63) {
      const next = text.charCodeAt(i + 1);
      if (next === 32 || next === 10 || next === 9 || Number.isNaN(next)) n++;
    }
  }
  return 2 * n + 1;
}

/**
 * The items a value whose nodes may be shared (a YAML document's aliases) comes to once written
 * out, as the catalog store writes and serves it: a shared node counted each time it is reached,
 * and each string (keys too) one item per BYTES_PER_ITEM of its length, so that 100 aliases of a
 * 100 KB string cost what 10 MB of text would. Counting stops once past `atMost`.
 */
export function expandedItems(value: unknown, atMost: number): number {
  const cost = (v: unknown): number => (typeof v === 'string' ? Math.ceil(v.length / BYTES_PER_ITEM) : 0);
  let n = cost(value);
  const nodes: unknown[] = [value];
  for (let node = nodes.pop(); node !== undefined && n <= atMost; node = nodes.pop()) {
    if (typeof node !== 'object' || node === null) continue;
    n++;
    if (Array.isArray(node)) {
      for (const child of node as unknown[]) {
        n += 1 + cost(child);
        nodes.push(child);
      }
    } else {
      for (const [key, child] of Object.entries(node)) {
        n += 1 + cost(key) + cost(child);
        nodes.push(child);
      }
    }
  }
  return n;
}

/** Thrown inside the loader when a catalog goes over its budget: it stops, and the catalog is refused. */
export class OverBudget extends Error {}

/** The items and problems one catalog's loading has taken, against its bounds. */
export class ParseBudget {
  items = 0;
  problems = 0;
  /** Set once the catalog is refused: the refusal itself, and anything after, is not counted. */
  spent = false;

  constructor(
    /** The catalog's byte bound, which the item limit derives from (named in the problem). */
    readonly catalogBytes: number,
    readonly maxItems: number = itemLimitFor(catalogBytes),
    readonly maxProblems: number = MAX_LOAD_PROBLEMS,
  ) {}

  /** Ends the count: the loading is over (what is added to its result after is not counted). */
  close(): void {
    this.spent = true;
  }

  /** Refuses (throws OverBudget) when `items` more would be over the bound; takes nothing. */
  check(items: number, file: string, result: ValidationResult): void {
    if (this.items + items > this.maxItems) this.refuse(file, result, this.items + items);
  }

  /** Takes `items` (a document parsed), or refuses when that is over the bound. */
  charge(items: number, file: string, result: ValidationResult): void {
    this.check(items, file, result);
    this.items += items;
  }

  private refuse(file: string, result: ValidationResult, items: number): never {
    this.spent = true;
    result.error(
      'fbc.too-many-values',
      `the catalog's documents parse into more than ${this.maxItems} values (objects, arrays, their members and items; ${items} with this document), over the limit for one catalog (one per ${BYTES_PER_ITEM} bytes of its ${this.catalogBytes}-byte bound: it is held whole in memory, and real catalogs hold one per 83 bytes); this document and any after it were not loaded`,
      { file },
    );
    throw new OverBudget();
  }

  /** Counts a problem reported; past the bound, reports that and refuses. */
  problem(file: string | undefined, result: ValidationResult): void {
    if (this.spent) return;
    if (++this.problems <= this.maxProblems) return;
    this.spent = true;
    result.error('fbc.too-many-problems', `more than ${this.maxProblems} problems in the catalog; the documents after this problem's and any file after its file were not loaded`, file === undefined ? undefined : { file });
    throw new OverBudget();
  }
}

/**
 * A ValidationResult that counts every problem added to it or to its children against `budget`
 * (a problem past the bound throws OverBudget from `add`).
 */
export class BudgetedResult extends ValidationResult {
  constructor(
    subject: string,
    private readonly budget: ParseBudget,
    private readonly root?: ValidationResult,
  ) {
    super(subject);
  }

  override add(p: Problem): this {
    super.add(p);
    this.budget.problem(p.file, this.root ?? this);
    return this;
  }

  override child(subject: string): ValidationResult {
    const c = new BudgetedResult(subject, this.budget, this.root ?? this);
    this.children.push(c);
    return c;
  }
}
