import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { olmRangeProblem, satisfiesOlmRange } from './semver-range.js';

describe('OLM version ranges', () => {
  it('accepts what blang/semver ParseRange accepts', () => {
    for (const r of ['>=1.0.0 <2.0.0', '<0.1.4', '>= 1.0.2 < 6.2.0', '1.x', '>=1.2.x', '1.0.0 || >=2.0.0 <3.0.0', '!=1.2.3', '=1.2.3-rc.1']) {
      assert.equal(olmRangeProblem(r), undefined, r);
    }
  });

  it("refuses npm-only syntax and malformed ranges, saying why", () => {
    for (const r of ['^1.0.0', '~1.2.3', '1.0.0 - 2.0.0', '>=v1.0.0', '1.2', '', 'not a range', '>=1.0.0 ||']) {
      assert.notEqual(olmRangeProblem(r), undefined, r);
    }
    assert.match(olmRangeProblem('^1.0.0') ?? '', /"\^1\.0\.0" is not an operator/);
  });

  it('matches versions with OLM semantics', () => {
    assert.equal(satisfiesOlmRange('1.5.0', '>=1.0.0 <2.0.0'), true);
    assert.equal(satisfiesOlmRange('2.0.0', '>=1.0.0 <2.0.0'), false);
    assert.equal(satisfiesOlmRange('1.9.0', '1.x'), true);
    assert.equal(satisfiesOlmRange('1.0.0', '^1.0.0'), false);
  });
});
