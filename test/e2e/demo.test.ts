/**
 * The README's first command, run once in CI (issue 44 §5): `hack/demo.sh` (`npm run demo`) on a
 * fresh control plane of its own (BINNACLE_DEMO_CLUSTER, brought up by the demo itself and taken
 * down here), exactly as a newcomer runs it: it must end with exit code 0, having installed the
 * operators it names, served a Helm chart as an operator and deployed its CR. What it printed is
 * checked for the steps' own evidence (kubectl's tables), not only its exit code. Three runs in a
 * row on fresh clusters are on demand (`npm run demo`, after `binnacle cluster down`).
 *
 * At the end it stops the processes named in `.cache/demo/*.pid` of the checkout it runs in: in CI
 * a clean clone, but in a developer's checkout that is also their own demo's manager, if one runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const CLUSTER = `${process.env.BINNACLE_E2E_CLUSTER ?? 'e2e'}-demo`;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Stops what the demo leaves running (its manager and pelorus' operator), then its control plane. */
async function cleanUp(env: NodeJS.ProcessEnv): Promise<void> {
  for (const f of ['manager.pid', 'pelorus-operator.pid']) {
    const file = join(ROOT, '.cache', 'demo', f);
    if (!existsSync(file)) continue;
    const pid = Number(readFileSync(file, 'utf8').trim());
    try {
      if (pid > 0) process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await run(process.execPath, [join(ROOT, 'bin', 'binnacle.js'), 'cluster', 'down', '--name', CLUSTER], env, 120_000);
}

test('npm run demo on a fresh control plane ends with exit code 0, every step shown', { timeout: 20 * 60_000 }, async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, BINNACLE_DEMO_CLUSTER: CLUSTER };
  delete env.KUBECONFIG;
  await cleanUp(env); // a control plane a killed run left is not fresh
  try {
    const demo = await run('bash', [join(ROOT, 'hack', 'demo.sh')], env, 18 * 60_000);
    assert.equal(demo.code, 0, `the demo failed:\n${demo.out.slice(-6000)}`);
    // The evidence each step prints: the catalog served, both operators installed, the Helm kind usable and its CR deployed.
    assert.match(demo.out, /examples\s+.*True/, `ClusterCatalog examples Serving:\n${demo.out.slice(-3000)}`);
    assert.match(demo.out, /node-healthcheck-operator/);
    assert.match(demo.out, /opentelemetry-operator/);
    assert.match(demo.out, /FIELD: replicaCount/i, 'kubectl explain found the HelmOperator kind');
    assert.match(demo.out, /gateway\s+gateway\s+True/, 'the Pushgateway CR listed, Deployed');
    assert.doesNotMatch(demo.out, /kubectl does not see Pushgateway yet/, 'the kind was usable when Ready said so');
  } finally {
    await cleanUp(env);
  }
});
