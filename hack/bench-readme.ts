/**
 * Writes README.md's benchmark tables from the stored results in bench/results/ (see
 * bench/lib/readme.ts): every `<!-- bench:NAME -->` … `<!-- /bench:NAME -->` block is generated
 * again, the rest of the file left as it is. test/bench/readme.test.ts fails when README.md
 * differs from what this writes.
 *
 * usage: npx tsx hack/bench-readme.ts [--check]   (--check: write nothing, exit 1 when README.md differs)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { markedTables, renderReadme } from '../bench/lib/readme.js';

const root = path.resolve(import.meta.dirname, '..');
const file = path.join(root, 'README.md');
const before = readFileSync(file, 'utf8');
const after = renderReadme(before, root);
const tables = markedTables(after).join(', ');
if (process.argv.includes('--check')) {
  if (after !== before) {
    console.error(`README.md's benchmark tables differ from the stored results: run npx tsx hack/bench-readme.ts`);
    process.exit(1);
  }
  console.log(`README.md's benchmark tables (${tables}) match the stored results`);
} else if (after === before) {
  console.log(`README.md unchanged (${tables})`);
} else {
  writeFileSync(file, after);
  console.log(`README.md: generated ${tables}`);
}
