import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, goJson } from './canonical-json.js';

test('goJson writes what Go json.Marshal writes for a map-based value', () => {
  // Expected bytes as Go 1.22+ writes them (map keys sorted; <, >, &, U+2028, U+2029 escaped).
  const value = { z: 1, a: ['<b>', 'x & y', '\u2028\u2029', null, true, 1.5, -0.25, 1e21, 1e-7], m: { k2: {}, k1: [] }, 'é': 'ü\n"\\\t' };
  assert.equal(goJson(value), '{"a":["\\u003cb\\u003e","x \\u0026 y","\\u2028\\u2029",null,true,1.5,-0.25,1e+21,1e-7],"m":{"k1":[],"k2":{}},"z":1,"é":"ü\\n\\"\\\\\\t"}');
  // Undefined members are left out, as a decoded value never has them.
  assert.equal(goJson({ b: undefined, a: 'x' }), '{"a":"x"}');
  // A string with no character to escape twice in a row (a regular expression with /g once kept its place between calls).
  assert.equal(goJson(['a<', 'b<', 'c<']), '["a\\u003c","b\\u003c","c\\u003c"]');
});

test('canonicalJson sorts keys and leaves strings as JSON.stringify writes them (its bytes are kept in digests)', () => {
  assert.equal(canonicalJson({ b: ['<x>', undefined, 2], a: { d: null, c: 'y & z' }, u: undefined }), '{"a":{"c":"y & z","d":null},"b":["<x>",null,2]}');
});
