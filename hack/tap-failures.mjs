// Prints each failed test of the given TAP files with its error, shortly, so the end of a CI log
// (often all that is kept) says what failed and why, not only how many.
// usage: node hack/tap-failures.mjs FILE.tap...
import { readFileSync, existsSync } from 'node:fs';

const MAX_LINES = 25;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) continue;
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (m === null) continue;
    const indent = m[1].length;
    const detail = [];
    // The YAML block that follows: its `error:` entry, up to the next key at the same depth.
    let inError = false;
    for (let j = i + 1; j < lines.length && !/^\s*(not )?ok \d+ /.test(lines[j]); j++) {
      const l = lines[j];
      const key = /^\s*([a-zA-Z_]+):/.exec(l);
      if (key !== null && l.search(/\S/) === indent + 2) inError = key[1] === 'error' || key[1] === 'expected' || key[1] === 'actual';
      if (inError) detail.push(l.slice(indent + 2));
      if (/^\s*\.\.\.$/.test(l)) break;
    }
    // Suites that failed only because a test in them failed say nothing new.
    if (detail.join('\n').includes("subtest") && detail.length <= 2) continue;
    console.log(`✖ ${m[2]}`);
    for (const d of detail.slice(0, MAX_LINES)) console.log(`    ${d}`);
    if (detail.length > MAX_LINES) console.log(`    … ${detail.length - MAX_LINES} more lines in ${file}`);
  }
}
