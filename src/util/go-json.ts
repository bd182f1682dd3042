/**
 * JSON as Go's encoding/json writes a value decoded into maps (a Kubernetes object read as
 * `unstructured`, which is how opm holds a bundle's manifests): compact, object keys sorted, and
 * `<`, `>`, `&`, U+2028 and U+2029 escaped (\u003c, \u003e, \u0026, \u2028, \u2029), which JSON.stringify
 * leaves as they are. Used where Binnacle must write the bytes opm writes, such as an
 * `olm.bundle.object`'s base64 data.
 *
 * Keys are sorted by UTF-16 code units where Go sorts by UTF-8 bytes; the two orders differ only
 * between characters above U+FFFF and those from U+E000 to U+FFFF, which no manifest's keys use.
 * Numbers are written as JavaScript writes them, which is Go's form for every float64 (Go also
 * keeps integers past 2^53 exact, which a JavaScript number cannot hold).
 */
const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
/** The same class without /g, whose `test` keeps no position between calls. */
const HAS_GO_ESCAPED = /[<>&\u2028\u2029]/;

function goString(s: string): string {
  const json = JSON.stringify(s);
  return HAS_GO_ESCAPED.test(json) ? json.replace(GO_ESCAPED, (c) => GO_ESCAPES[c] ?? c) : json;
}

export function goJson(v: unknown): string {
  if (typeof v === 'string') return goString(v);
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : goJson(x))).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${goString(k)}:${goJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
