/**
 * hack/test.sh runs the unit files in one process, but for those that say
 * `// test process: its own`: a file that reads the process's own peak memory, or whose
 * endless-read guard stops the process, must say so, or it would end (or read) every other
 * file's run. A top-level beforeEach or afterEach would run around every file's tests: none in
 * unit files (a top-level before or after still runs once).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = import.meta.dirname;
const MARKER = /^\/\/ test process: its own/m;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'testdata' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const files = testFiles(SRC).map((f) => ({ file: path.relative(SRC, f), text: readFileSync(f, 'utf8') }));

test('a unit file that reads the process peak memory or may stop the process runs in its own process', () => {
  const needs = files.filter(({ text }) => /endless-read\.test-helper|resourceUsage\(\)\.maxRSS|process\.exit\(/.test(text));
  assert.ok(needs.length >= 4, `found ${needs.length}`);
  assert.deepEqual(needs.filter(({ text }) => !MARKER.test(text)).map(({ file }) => file), []);
});

test('no unit file has a top-level beforeEach or afterEach hook (it would run around every file’s tests)', () => {
  const hooks = files.filter(({ text }) => !MARKER.test(text) && /^(beforeEach|afterEach)\(/m.test(text)).map(({ file }) => file);
  assert.deepEqual(hooks, []);
});
