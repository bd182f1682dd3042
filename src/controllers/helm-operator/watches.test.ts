import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../../util/errors.js';
import { withTempDir } from '../../util/temp-dir.test-helper.js';
import { BILLION_LAUGHS, bombMessage } from '../../util/yaml.test-helper.js';
import { dryRunLooksUp, loadWatches } from './watches.js';

function withFile(text: string, fn: (file: string) => void): Promise<void> {
  return withTempDir('watches-', async (dir) => {
    const file = join(dir, 'watches.yaml');
    await writeFile(file, text);
    fn(file);
  });
}

/** The ValidationError loading the watches file gives; fails the test if it loads. */
function watchesError(file: string): ValidationError {
  try {
    loadWatches(file);
  } catch (err) {
    assert.ok(err instanceof ValidationError);
    return err;
  }
  assert.fail('expected a ValidationError');
}

describe('watches.yaml', () => {
  test('reads operator-sdk entries; charts are relative to the file', async () => {
    await withFile(
      `- group: demo.example.com
  version: v1alpha1
  kind: Nginx
  chart: helm-charts/nginx
  overrideValues:
    image.repository: \${IMG}
    replicas: 2
  reconcilePeriod: 30s
  maxConcurrentReconciles: 3
  selector:
    matchLabels: { tier: web }
    matchExpressions: [{ key: env, operator: In, values: [prod, stage] }]
- version: v1
  kind: Plain
  chart: /abs/chart.tgz
  watchDependentResources: false
`,
      (file) => {
        const [a, b] = loadWatches(file);
        assert.equal(a?.chart, join(file, '..', 'helm-charts', 'nginx'));
        assert.deepEqual(a?.overrideValues, { 'image.repository': '${IMG}', replicas: '2' });
        assert.equal(a?.selector, 'tier=web,env in (prod,stage)');
        assert.equal(a?.maxConcurrentReconciles, 3);
        assert.equal(a?.watchDependentResources, true);
        assert.equal(b?.group, '');
        assert.equal(b?.chart, '/abs/chart.tgz');
        assert.equal(b?.watchDependentResources, false);
      },
    );
  });

  test('reports every bad entry with its field', async () => {
    await withFile('- group: g\n  kind: 3\n- version: v1\n  kind: K\n  chart: c\n  maxConcurrentReconciles: 0\n', (file) => {
      const fields = watchesError(file).result.errors().map((p) => p.field);
      assert.deepEqual(fields.sort(), ['[0].chart', '[0].kind', '[0].version', '[1].maxConcurrentReconciles'].sort());
    });
  });

  test('dryRunOption: Helm\'s --dry-run values are carried on the entry; unset or empty is operator-sdk\'s default', async () => {
    await withFile(
      '- {version: v1, kind: A, chart: c, dryRunOption: server}\n- {version: v1, kind: B, chart: c, dryRunOption: "false"}\n- {version: v1, kind: C, chart: c, dryRunOption: ""}\n- {version: v1, kind: D, chart: c}\n',
      (file) => {
        assert.deepEqual(
          loadWatches(file).map((w) => w.dryRunOption),
          ['server', 'false', undefined, undefined],
        );
      },
    );
    assert.deepEqual(
      ['server', 'none', 'false', 'client', 'true', undefined].map((o) => dryRunLooksUp(o as Parameters<typeof dryRunLooksUp>[0])),
      [true, true, true, false, false, false],
      'as Helm 3.18\'s dry-run upgrade: only server, none and false let lookup reach the cluster',
    );
  });

  test('a dryRunOption Helm does not take, or an unquoted boolean, is an error naming the file, the entry and the field', async () => {
    await withFile('- {version: v1, kind: A, chart: c, dryRunOption: sever}\n- {version: v1, kind: B, chart: c, dryRunOption: false}\n', (file) => {
      const err = watchesError(file);
      const problems = err.result.errors();
      assert.deepEqual(problems.map((p) => p.field), ['[0].dryRunOption', '[1].dryRunOption']);
      assert.match(problems[0]?.message ?? '', /dryRunOption is "sever"; it must be one of none, false, true, client, server/);
      assert.match(problems[1]?.message ?? '', /is a boolean \(quote it/);
      assert.match(err.message, new RegExp(file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    });
  });

  test('more than 100 YAML aliases are read; an alias bomb is WATCHES_UNREADABLE naming the file', async () => {
    const many = `- {group: x, version: v1, kind: Nginx, chart: c, overrideValues: &l {a: x}}\n- {group: x, version: v1, kind: K, chart: c, overrideValues: {list: [${Array.from({ length: 300 }, () => '*l').join(', ')}]}}\n`;
    await withFile(many, (file) => {
      assert.deepEqual(loadWatches(file).map((w) => w.kind), ['Nginx', 'K']);
    });
    await withFile(`- {group: demo.example.com, version: v1, kind: Nginx, chart: c}\n- ${BILLION_LAUGHS.replace(/\n(?=.)/g, '\n  ')}`, (file) => {
      assert.throws(() => loadWatches(file), { code: 'WATCHES_UNREADABLE', message: bombMessage(file) });
    });
  });
});
