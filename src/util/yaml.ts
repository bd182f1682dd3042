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
 * Why two libraries stay (issue 44 §4 asked for one): js-yaml is here for speed alone. Every
 * value is the same without it (util/yaml.test.ts pins both readers to YAML 1.2 where YAML 1.1
 * differs). bench/yaml.ts measures it: every YAML file of the operator and chart corpora (140 MB)
 * through the bundle and catalog reader, the same values on both sides, read 7.6 times as fast
 * with js-yaml, in half the memory (December 2026; bench/results/yaml/ and README.md's table). js-yaml is also
 * @kubernetes/client-node's own reader of a kubeconfig file (kube/kube-config-bundle.ts), so it
 * stays installed whatever this module does.
 *
 * The `yaml` package itself is loaded on first use (`yamlPackage()`), so a command that reads
 * only JSON, or only plain YAML, never pays for it at start-up. `BINNACLE_FAST_YAML=0` turns the
 * fast path off, to compare.
 *
 * Depth: a text nested deeper than MAX_NESTING levels (util/nesting.ts says why there is a limit)
 * is refused by both readers before anything is built, as a syntax error at the place it goes too
 * deep: js-yaml stops there itself, and `yamlPackage()`'s parsers check first.
 *
 * Aliases: every reader turns a parsed document into values with `yamlValue` (or `readYaml` /
 * `readYamlAll`, which parse too), never with the `yaml` package's own `toJS`/`parse`. Those stop
 * at 100 aliases by default (any count is a guess: Helm's rendered manifests can have thousands),
 * and resolve each alias by scanning every anchor and alias before it (30,000 aliases: 8 s).
 * `yamlValue` applies the rule of Go's YAML instead (gopkg.in/yaml v2 and v3, which Helm and
 * kubectl read with), so what they accept is read and an alias bomb is refused, naming the source,
 * before anything is expanded; and it resolves each alias once, in one pass. The rule itself is in
 * yaml-values.ts, which imports no runtime code, so the console's page (built for the browser,
 * where this module cannot go) reads YAML by it too.
 */
import { createRequire } from 'node:module';
import jsyaml from 'js-yaml';
import type { Document } from 'yaml';
import { MAX_NESTING } from './nesting.js';
import { checkAliases, documentValue, readAll, readOne, type YamlReadOptions } from './yaml-values.js';

type YamlPackage = typeof import('yaml');

let yamlModule: YamlPackage | undefined;

/**
 * The `yaml` package, loaded on first use, with its two parsers guarded against nesting deeper
 * than MAX_NESTING (see yamlTooDeep): such a text is not composed at all, and its document
 * carries a RESOURCE_EXHAUSTION error at the place it goes too deep, which every reader reports
 * like any syntax error (naming its file and line).
 */
export function yamlPackage(): YamlPackage {
  if (yamlModule !== undefined) return yamlModule;
  const y = createRequire(import.meta.url)('yaml') as YamlPackage;
  const refused = (text: string, offset: number, options?: YamlReadOptions): Document.Parsed => {
    // A caller's line counter learns the lines as the parser would have told it.
    const lines = (options as { lineCounter?: { addNewLine: (offset: number) => number } } | undefined)?.lineCounter;
    if (lines !== undefined) for (let i = 0; i !== -1; i = text.indexOf('\n', i) + 1 || -1) lines.addNewLine(i);
    const doc = new y.Document(null) as Document.Parsed;
    const error = new y.YAMLParseError([offset, offset + 1], 'RESOURCE_EXHAUSTION', `nested deeper than ${MAX_NESTING} levels`);
    error.linePos = [linePos(text, offset)];
    error.message = `${error.message} at line ${error.linePos[0].line}, column ${error.linePos[0].col}`;
    doc.errors.push(error);
    return doc;
  };
  const parseDocument = ((text: string, options?: YamlReadOptions) => {
    const at = yamlTooDeep(text, y);
    return at === undefined ? y.parseDocument(text, options) : refused(text, at, options);
  }) as YamlPackage['parseDocument'];
  const parseAllDocuments = ((text: string, options?: YamlReadOptions) => {
    const at = yamlTooDeep(text, y);
    return at === undefined ? y.parseAllDocuments(text, options) : [refused(text, at, options)];
  }) as YamlPackage['parseAllDocuments'];
  yamlModule = { ...y, parseDocument, parseAllDocuments };
  return yamlModule;
}


/** Line and column (from 1) of `offset` in `text`. */
function linePos(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, col: offset - start + 1 };
}

/**
 * The offset where `text` nests deeper than MAX_NESTING, or undefined when it does not. js-yaml
 * answers fast (it stops at the limit, and its parse is iterative up to it); when it refuses the
 * text for another reason first, the `yaml` package's syntax tree (built without recursion) is
 * walked with a stack of its own.
 */
function yamlTooDeep(text: string, y: YamlPackage): number | undefined {
  try {
    jsyaml.loadAll(text, () => undefined, { schema: jsyaml.FAILSAFE_SCHEMA, maxDepth: JSYAML_MAX_DEPTH, json: true } as JsYamlOptions);
    return undefined;
  } catch (e) {
    if (e instanceof jsyaml.YAMLException && e.reason.startsWith('nesting exceeded maxDepth')) return e.mark.position;
  }
  for (const token of new y.Parser().parse(text)) {
    const open: [CstToken, number][] = [[token, 0]];
    for (let next = open.pop(); next !== undefined; next = open.pop()) {
      const [t, depth] = next;
      if (depth > MAX_NESTING + 1) return t.offset;
      if (Array.isArray(t.items)) {
        for (const item of t.items as { key?: unknown; value?: unknown }[]) {
          for (const child of [item.key, item.value]) if (isCstToken(child)) open.push([child, depth + 1]);
        }
      } else if (isCstToken(t.value)) open.push([t.value, depth + 1]);
    }
  }
  return undefined;
}

type CstToken = { type: string; offset: number; items?: unknown; value?: unknown };

function isCstToken(v: unknown): v is CstToken {
  return typeof v === 'object' && v !== null && typeof (v as { offset?: unknown }).offset === 'number';
}

/** js-yaml's depth for MAX_NESTING collections: it counts the document's node and the innermost scalar too. */
const JSYAML_MAX_DEPTH = MAX_NESTING + 2;

/** js-yaml's load options; `maxDepth` (js-yaml 4.3) is not in @types/js-yaml yet. */
type JsYamlOptions = jsyaml.LoadOptions & { maxDepth?: number };


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
  if (process.env.BINNACLE_FAST_YAML === '0') return undefined;
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
    jsyaml.loadAll(text, (d) => docs.push(d ?? null), { schema: SCHEMA, maxDepth: JSYAML_MAX_DEPTH, ...(listener === undefined ? {} : { listener }) } as JsYamlOptions);
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

export { YamlAliasError, YamlError, type YamlReadOptions } from './yaml-values.js';

/** Throws the YamlAliasError yamlValue would throw for `doc`, without making its value. */
export function checkYamlAliases(doc: Document, source: string): void {
  checkAliases(doc, source, yamlPackage());
}

/**
 * The plain value of a parsed document (null when empty), its aliases checked by Go's rule and
 * resolved in one pass (see yaml-aliases.ts); `source` names the text in a YamlAliasError. Syntax
 * errors (`doc.errors`) are the caller's to report first. Aliased nodes become one shared value,
 * as with the `yaml` package.
 */
export function yamlValue(doc: Document, source: string): unknown {
  return documentValue(doc, source, yamlPackage());
}

/**
 * The value of the one YAML document in `text` (null when empty), as `yamlValue` reads it: a
 * YamlError YAML_INVALID naming `source` and the line for a syntax error, a YamlAliasError for
 * aliases that cannot be read.
 */
export function readYaml(text: string, source: string, options?: YamlReadOptions): unknown {
  return readOne(text, source, yamlPackage(), options);
}

/** Every document of `text` (an empty one is null), as readYaml reads one; errors name `source` and the document (from 1). */
export function readYamlAll(text: string, source: string, options?: YamlReadOptions): unknown[] {
  return readAll(text, source, yamlPackage(), options);
}
