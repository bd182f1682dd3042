import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli as cli } from '../in-process.test-helper.js';

const TESTDATA = path.join(import.meta.dirname, '..', '..', 'catalog', 'testdata');

describe('binnacle catalog', () => {
  it('validate: exit 0 and a summary for a valid catalog', async () => {
    const r = await cli(['catalog', 'validate', path.join(TESTDATA, 'fbc/valid')]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /valid \(2 packages, 2 channels, 5 bundles\)/);
  });

  it('validate: exit 1 and the problem tree for an invalid one; -o json lists problems', async () => {
    const r = await cli(['catalog', 'validate', path.join(TESTDATA, 'invalid-model')]);
    assert.equal(r.code, 1);
    assert.match(r.out, /channel "stable"\n.*\[channel\.skip-range\]/);
    assert.match(r.err, /validation errors/);
    const j = await cli(['catalog', 'validate', path.join(TESTDATA, 'invalid-model'), '-o', 'json']);
    const parsed = JSON.parse(j.out) as { valid: boolean; problems: { rule: string }[] };
    assert.equal(parsed.valid, false);
    assert.ok(parsed.problems.some((p) => p.rule === 'channel.replaces-cycle'));
  });

  it('validate: a broken file is reported with file, line and field, not a stack trace', async () => {
    const r = await cli(['catalog', 'validate', path.join(TESTDATA, 'bad/wrong-types')]);
    assert.equal(r.code, 1);
    assert.match(r.out, /catalog\.json:2: entries\[2\]\.name: expected a string, got a number/);
    assert.doesNotMatch(r.out + r.err, /\n\s+at /);
  });

  it('render: FBC out in json or yaml; usage errors exit 2', async () => {
    const r = await cli(['catalog', 'render', path.join(TESTDATA, 'fbc/valid'), '-o', 'yaml']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^---\nschema: olm.package\nname: alpha-op\n/);
    assert.equal((await cli(['catalog', 'render', path.join(TESTDATA, 'fbc/valid'), '-o', 'table'])).code, 2);
    assert.equal((await cli(['catalog', 'template', 'fancy', 'x.yaml'])).code, 2);
    assert.equal((await cli(['catalog', 'serve', path.join(TESTDATA, 'fbc/valid'), '--port', 'abc'])).code, 2);
  });

  it('render: a source that cannot be read fails with exit 1 and a named reason', async () => {
    const r = await cli(['catalog', 'render', path.join(TESTDATA, 'bad/broken-yaml')]);
    assert.equal(r.code, 1);
    assert.match(r.err, /error \[fbc\.parse\] .*catalog\.yaml:5/);
  });
});

describe('binnacle catalog render (partial)', () => {
  it('renders the good sources, reports the bad ones, and exits 1', async () => {
    const r = await cli(['catalog', 'render', path.join(TESTDATA, 'fbc/valid'), path.join(TESTDATA, 'bad/wrong-types')]);
    assert.equal(r.code, 1);
    assert.match(r.out, /"name": "alpha-op"/);
    assert.match(r.err, /error \[fbc\.field\]/);
    assert.match(r.err, /could not be rendered/);
  });
});
