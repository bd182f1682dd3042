import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeDocument } from './decode.js';

test('known schemas are decoded by their own decoder; any other, also one named like an object member, passes through', () => {
  assert.deepEqual(decodeDocument({ schema: 'olm.package', name: 'p' }).decoded, { kind: 'package', value: { schema: 'olm.package', name: 'p' } });
  assert.equal(decodeDocument({ schema: 'olm.channel', name: 'c', package: 'p', entries: [] }).decoded?.kind, 'channel');
  for (const schema of ['example.com/thing', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const got = decodeDocument({ schema, name: 'x' });
    assert.deepEqual(got.problems, [], schema);
    assert.deepEqual(got.decoded, { kind: 'other', value: { schema, name: 'x', blob: { name: 'x', schema } } }, schema);
  }
});

test('a key named __proto__ in a record opm passes through or in a property value is kept as a key, as opm keeps it', () => {
  // JSON.parse makes `__proto__` an own key, as the catalog loader reads it.
  const other = decodeDocument(JSON.parse('{"schema":"example.com/x","z":1,"__proto__":{"polluted":true},"a":2}'));
  assert.equal(JSON.stringify(other.decoded?.value), '{"schema":"example.com/x","blob":{"__proto__":{"polluted":true},"a":2,"schema":"example.com/x","z":1}}');
  const bundle = decodeDocument(JSON.parse('{"schema":"olm.bundle","name":"b","package":"p","properties":[{"type":"x","value":{"z":1,"__proto__":{"a":1}}}]}'));
  const value = bundle.decoded?.kind === 'bundle' ? bundle.decoded.value.properties[0]?.value : undefined;
  assert.equal(JSON.stringify(value), '{"__proto__":{"a":1},"z":1}');
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
});
