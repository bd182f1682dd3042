/**
 * CI's smoke subset of operator-controller v1.11.0's own e2e scenarios (issue 45 §2): a few
 * scenarios of the vendored feature files, unchanged, run by @cucumber/cucumber with the
 * TypeScript steps of test/olmv1-scenarios/ against a Binnacle manager on this lane's control
 * plane. The whole suite runs on demand: `npm run olmv1-scenarios` (its result is at the top of
 * test/olmv1-scenarios/STEPS.md). A scenario here fails the test as it fails cucumber: a failed,
 * undefined or pending step (the run is --strict).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { e2eKubeconfig, e2eRegistry } from './env.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FEATURES = join('test', 'vendor', 'operator-controller-v1.11.0', 'test', 'e2e', 'features');
/**
 * One scenario of each feature file that has one Binnacle passes in the full run (by file:line;
 * demos, ha, proxy and status have none that runs here; metrics and tls run against the manager
 * in-cluster on the real node, their smoke in real-node.test.ts), and a
 * second of revision.feature's ClusterObjectSet ones: every probe type past its phases, and objects
 * from a Secret whose content changes under the revision (blocked, then restored).
 */
export const SMOKE = ['install.feature:11', 'update.feature:19', 'recover.feature:10', 'uninstall.feature:33', 'vap-access-control.feature:96', 'revision.feature:214', 'revision.feature:476', 'user-managed-fields.feature:55'];

test(`operator-controller's own scenarios, a smoke subset (${SMOKE.join(', ')}), pass`, { timeout: 15 * 60_000 }, async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, BINNACLE_E2E_KUBECONFIG: e2eKubeconfig(), BINNACLE_E2E_REGISTRY: e2eRegistry(), E2E_STEP_TIMEOUT: process.env.E2E_STEP_TIMEOUT ?? '3m' };
  const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
    const child = spawn('bash', [join(ROOT, 'test', 'olmv1-scenarios', 'run.sh'), ...SMOKE.map((s) => join(FEATURES, s))], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', (code) => resolve({ code, text }));
  });
  assert.equal(out.code, 0, `cucumber failed:\n${out.text.slice(-6000)}`);
  assert.match(out.text, new RegExp(`${SMOKE.length} scenarios? \\(${SMOKE.length} passed\\)`), out.text.slice(-2000));
});
