/**
 * The values of YAML texts with aliases as Go reads them (gopkg.in/yaml v2 and v3, which Helm,
 * kubectl and opm read with): the rule, and a parsed document's value under it. Readers use it
 * through util/yaml.ts (`yamlValue`, `readYaml`, `readYamlAll`), which passes the `yaml` package
 * it loads on first use; this module imports no runtime code but errors.ts, so the console's page
 * (bundled for the browser, where util/yaml.ts cannot go) reads YAML by the same rule, passing
 * the `yaml` package it bundles. See util/yaml.ts for why the `yaml` package's own `toJS` and
 * `parse` are not used.
 */
import type { Alias, Document, DocumentOptions, Node as YamlNode, ParseOptions, SchemaOptions } from 'yaml';
import { InputError } from './errors.js';

/** What this module needs of the `yaml` package: its node tests. */
export type YamlIdentity = Pick<typeof import('yaml'), 'isAlias' | 'isCollection' | 'isPair' | 'isNode'>;

/** The same, and its parsers. */
export type YamlParser = YamlIdentity & Pick<typeof import('yaml'), 'parseDocument' | 'parseAllDocuments'>;

export type YamlReadOptions = DocumentOptions & ParseOptions & SchemaOptions;

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
function resolveAliases(doc: Document, source: string, y: YamlIdentity): Map<Alias, YamlNode> {
  const { isAlias, isCollection, isPair, isNode } = y;
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

/** The YamlError (YAML_INVALID) of the first syntax error of `doc`, naming `source`, the line and `field`. */
function syntaxError(doc: Document, source: string, field?: string): YamlError | undefined {
  const e = doc.errors[0];
  if (e === undefined) return undefined;
  const message = (e.message.split('\n')[0] ?? e.code).replace(/ at line \d+, column \d+:?$/, '');
  const at = e.linePos?.[0];
  return new YamlError('YAML_INVALID', source, `not valid YAML${at === undefined ? '' : ` (line ${at.line}, column ${at.col})`}: ${message}`, { ...(field === undefined ? {} : { field }), cause: e });
}

/** The value of the one document of `text` (see readYaml in util/yaml.ts), parsed with `y`. */
export function readOne(text: string, source: string, y: YamlParser, options?: YamlReadOptions): unknown {
  const doc = y.parseDocument(text, options);
  const err = syntaxError(doc, source);
  if (err !== undefined) throw err;
  return documentValue(doc, source, y);
}

/** Every document's value (see readYamlAll in util/yaml.ts), parsed with `y`. */
export function readAll(text: string, source: string, y: YamlParser, options?: YamlReadOptions): unknown[] {
  return y.parseAllDocuments(text, options).map((doc, i) => {
    const err = syntaxError(doc, source, `document ${i + 1}`);
    if (err !== undefined) throw err;
    return documentValue(doc, `${source}: document ${i + 1}`, y);
  });
}

/** Throws the YamlAliasError documentValue would throw for `doc`, without making its value. */
export function checkAliases(doc: Document, source: string, y: YamlIdentity): void {
  resolveAliases(doc, source, y);
}

/**
 * The plain value of a parsed document (null when empty), its aliases checked by Go's rule (see
 * resolveAliases) and resolved in one pass; `y` is the `yaml` package (its node tests); `source` names the text in a YamlAliasError. Syntax
 * errors (`doc.errors`) are the caller's to report first. Aliased nodes become one shared value,
 * as with the `yaml` package.
 */
export function documentValue(doc: Document, source: string, y: YamlIdentity): unknown {
  const targets = resolveAliases(doc, source, y);
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
