import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BILLION_LAUGHS, BOMB, bombMessage } from '../../util/yaml.test-helper.js';
import { ChartIndexError } from './errors.js';
import { decodeIndex, indexUrlOf, resolveChartUrl } from './repo-index.js';

const indexUrl = 'https://charts.example.com/index.yaml';
const decode = (text: string, chart = 'memcached') => decodeIndex(text, { indexUrl, chart });

function problemsOf(text: string, chart = 'memcached'): { field: string; message: string }[] {
  try {
    decode(text, chart);
  } catch (err) {
    assert.ok(err instanceof ChartIndexError, `expected a ChartIndexError, got ${String(err)}`);
    assert.equal(err.code, 'HELM_CHART_INDEX');
    assert.equal(err.file, indexUrl);
    return [...err.problems];
  }
  assert.fail('the index was accepted');
}

const GOOD = `apiVersion: v1
entries:
  memcached:
  - name: memcached
    version: 7.0.1
    urls: [memcached-7.0.1.tgz]
    digest: ${'AB'.repeat(32)}
  - name: memcached
    version: 1.10
    urls: ["https://mirror.example.com/memcached-1.10.tgz", "second.tgz"]
  - name: memcached
    version: latest
    urls: [x.tgz]
  - ~
  redis:
  - version: 1.0.0
    urls: 5
generated: "2024-01-01T00:00:00Z"
`;

test('a good index decodes the asked chart only, versions as text, digests lower-case, bad versions skipped', () => {
  const d = decode(GOOD);
  assert.deepEqual(d.chartNames, ['memcached', 'redis']);
  assert.deepEqual(
    d.entries?.map((e) => [e.version, e.urls, e.digest, e.field]),
    [
      ['7.0.1', ['memcached-7.0.1.tgz'], 'ab'.repeat(32), 'entries.memcached[0]'],
      ['1.10', ['https://mirror.example.com/memcached-1.10.tgz', 'second.tgz'], undefined, 'entries.memcached[1]'],
    ],
  );
  assert.deepEqual(d.skipped, [{ version: 'latest', field: 'entries.memcached[2].version', reason: '"latest" is not a semantic version' }]);
  // The chart is not listed: undefined entries, not an error (the caller names the reference).
  assert.equal(decode(GOOD, 'nginx').entries, undefined);
});

test('every malformed field of the chart is named, not just the first', () => {
  const problems = problemsOf(`apiVersion: v1
entries:
  memcached:
  - version: [1]
    urls: memcached.tgz
    digest: md5:abc
  - version: 1.0.0
    urls: [{a: b}]
  - just a string
`);
  assert.deepEqual(
    problems.map((p) => p.field),
    ['entries.memcached[0].version', 'entries.memcached[0].urls', 'entries.memcached[0].digest', 'entries.memcached[1].urls[0]', 'entries.memcached[2]'],
  );
  assert.match(problems[2]?.message ?? '', /sha256/);
});

test('document-level problems name apiVersion, entries and the chart', () => {
  assert.deepEqual(problemsOf('entries: {}\n').map((p) => p.field), ['apiVersion']);
  assert.deepEqual(problemsOf('apiVersion: v1\nentries: [a, b]\n').map((p) => p.field), ['entries']);
  assert.deepEqual(problemsOf('apiVersion: v1\nentries:\n  memcached: {version: 1.0.0}\n').map((p) => p.field), ['entries.memcached']);
  assert.deepEqual(problemsOf('- a\n- b\n').map((p) => p.field), ['(document)']);
  assert.deepEqual(problemsOf('').map((p) => p.field), ['(document)']);
  const syntax = problemsOf('apiVersion: v1\nentries:\n  memcached: [\n');
  assert.equal(syntax[0]?.field, '(document)');
  assert.match(syntax[0]?.message ?? '', /not valid YAML/);
  // The error's own message leads with the file and field.
  assert.throws(() => decode('apiVersion: v1\nentries: 3\n'), (err: unknown) => err instanceof Error && err.message.startsWith(`${indexUrl}: entries: `));
});

test('problems in other charts do not spoil the asked one (Helm reads entries lazily too)', () => {
  assert.equal(decode(GOOD).entries?.length, 2); // redis[0].urls is 5, and that is redis's problem.
});

test('alias bombs are refused', () => {
  const lines = ['apiVersion: v1', 'a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 0; i < 12; i++) lines.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`);
  lines.push('entries: {}');
  assert.throws(() => decode(lines.join('\n')), (err: unknown) => err instanceof ChartIndexError);
  const problems = problemsOf(`apiVersion: v1\n${BILLION_LAUGHS}entries: {}\n`);
  assert.deepEqual(problems.map((p) => p.field), ['(document)']);
  assert.match(problems[0]?.message ?? '', new RegExp(`^${BOMB.source}$`));
  assert.throws(() => decode(`apiVersion: v1\n${BILLION_LAUGHS}`), { message: bombMessage(`${indexUrl}: (document)`) });
});

test('an index with more than 100 aliases (Helm reads it) is read', () => {
  const entry = '  - &e {name: memcached, version: 1.0.0, urls: [m.tgz]}\n';
  const text = `apiVersion: v1\nentries:\n  memcached:\n${entry}  other: [${Array.from({ length: 500 }, () => '*e').join(', ')}]\n`;
  assert.equal(decode(text).entries?.length, 1);
  assert.equal(decode(text, 'other').entries?.length, 500);
});

test('entry URLs resolve like Helm: relative to the repository as a directory, its query kept', () => {
  assert.equal(resolveChartUrl('https://c.example.com/stable', 'memcached-1.0.0.tgz'), 'https://c.example.com/stable/memcached-1.0.0.tgz');
  assert.equal(resolveChartUrl('https://c.example.com/stable/', 'charts/m.tgz'), 'https://c.example.com/stable/charts/m.tgz');
  assert.equal(resolveChartUrl('https://c.example.com/stable', '../other/m.tgz'), 'https://c.example.com/other/m.tgz');
  assert.equal(resolveChartUrl('https://c.example.com/stable', '/root/m.tgz'), 'https://c.example.com/root/m.tgz');
  assert.equal(resolveChartUrl('https://c.example.com/stable?sig=abc', 'm.tgz'), 'https://c.example.com/stable/m.tgz?sig=abc');
  assert.equal(resolveChartUrl('https://c.example.com/stable', 'https://cdn.example.com/m.tgz?x=1'), 'https://cdn.example.com/m.tgz?x=1');
  assert.equal(indexUrlOf('https://c.example.com/stable?sig=abc'), 'https://c.example.com/stable/index.yaml?sig=abc');
  assert.equal(indexUrlOf('http://127.0.0.1:8080'), 'http://127.0.0.1:8080/index.yaml');
});
