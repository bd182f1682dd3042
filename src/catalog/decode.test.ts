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
