/**
 * The README's folder table (issue 44 §5) names every top-level folder of src/, one row each,
 * and no folder that is gone: a folder added or moved fails here until the table says what it is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const SRC = import.meta.dirname;

test("the README's folder table has one row for each top-level folder of src/, and none for a folder that is gone", () => {
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `src/${d.name}`)
    .sort();
  const readme = readFileSync(join(SRC, '..', 'README.md'), 'utf8');
  const rows = [...readme.matchAll(/^\| `(src\/[^`]+)` \|/gm)].map((m) => (m[1] ?? '').replace(/\/$/, '')).sort();
  assert.deepEqual(rows, folders);
});
