import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { acceptChartDefaults, dropInvalidDefaults } from './chart-defaults.js';
import { allowNullOverrides, relaxForOverrides } from './overrides.js';
import { valueViolations } from './validate-value.js';
import { valuesSchema } from './values-schema.js';
import type { StructuralSchema } from './types.js';

describe('acceptChartDefaults', () => {
  it('widens the schema just enough for the chart defaults, one warning per change', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        tag: { type: 'string' },
        replicas: { type: 'integer' },
        port: { type: 'integer' },
        mode: { type: 'string', enum: ['a'] },
        name: { type: 'string', pattern: '^[a-z]+$', minLength: 3 },
        obj: { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] },
        weird: { type: 'boolean' },
      },
    };
    const defaults = { tag: null, replicas: 1.5, port: 'http', mode: 'b', name: '', obj: { a: 'x', c: 1 }, weird: [1] };
    const warnings = acceptChartDefaults(schema, defaults, 'demo/values.schema.json');
    assert.deepEqual(valueViolations(schema, defaults), []);
    const p = schema.properties ?? {};
    assert.deepEqual(p.tag, { type: 'string', nullable: true });
    assert.deepEqual(p.replicas, { type: 'number' });
    assert.deepEqual(p.port, { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(p.mode, { type: 'string', enum: ['a', 'b'] });
    assert.deepEqual(p.name, { type: 'string' });
    assert.deepEqual(p.obj, { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(p.weird, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(
      warnings.map((w) => w.field ?? ''),
      ['tag', 'replicas', 'port', 'mode', 'name', 'name', 'obj', 'obj', 'weird'],
    );
    assert.ok(warnings.every((w) => w.rule === 'schema.default-conflict' && w.file === 'demo/values.schema.json'));
  });

  it('changes nothing when the defaults fit', () => {
    const schema: StructuralSchema = { type: 'object', properties: { a: { type: 'string' } } };
    assert.deepEqual(acceptChartDefaults(schema, { a: 'x' }, 'f'), []);
    assert.deepEqual(schema, { type: 'object', properties: { a: { type: 'string' } } });
  });

  it('valuesSchema reconciles a values.schema.json that contradicts its values.yaml', () => {
    const r = valuesSchema({
      valuesYaml: 'image:\n  tag: null\nreplicas: 1\n',
      schemaJson: JSON.stringify({ type: 'object', properties: { image: { type: 'object', properties: { tag: { type: 'string' } } }, replicas: { type: 'string' } } }),
      chartName: 'demo',
      options: { allowNullOverrides: false },
    });
    assert.deepEqual(
      r.warnings.map((w) => `${w.rule} ${w.field ?? ''}`),
      ['schema.default-conflict image.tag', 'schema.default-conflict replicas'],
    );
    assert.equal(r.schema.properties?.image?.properties?.tag?.nullable, true);
    assert.equal(r.schema.properties?.replicas?.['x-kubernetes-int-or-string'], true);
  });
});

describe('dropInvalidDefaults', () => {
  it('removes defaults that do not validate or would be pruned', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        ok: { type: 'string', default: 'x' },
        bad: { type: 'integer', default: 'x' },
        pruned: { type: 'object', properties: { a: { type: 'string' } }, default: { b: 1 } },
      },
    };
    const warnings = dropInvalidDefaults(schema, 'f');
    assert.deepEqual(warnings.map((w) => w.field), ['bad', 'pruned']);
    assert.equal(schema.properties?.ok?.default, 'x');
    assert.equal(Object.hasOwn(schema.properties?.bad ?? {}, 'default'), false);
  });
});

describe('overrides', () => {
  it('a CR need not repeat required keys values.yaml provides', () => {
    const schema: StructuralSchema = {
      type: 'object',
      required: ['image', 'name'],
      minProperties: 1,
      properties: {
        image: { type: 'object', required: ['repository', 'tag'], properties: { repository: { type: 'string' }, tag: { type: 'string' } } },
        name: { type: 'string' },
        list: { type: 'array', items: { type: 'object', required: ['k'], properties: { k: { type: 'string' } } } },
      },
    };
    relaxForOverrides(schema, { image: { repository: 'nginx' }, list: [{ k: 'a' }] });
    assert.deepEqual(schema.required, ['name']);
    assert.equal(schema.minProperties, undefined);
    assert.deepEqual(schema.properties?.image?.required, ['tag']);
    assert.deepEqual(schema.properties?.list?.items?.required, ['k'], 'list elements are replaced whole, so their rules stay');
  });

  it('fields a merge reaches become nullable, an enum moving under allOf; list items do not', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        mode: { type: 'string', enum: ['a'] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        list: { type: 'array', items: { type: 'string' } },
      },
    };
    allowNullOverrides(schema);
    assert.deepEqual(schema.properties?.mode, { type: 'string', nullable: true, allOf: [{ enum: ['a'] }] });
    assert.deepEqual(schema.properties?.labels, { type: 'object', additionalProperties: { type: 'string', nullable: true }, nullable: true });
    assert.deepEqual(schema.properties?.list, { type: 'array', items: { type: 'string' }, nullable: true });
    assert.deepEqual(valueViolations(schema, { mode: null, labels: { a: null }, list: null }), []);
    assert.deepEqual(valueViolations(schema, { mode: 'z' }).map((v) => `${v.rule} ${v.path}`), ['enum mode'], 'the enum still holds for other values');
  });
});
