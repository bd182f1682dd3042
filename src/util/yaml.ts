/**
 * Reading YAML fast. The `yaml` package is exact (it keeps every position and error, and
 * Binnacle's messages come from it) but slow: about 3 MB/s for Kubernetes manifests. js-yaml
 * builds plain values directly, about ten times faster. So readers try js-yaml first, with a
 * schema that resolves plain scalars exactly as the `yaml` package's YAML 1.2 core schema does
 * (its default), and use the `yaml` package only when js-yaml refuses a text (a syntax error, a
 * duplicate key, a tab) or when the text has anchors (js-yaml shares aliased nodes and has no
 * alias limit; the `yaml` package's `maxAliasCount` is the guard against alias bombs). Whatever
 * js-yaml refuses is therefore decided, and worded, by the `yaml` package as before.
 *
 * One difference is left on purpose: a null key (`~: a`) or a collection as a key (`[a, b]: c`)
 * becomes "null" or "a,b" here, "" or "[ a, b ]" in the `yaml` package. Go's YAML-to-JSON (what
 * opm and the Kubernetes API read with) refuses such keys altogether, so no manifest or catalog
 * that works has one; looking for them in every text cost more (0.6 s on the corpus) than the
 * difference is worth.
 *
 * The `yaml` package itself is loaded on first use (`yamlPackage()`), so a command that reads
 * only JSON, or only plain YAML, never pays for it at start-up.
 *
 * Aliases: every reader turns a parsed document into values with `yamlValue` (or `readYaml` /
 * `readYamlAll`, which parse too), never with the `yaml` package's own `toJS`/`parse`. Those stop
 * at 100 aliases by default (any count is a guess: Helm's rendered manifests can have thousands),
 * and resolve each alias by scanning every anchor and alias before it (30,000 aliases: 8 s).
 * `yamlValue` applies the rule of Go's YAML instead (gopkg.in/yaml v2 and v3, which Helm and
 * kubectl read with), so what they accept is read and an alias bomb is refused, naming the source,
 * before anything is expanded; and it resolves each alias once, in one pass.
 */
import { createRequire } from 'node:module';
import jsyaml from 'js-yaml';
import type { Alias, Document, DocumentOptions, Node as YamlNode, ParseOptions, SchemaOptions } from 'yaml';
import { InputError } from './errors.js';

type YamlPackage = typeof import('yaml');

let yamlModule: YamlPackage | undefined;

/** The `yaml` package, loaded on first use. */
export function yamlPackage(): YamlPackage {
  yamlModule ??= createRequire(import.meta.url)('yaml') as YamlPackage;
  return yamlModule;
}


const OCT = /^0o[0-7]+$/;
const DEC = /^[-+]?[0-9]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;
const NAN_INF = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** Could `s` be a number? (Its first character is a digit, a sign or a dot.) Most scalars are words. */
function numberish(s: string): boolean {
  const c = s.charCodeAt(0);
  return (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
}

/**
 * The `yaml` package's core schema (yaml/dist/schema/core and common/null), one js-yaml type per
 * tag (js-yaml keeps only the last type of a tag), tried in the same order. Each looks at the
 * first character before any pattern: every plain scalar of a text is tried against all four.
 */
const CORE_SCALARS = [
  new jsyaml.Type('tag:yaml.org,2002:null', {
    kind: 'scalar',
    resolve: (s: string) => s === '' || s === '~' || s === 'null' || s === 'Null' || s === 'NULL',
    construct: () => null,
  }),
  new jsyaml.Type('tag:yaml.org,2002:bool', {
    kind: 'scalar',
    resolve: (s: string) => (s.length === 4 || s.length === 5) && /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(s),
    construct: (s: string) => s[0] === 't' || s[0] === 'T',
  }),
  new jsyaml.Type('tag:yaml.org,2002:int', {
    kind: 'scalar',
    resolve: (s: string) => numberish(s) && (DEC.test(s) || OCT.test(s) || HEX.test(s)),
    construct: (s: string) => (OCT.test(s) ? parseInt(s.substring(2), 8) : HEX.test(s) ? parseInt(s.substring(2), 16) : parseInt(s, 10)),
  }),
  new jsyaml.Type('tag:yaml.org,2002:float', {
    kind: 'scalar',
    resolve: (s: string) => numberish(s) && (FLOAT.test(s) || EXP.test(s) || NAN_INF.test(s)),
    construct: (s: string) => (NAN_INF.test(s) ? (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY) : parseFloat(s)),
  }),
];

const SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: CORE_SCALARS });

/**
 * Every document of `text` as plain values (an empty document is `null`), or undefined when the
 * fast reader declines the text: the caller then reads it with the `yaml` package.
 */
export function fastYamlDocuments(text: string): unknown[] | undefined {
  // Off for now: with js-yaml reading first, the FBC fuzz test (seed 20261123) crashes its
  // process with V8's "RegExpCompiler Allocation failed" out of memory, reached through the
  // values it builds; until that is found, the `yaml` package reads every text, as before.
  if (process.env.BINNACLE_FAST_YAML !== '1') return undefined;
  const docs: unknown[] = [];
  let anchored = false;
  // An alias needs an anchor, and an anchor needs a `&`: only then are nodes watched for one.
  const listener = text.includes('&')
    ? (event: jsyaml.EventType, state: jsyaml.State): void => {
        // js-yaml's State has `anchor` (the node's `&name`, else null) though its types omit it.
        const anchor = (state as jsyaml.State & { anchor?: unknown }).anchor;
        if (event === 'close' && anchor !== null && anchor !== undefined) anchored = true;
      }
    : undefined;
  try {
    jsyaml.loadAll(text, (d) => docs.push(d ?? null), listener === undefined ? { schema: SCHEMA } : { schema: SCHEMA, listener });
  } catch {
    return undefined;
  }
  return anchored ? undefined : docs;
}

/** The single document of `text` (null when empty), or undefined when the fast reader declines it. */
export function fastYamlDocument(text: string): { value: unknown } | undefined {
  const docs = fastYamlDocuments(text);
  if (docs === undefined || docs.length > 1) return undefined;
  return { value: docs[0] ?? null };
}

/** A YAML text that cannot be read (YAML_INVALID: a syntax error); `file` is the source it came from. */
export class YamlError extends InputError {
  /** The reason alone (the message is `source: reason`, or `source: field: reason`). */
  readonly reason: string;
  constructor(code: string, source: string, reason: string, options?: { field?: string; cause?: unknown }) {
    super(code, reason, { file: source, ...options });
    this.reason = reason;
  }
}

/** A YAML text whose aliases cannot be read (YAML_ALIASES): an alias bomb, an alias without its anchor, or one inside its own anchor. */
export class YamlAliasError extends YamlError {
  constructor(source: string, reason: string) {
    super('YAML_ALIASES', source, reason);
  }
}

/**
 * gopkg.in/yaml's allowedAliasRatio: the share of decoded nodes that may come from alias
 * expansion, 99% up to 400,000 nodes, falling to 10% at 4,000,000.
 */
function allowedAliasRatio(decodes: number): number {
  if (decodes <= 400_000) return 0.99;
  if (decodes >= 4_000_000) return 0.1;
  return 0.99 - (0.89 * (decodes - 400_000)) / 3_600_000;
}

/**
 * Each alias of `doc` with the node it stands for, or a YamlAliasError. The rule is Go's (yaml v2
 * and v3 `decoder.unmarshal`): counting the nodes a decoder would visit, aliases expanded, a
 * document fails once more than 100 of them came through aliases, more than 1,000 in all, and the
 * share through aliases is above allowedAliasRatio. Go counts as it decodes; here each anchored
 * node's expanded size is kept, so an alias costs one step however large it expands, and the
 * check after each alias is the same as Go's at each node (within one expansion both counts grow
 * by one a node, so the share only rises). An alias resolves to the last node anchored with its
 * name before it, as in Go and the `yaml` package.
 */
function resolveAliases(doc: Document, source: string): Map<Alias, YamlNode> {
  const { isAlias, isCollection, isPair, isNode } = yamlPackage();
  const anchors = new Map<string, YamlNode>();
  const sizes = new Map<YamlNode, number>();
  const open = new Set<YamlNode>();
  const targets = new Map<Alias, YamlNode>();
  let decodes = 1; // the document node
  let viaAliases = 0;
  const bomb = (): YamlAliasError =>
    new YamlAliasError(
      source,
      `excessive YAML aliasing (an alias bomb?): its aliases expand to ${viaAliases.toLocaleString('en-US')} of ${decodes.toLocaleString('en-US')} nodes, ` +
        `more than the ${Math.round(allowedAliasRatio(decodes) * 100)}% Go's YAML (Helm, kubectl) accepts`,
    );
  const check = (): void => {
    if (viaAliases > 100 && decodes > 1000 && !(viaAliases / decodes <= allowedAliasRatio(decodes))) throw bomb();
  };
  // The expanded size of `v` (a node, a pair or a plain key), walked in document order.
  const walk = (v: unknown): number => {
    if (isPair(v)) return walk(v.key) + walk(v.value);
    if (!isNode(v)) return v === null || v === undefined ? 0 : 1;
    if (isAlias(v)) {
      const target = anchors.get(v.source);
      if (target === undefined) throw new YamlAliasError(source, `YAML alias *${v.source} has no anchor &${v.source} before it`);
      if (open.has(target)) throw new YamlAliasError(source, `YAML alias *${v.source} is inside the node its anchor &${v.source} names (it would contain itself)`);
      targets.set(v, target);
      const size = sizes.get(target) ?? 1;
      decodes += 1 + size;
      viaAliases += size;
      check();
      return 1 + size;
    }
    decodes++;
    check();
    const anchor = v.anchor;
    if (anchor !== undefined && anchor !== '') {
      anchors.set(anchor, v);
      open.add(v);
    }
    let size = 1;
    if (isCollection(v)) for (const item of v.items) size += walk(item);
    if (anchor !== undefined && anchor !== '') {
      open.delete(v);
      sizes.set(v, size);
    }
    return size;
  };
  walk(doc.contents);
  return targets;
}

/** Throws the YamlAliasError yamlValue would throw for `doc`, without making its value. */
export function checkYamlAliases(doc: Document, source: string): void {
  resolveAliases(doc, source);
}

/**
 * The plain value of a parsed document (null when empty), its aliases checked by Go's rule (see
 * resolveAliases) and resolved in one pass; `source` names the text in a YamlAliasError. Syntax
 * errors (`doc.errors`) are the caller's to report first. Aliased nodes become one shared value,
 * as with the `yaml` package.
 */
export function yamlValue(doc: Document, source: string): unknown {
  const targets = resolveAliases(doc, source);
  if (targets.size === 0) return doc.toJS({ maxAliasCount: -1 }) as unknown;
  // The `yaml` package resolves an alias by scanning every anchor and alias before it; each is
  // given its node (already found) for this conversion, the same one the scan would find.
  const patched: Alias[] = [];
  try {
    for (const [alias, target] of targets) {
      const scan = alias.resolve.bind(alias);
      Object.defineProperty(alias, 'resolve', {
        configurable: true,
        value: (d: Document, ctx?: { anchors?: Map<unknown, unknown> }) => (ctx?.anchors === undefined || ctx.anchors.has(target) ? target : scan(d, ctx as Parameters<Alias['resolve']>[1])),
      });
      patched.push(alias);
    }
    return doc.toJS({ maxAliasCount: -1 }) as unknown;
  } finally {
    for (const alias of patched) delete (alias as { resolve?: unknown }).resolve;
  }
}

export type YamlReadOptions = DocumentOptions & ParseOptions & SchemaOptions;

function syntaxError(doc: Document, source: string, field?: string): YamlError | undefined {
  const e = doc.errors[0];
  if (e === undefined) return undefined;
  const message = (e.message.split('\n')[0] ?? e.code).replace(/ at line \d+, column \d+:?$/, '');
  const at = e.linePos?.[0];
  return new YamlError('YAML_INVALID', source, `not valid YAML${at === undefined ? '' : ` (line ${at.line}, column ${at.col})`}: ${message}`, { ...(field === undefined ? {} : { field }), cause: e });
}

/**
 * The value of the one YAML document in `text` (null when empty), as `yamlValue` reads it: a
 * YamlError YAML_INVALID naming `source` and the line for a syntax error, a YamlAliasError for
 * aliases that cannot be read.
 */
export function readYaml(text: string, source: string, options?: YamlReadOptions): unknown {
  const doc = yamlPackage().parseDocument(text, options);
  const err = syntaxError(doc, source);
  if (err !== undefined) throw err;
  return yamlValue(doc, source);
}

/** Every document of `text` (an empty one is null), as readYaml reads one; errors name `source` and the document (from 1). */
export function readYamlAll(text: string, source: string, options?: YamlReadOptions): unknown[] {
  return yamlPackage()
    .parseAllDocuments(text, options)
    .map((doc, i) => {
      const err = syntaxError(doc, source, `document ${i + 1}`);
      if (err !== undefined) throw err;
      return yamlValue(doc, `${source}: document ${i + 1}`);
    });
}
