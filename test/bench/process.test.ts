import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnLogged, stopChild, waitHttpOk } from '../../bench/lib/helm-operator.js';

const scratch = (): string => mkdtempSync(path.join(tmpdir(), 'bench-process-'));

test('stopChild ends a process that ignores SIGTERM with SIGKILL after its grace, and returns at once for one already gone', async () => {
  const dir = scratch();
  try {
    const ignoring = "process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000);";
    const p = spawnLogged('stubborn', process.execPath, ['-e', ignoring], { cwd: dir, env: process.env, logFile: path.join(dir, 'log') });
    await new Promise<void>((r) => p.child.stdout?.once('data', () => r()));
    await stopChild(p.child, 300);
    assert.equal(p.child.signalCode, 'SIGKILL');
    await stopChild(p.child, 300);
    assert.match(p.exited() ?? '', /^stubborn exited \(SIGKILL\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('waitHttpOk returns once the URL answers 2xx, fails with the log tail when the process exits, and names it on timeout', async () => {
  const dir = scratch();
  let ready = false;
  const server = createServer((_req, res) => {
    res.statusCode = ready ? 200 : 503;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}/readyz`;
  try {
    await assert.rejects(waitHttpOk('slow', url, () => undefined, 300), /^Error: slow: http:\/\/127\.0\.0\.1:\d+\/readyz not ready after 0\.3 s$/);
    setTimeout(() => (ready = true), 300);
    await waitHttpOk('slow', url, () => undefined, 5000);
    ready = false;
    const dying = spawnLogged('dying', process.execPath, ['-e', "console.error('no config'); process.exit(3)"], { cwd: dir, env: process.env, logFile: path.join(dir, 'log') });
    await new Promise<void>((r) => dying.child.once('exit', () => r()));
    await assert.rejects(waitHttpOk('dying', url, dying.exited, 5000), /dying exited \(3\).*\n.*no config/);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
