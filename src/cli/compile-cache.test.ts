/**
 * bin/binnacle.js keeps V8's compiled code in the user's cache (Node's compile cache) only where
 * no one else can write: V8 trusts what it loads from there. Each folder level is made one at a
 * time, so that a cache path Node's own recursive mkdir would spin on leaves the cache off.
 * On a Node without a compile cache (before 22.1) every case checks that nothing is made.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import module from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { BINNACLE_VERSION } from '../api/version.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'binnacle.js');
/** Whether this Node has a compile cache (22.1 and later). */
const HAS_CACHE = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

let work = '';
before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'binnacle-compile-cache-'));
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

/** `binnacle --version` with `env` (the compile cache's own variables unset unless given), killed after 30 s: a spin fails the test, it does not hang it. */
function version(env: Record<string, string>): Promise<void> {
  const { NODE_COMPILE_CACHE: _c, NODE_DISABLE_COMPILE_CACHE: _d, XDG_CACHE_HOME: _x, SUDO_UID: _s, ...rest } = process.env;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, '--version'], { cwd: ROOT, env: { ...rest, ...env }, timeout: 30_000, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err !== null) return reject(new Error(`binnacle --version with ${JSON.stringify(env)}: ${err.message} ${stderr}`));
      try {
        assert.equal(stdout.trim(), BINNACLE_VERSION);
        resolve();
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  });
}

/** A fresh folder under the test's own. */
function fresh(name: string): string {
  const dir = path.join(work, name);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** What Node wrote into a cache folder (its versioned subfolder's files), or [] when none. */
function cached(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((v) => (statSync(path.join(dir, v)).isDirectory() ? readdirSync(path.join(dir, v)).map((f) => `${v}/${f}`) : [v]));
}

test("the CLI's compiled code is kept under XDG_CACHE_HOME/binnacle, private to the user; NODE_DISABLE_COMPILE_CACHE keeps none", async () => {
  const home = fresh('plain');
  await version({ XDG_CACHE_HOME: home });
  const dir = path.join(home, 'binnacle', 'node-compile-cache');
  if (HAS_CACHE) {
    assert.ok(cached(dir).length > 0, "Node's cache was written there");
    assert.equal(statSync(path.join(home, 'binnacle')).mode & 0o777, 0o700, 'private to the user');
  } else assert.ok(!existsSync(dir), 'a Node without a compile cache makes no folder');
  const off = fresh('off');
  await version({ XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: '1' });
  assert.deepEqual(readdirSync(off), [], 'turned off: nothing made');
});

test('a cache folder another user could write is not used: a level writable by all, a level that is a link, a level owned by another user, a relative XDG_CACHE_HOME, and a run under sudo', async () => {
  // Writable by all (HOME=/tmp, as some containers and CI runners have): another user could leave code there.
  const open = fresh('open');
  mkdirSync(path.join(open, 'binnacle', 'node-compile-cache'), { recursive: true });
  chmodSync(path.join(open, 'binnacle'), 0o777);
  await version({ XDG_CACHE_HOME: open });
  assert.deepEqual(cached(path.join(open, 'binnacle', 'node-compile-cache')), [], 'a level writable by all: not used');

  // Binnacle's level is a link to a folder elsewhere (someone else's).
  const linked = fresh('linked');
  const elsewhere = fresh('elsewhere');
  symlinkSync(elsewhere, path.join(linked, 'binnacle'));
  await version({ XDG_CACHE_HOME: linked });
  assert.deepEqual(readdirSync(elsewhere), [], 'a linked level: nothing made through it');

  // A relative XDG_CACHE_HOME is ignored (the XDG spec): the cache goes under HOME/.cache.
  const home = fresh('home');
  const cwdCache = path.join(ROOT, 'relative-cache-should-not-exist');
  await version({ XDG_CACHE_HOME: 'relative-cache-should-not-exist', HOME: home });
  assert.ok(!existsSync(cwdCache), 'nothing made relative to the working folder');
  assert.equal(existsSync(path.join(home, '.cache', 'binnacle', 'node-compile-cache')), HAS_CACHE, 'HOME/.cache used instead');

  // A process acting for another user (sudo keeps the user's HOME): no cache at all.
  const sudo = fresh('sudo');
  await version({ XDG_CACHE_HOME: sudo, SUDO_UID: '1000' });
  assert.deepEqual(readdirSync(sudo), [], 'under sudo: nothing made');

  // Owned by another user (only root can give a folder away; CI runs as root).
  const foreign = fresh('foreign');
  mkdirSync(path.join(foreign, 'binnacle'), { mode: 0o755 });
  if (process.getuid?.() === 0) {
    chownSync(path.join(foreign, 'binnacle'), 65534, 65534);
    await version({ XDG_CACHE_HOME: foreign });
    assert.ok(!existsSync(path.join(foreign, 'binnacle', 'node-compile-cache')), "another user's level: nothing made in it");
  } else {
    // Not root: the folder is this user's own and private, so it is used (the other cases above hold either way).
    await version({ XDG_CACHE_HOME: foreign });
    assert.equal(existsSync(path.join(foreign, 'binnacle', 'node-compile-cache')), HAS_CACHE);
  }
});

test('a cache path whose parent cannot hold folders (under /proc, where recursive mkdir spins forever) leaves the cache off and the CLI runs', async () => {
  await version({ XDG_CACHE_HOME: '/proc/binnacle-nowhere/cache' });
  await version({ XDG_CACHE_HOME: '', HOME: '/proc/binnacle-nowhere' });
});
