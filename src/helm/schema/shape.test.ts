import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { anyShape, intersect, isAny, neverShape, typedShape, union, type Shape } from './shape.js';
import { emit } from './emit.js';
import { patternProblem, formatKnown } from './formats.js';
import { resolveRef } from './refs.js';
import type { StructuralSchema } from './types.js';

function emitted(shape: Shape): { schema: StructuralSchema; warnings: string[] } {
  const warnings: string[] = [];
  const schema = emit(shape, 'x', (rule) => warnings.push(rule));
  return { schema, warnings };
}

function object(props: Record<string, Shape>, additional?: Shape['additional']): Shape {
  const s = typedShape('object');
  s.properties = new Map(Object.entries(props));
  if (additional !== undefined) s.additional = additional;
  return s;
}

describe('shape algebra', () => {
  it('union accepts what either side accepts', () => {
    const u = union([{ ...typedShape('string'), enum: ['a'] }, { ...typedShape('string'), enum: ['b'] }, { ...typedShape('string'), nullable: true, enum: [null] }]);
    assert.deepEqual([...(u.types ?? [])], ['string']);
    assert.equal(u.nullable, true);
    assert.deepEqual(u.enum, ['a', 'b', null]);
    assert.equal(union([typedShape('string'), anyShape()]).types, undefined, 'with any, anything goes');
    assert.equal(union([typedShape('string'), { ...typedShape('string'), pattern: '^a' }]).pattern, undefined, 'a constraint one side lacks is dropped');
    assert.equal(union([typedShape('integer'), { ...typedShape('string'), pattern: '^a' }]).pattern, '^a', 'a string constraint stays when the other side allows no strings');
  });

  it('union of objects: a key only one side lists is open on the other side, unless the shapes are examples of one list', () => {
    const a = object({ name: typedShape('string'), value: typedShape('string') });
    const b = object({ name: typedShape('string'), valueFrom: typedShape('object') });
    const exact = union([a, b]);
    assert.ok(isAny(exact.properties?.get('value') ?? neverShape()));
    const examples = union([a, b], 'examples');
    assert.deepEqual([...(examples.properties?.get('value')?.types ?? [])], ['string']);
    const closed = union([object({ a: typedShape('string') }, 'closed'), object({ b: typedShape('string') }, 'closed')]);
    assert.deepEqual([...(closed.properties?.get('a')?.types ?? [])], ['string'], 'a closed side contributes nothing for keys it lacks');
    assert.equal(closed.additional, 'closed');
  });

  it('intersect keeps the stricter bounds and narrows number to integer', () => {
    const i = intersect([{ ...typedShape('number'), minimum: { value: 1, exclusive: false } }, { ...typedShape('integer', 'string'), minimum: { value: 1, exclusive: true } }]);
    assert.deepEqual([...(i.types ?? [])], ['integer']);
    assert.deepEqual(i.minimum, { value: 1, exclusive: true });
    assert.ok(intersect([typedShape('string'), typedShape('boolean')]).types?.size === 0);
    assert.equal(intersect([anyShape('d'), typedShape('string')]).description, 'd');
  });

  it('emit applies the Kubernetes rules', () => {
    assert.deepEqual(emitted(typedShape('integer', 'string')).schema, { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(emitted(typedShape('integer', 'number')).schema, { type: 'number' });
    assert.deepEqual(emitted(typedShape('boolean', 'string')), { schema: { 'x-kubernetes-preserve-unknown-fields': true }, warnings: ['schema.type-union'] });
    assert.deepEqual(emitted(neverShape()), { schema: { 'x-kubernetes-preserve-unknown-fields': true }, warnings: ['schema.no-valid-value'] });
    assert.deepEqual(emitted({ ...typedShape('string'), nullable: true, enum: ['a', 1, null] }).schema, { type: 'string', nullable: true, enum: ['a'] });
    assert.deepEqual(emitted({ ...typedShape('string'), format: 'int32' }), { schema: { type: 'string' }, warnings: ['schema.format'] });
    assert.deepEqual(emitted({ ...typedShape('integer'), format: 'int32' }).schema, { type: 'integer', format: 'int32' });
    assert.deepEqual(emitted(object({ a: neverShape(), b: typedShape('string') }, 'closed')).schema, { type: 'object', properties: { b: { type: 'string' } } });
  });
});

describe('formats and patterns', () => {
  it('knows the formats Kubernetes validates', () => {
    assert.ok(formatKnown('date-time', 'string'));
    assert.ok(formatKnown('uuid', 'int-or-string'));
    assert.ok(!formatKnown('idn-hostname', 'string'));
    assert.ok(!formatKnown('uri', 'integer'));
  });

  it('refuses patterns RE2 cannot compile', () => {
    assert.equal(patternProblem('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'), undefined);
    assert.equal(patternProblem('^\\d+(\\.\\d+)?$'), undefined);
    assert.match(patternProblem('^(?=.*[A-Z]).+$') ?? '', /look-around/);
    assert.match(patternProblem('(a)\\1') ?? '', /back-references/);
    assert.match(patternProblem('a++') ?? '', /possessive/);
    assert.match(patternProblem('\\u00e9') ?? '', /RE2/);
    assert.match(patternProblem('[') ?? '', /not a valid regular expression/);
  });
});

describe('resolveRef', () => {
  const root = { $id: 'https://x.dev/s.json', definitions: { 'a/b': { type: 'string' }, 'c~d': { type: 'integer' } }, list: [{ type: 'boolean' }] };
  it('follows local JSON pointers with escapes', () => {
    assert.deepEqual(resolveRef(root, '#/definitions/a~1b'), { ok: true, node: { type: 'string' }, key: '#/definitions/a~1b' });
    assert.deepEqual(resolveRef(root, '#/definitions/c~0d'), { ok: true, node: { type: 'integer' }, key: '#/definitions/c~0d' });
    assert.deepEqual(resolveRef(root, '#/list/0'), { ok: true, node: { type: 'boolean' }, key: '#/list/0' });
    assert.deepEqual(resolveRef(root, 'https://x.dev/s.json#/list/0'), { ok: true, node: { type: 'boolean' }, key: '#/list/0' });
  });

  it('refuses what it cannot find and what lives elsewhere', () => {
    assert.deepEqual(resolveRef(root, '#/definitions/none'), { ok: false, reason: 'not-found' });
    assert.deepEqual(resolveRef(root, 'other.json#/a'), { ok: false, reason: 'remote' });
    assert.deepEqual(resolveRef(root, '#anchor'), { ok: false, reason: 'anchor' });
  });
});
