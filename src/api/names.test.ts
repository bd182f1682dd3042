import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundedName } from './names.js';

test('short names are kept; long ones are cut with a stable hash suffix', () => {
  assert.equal(boundedName('nhc-poison-pill-operator'), 'nhc-poison-pill-operator');
  const long = 'po-mws2thz5-5gjh-poison-pill-operator-poison-pill-operator';
  const a = boundedName(long);
  assert.equal(a.length <= 53, true);
  assert.equal(a, boundedName(long), 'stable');
  assert.notEqual(a, boundedName(`${long}x`), 'unique');
  assert.match(a, /^po-mws2thz5-5gjh-poison-pill-operator-po[a-z-]*-[0-9a-f]{8}$/);
});
