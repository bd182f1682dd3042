import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { existsSync, readFileSync } from 'node:fs';
import { memoryCgroup, sweepCgroups } from '../../bench/lib/cgroup.js';

/** Runs `node -e script` inside the cgroup; resolves with how it ended. */
function runIn(cg: NonNullable<ReturnType<typeof memoryCgroup>>, script: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { cmd, args } = cg.wrap(process.execPath, ['-e', script]);
  const child = spawn(cmd, args, { stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

// Touches every page of 96 MiB, holds it a moment, and exits 0.
const ALLOCATE_96_MIB = 'const b = Buffer.alloc(96 * 1024 * 1024, 1); setTimeout(() => process.exit(b[12345] === 1 ? 0 : 3), 200);';

test("a process tree's peak is the cgroup's count of it, children included", async () => {
  const cg = memoryCgroup(`binnacle-test-peak-${process.pid}`);
  assert.ok(cg !== undefined, 'the benches run as root with a memory controller, as this machine has');
  try {
    // The allocation happens in a grandchild: the shell's exec'd node spawns another node.
    const nested = `const r = require('node:child_process').spawnSync(process.execPath, ['-e', ${JSON.stringify(ALLOCATE_96_MIB)}]); process.exit(r.status ?? 9);`;
    const ended = await runIn(cg, nested);
    assert.deepEqual(ended, { code: 0, signal: null });
    assert.ok(cg.peakMib() >= 96, `peak ${cg.peakMib().toFixed(1)} MiB counts the grandchild's 96 MiB`);
    assert.equal(cg.oomKills(), 0);
  } finally {
    cg.remove();
  }
});

test('a memory limit is enforced as a container limit is: the tree is OOM-killed and counted', async () => {
  const cg = memoryCgroup(`binnacle-test-limit-${process.pid}`, 48);
  assert.ok(cg !== undefined);
  try {
    assert.equal(cg.limitMib, 48);
    const ended = await runIn(cg, ALLOCATE_96_MIB);
    assert.equal(ended.signal, 'SIGKILL', `killed for the limit, not ${JSON.stringify(ended)}`);
    assert.ok(cg.oomKills() >= 1, 'the kill is counted');
    assert.ok(cg.peakMib() <= 48.5, `peak ${cg.peakMib().toFixed(1)} MiB held to the limit`);
  } finally {
    cg.remove();
  }
});

test('a cgroup name that could leave its folder is refused', () => {
  assert.throws(() => memoryCgroup('../escape'), /letters, digits/);
  assert.throws(() => memoryCgroup('a/b'), /letters, digits/);
  assert.throws(() => memoryCgroup('..'), /letters, digits/);
  assert.throws(() => memoryCgroup('.'), /letters, digits/);
});

test("a killed run's cgroups are swept at the next start, with what still runs in them", async () => {
  const name = `binnacle-test-sweep-${process.pid}`;
  const cg = memoryCgroup(name);
  assert.ok(cg !== undefined);
  const { cmd, args } = cg.wrap('sleep', ['300']);
  const child = spawn(cmd, args, { stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  // Wait until the shell has joined the cgroup and exec'd sleep.
  for (let i = 0; i < 100 && readFileSync(`${cg.dir}/cgroup.procs`, 'utf8').trim() === ''; i++) await new Promise((r) => setTimeout(r, 20));
  assert.notEqual(readFileSync(`${cg.dir}/cgroup.procs`, 'utf8').trim(), '', 'the process joined the cgroup');
  assert.deepEqual(sweepCgroups(name), [name]);
  assert.equal(await exited, 'SIGKILL', 'what ran in it is killed');
  assert.equal(existsSync(cg.dir), false, 'the folder is gone');
});
