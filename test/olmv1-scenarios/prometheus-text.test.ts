import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry, Counter, Histogram } from 'prom-client';
import { metricFamilies } from './prometheus-text.js';

test("prom-client's own output parses, with its families named once (histogram series under their family)", async () => {
  const registry = new Registry();
  new Counter({ name: 'binnacle_reconcile_total', help: 'Reconciles.', labelNames: ['controller'], registers: [registry] }).inc({ controller: 'a "quoted" \\ one' });
  new Histogram({ name: 'binnacle_reconcile_seconds', help: 'Time.', registers: [registry] }).observe(0.2);
  assert.deepEqual([...metricFamilies(await registry.metrics())].sort(), ['binnacle_reconcile_seconds', 'binnacle_reconcile_total']);
});

test('text that is not the format is an error naming the line; an empty body holds no family', () => {
  assert.throws(() => metricFamilies('# TYPE up gauge\nup 1\n<html>nope</html>\n'), /line 3/);
  assert.throws(() => metricFamilies('up one\n'), /expected float as value/);
  assert.throws(() => metricFamilies('# TYPE up gaugey\n'), /unknown metric type "gaugey"/);
  assert.equal(metricFamilies('\n# just a comment\n').size, 0);
  assert.deepEqual([...metricFamilies('up{job="x"} +Inf 1700000000000\n')], ['up']);
});

test('as expfmt: a family with HELP and TYPE but no sample is not counted; a second TYPE, a TYPE after samples, a label twice or a bad escape is an error', () => {
  assert.equal(metricFamilies('# HELP up Whether.\n# TYPE up gauge\n').size, 0);
  assert.throws(() => metricFamilies('# TYPE up gauge\n# TYPE up counter\nup 1\n'), /line 2: second TYPE line/);
  assert.throws(() => metricFamilies('up 1\n# TYPE up gauge\n'), /line 2: .*TYPE reported after samples/);
  assert.throws(() => metricFamilies('up{a="1",a="2"} 1\n'), /duplicate label name "a"/);
  assert.throws(() => metricFamilies('up{a="\\x"} 1\n'), /invalid label pair/);
  assert.deepEqual([...metricFamilies('up{a="q\\"uote\\\\d\\n"} 1\n')], ['up']);
  // A counter named like a histogram's series is its own family.
  assert.deepEqual([...metricFamilies('# TYPE jobs_count counter\njobs_count 3\n')], ['jobs_count']);
});

test("as expfmt: NaN and Inf in any case (prom-client writes Nan), a last line without its newline, a second HELP, a bad HELP escape and a __name__ label", async () => {
  const registry = new Registry();
  new Histogram({ name: 'empty_seconds', help: 'No observation.', registers: [registry] });
  const { Gauge } = await import('prom-client');
  new Gauge({ name: 'not_a_number', help: 'NaN.', registers: [registry] }).set(NaN);
  assert.ok(metricFamilies(await registry.metrics()).has('not_a_number'), 'prom-client\'s own Nan');
  assert.deepEqual([...metricFamilies('a Nan\nb +Inf\nc -infinity\nd 1e3\n')], ['a', 'b', 'c', 'd']);
  assert.throws(() => metricFamilies('up 1'), /unexpected end of input stream/);
  assert.throws(() => metricFamilies('# HELP up a\n# HELP up b\nup 1\n'), /second HELP line/);
  assert.throws(() => metricFamilies('# HELP up a \\q\nup 1\n'), /invalid escape sequence in HELP/);
  assert.deepEqual([...metricFamilies('# HELP up line one\\nline two \\\\ done\nup 1\n')], ['up']);
  assert.throws(() => metricFamilies('up{__name__="x"} 1\n'), /reserved/);
  assert.throws(() => metricFamilies('up +NaN\n'), /expected float/);
});
