import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkStructural } from './structural.js';

/** `rule field` of each problem, sorted. */
function found(schema: unknown, root = true): string[] {
  return checkStructural(schema, { root })
    .map((p) => `${p.rule} ${p.field ?? ''}`)
    .sort();
}

describe('checkStructural', () => {
  it('accepts a structural schema', () => {
    const schema = {
      type: 'object',
      properties: {
        metadata: { type: 'object' },
        spec: {
          type: 'object',
          properties: {
            port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
            anything: { 'x-kubernetes-preserve-unknown-fields': true },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            list: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 3 },
            name: { type: 'string', nullable: true, default: 'x', anyOf: [{ pattern: '^a' }, { maxLength: 3 }] },
          },
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    };
    assert.deepEqual(checkStructural(schema), []);
  });

  it('every node needs a type unless it preserves unknown fields or is int-or-string', () => {
    assert.deepEqual(found({ properties: { a: {}, b: { type: 'array', items: {} } } }), [
      'structural.type-required properties[a].type',
      'structural.type-required properties[b].items.type',
      'structural.type-required type',
    ]);
  });

  it('the root is an object without additionalProperties; arrays need items', () => {
    assert.deepEqual(found({ type: 'string' }), ['structural.root-type type']);
    assert.deepEqual(found({ type: 'object', additionalProperties: { type: 'string' } }), ['structural.additional-properties-root additionalProperties']);
    assert.deepEqual(found({ type: 'object', additionalProperties: { type: 'string' } }, false), []);
    assert.deepEqual(found({ type: 'object', properties: { l: { type: 'array' } } }), ['structural.items-required properties[l].items']);
  });

  it('properties and additionalProperties exclude each other (additionalProperties: true aside)', () => {
    assert.deepEqual(found({ type: 'object', properties: { a: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: { type: 'string' } } } }), [
      'structural.properties-and-additional-properties properties[a].additionalProperties',
    ]);
    assert.deepEqual(found({ type: 'object', properties: { a: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false } } }), [
      'structural.properties-and-additional-properties properties[a].additionalProperties',
    ]);
    assert.deepEqual(found({ type: 'object', properties: { a: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: true } } }), []);
  });

  it('refuses keywords the CRD API does not support, and unknown keywords', () => {
    assert.deepEqual(
      found({
        type: 'object',
        definitions: {},
        properties: {
          a: { $ref: '#/definitions/x' },
          b: { type: 'null' },
          c: { type: ['string', 'null'] },
          d: { type: 'array', items: [{ type: 'string' }] },
          e: { type: 'array', items: { type: 'string' }, uniqueItems: true },
          f: { type: 'string', const: 'x' },
          g: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
          h: { type: 'object', patternProperties: { '.*': { type: 'string' } } },
        },
      }),
      [
        'structural.forbidden definitions',
        'structural.forbidden properties[a].$ref',
        'structural.forbidden properties[h].patternProperties',
        'structural.items-list properties[d].items',
        'structural.preserve-unknown-fields properties[g].x-kubernetes-preserve-unknown-fields',
        'structural.type properties[b].type',
        'structural.type properties[c].type',
        'structural.type-required properties[a].type',
        'structural.type-required properties[c].type',
        'structural.unique-items properties[e].uniqueItems',
        'structural.unknown-keyword properties[f].const',
      ],
    );
  });

  it('value validations must not specify types, descriptions, defaults or nullable, nor mention metadata', () => {
    assert.deepEqual(
      found({
        type: 'object',
        properties: {
          a: { type: 'string', anyOf: [{ type: 'string', description: 'x' }, { nullable: true }] },
          b: { type: 'object', properties: { metadata: { type: 'object' } }, allOf: [{ properties: { metadata: { default: {} } } }] },
          c: { type: 'integer', not: { 'x-kubernetes-int-or-string': true } },
        },
      }),
      [
        'structural.value-validation properties[a].anyOf[0].description',
        'structural.value-validation properties[a].anyOf[0].type',
        'structural.value-validation properties[a].anyOf[1].nullable',
        'structural.value-validation properties[b].allOf[0].properties[metadata]',
        'structural.value-validation properties[b].allOf[0].properties[metadata].default',
        'structural.value-validation properties[c].not.x-kubernetes-int-or-string',
      ],
    );
  });

  it('the two int-or-string patterns may name types in anyOf', () => {
    const anyOf = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
    const allOf = { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^x' }] };
    assert.deepEqual(found({ type: 'object', properties: { a: anyOf, b: allOf } }), []);
    assert.deepEqual(found({ type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } } }), [
      'structural.int-or-string properties[a].x-kubernetes-preserve-unknown-fields',
    ]);
  });

  it('fields named in value validations must exist in the structural part', () => {
    assert.deepEqual(found({ type: 'object', properties: { a: { type: 'object', anyOf: [{ properties: { x: { pattern: '^a' } } }, { required: ['y'] }] } } }), [
      'structural.incomplete properties[a].properties[x]',
    ]);
    assert.deepEqual(found({ type: 'object', properties: { a: { type: 'array', items: { type: 'string' }, allOf: [{ items: { maxLength: 3 } }] } } }), []);
  });

  it('metadata at the root may only restrict name and generateName', () => {
    assert.deepEqual(found({ type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } } } }), []);
    assert.deepEqual(found({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), ['structural.metadata properties[metadata]']);
    assert.deepEqual(found({ type: 'object', properties: { metadata: { type: 'object', description: 'no' } } }), ['structural.metadata properties[metadata]']);
    assert.deepEqual(found({ type: 'object', properties: { kind: { type: 'integer' } } }), ['structural.metadata properties[kind].type']);
    assert.deepEqual(
      found({ type: 'object', properties: { spec: { type: 'object', properties: { metadata: { type: 'object', description: 'ok', properties: { labels: { type: 'object' } } } } } } }),
      [],
      'metadata below the root is an ordinary field',
    );
  });

  it('embedded resources need type object and properties or preserve-unknown-fields', () => {
    assert.deepEqual(found({ type: 'object', properties: { r: { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } }), [
      'structural.embedded-resource properties[r].type',
    ]);
    assert.deepEqual(found({ type: 'object', properties: { r: { type: 'object', 'x-kubernetes-embedded-resource': true } } }), ['structural.embedded-resource properties[r].properties']);
  });

  it('defaults and enum values must validate against their node, and a default must survive pruning', () => {
    assert.deepEqual(
      found({
        type: 'object',
        properties: {
          a: { type: 'integer', default: 'x' },
          b: { type: 'object', properties: { c: { type: 'string' } }, default: { c: 'ok', d: 1 } },
          e: { type: 'string', enum: ['x', 1] },
          f: { type: 'string', default: null },
          g: { type: 'string', nullable: true, default: null },
        },
      }),
      ['structural.default properties[a].default', 'structural.default properties[b].default', 'structural.default properties[f].default', 'structural.enum properties[e].enum[1]'],
    );
  });

  it('patterns must be RE2; keyword values must have the right type', () => {
    assert.deepEqual(found({ type: 'object', properties: { a: { type: 'string', pattern: '(?<=x)y' }, b: { type: 'string', minLength: -1, nullable: 'yes' } } }), [
      'structural.keyword-type properties[b].minLength',
      'structural.keyword-type properties[b].nullable',
      'structural.pattern properties[a].pattern',
    ]);
  });

  it('prefixes fields with the given path', () => {
    const [p] = checkStructural({ type: 'object', properties: { a: {} } }, { path: 'spec.versions[0].schema.openAPIV3Schema' });
    assert.equal(p?.field, 'spec.versions[0].schema.openAPIV3Schema.properties[a].type');
    assert.equal(p?.severity, 'error');
  });
});
