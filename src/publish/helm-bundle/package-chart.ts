/**
 * A chart directory as a `.tgz`, like `helm package`, but byte-for-byte reproducible: the files
 * Helm's directory loader reads (its `.helmignore` honoured, symlinks followed), under one
 * top-level folder named after the chart, in path order, written by the deterministic tar
 * writer of `oci/` (uid/gid 0, mtime 0) and gzipped without a name or time.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { TAR_END, entryHeader, filePadding } from '../../oci/tar-writer.js';
import { InputError } from '../../util/errors.js';
import { parseHelmignore, type IgnoreRules } from './helmignore.js';

/** A chart that is shipped in one ConfigMap has far fewer files; more means a wrong directory. */
const MAX_FILES = 10_000;

/** Relative paths (slash-separated) of the files Helm's loader takes from `dir`. */
export async function chartFiles(dir: string): Promise<string[]> {
  const ignoreText = await readFile(join(dir, '.helmignore'), 'utf8').catch(() => '');
  const rules = parseHelmignore(ignoreText, join(dir, '.helmignore'));
  const out: string[] = [];
  await walk(dir, '', rules, out, new Set());
  return out;
}

async function walk(abs: string, rel: string, rules: IgnoreRules, out: string[], seen: Set<string>): Promise<void> {
  const names = (await readdir(abs)).sort();
  for (const name of names) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const full = join(abs, name);
    // stat follows symlinks, as Helm's sympath.Walk does.
    const st = await stat(full).catch((err: unknown) => {
      throw new InputError('HELM_CHART_FILE', `cannot read: ${err instanceof Error ? err.message : String(err)}`, { file: full });
    });
    if (st.isDirectory()) {
      if (rules.ignores(path, true)) continue;
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) throw new InputError('HELM_CHART_FILE', 'symlink loop', { file: full });
      await walk(full, path, rules, out, new Set([...seen, key]));
      continue;
    }
    if (rules.ignores(path, false)) continue;
    if (!st.isFile()) throw new InputError('HELM_CHART_FILE', 'cannot load irregular file as it has file mode type bits set', { file: full });
    out.push(path);
    if (out.length > MAX_FILES) throw new InputError('HELM_CHART_FILE', `more than ${MAX_FILES} files`, { file: abs });
  }
}

/** The chart in `dir` as a reproducible `.tgz`, every file under `<name>/`. */
export async function packageChartDir(dir: string, name: string): Promise<Buffer> {
  const files = await chartFiles(dir);
  if (!files.includes('Chart.yaml')) throw new InputError('HELM_NO_CHART', 'no Chart.yaml (is this a chart directory?)', { file: dir });
  const parts: Buffer[] = [];
  for (const rel of files) {
    const data = await readFile(join(dir, rel));
    parts.push(entryHeader({ type: 'file', path: `${name}/${rel}`, mode: 0o644, size: data.length }), data, filePadding(data.length));
  }
  parts.push(TAR_END);
  return gzipSync(Buffer.concat(parts), { level: 9 });
}
