import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_NESTING, nestsDeeperThan } from './nesting.js';

/** `levels` arrays inside one another around `leaf`. */
function nested(levels: number, leaf: unknown = 'x'): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

describe('nestsDeeperThan', () => {
  it('counts arrays and objects, not scalars, up to MAX_NESTING', () => {
    assert.equal(nestsDeeperThan('x'), false);
    assert.equal(nestsDeeperThan(null), false);
    assert.equal(nestsDeeperThan(nested(MAX_NESTING)), false);
    assert.equal(nestsDeeperThan(nested(MAX_NESTING + 1)), true);
    assert.equal(nestsDeeperThan(nested(3), 2), true);
    assert.equal(nestsDeeperThan(nested(2), 2), false);
  });
  it('walks 100,000 levels without recursion', () => {
    assert.equal(nestsDeeperThan(nested(100_000)), true);
    assert.equal(nestsDeeperThan(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)), true);
  });
  it('finds the deep branch among shallow ones, wherever a shared value sits', () => {
    const shared = { a: [1, 2, 3] };
    assert.equal(nestsDeeperThan({ a: [shared, shared, { b: nested(10) }], c: nested(MAX_NESTING) }), true);
    assert.equal(nestsDeeperThan({ a: [shared, shared], c: nested(5) }), false);
    // Shallow in one place, too deep in another.
    assert.equal(nestsDeeperThan({ a: shared, b: nested(MAX_NESTING - 1, shared) }), true);
  });
});
