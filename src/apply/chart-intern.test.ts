import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { chartFromJson, chartJson, sharedChart } from './chart-intern.js';
import { decodeRevisionRecord, encodeRevisionRecord, revisionFromSecret, type RevisionRecordJson } from './release.js';
import { revisionRecordSecret, type ReleaseRecordInput } from './release.js';

// Written by the real helm v3.22: its JSON escapes <, > and & as Go does.
const helmSecret: unknown = JSON.parse(readFileSync(new URL('./testdata/helm-release-v2.secret.json', import.meta.url), 'utf8'));

const chartOf = (templateText: string): Record<string, unknown> => ({
  metadata: { name: 'big', version: '1.0.0', apiVersion: 'v2' },
  lock: null,
  templates: [{ name: 'templates/cm.yaml', data: Buffer.from(templateText).toString('base64') }],
  values: { a: { b: [1, 'two', null] } },
  schema: null,
  files: [{ name: 'README.md', data: Buffer.from('# big\n"quoted" \\ <b>&</b> ✓').toString('base64') }],
});

const record = (chart: Record<string, unknown>, version: number): ReleaseRecordInput => ({
  name: 'big',
  namespace: 'ns',
  version,
  status: 'deployed',
  description: 'Install complete',
  firstDeployed: '2026-01-02T03:04:05.678Z',
  lastDeployed: '2026-01-02T03:04:05.678Z',
  chart: { name: 'big', version: '1.0.0' },
  config: { replicas: version },
  manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
  content: { chart, manifest: '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n', hooks: [], notes: 'chart: {"not":"this"}' },
});

test('every revision of a chart decodes to one shared chart object; another chart to another', () => {
  const revisions = [1, 2, 3].map((v) => revisionFromSecret(revisionRecordSecret(record(chartOf('a: 1'), v), undefined, new Date(), 'created')));
  const charts = revisions.map((r) => r.content?.chart);
  assert.ok(charts[0] !== undefined);
  assert.equal(charts[1], charts[0], 'revision 2 shares revision 1 chart');
  assert.equal(charts[2], charts[0]);
  assert.deepEqual(charts[0], chartOf('a: 1'));
  assert.deepEqual(revisions.map((r) => r.config), [{ replicas: 1 }, { replicas: 2 }, { replicas: 3 }], 'the rest of each record is its own');
  assert.equal(revisions[0]?.content?.notes, 'chart: {"not":"this"}');
  const other = revisionFromSecret(revisionRecordSecret(record(chartOf('a: 2'), 1), undefined, new Date(), 'created')).content?.chart;
  assert.notEqual(other, charts[0]);
  assert.deepEqual(other, chartOf('a: 2'));
});

test("a rendered chart is shared with the records' chart of the same content", () => {
  const rendered = sharedChart(chartOf('a: 3'));
  assert.equal(sharedChart(chartOf('a: 3')), rendered, 'a second render of the same chart');
  const decoded = revisionFromSecret(revisionRecordSecret(record(rendered, 1), undefined, new Date(), 'created')).content?.chart;
  assert.equal(decoded, rendered);
  assert.equal(chartFromJson(JSON.stringify(chartOf('a: 3'))), rendered);
  assert.throws(() => chartFromJson('[1]'), /not a JSON object/);
});

test('a record with a shared chart is encoded as JSON.stringify encodes it, members in Helm\'s order', () => {
  const shared = sharedChart(chartOf('b: "<&>"'));
  const rel: RevisionRecordJson = {
    name: 'big',
    info: { first_deployed: 'x', last_deployed: 'y', deleted: '', description: 'd "q"', status: 'deployed', notes: 'n' },
    chart: shared,
    config: { k: ['v'] },
    manifest: 'm',
    hooks: [],
    version: 2,
    namespace: 'ns',
  };
  const text = gunzipSync(Buffer.from(encodeRevisionRecord(rel), 'base64')).toString('utf8');
  assert.equal(text, JSON.stringify(rel));
  assert.equal(chartJson(shared), JSON.stringify(shared));
  const { hooks: _h, ...noHooks } = rel;
  assert.equal(gunzipSync(Buffer.from(encodeRevisionRecord(noHooks), 'base64')).toString('utf8'), JSON.stringify(noHooks), 'an absent member stays absent');
});

test("helm's own record decodes as JSON.parse reads it, chart and all", () => {
  const data = (helmSecret as { data: { release: string } }).data.release;
  const encoded = Buffer.from(data, 'base64').toString('utf8');
  const whole = JSON.parse(gunzipSync(Buffer.from(encoded, 'base64')).toString('utf8')) as unknown;
  assert.deepEqual(decodeRevisionRecord(encoded), whole);
  assert.throws(() => decodeRevisionRecord(Buffer.from('{"name":"x","chart":{"a":1},"version":').toString('base64')), /not a Helm release record/);
  const twice = '{"name":"x","chart":{"first":1},"version":1,"chart":{"last":2}}';
  assert.deepEqual(decodeRevisionRecord(Buffer.from(twice).toString('base64')), JSON.parse(twice), 'a repeated chart member: the last one, as JSON.parse reads it');
});
