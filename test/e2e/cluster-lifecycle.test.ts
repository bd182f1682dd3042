/**
 * `binnacle cluster up|down` as a user meets it: a second `up` of a healthy cluster changes
 * nothing; after a component is killed, `up` restarts it; after every process is killed (a
 * machine crash), `up` brings the same cluster back with its data; `down` stops every process
 * it started and removes its state dir, leaving nothing running.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { clusterDown, clusterStatus, clusterUp } from '../../src/cluster/index.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/config.js';

const logger = pino({ level: 'silent' });
const name = 'lifecycle';
let stateDir = '';

after(async () => {
  if (stateDir !== '') {
    await clusterDown({ name, stateDir, logger });
    await rm(stateDir, { recursive: true, force: true });
  }
});

function pids(): Record<string, number> {
  const state = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')) as { processes: Record<string, { pid: number }> };
  return Object.fromEntries(Object.entries(state.processes).map(([k, v]) => [k, v.pid]));
}

/** A process that still runs: an exited child its parent has not reaped yet (a zombie) does not count. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

test('up is idempotent, recovers killed components and a whole crash, and down leaves nothing', async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'binnacle-lifecycle-'));
  const first = await clusterUp({ name, stateDir, logger, progress: () => undefined });
  assert.equal(first.outcome, 'created');
  const before = pids();
  assert.equal(Object.keys(before).length, 6);

  const again = await clusterUp({ name, stateDir, logger, progress: () => undefined });
  assert.equal(again.outcome, 'running');
  assert.deepEqual(pids(), before, 'nothing restarted');

  // A namespace written now must survive the recoveries below (etcd's data is kept).
  const client = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: first.kubeconfig }));
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'survivor' } });
  client.close();

  process.kill(before['kube-scheduler'] ?? 0, 'SIGKILL');
  const recovered = await clusterUp({ name, stateDir, logger, progress: () => undefined });
  assert.equal(recovered.outcome, 'recovered');
  const afterOne = pids();
  assert.notEqual(afterOne['kube-scheduler'], before['kube-scheduler']);
  assert.equal(afterOne['kube-apiserver'], before['kube-apiserver'], 'healthy components are left alone');

  for (const pid of Object.values(afterOne)) process.kill(pid, 'SIGKILL');
  const back = await clusterUp({ name, stateDir, logger, progress: () => undefined });
  assert.equal(back.outcome, 'recovered');
  const status = await clusterStatus({ name, stateDir });
  assert.ok(status.components.every((c) => c.running && c.healthy), JSON.stringify(status.components));
  const client2 = await KubeClient.fromKubeConfig(loadKubeConfig({ kubeconfig: back.kubeconfig }));
  assert.ok((await client2.find({ apiVersion: 'v1', kind: 'Namespace', name: 'survivor' })) !== undefined, 'etcd data survived the crash');
  client2.close();

  const last = pids();
  const { stopped } = await clusterDown({ name, stateDir, logger });
  assert.equal(stopped.length, 6);
  // A loaded machine may take a moment to let the last one go.
  for (let i = 0; i < 50 && Object.values(last).some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(Object.values(last).every((pid) => !alive(pid)), `every process is gone (left: ${Object.entries(last).filter(([, pid]) => alive(pid)).map(([c]) => c).join(', ')})`);
  assert.equal(existsSync(stateDir), false, 'the state dir is removed');
  stateDir = '';
});
