import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fastYamlDocument, fastYamlDocuments, readYaml, readYamlAll, YamlAliasError, yamlPackage, yamlValue } from './yaml.js';
import { BILLION_LAUGHS, BOMB_REASON } from './yaml.test-helper.js';

/** What the `yaml` package (the exact reader) makes of `text`. */
function exact(text: string): unknown[] {
  return yamlPackage()
    .parseAllDocuments(text)
    .map((d) => d.toJS({ maxAliasCount: 1000 }) as unknown);
}


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

  it('reads YAML 1.2, as the yaml package does, where YAML 1.1 (Go\'s yaml.v2) would differ: yes/no/on/off/y/n are strings, 0755 is decimal, sexagesimal is a string, << is a plain key', () => {
    const text = 'a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: 0755\nh: 1:30\ni: 0o755\nj: 190:20:30\nk: 2001-12-14t21:59:43.10-05:00\nbase: {x: 1}\nm: {<<: {x: 1}, y: 2}\n';
    const expected = [{ a: 'yes', b: 'no', c: 'on', d: 'off', e: 'y', f: 'n', g: 755, h: '1:30', i: 493, j: '190:20:30', k: '2001-12-14t21:59:43.10-05:00', base: { x: 1 }, m: { '<<': { x: 1 }, y: 2 } }];
    assert.deepEqual(fastYamlDocuments(text), expected);
    assert.deepEqual(readYamlAll(text, 'yaml-1.1.yaml'), expected, 'the yaml package alone reads the same');
    // A merge key through an alias: the fast reader declines (an anchor), the yaml package keeps `<<` as a key.
    assert.deepEqual(readYamlAll('base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n', 'merge.yaml'), [{ base: { x: 1 }, m: { '<<': { x: 1 }, y: 2 } }]);
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

/** A list of `n` aliases of one small map. */
function manyAliases(n: number): string {
  return `a: &a {x: 1}\nb: [${Array.from({ length: n }, () => '*a').join(', ')}]\n`;
}

describe('yamlValue, readYaml, readYamlAll: aliases as Go reads them', () => {
  it('reads more than 100 aliases (the yaml package stops at 100), each the anchored value', () => {
    const v = readYaml(manyAliases(150), 'many.yaml') as { b: unknown[] };
    assert.equal(v.b.length, 150);
    assert.deepEqual(v.b[149], { x: 1 });
  });

  it('reads 30,000 aliases in one pass (the yaml package scans every alias before each: 8 s)', { timeout: 20_000 }, () => {
    const v = readYaml(manyAliases(30_000), 'many.yaml') as { b: unknown[] };
    assert.equal(v.b.length, 30_000);
  });

  it('reads what Go reads up to its limit: 99% of the nodes through aliases, and refuses past it', () => {
    const list = (n: number): string => `a: &a [${Array.from({ length: 100 }, (_, i) => i).join(', ')}]\nb: [${Array.from({ length: n }, () => '*a').join(', ')}]\n`;
    assert.equal((readYaml(list(2000), 'x') as { b: unknown[] }).b.length, 2000);
    assert.throws(() => readYaml(list(6000), 'six.yaml'), (err: unknown) => err instanceof YamlAliasError && /^six\.yaml: excessive YAML aliasing \(an alias bomb\?\): its aliases expand to [\d,]+ of [\d,]+ nodes, more than the \d+% Go's YAML \(Helm, kubectl\) accepts$/.test(err.message));
  });

  it('refuses a billion laughs at once, naming the source and the reason', { timeout: 10_000 }, () => {
    assert.throws(() => readYaml(BILLION_LAUGHS, 'laughs.yaml'), (err: unknown) => {
      assert.ok(err instanceof YamlAliasError);
      assert.equal(err.code, 'YAML_ALIASES');
      assert.equal(err.file, 'laughs.yaml');
      assert.equal(err.message, `laughs.yaml: ${BOMB_REASON}`);
      assert.equal(err.reason, BOMB_REASON);
      return true;
    });
  });

  it('refuses an alias without its anchor and an alias inside its own anchor', () => {
    assert.throws(() => readYaml('a: *x\n', 'f.yaml'), { name: 'YamlAliasError', message: 'f.yaml: YAML alias *x has no anchor &x before it' });
    assert.throws(() => readYaml('a: &x [1, *x]\n', 'f.yaml'), { name: 'YamlAliasError', message: 'f.yaml: YAML alias *x is inside the node its anchor &x names (it would contain itself)' });
  });

  it('resolves an alias to the last anchor of its name before it; merge keys when asked', () => {
    assert.deepEqual(readYaml('a: &x 1\nb: *x\nc: &x 2\nd: *x\n', 'f'), { a: 1, b: 1, c: 2, d: 2 });
    assert.deepEqual(readYaml('a: &a {x: 1}\nb:\n  <<: *a\n  y: 2\n', 'f', { merge: true }), { a: { x: 1 }, b: { x: 1, y: 2 } });
  });

  it('leaves the document as it was (its aliases resolve as the yaml package resolves them)', () => {
    const doc = yamlPackage().parseDocument('a: &a 1\nb: *a\n');
    assert.deepEqual(yamlValue(doc, 'f'), { a: 1, b: 1 });
    const alias = (doc.contents as { items: { value: object }[] }).items[1]?.value;
    assert.ok(alias !== undefined && !Object.hasOwn(alias, 'resolve'));
    assert.equal(doc.toString(), 'a: &a 1\nb: *a\n');
  });

  it('names the source, line and document of a syntax error', () => {
    assert.throws(() => readYaml('a: [1\n', 'f.yaml'), { name: 'YamlError', code: 'YAML_INVALID', message: /^f\.yaml: not valid YAML \(line 2, column 1\): / });
    assert.throws(() => readYamlAll('a: 1\n---\nb: *q\n', 's.yaml'), { name: 'YamlAliasError', message: 's.yaml: document 2: YAML alias *q has no anchor &q before it' });
    assert.throws(() => readYamlAll('a: 1\n---\nb: [\n', 's.yaml'), { code: 'YAML_INVALID', message: /^s\.yaml: document 2: not valid YAML/ });
    assert.deepEqual(readYamlAll('a: 1\n---\n---\nb: 2\n', 's'), [{ a: 1 }, null, { b: 2 }]);
  });
});

describe('nesting deeper than MAX_NESTING', () => {
  /** Calls `f` under `frames` more stack frames, as a reader deep in a controller would. */
  const under = <T>(frames: number, f: () => T): T => (frames === 0 ? f() : under(frames - 1, f));
  const deep = {
    'block sequences': { text: `${'- '.repeat(5000)}x\n`, at: /\(line 1, column 517\)/ },
    'flow sequences': { text: `a: [${'['.repeat(5000)}${']'.repeat(5000)}]\n`, at: /\(line 1, column 261\)/ },
    'indented maps': { text: `k:\n${Array.from({ length: 400 }, (_, i) => `${' '.repeat(i + 1)}b:\n`).join('')}`, at: /\(line 258, column 258\)/ },
    // js-yaml stops at the tab first; the `yaml` package's syntax tree is measured instead.
    'after a syntax error': { text: `a: 1\n\tb: 2\nc: ${'['.repeat(5000)}${']'.repeat(5000)}\n`, at: /\(line 3, column / },
  };
  for (const [name, { text, at }] of Object.entries(deep)) {
    it(`refuses ${name} as a syntax error naming the line, never composing it (a stack overflow there can abort the process)`, () => {
      assert.throws(() => under(500, () => readYaml(text, 'deep.yaml')), (e: Error & { code?: string }) => {
        assert.equal(e.name, 'YamlError');
        assert.equal(e.code, 'YAML_INVALID');
        assert.match(e.message, /^deep\.yaml: not valid YAML /);
        if (name !== 'after a syntax error') assert.match(e.message, at);
        assert.match(e.message, name === 'after a syntax error' ? /Tabs|nested deeper than 256 levels/ : /nested deeper than 256 levels$/);
        return true;
      });
      const docs = under(500, () => yamlPackage().parseAllDocuments(text));
      assert.ok(Array.isArray(docs) && docs.length >= 1);
      assert.ok(docs.some((d) => d.errors.length > 0), 'the document carries the error');
      assert.equal(fastYamlDocuments(text), undefined, 'the fast reader declines it');
    });
  }
  it('refuses the deep part that follows a syntax error too', () => {
    const text = `a: 1\n\tb: 2\nc: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const doc = yamlPackage().parseDocument(text);
    assert.deepEqual(doc.errors.map((e) => e.code), ['RESOURCE_EXHAUSTION']);
    assert.match(doc.errors[0]?.message ?? '', /^nested deeper than 256 levels at line 3, column /);
  });
  it("tells a caller's line counter the lines, as the parser would", () => {
    const y = yamlPackage();
    const lineCounter = new y.LineCounter();
    const doc = y.parseDocument(`a: 1\nb: 2\nc: ${'['.repeat(400)}${']'.repeat(400)}\n`, { lineCounter });
    assert.equal(doc.errors[0]?.code, 'RESOURCE_EXHAUSTION');
    assert.deepEqual(lineCounter.linePos(doc.errors[0]?.pos[0] ?? -1), { line: 3, col: 261 });
  });
  it('reads 256 levels, far deeper than any real text', () => {
    const text = `${'- '.repeat(256)}x\n`;
    let v: unknown = readYaml(text, 'ok.yaml');
    let depth = 0;
    while (Array.isArray(v)) {
      v = (v as unknown[])[0];
      depth++;
    }
    assert.deepEqual([v, depth], ['x', 256]);
    assert.deepEqual(fastYamlDocuments(text), [readYaml(text, 'ok.yaml')]);
  });
});
