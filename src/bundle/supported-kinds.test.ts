import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kindSupport } from './supported-kinds.js';

describe('kindSupport', () => {
  it('knows the kinds operator-registry supports, and whether each is namespaced', () => {
    assert.deepEqual(kindSupport('Service'), { supported: true, namespaced: true });
    assert.deepEqual(kindSupport('ClusterRole'), { supported: true, namespaced: false });
    assert.deepEqual(kindSupport('Deployment'), { supported: false, namespaced: false });
  });

  it('a kind named like an Object.prototype member is not supported (it was, and namespaced by a function)', () => {
    for (const kind of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      assert.deepEqual(kindSupport(kind), { supported: false, namespaced: false }, kind);
    }
  });
});
