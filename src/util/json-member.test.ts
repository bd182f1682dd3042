import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonMemberSpan } from './json-member.js';

const valueOf = (text: string, key: string): unknown => {
  const span = jsonMemberSpan(text, key);
  return span === undefined ? undefined : JSON.parse(text.slice(span[0], span[1]));
};

test('jsonMemberSpan finds a top-level member of every JSON kind, not one nested or inside a string', () => {
  const doc = {
    name: 'a "chart": {"x":1} \\',
    info: { chart: 'nested, not this one', list: [1, { chart: 2 }] },
    chart: { metadata: { name: 'c' }, templates: [{ name: 't', data: 'e30=' }], files: null, text: 'braces } ] { [ and "quotes" and \\\\' },
    version: 3,
    flag: false,
    nothing: null,
    last: 'x',
  };
  for (const text of [JSON.stringify(doc), JSON.stringify(doc, null, 2)]) {
    for (const [key, value] of Object.entries(doc)) assert.deepEqual(valueOf(text, key), value, `${key} in ${text.length} characters`);
    assert.equal(jsonMemberSpan(text, 'templates'), undefined, 'a nested key is not a top-level member');
    assert.equal(jsonMemberSpan(text, 'missing'), undefined);
  }
});

test('jsonMemberSpan reads escaped keys, and gives undefined for text that is not a whole object', () => {
  assert.deepEqual(valueOf('{"ch\\u0061rt":[1,2]}', 'chart'), [1, 2]);
  for (const text of ['', '[1]', '"chart"', '{"chart":{"a":1', '{"a":"unterminated', '{"a" 1, "chart":2}', '{"a":1 "chart":2}']) {
    assert.equal(jsonMemberSpan(text, 'chart'), undefined, JSON.stringify(text));
  }
});
