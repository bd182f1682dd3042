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
 * The `yaml` package itself is loaded on first use (`yamlPackage()`), so a command that reads
 * only JSON, or only plain YAML, never pays for it at start-up.
 */
import { createRequire } from 'node:module';
import jsyaml from 'js-yaml';

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

/**
 * The `yaml` package's core schema (yaml/dist/schema/core and common/null), one js-yaml type per
 * tag (js-yaml keeps only the last type of a tag), tried in the same order.
 */
const CORE_SCALARS = [
  new jsyaml.Type('tag:yaml.org,2002:null', { kind: 'scalar', resolve: (s: string) => /^(?:~|[Nn]ull|NULL)?$/.test(s), construct: () => null }),
  new jsyaml.Type('tag:yaml.org,2002:bool', {
    kind: 'scalar',
    resolve: (s: string) => /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(s),
    construct: (s: string) => s[0] === 't' || s[0] === 'T',
  }),
  new jsyaml.Type('tag:yaml.org,2002:int', {
    kind: 'scalar',
    resolve: (s: string) => OCT.test(s) || DEC.test(s) || HEX.test(s),
    construct: (s: string) => (OCT.test(s) ? parseInt(s.substring(2), 8) : HEX.test(s) ? parseInt(s.substring(2), 16) : parseInt(s, 10)),
  }),
  new jsyaml.Type('tag:yaml.org,2002:float', {
    kind: 'scalar',
    resolve: (s: string) => NAN_INF.test(s) || EXP.test(s) || FLOAT.test(s),
    construct: (s: string) => (NAN_INF.test(s) ? (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY) : parseFloat(s)),
  }),
];

const SCHEMA = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: CORE_SCALARS });

/**
 * Keys the two readers turn into different strings: a null key (`~:`, `null:`, an empty key; the
 * `yaml` package makes it "", js-yaml "null"), a collection as a key (`[a, b]:`, `{a: 1}:`,
 * `? ` keys). Roughly matched (a false match only costs speed); such texts take the exact path.
 */
const AWKWARD_KEY = /^[ \t]*(?:-[ \t]+)*(?:(?:~|null|Null|NULL)?[ \t]*:|\?)(?:[ \t]|$)|[}\]][ \t]*:(?:[ \t]|$)|[{,][ \t]*(?:~|null|Null|NULL)?[ \t]*:(?:[ \t]|$)/m;

/**
 * Every document of `text` as plain values (an empty document is `null`), or undefined when the
 * fast reader declines the text: the caller then reads it with the `yaml` package.
 */
export function fastYamlDocuments(text: string): unknown[] | undefined {
  if (AWKWARD_KEY.test(text)) return undefined;
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
