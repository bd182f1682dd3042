import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decoder } from './decode.js';

describe('Decoder.stringMap', () => {
  it('keeps the string values, and names the file and field of each value that is not one', () => {
    const d = new Decoder('manifests/csv.yaml');
    assert.deepEqual(d.stringMap({ annotations: { a: 'x', b: 1, c: null, d: ['y'] } }, 'annotations', 'metadata'), { a: 'x' });
    assert.deepEqual(
      d.problems.map((p) => [p.file, p.field, p.message]),
      [
        ['manifests/csv.yaml', 'metadata.annotations.b', 'must be a string, got a number (quote it)'],
        ['manifests/csv.yaml', 'metadata.annotations.d', 'must be a string, got a list'],
      ],
    );
  });

  it('a key named __proto__ stays a key (it was dropped)', () => {
    const d = new Decoder('f.yaml');
    const m = d.stringMap(JSON.parse('{"labels": {"__proto__": "x", "a": "b"}}') as Record<string, unknown>, 'labels', '');
    assert.equal(JSON.stringify(m), '{"__proto__":"x","a":"b"}');
    assert.deepEqual(d.problems, []);
  });
});
