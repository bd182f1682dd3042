import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BinnacleError, ERROR_CLASSES, InputError, TerminalError, UsageError, ValidationError, ValidationResult, errorClassOf, httpStatusClass, type ErrorClass } from './errors.js';

const SRC = fileURLToPath(new URL('..', import.meta.url));

test('every error carries its class; the fixed ones say theirs, codes stay as they were', () => {
  const cases: [BinnacleError, ErrorClass, string][] = [
    [new BinnacleError('transient', 'OCI_UNREACHABLE', 'registry away'), 'transient', 'OCI_UNREACHABLE'],
    [new UsageError('unknown flag --bogus'), 'input', 'USAGE'],
    [new TerminalError('InvalidBundle', 'no CSV'), 'terminal', 'TERMINAL_INVALIDBUNDLE'],
    [new ValidationError(new ValidationResult('bundle p').error('csv.name', 'missing')), 'input', 'INVALID'],
    [new InputError('BAD_FIELD', 'must be a string', { file: 'a.yaml', field: 'spec.x' }), 'input', 'BAD_FIELD'],
  ];
  for (const [err, cls, code] of cases) {
    assert.equal(err.errorClass, cls, err.name);
    assert.equal(err.code, code, err.name);
    assert.ok(ERROR_CLASSES.includes(err.errorClass));
  }
  assert.equal(new UsageError('x').exitCode, 2);
});

test('errorClassOf: a BinnacleError says its own class; anything else is a bug Binnacle did not classify', () => {
  assert.equal(errorClassOf(new BinnacleError('terminal', 'X', 'x')), 'terminal');
  assert.equal(errorClassOf(new TypeError('x is undefined')), 'internal');
  assert.equal(errorClassOf('a string'), 'internal');
});

test('httpStatusClass: server errors, timeouts and rate limits may pass; other refusals answer the same until the reference changes', () => {
  for (const s of [500, 502, 503, 504, 408, 429]) assert.equal(httpStatusClass(s), 'transient', String(s));
  for (const s of [400, 401, 403, 404, 410]) assert.equal(httpStatusClass(s), 'input', String(s));
});

test('InputError keeps the bare detail beside the message with its file and field', () => {
  const e = new InputError('BUNDLE_GENERATE_OPTION', '1.x: expected a semantic version', { field: 'version' });
  assert.equal(e.message, 'version: 1.x: expected a semantic version');
  assert.equal(e.detail, '1.x: expected a semantic version');
});

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sourceFiles(p)));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.includes('test-helper')) out.push(p);
  }
  return out;
}

/** What may stand first in `new BinnacleError(`: a class, or a class taken from another error or an HTTP status. */
const CLASS_ARGUMENT = /^\s*(?:'(?:input|terminal|transient|internal)'|httpStatusClass\(|[\w.]+\.errorClass\b|cause instanceof BinnacleError \? cause\.errorClass)/;

test('source: every `new BinnacleError(` names its class first, and nothing throws a bare `new Error(`', async () => {
  const unclassified: string[] = [];
  const bare: string[] = [];
  let sites = 0;
  for (const file of await sourceFiles(SRC)) {
    const text = await readFile(file, 'utf8');
    const where = (i: number): string => `${relative(SRC, file)}:${text.slice(0, i).split('\n').length}`;
    for (const m of text.matchAll(/new BinnacleError\(/g)) {
      sites++;
      if (!CLASS_ARGUMENT.test(text.slice(m.index + m[0].length, m.index + m[0].length + 120))) unclassified.push(where(m.index));
    }
    // The console's page runs in the browser, where Binnacle's errors mean nothing to anyone.
    if (relative(SRC, file).startsWith(join('console', 'web'))) continue;
    for (const m of text.matchAll(/throw new Error\(/g)) bare.push(where(m.index));
  }
  assert.ok(sites > 150, `found only ${sites} sites: is the scan reading src/?`);
  assert.deepEqual(unclassified, [], 'BinnacleErrors built without a class first');
  assert.deepEqual(bare, [], 'plain Errors thrown where a BinnacleError (with its class) belongs');
});
