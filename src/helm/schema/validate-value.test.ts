import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateValue, valueViolations } from './validate-value.js';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: '^[a-z]+$', maxLength: 5 },
    replicas: { type: 'integer', minimum: 1 },
    ratio: { type: 'number', maximum: 1, exclusiveMaximum: true },
    mode: { type: 'string', enum: ['a', 'b'] },
    tag: { type: 'string', nullable: true },
    port: { 'x-kubernetes-int-or-string': true },
    free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    anything: { 'x-kubernetes-preserve-unknown-fields': true },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    list: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } }, required: ['k'] } },
  },
};

function rules(value: unknown): string[] {
  return valueViolations(schema, value).map((v) => `${v.rule} ${v.path}`);
}

describe('validateValue (the structural subset)', () => {
  it('accepts values that fit', () => {
    assert.deepEqual(
      rules({ name: 'abc', replicas: 2, ratio: 0.5, mode: 'a', tag: null, port: '8080', free: { x: { y: 1 } }, anything: [1, 'x'], labels: { a: 'b' }, list: [{ k: 'v' }] }),
      [],
    );
    assert.deepEqual(rules({ port: 80 }), []);
  });

  it('reports what the API server would reject', () => {
    assert.deepEqual(rules({ name: 'ABCDEFG', replicas: 0, ratio: 1, mode: 'c', port: 1.5, labels: { a: 1 }, list: [{}] }), [
      'maxLength name',
      'pattern name',
      'minimum replicas',
      'maximum ratio',
      'enum mode',
      'type port',
      'type labels.a',
      'required list[0]',
    ]);
    assert.deepEqual(rules({ replicas: '2' }), ['type replicas']);
  });

  it('reports what the API server would drop: undeclared keys and nulls in non-nullable fields', () => {
    assert.deepEqual(rules({ unknown: 1, name: null, list: [{ k: 'v', extra: true }] }), ['pruned ', 'null name', 'pruned list[0]']);
    assert.deepEqual(rules({ anything: null }), ['null anything'], 'preserving unknown fields does not keep a null: only nullable does');
    const [pruned] = valueViolations(schema, { unknown: 1 });
    assert.equal(pruned?.key, 'unknown');
  });

  it('honours value validations under anyOf/oneOf/not without pruning inside them', () => {
    const s = { type: 'string', anyOf: [{ pattern: '^a' }, { maxLength: 2 }], not: { enum: ['abc'] } };
    assert.deepEqual(valueViolations(s, 'axxxx'), []);
    assert.deepEqual(valueViolations(s, 'xx'), []);
    assert.deepEqual(valueViolations(s, 'xxx').map((v) => v.rule), ['anyOf']);
    assert.deepEqual(valueViolations(s, 'abc').map((v) => v.rule), ['not']);
    const obj = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, oneOf: [{ required: ['a'] }, { required: ['b'] }] };
    assert.deepEqual(valueViolations(obj, { a: 'x' }), []);
    assert.deepEqual(valueViolations(obj, { a: 'x', b: 'y' }).map((v) => v.rule), ['oneOf']);
  });

  it('a null never matches an enum, but allOf/anyOf/oneOf/not are not evaluated for nulls', () => {
    assert.deepEqual(valueViolations({ type: 'string', nullable: true, enum: ['a', null] }, null).map((v) => v.rule), ['enum']);
    assert.deepEqual(valueViolations({ type: 'string', nullable: true, allOf: [{ enum: ['a'] }] }, null), []);
    assert.deepEqual(valueViolations({ type: 'string', nullable: true, allOf: [{ enum: ['a'] }] }, 'b').map((v) => v.rule), ['enum']);
    assert.deepEqual(valueViolations({ type: 'array', items: { 'x-kubernetes-int-or-string': true } }, [null]), [], 'an untyped item may be null');
  });

  it('renders problems with file and values path', () => {
    const [p] = validateValue(schema, { replicas: 'x' }, { file: 'demo/values.yaml' });
    assert.deepEqual(p, { severity: 'error', rule: 'value.type', message: '"x" is not of type integer', field: 'replicas', file: 'demo/values.yaml' });
  });
});
