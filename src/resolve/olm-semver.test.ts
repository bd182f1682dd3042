import { test } from 'node:test';
import assert from 'node:assert/strict';
import { olmSemverCompare, parseTolerantVersion } from './olm-semver.js';

test('versions read as blang/semver ParseTolerant reads them (each answer checked against blang/semver v4.0.0)', () => {
  const read: [string, string | undefined][] = [
    ['1.0', '1.0.0'],
    ['1', '1.0.0'],
    ['4.8', '4.8.0'],
    ['v2.3', '2.3.0'],
    [' v1.2.3 ', '1.2.3'],
    ['01.02.03', '1.2.3'],
    ['00.0.00', '0.0.0'],
    ['1.2.3-rc.1+b', '1.2.3-rc.1+b'],
    ['latest', undefined],
    ['1.2-rc', undefined],
    ['1e+06', undefined],
    ['true', undefined],
    ['1.2.3.4', undefined],
    ['1.2.3-01', undefined],
    ['vv1', undefined],
  ];
  for (const [text, want] of read) assert.equal(parseTolerantVersion(text)?.raw, want, text);
});

test('semver_compare prints numbers as Go does, and refuses lists, maps and null', () => {
  assert.equal(olmSemverCompare(4.8, '4.8.0'), 0);
  assert.equal(olmSemverCompare(1n, '1.0.0'), 0);
  assert.equal(olmSemverCompare(3, '2.9.9'), 1);
  assert.deepEqual(olmSemverCompare(1e6, '1'), { error: 'semver_compare: 1e+06 is not a version' });
  assert.deepEqual(olmSemverCompare('1.0.0', null), { error: 'semver_compare: null is not a version' });
  assert.deepEqual(olmSemverCompare([1], '1'), { error: 'semver_compare: a list is not a version' });
  assert.deepEqual(olmSemverCompare(Object.create(null), '1'), { error: 'semver_compare: a map is not a version' });
  assert.equal(olmSemverCompare('1.2.3-rc.1', '1.2.3'), -1);
  assert.equal(olmSemverCompare('1.2.3+build.1', '1.2.3'), 0);
});
