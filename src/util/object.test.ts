import { test } from 'node:test';
import assert from 'node:assert/strict';
import { definedFields } from './object.js';

test('definedFields drops undefined fields and keeps every other value, falsy ones and null included', () => {
  const got = definedFields({ a: undefined, b: 0, c: '', d: null, e: false, f: ['x'] });
  assert.deepEqual(got, { b: 0, c: '', d: null, e: false, f: ['x'] });
  assert.equal('a' in got, false);
});
