import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

test("STEPS.md's Go step → TypeScript step table: every row marked done names the line of a step definition, every row naming none is marked undefined", () => {
  const rows = readFileSync(join(HERE, 'STEPS.md'), 'utf8')
    .split('\n')
    .filter((l) => /^\| \d+ \|/.test(l));
  assert.ok(rows.length >= 100, `the table has its rows (${rows.length})`);
  const files = new Map<string, string[]>();
  const lines = (file: string): string[] => {
    let l = files.get(file);
    if (l === undefined) files.set(file, (l = readFileSync(join(HERE, file), 'utf8').split('\n')));
    return l;
  };
  for (const row of rows) {
    const cells = row.split(' | ');
    const status = (cells.at(-1) ?? '').replace(/\s*\|$/, '');
    const ref = /test\/olmv1-scenarios\/([\w-]+\.ts):(\d+)/.exec(row);
    // "done", or "done (why it differs from Go)".
    if (/^done\b/.test(status)) {
      assert.ok(ref !== null, `a done row names its TypeScript step: ${row.slice(0, 60)}`);
      const line = lines(ref[1] ?? '')[Number(ref[2]) - 1] ?? '';
      assert.match(line, /^(Given|When|Then)\(/, `${ref[0]} is a step definition (${row.slice(0, 12)})`);
    } else {
      assert.equal(status, 'undefined', row.slice(0, 60));
      assert.equal(ref, null, `an undefined row names no TypeScript step: ${row.slice(0, 60)}`);
    }
  }
});
