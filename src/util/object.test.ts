import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyJson, definedFields, jsonSize } from './object.js';

test('definedFields drops undefined fields and keeps every other value, falsy ones and null included', () => {
  const got = definedFields({ a: undefined, b: 0, c: '', d: null, e: false, f: ['x'] });
  assert.deepEqual(got, { b: 0, c: '', d: null, e: false, f: ['x'] });
  assert.equal('a' in got, false);
});

test('copyJson copies objects and arrays (changing the copy leaves the original) and shares what cannot change', () => {
  const manifest = 'kind: ConfigMap\n'.repeat(1000);
  const original = { release: { manifest, hooks: [{ name: 'h', weight: 1 }], config: { a: { b: [1, null, true] } } }, output: manifest };
  const copy = copyJson(original);
  assert.deepEqual(copy, original);
  copy.release.hooks[0]!.name = 'changed';
  copy.release.config.a.b.push(2);
  (copy as { extra?: number }).extra = 1;
  assert.equal(original.release.hooks[0]?.name, 'h');
  assert.deepEqual(original.release.config.a.b, [1, null, true]);
  assert.equal('extra' in original, false);
  const when = new Date(0);
  assert.equal(copyJson({ when }).when, when, 'not JSON: kept as it is');
});

test('jsonSize is about JSON.stringify length for data of strings, numbers and literals', () => {
  for (const v of [{ a: 'x'.repeat(1000), b: [1, 2, { c: null, d: true }], e: '' }, [], {}, 'plain', 12345, { nested: { deeper: ['a', 'b'] } }]) {
    const exact = JSON.stringify(v).length;
    assert.ok(Math.abs(jsonSize(v) - exact) <= Math.max(4, exact * 0.1), `${jsonSize(v)} vs ${exact} for ${JSON.stringify(v).slice(0, 40)}`);
  }
});
