/**
 * JSON with object keys sorted (undefined members left out), written compactly: equal values
 * compare and hash equal whatever their key order. Two forms, one walker:
 *
 * - `canonicalJson`: strings as JSON.stringify writes them. For comparing and hashing; digests
 *   kept in release records are made with it, so its bytes must not change.
 * - `goJson`: what Go's encoding/json writes for a value decoded into maps (a Kubernetes object
 *   read as `unstructured`, as opm holds a bundle's manifests), which also escapes `<`, `>`, `&`,
 *   U+2028 and U+2029 (\u003c, \u003e, \u0026, \u2028, \u2029). For writing the bytes opm writes,
 *   such as an `olm.bundle.object`'s base64 data, and for hashing as operator-controller hashes
 *   (a ClusterObjectSet's phase digest). Keys are sorted by code point, which is Go's order (UTF-8
 *   bytes); a lone surrogate is written as U+FFFD, as Go writes invalid UTF-8. Numbers are written
 *   as JavaScript writes them, which is Go's form for every float64 (Go also keeps integers past
 *   2^53 exact, which a JavaScript number cannot hold).
 */
import { createHash } from 'node:crypto';
type StringWriter = (s: string) => string;
type KeyOrder = (a: string, b: string) => number;

const byCodeUnit: KeyOrder = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Code point order (UTF-8 byte order): differs from code unit order only past U+D7FF. */
const byCodePoint: KeyOrder = (a, b) => {
  if (!/[\uD800-\uFFFF]/.test(a) && !/[\uD800-\uFFFF]/.test(b)) return byCodeUnit(a, b);
  // Code point by code point (not grapheme clusters: the order is by code point, as UTF-8 bytes).
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(j) ?? 0;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return (a.length - i) - (b.length - j);
};

function sortedJson(v: unknown, str: StringWriter, order: KeyOrder): string {
  if (typeof v === 'string') return str(v);
  if (Array.isArray(v)) return `[${v.map((x) => sortedJson(x, str, order)).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort(order);
    return `{${keys.map((k) => `${str(k)}:${sortedJson(o[k], str, order)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export function canonicalJson(v: unknown): string {
  return sortedJson(v, (s) => JSON.stringify(s), byCodeUnit);
}

const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
/** The same class without /g, whose `test` keeps no position between calls. */
const HAS_GO_ESCAPED = /[<>&\u2028\u2029]/;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function goString(s: string): string {
  const json = JSON.stringify(/[\uD800-\uDFFF]/.test(s) ? s.replace(LONE_SURROGATE, '\uFFFD') : s);
  return HAS_GO_ESCAPED.test(json) ? json.replace(GO_ESCAPED, (c) => GO_ESCAPES[c] ?? c) : json;
}

export function goJson(v: unknown): string {
  return sortedJson(v, goString, byCodePoint);
}

/**
 * The digest of what a release revision is made from: sha256 of the parts' canonical JSON, cut to
 * 40 hex characters so that it fits a label value (63 at most), where release records keep it.
 */
export function inputDigestOf(parts: unknown): string {
  return createHash('sha256').update(canonicalJson(parts)).digest('hex').slice(0, 40);
}
