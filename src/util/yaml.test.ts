import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fastYamlDocument, fastYamlDocuments, yamlPackage } from './yaml.js';

/** What the `yaml` package (the exact reader) makes of `text`. */
function exact(text: string): unknown[] {
  return yamlPackage()
    .parseAllDocuments(text)
    .map((d) => d.toJS({ maxAliasCount: 1000 }) as unknown);
}

// The fast path is off by default (see fastYamlDocuments); these tests are of the path itself.
process.env.BINNACLE_FAST_YAML = '1';

describe('fastYamlDocuments', () => {
  it('reads plain scalars as the yaml package core schema does', () => {
    const text = [
      'a: 1', 'b: -12', 'c: +7', 'd: 0o17', 'e: 0x1F', 'f: 0b1', 'g: 1_000', 'h: 1.5', 'i: .5', 'j: 1e3', 'k: -.inf', 'l: .NaN',
      'm: true', 'n: False', 'o: yes', 'p: on', 'q: ~', 'r: Null', 's:', 't: "1"', "u: '0x1F'", 'v: 2001-01-01', 'w: 1.0.0', 'x: !!str 5',
      'y: [1, "2", three, {z: 4}]', 'z: |\n  line\n  next', '"quoted key": 1', '1.50: float key', 'true: bool key',
    ].join('\n');
    const fast = fastYamlDocuments(`${text}\n`);
    assert.ok(fast !== undefined);
    assert.deepEqual(fast, exact(`${text}\n`));
  });

  it('splits documents and keeps an empty one as null', () => {
    assert.deepEqual(fastYamlDocuments('a: 1\n---\n---\nb: 2\n'), [{ a: 1 }, null, { b: 2 }]);
    assert.deepEqual(fastYamlDocument('# only a comment\n'), { value: null });
    assert.equal(fastYamlDocument('a: 1\n---\nb: 2\n'), undefined, 'two documents are not one');
  });

  it('reads a null or collection key (which Go refuses) to its own string, not the yaml package\'s', () => {
    assert.deepEqual(fastYamlDocuments('~: a\n[x, y]: b\n'), [{ null: 'a', 'x,y': 'b' }]);
    assert.deepEqual(exact('~: a\n'), [{ '': 'a' }]);
  });

  it('declines what it would read differently or unsafely, so the yaml package decides', () => {
    for (const text of [
      'a: &x 1\nb: *x\n', // anchors and aliases (the yaml package limits alias expansion)
      'a: 1\na: 2\n', // a duplicate key (the yaml package warns and keeps the last)
      'a: "x"\n  b: 1\n', // a syntax error
      'a: !!binary aGk=\n', // tags outside the core schema
      'a: !custom x\n',
    ]) {
      assert.equal(fastYamlDocuments(text), undefined, JSON.stringify(text));
    }
  });
});
