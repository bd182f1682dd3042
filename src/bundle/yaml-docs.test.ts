import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { aliasLines, BILLION_LAUGHS, BOMB, BOMB_REASON } from '../util/yaml.test-helper.js';
import { parseYamlDocuments, relaxQuotedIndentation } from './yaml-docs.js';

describe('parseYamlDocuments', () => {
  // Found by fuzzing bundle directories: `*a` inserted into annotations.yaml threw a ReferenceError
  // out of the YAML library instead of a problem naming the file.
  it('an alias without its anchor is a yaml.syntax problem naming the file, and the other documents are kept', () => {
    const r = parseYamlDocuments('a: 1\n---\nb: *missing\n---\nc: 3\n', 'metadata/annotations.yaml');
    assert.deepEqual(
      r.documents.map((d) => d.index),
      [0, 2],
    );
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.rule, 'yaml.syntax');
    assert.equal(r.problems[0]?.severity, 'error');
    assert.equal(r.problems[0]?.file, 'metadata/annotations.yaml');
    assert.equal(r.problems[0]?.message, 'not valid YAML (document 1): YAML alias *missing has no anchor &missing before it');
  });

  it('aliases past the count that guards against a billion-laughs document are a problem, not an exception', () => {
    const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...'bcdefg'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcdefg'[i] ?? 'a'}`).join(', ')}]`)].join('\n');
    const r = parseYamlDocuments(`${laughs}\n`, 'manifests/csv.yaml');
    assert.deepEqual(r.documents, []);
    assert.equal(r.problems[0]?.rule, 'yaml.syntax');
    assert.match(r.problems[0]?.message ?? '', new RegExp(`^not valid YAML \\(document 0\\): ${BOMB.source}$`));
    const bomb = parseYamlDocuments(`a: 1\n---\n${BILLION_LAUGHS}`, 'manifests/csv.yaml');
    assert.deepEqual(bomb.problems, [{ severity: 'error', rule: 'yaml.syntax', message: `not valid YAML (document 1): ${BOMB_REASON}`, file: 'manifests/csv.yaml' }]);
  });

  it('more than 100 aliases (Go reads them; the yaml package stops at 100) are read', () => {
    const r = parseYamlDocuments(`a: 1\n---\n${aliasLines(1500)}`, 'manifests/csv.yaml');
    assert.deepEqual(r.problems, []);
    assert.equal((r.documents[1]?.value as { aliases: unknown[] }).aliases.length, 1500);
  });

  it('accepts under-indented continuation lines of quoted scalars, as Go does', () => {
    const text = 'a:\n  b: "one\n two"\n  c: \'x\n  y\'\n';
    const r = parseYamlDocuments(text, 'f.yaml');
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.documents[0]?.value, { a: { b: 'one two', c: 'x y' } });
  });

  it('handles CRLF files with escaped line breaks and tab-indented continuations', () => {
    const text = 'd: "first\\\r\n\t\\ second"\r\n';
    const r = parseYamlDocuments(text, 'f.yaml');
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.documents[0]?.value, { d: 'first second' });
  });

  it('reports real syntax errors with file and line', () => {
    const r = parseYamlDocuments('a: [1, 2\nb: 3\n', 'bad.yaml');
    assert.equal(r.problems.length > 0, true);
    assert.equal(r.problems[0]?.file, 'bad.yaml');
    assert.equal(r.problems[0]?.rule, 'yaml.syntax');
  });

  it('keeps multi-document files and drops empty documents', () => {
    const r = parseYamlDocuments('---\na: 1\n---\n---\nb: 2\n', 'm.yaml');
    assert.deepEqual(r.documents.map((d) => d.value), [{ a: 1 }, { b: 2 }]);
  });

  it('relaxQuotedIndentation leaves well-formed text alone', () => {
    const text = 'a: "x"\nb:\n  - "y"\n';
    assert.equal(relaxQuotedIndentation(text), text);
  });
});

describe('duplicate keys', () => {
  it('keeps the last value, as Go does, and warns with the line', () => {
    const r = parseYamlDocuments('a: 1\nb: 2\na: 3\n', 'd.yaml');
    assert.deepEqual(r.documents[0]?.value, { a: 3, b: 2 });
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.severity, 'warning');
    assert.equal(r.problems[0]?.rule, 'yaml.duplicate-key');
    assert.match(r.problems[0]?.message ?? '', /line 3/);
  });
});
