// A node:test reporter that writes one line per test file, `<seconds>\t<file>`: the time from the
// file's first test starting to its last one ending (top-level tests' durations added when
// files run one at a time). hack/test.sh prints the ten slowest at the end of every run.
import { relative } from 'node:path';

export default async function* fileTimings(source) {
  const byFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (file === undefined || nesting !== 0) continue;
    byFile.set(file, (byFile.get(file) ?? 0) + (details?.duration_ms ?? 0));
  }
  for (const [file, ms] of byFile) yield `${(ms / 1000).toFixed(1)}\t${relative(process.cwd(), file)}\n`;
}
