import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { enumForNullable, enumsForNullables } from './nullable-enum.js';
import { checkStructural } from './structural.js';
import type { StructuralSchema } from './types.js';

describe('nullable enums', () => {
  it('moves the enum of a nullable node under allOf, dropping null entries', () => {
    const node: StructuralSchema = { type: 'string', nullable: true, enum: ['a', 'b', null] };
    enumForNullable(node);
    assert.deepEqual(node, { type: 'string', nullable: true, allOf: [{ enum: ['a', 'b'] }] });
  });

  it('leaves non-nullable nodes alone and walks the whole tree', () => {
    const schema: StructuralSchema = {
      type: 'object',
      properties: {
        a: { type: 'string', enum: ['x'] },
        b: { type: 'array', nullable: true, items: { type: 'integer', nullable: true, enum: [1, 2] } },
        m: { type: 'object', additionalProperties: { type: 'string', nullable: true, enum: ['y'] } },
      },
    };
    enumsForNullables(schema);
    assert.deepEqual(schema.properties?.a, { type: 'string', enum: ['x'] });
    assert.deepEqual(schema.properties?.b?.items, { type: 'integer', nullable: true, allOf: [{ enum: [1, 2] }] });
    assert.deepEqual(schema.properties?.m?.additionalProperties, { type: 'string', nullable: true, allOf: [{ enum: ['y'] }] });
    assert.deepEqual(checkStructural(schema), [], 'an enum under allOf is a structural value validation');
  });
});
