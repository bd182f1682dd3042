/**
 * `binnacle manager` ends non-zero on a fatal error, so that a Deployment restarts it: here an
 * API server that cannot be reached (start-up fails) and one given as plain http:// (a one-line
 * error, no stack trace). The process must end by itself, not linger serving /healthz.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../util/temp-dir.test-helper.js';

const MAIN = join(import.meta.dirname, '..', 'main.ts');

function kubeconfig(server: string, insecure: boolean): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster:',
    `    server: ${server}`,
    ...(insecure ? ['    insecure-skip-tls-verify: true'] : []),
    'contexts:',
    '- name: c',
    '  context: {cluster: c, user: u}',
    'current-context: c',
    'users:',
    '- name: u',
    '  user: {token: abc}',
    '',
  ].join('\n');
}

/** Runs `binnacle manager` and answers its exit code and stderr; kills it after `limitMs`. */
async function manager(kc: string, dir: string): Promise<{ code: number | null; stderr: string; killed: boolean }> {
  const file = join(dir, `kc-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, kc);
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'manager', '--kubeconfig', file, '--data-dir', join(dir, 'data'), '--metrics-bind-address', '127.0.0.1:0', '--catalog-bind-address', '127.0.0.1:0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, KUBECONFIG: '' },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  let killed = false;
  // A generous bound for a loaded machine: the fix ends it in seconds, the bug never does.
  const timer = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, 90_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stderr, killed };
}

test('a manager that cannot reach its API server exits non-zero by itself', { timeout: 120_000 }, () =>
  withTempDir('binnacle-manager-exit-', async (dir) => {
    const r = await manager(kubeconfig('https://127.0.0.1:1', true), dir);
    assert.equal(r.killed, false, `the manager did not end by itself; stderr:\n${r.stderr}`);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^error: .*cannot reach the API server at 127\.0\.0\.1:1/m);
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  }));

test('an http:// API server is refused with one line naming the cluster, exit 1', { timeout: 120_000 }, () =>
  withTempDir('binnacle-manager-exit-', async (dir) => {
    const r = await manager(kubeconfig('http://127.0.0.1:1', false), dir);
    assert.equal(r.killed, false, `the manager did not end by itself; stderr:\n${r.stderr}`);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').filter((l) => l.startsWith('error:')).length, 1, r.stderr);
    assert.match(r.stderr, /^error: cluster "c": server http:\/\/127\.0\.0\.1:1 is plain http:\/\//m);
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  }));
