import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseValuesYaml } from './values-yaml.js';
import { valuesSchema } from './values-schema.js';
import { InputError } from '../../util/errors.js';
import { aliasLines, BILLION_LAUGHS, BOMB_REASON } from '../../util/yaml.test-helper.js';

describe('parseValuesYaml', () => {
  it('reads YAML as Helm does: 1.1 booleans and octals, timestamps and sexagesimals stay strings, merge keys work', () => {
    const { values } = parseValuesYaml('a: yes\nb: off\nc: 010\nd: 2024-01-02\ne: 1:30\nbase: &b {x: 1}\nf:\n  <<: *b\n  z: 2\n', 'demo/values.yaml');
    assert.deepEqual(values, { a: true, b: false, c: 8, d: '2024-01-02', e: '1:30', base: { x: 1 }, f: { x: 1, z: 2 } });
  });

  it('an empty file is an empty map', () => {
    assert.deepEqual(parseValuesYaml('', 'demo/values.yaml').values, {});
    assert.deepEqual(parseValuesYaml('# only comments\n', 'demo/values.yaml').values, {});
  });

  it('a syntax error is an InputError naming the file, line and column', () => {
    assert.throws(
      () => parseValuesYaml('a: 1\nb: [1, 2\nc: 3\n', 'demo/values.yaml'),
      (e: unknown) => e instanceof InputError && e.code === 'VALUES_YAML' && e.file === 'demo/values.yaml' && /^line \d+, column \d+$/.test(e.field ?? ''),
    );
    assert.throws(
      () => parseValuesYaml('a: 1\na: 2\n', 'demo/values.yaml'),
      (e: unknown) => e instanceof InputError && e.field === 'line 2, column 1',
    );
  });

  it('more than 100 aliases, which Helm accepts, are read; an alias bomb is VALUES_YAML naming the file', () => {
    assert.equal((parseValuesYaml(aliasLines(500), 'c/values.yaml').values.aliases as unknown[]).length, 500);
    assert.throws(() => parseValuesYaml(BILLION_LAUGHS, 'c/values.yaml'), (err: unknown) => err instanceof InputError && err.code === 'VALUES_YAML' && err.message === `c/values.yaml: cannot read values: ${BOMB_REASON}`);
  });

  it('values that are not a map are refused', () => {
    assert.throws(() => parseValuesYaml('- a\n- b\n', 'demo/values.yaml'), (e: unknown) => e instanceof InputError && e.code === 'VALUES_NOT_A_MAP');
  });
});

describe('valuesSchema input errors', () => {
  it('bad values.schema.json is an InputError naming the file and the line', () => {
    assert.throws(
      () => valuesSchema({ valuesYaml: '', schemaJson: '{\n  "type": "object",\n  "properties": {,}\n}', chartName: 'pelorus/charts/exporters' }),
      (e: unknown) => e instanceof InputError && e.file === 'pelorus/charts/exporters/values.schema.json' && /^line 3, column \d+$/.test(e.field ?? ''),
    );
    assert.throws(() => valuesSchema({ valuesYaml: '', schemaJson: '[1]', chartName: 'x' }), (e: unknown) => e instanceof InputError && e.code === 'VALUES_SCHEMA_JSON');
  });

  it('bad values.yaml is an InputError even when the chart has a schema', () => {
    assert.throws(
      () => valuesSchema({ valuesYaml: 'a: [', schemaJson: '{"type":"object"}', chartName: 'x' }),
      (e: unknown) => e instanceof InputError && e.file === 'x/values.yaml',
    );
  });

  it('a blank values.schema.json counts as none', () => {
    assert.equal(valuesSchema({ valuesYaml: 'a: 1', schemaJson: '  \n', chartName: 'x' }).source, 'values.yaml');
  });
});
