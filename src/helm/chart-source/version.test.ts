import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ociTagToVersion, parseChartVersion, parseChartVersionRange, sameChartVersion, selectChartVersion, sortChartVersions, versionToOciTag } from './version.js';

const published = ['1.1.0', '1.2.0', '1.2.5', '1.3.0-rc.1', '1.3.0', '1.10.0', '2.0.0-beta.1', '2.0.0', '2.1.0-rc.2', 'v2.0.1', 'latest'];

test('the highest version in range wins, for every range form Helm users write', () => {
  for (const [range, expected] of [
    ['>=1.2.0 <2', '1.10.0'],
    ['>= 1.2, < 1.10', '1.3.0'],
    ['~1.2', '1.2.5'],
    ['~1.2.0', '1.2.5'],
    ['^1.2', '1.10.0'],
    ['1.2.x', '1.2.5'],
    ['1.2', '1.2.5'],
    ['*', 'v2.0.1'],
    ['', 'v2.0.1'],
    [undefined, 'v2.0.1'],
    ['<1.2 || >=2 <2.0.1', '2.0.0'],
    ['1.1 - 1.2', '1.2.5'],
    ['>=1.2, !=1.10.0, <2', '1.3.0'],
    ['^3', undefined],
  ] as const) {
    assert.equal(selectChartVersion(published, range), expected, `range ${String(range)}`);
  }
});

test('prereleases are chosen only by a range that names one (per || alternative)', () => {
  assert.equal(selectChartVersion(published, '>=1.3.0-0 <1.3.0'), '1.3.0-rc.1');
  // Masterminds (3.4): a prerelease anywhere in an AND group lets prereleases through the whole group.
  assert.equal(selectChartVersion(published, '>=2.0.0-0 <3'), '2.1.0-rc.2');
  assert.equal(selectChartVersion(published, '>=2.0.0 <3'), 'v2.0.1');
  assert.equal(selectChartVersion(published, '^2.0.0-0 || ^1'), '2.1.0-rc.2');
  assert.equal(selectChartVersion(['1.0.0', '2.0.0-rc.1'], '^1 || >=3.0.0-0'), '1.0.0');
  assert.equal(selectChartVersion(['1.0.0-rc.1'], '*'), undefined);
});

test('an exact version text is taken before the range reading, build metadata included', () => {
  assert.equal(selectChartVersion(published, '2.1.0-rc.2'), '2.1.0-rc.2');
  assert.equal(selectChartVersion(['1.0.0+a', '1.0.0+b'], '1.0.0+b'), '1.0.0+b');
  assert.equal(selectChartVersion(['1.0.0+a', '1.0.0+b'], '1.0.0'), '1.0.0+a');
  assert.equal(selectChartVersion(published, 'v2.0.1'), 'v2.0.1');
});

test('versions are read leniently and sorted highest first; non-versions are set aside', () => {
  assert.equal(parseChartVersion('1.2')?.version, '1.2.0');
  assert.equal(parseChartVersion('v3')?.version, '3.0.0');
  assert.equal(parseChartVersion('01.02.03')?.version, '1.2.3');
  assert.equal(parseChartVersion('latest'), undefined);
  assert.equal(parseChartVersion('1.2.3.4'), undefined);
  assert.deepEqual(sortChartVersions(['1.2', '1.10.0', 'nope', '1.9.0-rc.1', '1.9.0', '1.2']), { valid: ['1.10.0', '1.9.0', '1.9.0-rc.1', '1.2'], invalid: ['nope'] });
  assert.equal(sameChartVersion('v1.2', '1.2.0'), true);
  assert.equal(sameChartVersion('1.2.0+a', '1.2.0'), false);
});

test('unreadable ranges are refused with the text', () => {
  const r = parseChartVersionRange('>>=1');
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.reason.includes('>>=1'));
  assert.equal(selectChartVersion(published, '>>=1'), undefined);
  assert.equal(parseChartVersionRange(' ').ok, true);
});

test('OCI tags write + as _', () => {
  assert.equal(versionToOciTag('1.2.3+build.7'), '1.2.3_build.7');
  assert.equal(ociTagToVersion('1.2.3_build.7'), '1.2.3+build.7');
});
