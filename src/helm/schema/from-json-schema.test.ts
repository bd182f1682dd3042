import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { valuesSchema } from './values-schema.js';
import { checkStructural } from './structural.js';
import type { ValuesSchemaOptions, ValuesSchemaResult } from './types.js';

/** Converts a values.schema.json (as an object) with nulls not widened, so expectations stay small. */
function convert(schema: unknown, valuesYaml = '', options: ValuesSchemaOptions = {}): ValuesSchemaResult {
  const r = valuesSchema({ valuesYaml, schemaJson: JSON.stringify(schema), chartName: 'demo', options: { allowNullOverrides: false, ...options } });
  assert.deepEqual(checkStructural(r.schema, { root: false }), [], 'every result is structural');
  return r;
}

function rules(r: ValuesSchemaResult): string[] {
  return r.warnings.map((w) => `${w.rule} ${w.field ?? ''}`);
}

describe('values.schema.json → structural schema', () => {
  it('keeps types, descriptions and value validations, and preserves keys JSON Schema allows', () => {
    const r = convert({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        replicas: { type: 'integer', minimum: 1, maximum: 10, description: 'How many' },
        mode: { type: 'string', enum: ['a', 'b'], pattern: '^[ab]$', title: 'Mode' },
        image: { type: 'object', required: ['repository'], properties: { repository: { type: 'string', minLength: 1 } } },
      },
    });
    assert.equal(r.source, 'values.schema.json');
    assert.deepEqual(r.schema, {
      type: 'object',
      properties: {
        replicas: { description: 'How many', type: 'integer', minimum: 1, maximum: 10 },
        mode: { title: 'Mode', type: 'string', pattern: '^[ab]$', enum: ['a', 'b'] },
        image: { type: 'object', properties: { repository: { type: 'string', minLength: 1 } }, 'x-kubernetes-preserve-unknown-fields': true, required: ['repository'] },
      },
      'x-kubernetes-preserve-unknown-fields': true,
    });
    assert.deepEqual(r.warnings, []);
  });

  it('inlines local $ref (definitions and $defs) and cuts recursion with preserve-unknown-fields', () => {
    const r = convert({
      definitions: { port: { type: 'integer', description: 'A port' } },
      $defs: { node: { type: 'object', description: 'A tree node', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
      type: 'object',
      properties: { http: { $ref: '#/definitions/port' }, tree: { $ref: '#/$defs/node' } },
    });
    const props = r.schema.properties ?? {};
    assert.deepEqual(props.http, { description: 'A port', type: 'integer' });
    const tree = props.tree;
    assert.equal(tree?.type, 'object');
    assert.deepEqual(tree?.properties?.children?.items, { description: 'A tree node', 'x-kubernetes-preserve-unknown-fields': true, nullable: true });
    assert.deepEqual(rules(r), ['schema.ref-cycle tree.children[]']);
  });

  it('refuses remote $refs with a warning and keeps any value there', () => {
    const r = convert({ type: 'object', properties: { pod: { $ref: 'https://kubernetesjsonschema.dev/v1.18.0/podspec.json', description: 'Pod' }, gone: { $ref: '#/definitions/missing' } } });
    assert.deepEqual(r.schema.properties?.pod, { description: 'Pod', 'x-kubernetes-preserve-unknown-fields': true, nullable: true });
    assert.deepEqual(r.schema.properties?.gone, { 'x-kubernetes-preserve-unknown-fields': true, nullable: true });
    assert.deepEqual(rules(r), ['schema.remote-ref pod', 'schema.unresolved-ref gone']);
    assert.match(r.warnings[0]?.message ?? '', /does not fetch/);
  });

  it('resolves a $ref that spells out the document $id, and $ref siblings narrow the target', () => {
    const r = convert({
      $id: 'https://example.com/values.schema.json',
      definitions: { name: { type: 'string', description: 'target' } },
      type: 'object',
      properties: { a: { $ref: 'https://example.com/values.schema.json#/definitions/name', description: 'sibling', maxLength: 5 } },
    });
    assert.deepEqual(r.schema.properties?.a, { description: 'sibling', type: 'string', maxLength: 5 });
  });

  it('maps type lists with null to nullable, integer|string to int-or-string, and other mixes to preserve-unknown', () => {
    const r = convert({
      type: 'object',
      properties: {
        tag: { type: ['string', 'null'] },
        port: { type: ['integer', 'string'] },
        portOrNull: { type: ['integer', 'string', 'null'] },
        ratio: { type: ['integer', 'number'] },
        anything: { type: ['object', 'string'] },
        onlyNull: { type: 'null' },
      },
    });
    const p = r.schema.properties ?? {};
    assert.deepEqual(p.tag, { type: 'string', nullable: true });
    assert.deepEqual(p.port, { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(p.portOrNull, { 'x-kubernetes-int-or-string': true, nullable: true });
    assert.deepEqual(p.ratio, { type: 'number' });
    assert.deepEqual(p.anything, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(p.onlyNull, { 'x-kubernetes-preserve-unknown-fields': true, nullable: true });
    assert.deepEqual(rules(r), ['schema.type-union anything']);
  });

  it('anyOf/oneOf: integer|string becomes int-or-string, agreeing branches merge, disagreeing ones keep any value', () => {
    const r = convert({
      type: 'object',
      properties: {
        quantity: { anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^[0-9]+m?$' }] },
        name: { oneOf: [{ type: 'string' }, { type: 'null' }], description: 'name' },
        env: {
          oneOf: [
            { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } }, required: ['name'] },
            { type: 'object', properties: { name: { type: 'string' }, valueFrom: { type: 'object' } }, required: ['name', 'valueFrom'] },
          ],
        },
        extra: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'object' }] },
        level: { oneOf: [{ const: 'debug' }, { const: 'info' }] },
      },
    });
    const p = r.schema.properties ?? {};
    assert.deepEqual(p.quantity, { 'x-kubernetes-int-or-string': true, pattern: '^[0-9]+m?$' });
    assert.deepEqual(p.name, { description: 'name', type: 'string', nullable: true });
    assert.deepEqual(p.env, {
      type: 'object',
      properties: {
        name: { type: 'string' },
        value: { 'x-kubernetes-preserve-unknown-fields': true, nullable: true },
        valueFrom: { 'x-kubernetes-preserve-unknown-fields': true, nullable: true },
      },
      'x-kubernetes-preserve-unknown-fields': true,
      required: ['name'],
    });
    assert.deepEqual(p.extra, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(p.level, { type: 'string', enum: ['debug', 'info'] });
    assert.deepEqual(rules(r), ['schema.type-union extra']);
  });

  it('allOf intersects: properties and required add up, bounds take the stricter side', () => {
    const r = convert({
      type: 'object',
      properties: {
        size: { allOf: [{ type: 'integer', minimum: 1 }, { minimum: 3, maximum: 9 }] },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'boolean' } }, required: ['b'] }] },
      },
    });
    const p = r.schema.properties ?? {};
    assert.deepEqual(p.size, { type: 'integer', minimum: 3, maximum: 9 });
    assert.deepEqual(p.both, {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'boolean' } },
      'x-kubernetes-preserve-unknown-fields': true,
      required: ['a', 'b'],
    });
  });

  it('additionalProperties: a schema without properties is a map; with properties the keys are kept and others preserved; false closes', () => {
    const r = convert({
      type: 'object',
      properties: {
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        free: { type: 'object', additionalProperties: true },
        mixed: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'integer' } },
        closed: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
        patterned: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false, patternProperties: { '^x-': { type: 'string' } } },
      },
    });
    const p = r.schema.properties ?? {};
    assert.deepEqual(p.labels, { type: 'object', additionalProperties: { type: 'string' } });
    assert.deepEqual(p.free, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(p.mixed, { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(p.closed, { type: 'object', properties: { a: { type: 'string' } } });
    assert.deepEqual(p.patterned, { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(rules(r).sort(), ['schema.additional-properties mixed', 'schema.pattern-properties patterned']);
  });

  it('drops keywords Kubernetes rejects, converts const and draft-6 exclusive bounds', () => {
    const r = convert({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'x',
      type: 'object',
      examples: [{}],
      properties: {
        kind: { const: 'Web' },
        weight: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        legacy: { type: 'number', minimum: 0, exclusiveMinimum: true },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, contains: { const: 'x' } },
        tls: { type: 'object', if: { properties: { enabled: { const: true } } }, then: { required: ['secret'] }, properties: { enabled: { type: 'boolean' } } },
        data: { type: 'string', contentEncoding: 'base64', format: 'byte' },
        email: { type: 'string', format: 'idn-email' },
        when: { type: 'string', format: 'date-time' },
      },
    });
    const p = r.schema.properties ?? {};
    assert.deepEqual(p.kind, { type: 'string', enum: ['Web'] });
    assert.deepEqual(p.weight, { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true });
    assert.deepEqual(p.legacy, { type: 'number', minimum: 0, exclusiveMinimum: true });
    assert.deepEqual(p.tags, { type: 'array', items: { type: 'string' } });
    assert.deepEqual(p.data, { type: 'string', format: 'byte' });
    assert.deepEqual(p.email, { type: 'string' });
    assert.deepEqual(p.when, { type: 'string', format: 'date-time' });
    assert.deepEqual(rules(r).sort(), [
      'schema.dropped-keyword tags',
      'schema.dropped-keyword tags',
      'schema.dropped-keyword tls',
      'schema.dropped-keyword tls',
      'schema.format email',
    ]);
  });

  it('drops patterns RE2 cannot compile, with a warning', () => {
    const r = convert({ type: 'object', properties: { a: { type: 'string', pattern: '^(?!admin).*$' }, b: { type: 'string', pattern: '^[a-z]+$' } } });
    assert.deepEqual(r.schema.properties?.a, { type: 'string' });
    assert.deepEqual(r.schema.properties?.b, { type: 'string', pattern: '^[a-z]+$' });
    assert.deepEqual(rules(r), ['schema.pattern a']);
  });

  it('tuple items become one items schema; items without a schema keep any value', () => {
    const r = convert({
      type: 'object',
      properties: {
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'string' }], additionalItems: false },
        loose: { type: 'array' },
      },
    });
    assert.deepEqual(r.schema.properties?.pair, { type: 'array', items: { type: 'string' } });
    assert.deepEqual(r.schema.properties?.loose, { type: 'array', items: { 'x-kubernetes-preserve-unknown-fields': true, nullable: true } });
  });

  it('infers the type of an untyped enum, and keeps any value for untyped nodes', () => {
    const r = convert({ type: 'object', properties: { policy: { enum: ['Always', 'IfNotPresent', null] }, blob: { description: 'anything' } } });
    assert.deepEqual(r.schema.properties?.policy, { type: 'string', nullable: true, allOf: [{ enum: ['Always', 'IfNotPresent'] }] }, 'a nullable enum moves under allOf');
    assert.deepEqual(r.schema.properties?.blob, { description: 'anything', 'x-kubernetes-preserve-unknown-fields': true, nullable: true });
  });

  it('the root is always an object, even when the schema root has no type', () => {
    const r = convert({ properties: { a: { type: 'string' } } });
    assert.equal(r.schema.type, 'object');
    assert.equal(r.schema.nullable, undefined);
  });

  it('drops defaults unless asked to keep them, and keeps only those valid for their node', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string', default: 'x' }, b: { type: 'integer', default: 'not a number' }, c: { type: 'object', properties: { d: { type: 'string' } }, additionalProperties: false, default: { e: 1 } } },
    };
    assert.equal(convert(schema).schema.properties?.a?.default, undefined);
    const kept = convert(schema, '', { defaults: 'keep' });
    assert.equal(kept.schema.properties?.a?.default, 'x');
    assert.equal(Object.hasOwn(kept.schema.properties?.b ?? {}, 'default'), false);
    assert.equal(Object.hasOwn(kept.schema.properties?.c ?? {}, 'default'), false);
    assert.deepEqual(rules(kept), ['schema.default-dropped b', 'schema.default-dropped c']);
  });
});
