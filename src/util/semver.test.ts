import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { olmRangeProblem, parseOlmRange, satisfiesOlmRange } from './semver.js';

describe('OLM version ranges', () => {
  it('accepts what blang/semver ParseRange accepts', () => {
    for (const r of ['>=1.0.0 <2.0.0', '<0.1.4', '>= 1.0.2 < 6.2.0', '1.x', '>=1.2.x', '1.0.0 || >=2.0.0 <3.0.0', '!=1.2.3', '=1.2.3-rc.1', '!=1.x', '1.0.0+build.1']) {
      assert.equal(olmRangeProblem(r), undefined, r);
    }
  });

  it("refuses npm-only syntax and malformed ranges, saying why", () => {
    // blang: `||` must stand between spaces; only lower-case `x` is a wildcard.
    for (const r of ['^1.0.0', '~1.2.3', '>=v1.0.0', '1.2', '', 'not a range', '>=1.0.0 ||', '|| 1.0.0', '>1.0.0||<0.5.0', '1.X', '1.*', '01.0.0', '1.x.3']) {
      assert.notEqual(olmRangeProblem(r), undefined, r);
    }
    assert.match(olmRangeProblem('^1.0.0') ?? '', /Could not parse comparator "\^" in "\^1\.0\.0"/);
    // An operator named like an Object.prototype member is no operator either (they were read as one, matching nothing).
    for (const op of ['constructor', 'toString', '__proto__', 'valueOf']) {
      assert.equal(olmRangeProblem(`${op}1.0.0`), `Could not parse comparator "${op}" in "${op}1.0.0"`);
    }
    assert.equal(olmRangeProblem('>=1.0.0 ||'), "Last element in range is '||'");
  });

  it('reads what blang reads, odd cases included (results checked against blang/semver v4.0.0)', () => {
    const vs = ['0.9.0', '1.0.0', '1.0.1', '1.2.0', '1.2.9', '1.3.0', '2.0.0-rc.1', '2.0.0', '3.0.0'];
    const matches = (r: string): string => {
      const p = parseOlmRange(r);
      return typeof p === 'string' ? 'ERR' : vs.filter((v) => satisfiesOlmRange(v, r)).join(',');
    };
    // blang's splitter drops one-character words: `-`, `!` and `a` vanish.
    assert.equal(matches('1.0.0 - 2.0.0'), '');
    assert.equal(matches('! 1.0.0'), '1.0.0');
    assert.equal(matches('a 1.0.0'), '1.0.0');
    assert.equal(matches('>1.x'), '2.0.0,3.0.0');
    assert.equal(matches('<1.x'), '0.9.0');
    assert.equal(matches('<2.0.0 >=1.0.0 !1.2.0'), '1.0.0,1.0.1,1.2.9,1.3.0,2.0.0-rc.1');
    assert.equal(matches('>=1.0.0-x'), '1.0.0,1.0.1,1.2.0,1.2.9,1.3.0,2.0.0-rc.1,2.0.0,3.0.0');
    assert.equal(matches('=> 1.0.0'), 'ERR');
    assert.equal(matches('>=1.0.0,<2.0.0'), 'ERR');
  });

  it('matches versions with OLM semantics', () => {
    assert.equal(satisfiesOlmRange('1.5.0', '>=1.0.0 <2.0.0'), true);
    assert.equal(satisfiesOlmRange('2.0.0', '>=1.0.0 <2.0.0'), false);
    assert.equal(satisfiesOlmRange('1.9.0', '1.x'), true);
    assert.equal(satisfiesOlmRange('1.0.0', '^1.0.0'), false);
    // Wildcards expand as blang expands them; prereleases compare as plain versions.
    assert.equal(satisfiesOlmRange('1.3.0', '>1.2.x'), true);
    assert.equal(satisfiesOlmRange('1.2.9', '>1.2.x'), false);
    assert.equal(satisfiesOlmRange('1.2.9', '<=1.2.x'), true);
    assert.equal(satisfiesOlmRange('2.0.0-rc.1', '>=1.0.0 <2.0.0'), true);
    assert.equal(satisfiesOlmRange('1.5.0', '!=1.x'), false);
    // An operator blang does not know before a wildcard is dropped, leaving an equality.
    assert.deepEqual(parseOlmRange('~1.x'), parseOlmRange('1.0.0'));
  });
});
