/**
 * Values schema → CRD schema over every chart and subchart of the Helm chart corpus: the schema
 * is structural (alone and inside its CRD), and the chart's own default values are a valid,
 * unpruned CR spec under it. Prints one row per chart: where the schema came from, how many
 * properties it describes, its warnings by rule.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkStructural, crdForChart, kindForChart, parseValuesYaml, validateValue, valuesSchema, type StructuralSchema } from '../../src/helm/schema/index.js';
import { problemToString } from '../../src/util/errors.js';
import { toTable } from '../../src/util/output.js';
import { loadCorpusCharts } from './helm-charts.test-helper.js';

function countProperties(s: StructuralSchema): number {
  let n = 0;
  for (const child of Object.values(s.properties ?? {})) n += 1 + countProperties(child);
  if (s.items !== undefined) n += countProperties(s.items);
  if (s.additionalProperties !== undefined) n += countProperties(s.additionalProperties);
  return n;
}

describe('helm values schema corpus', () => {
  it('every chart and subchart gets a structural schema that accepts its own defaults', async () => {
    const charts = await loadCorpusCharts();
    const topLevel = charts.filter((c) => c.topLevel).length;
    assert.ok(topLevel > 0, 'the corpus has charts');
    const rows: string[][] = [];
    const bySource: Record<string, number> = {};
    const byRule: Record<string, number> = {};
    const failures: string[] = [];
    const t0 = performance.now();
    for (const chart of charts) {
      const r = valuesSchema({ valuesYaml: chart.valuesYaml, ...(chart.schemaJson === undefined ? {} : { schemaJson: chart.schemaJson }), chartName: chart.name });
      bySource[r.source] = (bySource[r.source] ?? 0) + 1;
      const rules: Record<string, number> = {};
      for (const w of r.warnings) {
        rules[w.rule] = (rules[w.rule] ?? 0) + 1;
        byRule[w.rule] = (byRule[w.rule] ?? 0) + 1;
      }

      for (const p of checkStructural(r.schema, { root: false })) failures.push(`${chart.name}: not structural: ${problemToString(p)}`);
      try {
        crdForChart({ group: 'corpus.binnacle.dev', version: 'v1alpha1', kind: kindForChart(chart.chartDir), scope: 'Namespaced', spec: r.schema });
      } catch (e) {
        failures.push(`${chart.name}: crdForChart: ${e instanceof Error ? e.message : String(e)}`);
      }
      const defaults = parseValuesYaml(chart.valuesYaml, `${chart.name}/values.yaml`).values;
      for (const p of validateValue(r.schema, defaults, { file: `${chart.name}/values.yaml` })) failures.push(`${chart.name}: defaults rejected or pruned: ${problemToString(p)}`);
      if (r.source === 'values.yaml' && rules['schema.default-conflict'] !== undefined) {
        failures.push(`${chart.name}: a schema inferred from values.yaml had to be widened for its own defaults`);
      }
      for (const w of r.warnings) assert.ok(w.file !== undefined && w.rule.startsWith('schema.'), `${chart.name}: warning without file or rule: ${JSON.stringify(w)}`);

      const summary = Object.entries(rules)
        .sort()
        .map(([k, v]) => `${k.replace(/^schema\./, '')}=${v}`)
        .join(' ');
      rows.push([chart.name, r.source, String(countProperties(r.schema)), String(r.warnings.length), summary]);
    }
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    console.log(toTable(['chart', 'source', '#properties', 'warnings', 'by rule'], rows));
    console.log(`helm schema corpus: ${charts.length} charts (${topLevel} top-level, ${charts.length - topLevel} subcharts) in ${seconds}s; sources:`, bySource, 'warnings:', byRule);
    assert.deepEqual(failures, []);
    assert.equal(rows.length, charts.length);
  });
});
