import { test } from 'node:test';
import assert from 'node:assert/strict';
import semver from 'semver';
import { parseRange, toNpmRange } from './version-range.js';

const matches = (range: string, v: string): boolean => {
  const r = parseRange(range);
  assert.ok(r.ok, range);
  return r.ok && r.value.range.test(v);
};

test('Masterminds syntax becomes npm syntax', () => {
  assert.equal(toNpmRange('>= 1.2, < 2'), '>=1.2 <2');
  assert.equal(toNpmRange('~>1.2'), '~1.2');
  assert.equal(toNpmRange('>=1, !=1.5.0'), '>=1 <1.5.0 || >=1 >1.5.0');
});

test('both syntaxes match the same versions', () => {
  for (const [range, yes, no] of [
    ['>=1.2 <2', '1.9.9', '2.0.0'],
    ['>=1.2, <2', '1.2.0', '1.1.9'],
    ['~1.2', '1.2.7', '1.3.0'],
    ['^1', '1.99.0', '2.0.0'],
    ['1.2.x', '1.2.3', '1.3.0'],
    ['<1 || >=3', '3.1.0', '2.0.0'],
    ['!=1.5.0', '1.5.1', '1.5.0'],
    ['1.2 - 1.4', '1.4.9', '1.5.0'],
  ] as const) {
    assert.equal(matches(range, yes), true, `${range} should match ${yes}`);
    assert.equal(matches(range, no), false, `${range} should not match ${no}`);
  }
});

test('prereleases match only when asked', () => {
  assert.equal(matches('>=1.0.0', '1.1.0-rc.1'), false);
  const r = parseRange('>=1.0.0', { includePrerelease: true });
  assert.ok(r.ok && r.value.range.test(new semver.SemVer('1.1.0-rc.1')));
});

test('garbage is refused with a reason', () => {
  const r = parseRange('>>=x');
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.reason.includes('not a valid version range'));
  assert.equal(parseRange('  ').ok, false);
});

test('many "!=" terms are refused with a reason instead of doubling the range until it no longer fits in a string (found by test/fuzz)', () => {
  const r = parseRange(Array.from({ length: 30 }, (_, i) => `!=${i}.0.0`).join(' '));
  assert.equal(r.ok, false);
  assert.match(r.ok ? '' : r.reason, /excludes more than 8 versions/);
  assert.ok(matches('!=1.0.0 !=2.0.0 >=0.1.0 <3.0.0', '1.5.0'));
});
