import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
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
      // The very step: its pattern is Go's, POSIX classes written out, case-insensitive exactly where Go's says (?i).
      const goPattern = (/^\| \d+ \| `(.*?)` \|/.exec(row)?.[1] ?? '').replaceAll('\\|', '|');
      const go = `${goPattern.replace('^(?i)', '^').replaceAll('[[:alnum:]]', '[A-Za-z0-9]')}/${goPattern.startsWith('^(?i)') ? 'i' : ''}`;
      const ts = /^(?:Given|When|Then)\(\/(.*\/i?),/.exec(line)?.[1]?.replaceAll('\\/', '/');
      assert.equal(ts, go, `${ref[0]} defines Go's step ${row.slice(0, 8)}`);
    } else {
      assert.equal(status, 'undefined', row.slice(0, 60));
      assert.equal(ref, null, `an undefined row names no TypeScript step: ${row.slice(0, 60)}`);
    }
  }
});

test("the scenarios that run elsewhere (where.ts) and the excluded ones (EXCLUDED.md) each name the line of a Scenario in the vendored features", async () => {
  const { excludedScenarios, IN_CLUSTER_FEATURES, REAL_NODE_SCENARIOS } = await import('./where.js');
  const features = join(HERE, '..', 'vendor', 'operator-controller-v1.11.0', 'test', 'e2e', 'features');
  const named = [...REAL_NODE_SCENARIOS, ...excludedScenarios().keys()];
  assert.ok(named.length >= 17, `the lists have their entries (${named.length})`);
  for (const where of named) {
    const [file, line] = where.split(':');
    const text = readFileSync(join(features, file ?? ''), 'utf8').split('\n')[Number(line) - 1] ?? '';
    assert.match(text, /^\s*Scenario( Outline)?:/, `${where} is a Scenario line: ${text.trim()}`);
  }
  for (const f of IN_CLUSTER_FEATURES) assert.ok(existsSync(join(features, `${f}.feature`)), `${f}.feature is vendored`);
});
