/** Chart.yaml is read as Helm reads it: many YAML aliases are fine, an alias bomb is refused by name. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aliasLines, BILLION_LAUGHS, bombMessage } from '../../util/yaml.test-helper.js';
import { parseChartYaml } from './chart-file.js';

test('a Chart.yaml with more than 100 aliases is read', () => {
  assert.deepEqual(parseChartYaml(`apiVersion: v2\nname: memcached\nversion: 1.0.0\n${aliasLines(500)}`, 'repo/memcached', 'memcached/Chart.yaml'), { name: 'memcached', version: '1.0.0', appVersion: undefined });
});

test('an alias bomb in Chart.yaml is HELM_CHART_NOT_A_CHART naming the chart and file', () => {
  assert.throws(() => parseChartYaml(`apiVersion: v2\nname: memcached\nversion: 1.0.0\n${BILLION_LAUGHS}`, 'repo/memcached', 'memcached/Chart.yaml'), {
    name: 'ChartSourceError',
    code: 'HELM_CHART_NOT_A_CHART',
    message: bombMessage('chart repo/memcached: memcached/Chart.yaml'),
  });
  assert.throws(() => parseChartYaml('name: [x\n', 'repo/memcached', 'memcached/Chart.yaml'), { message: /^chart repo\/memcached: memcached\/Chart\.yaml: not valid YAML \(line 2, column 1\): / });
});
