/**
 * Where one member of a JSON object's top level lies in the text, found without parsing it: a
 * caller that parses the rest and treats that member apart (a Helm release's chart, most of a
 * record by size and the same in every revision) allocates nothing for it. Text that is not a
 * JSON object gives undefined or a span that JSON.parse then refuses; this only scans.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The end (exclusive) of the string whose opening quote is at `at`; -1 when unterminated. */
function stringEnd(text: string, at: number): number {
  let i = at + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q < 0) return -1;
    let backslashes = 0;
    for (let j = q - 1; j > at && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** The end (exclusive) of the value starting at `at`; -1 when the text ends first. */
function valueEnd(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return stringEnd(text, at);
  if (first !== 0x7b && first !== 0x5b) {
    // A number, true, false or null: up to the next delimiter.
    let i = at;
    while (i < text.length && !',}] \n\r\t'.includes(text[i] ?? '')) i++;
    return i;
  }
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return -1;
      i = end - 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** [start, end) of the value of top-level member `key` of the object `text`; undefined when it has none. */
export function jsonMemberSpan(text: string, key: string): [number, number] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  i = skipSpace(text, i + 1);
  while (i < text.length && text.charCodeAt(i) === QUOTE) {
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const raw = text.slice(i + 1, keyEnd - 1);
    const name = raw.includes('\\') ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) return undefined;
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start);
    if (end < 0) return undefined;
    if (name === key) return [start, end];
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== 0x2c) return undefined;
    i = skipSpace(text, i + 1);
  }
  return undefined;
}
