#!/usr/bin/env node
// Entry point: runs the built CLI when there is one, the TypeScript sources otherwise (development).
// `npm run build` compiles dist/cli/ (tsc) and bundles it into dist/cli-bundle/ (src/cli/build-bundle.ts),
// which starts faster; both come from the one build, so the bundle is preferred.
// BINNACLE_UNBUNDLED=1 runs dist/cli/ instead (to compare), BINNACLE_FROM_SOURCE=1 the sources.
import { existsSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * V8's compiled code for the CLI's modules, kept between runs in the user's cache (Node >= 22.1;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off, NODE_COMPILE_CACHE names another folder): a command
 * compiles its modules once, not at every start. V8 trusts what it loads from there, so the folder
 * must be the user's alone: each level is the user's own and writable by no one else, Binnacle's
 * two levels real folders (not links), the base absolute (a relative XDG_CACHE_HOME is ignored, as
 * the XDG spec says), and no cache at all for a process acting for another user (sudo keeps the
 * user's HOME). Each level is made here, one at a time: Node's recursive mkdir spins forever on a
 * path whose parent cannot hold folders (under /proc, a dangling link). Any doubt leaves it off.
 */
function enableCompileCache() {
  if (typeof module.enableCompileCache !== 'function' || process.env.NODE_COMPILE_CACHE !== undefined || process.env.NODE_DISABLE_COMPILE_CACHE !== undefined) return;
  const uid = process.geteuid?.();
  if (uid === undefined || process.env.SUDO_UID !== undefined || process.getuid?.() !== uid) return;
  try {
    const xdg = process.env.XDG_CACHE_HOME;
    const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
    if (!isAbsolute(base)) return;
    let dir = base;
    for (const part of ['', 'binnacle', 'node-compile-cache']) {
      dir = part === '' ? base : join(dir, part);
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (err) {
        if (err?.code !== 'EEXIST') return;
      }
      // The base may be a link the user made (~/.cache -> /data/cache); Binnacle's own levels not.
      const st = part === '' ? statSync(dir) : lstatSync(dir);
      if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) return;
    }
    module.enableCompileCache(dir);
  } catch {
    // No cache: the CLI runs as it would without one.
  }
}
enableCompileCache();
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
