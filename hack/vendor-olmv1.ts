/**
 * Re-vendors what Binnacle takes from OLM v1 (operator-controller) at the pinned version:
 * downloads the module with `go mod download` (checked against the pinned sum) and copies each
 * piece of OLMV1_VENDORED (test/corpus/olmv1-vendor.test-helper.ts) unchanged, replacing what
 * was there. Files of ours (the READMEs) are left alone. To move to another version, change
 * OLMV1_MODULE there (version and sum), rename the vendor directory, run this, and read the diff.
 *
 * usage: node --import tsx hack/vendor-olmv1.ts
 */
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { OLMV1_MODULE, OLMV1_VENDORED, REPO_ROOT, filesUnder, olmv1ModuleDir } from '../test/corpus/olmv1-vendor.test-helper.js';

const mod = olmv1ModuleDir();
for (const piece of OLMV1_VENDORED) {
  const from = join(mod, piece.from);
  const to = join(REPO_ROOT, piece.to);
  const files = filesUnder(from);
  if (files.length === 0) throw new Error(`${OLMV1_MODULE.path}@${OLMV1_MODULE.version} has no ${piece.from}`);
  if (files[0] !== '') rmSync(to, { recursive: true, force: true });
  for (const f of files) {
    const target = join(to, f);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(from, f), target);
    chmodSync(target, 0o644); // the module cache is read-only
  }
  process.stdout.write(`${piece.from} → ${piece.to} (${files.length} file${files.length === 1 ? '' : 's'})\n`);
}
