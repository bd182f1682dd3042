#!/usr/bin/env node
// Entry point: runs the built CLI when there is one, the TypeScript sources otherwise (development).
// `npm run build` compiles dist/cli/ (tsc) and bundles it into dist/cli-bundle/ (src/cli/build-bundle.ts),
// which starts faster; both come from the one build, so the bundle is preferred.
// BINNACLE_UNBUNDLED=1 runs dist/cli/ instead (to compare), BINNACLE_FROM_SOURCE=1 the sources.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const candidates = process.env.BINNACLE_FROM_SOURCE
  ? []
  : [...(process.env.BINNACLE_UNBUNDLED ? [] : [join(root, 'dist', 'cli-bundle', 'main.js')]), join(root, 'dist', 'cli', 'main.js')];
const built = candidates.find((f) => existsSync(f));
if (built !== undefined) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
}
