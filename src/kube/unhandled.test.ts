import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

// In a process of its own: the test runner has its own unhandled-rejection listener, which would hide whether ours keeps the process alive.
const SCRIPT = `
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { inReconcile } from ${JSON.stringify(fileURLToPath(new URL('./reconcile-context.ts', import.meta.url)))};
import { handleUnhandledRejections } from ${JSON.stringify(fileURLToPath(new URL('./unhandled.ts', import.meta.url)))};
const registry = new Registry();
const handler = handleUnhandledRejections(pino({ level: 'error' }), registry);
await inReconcile({ controller: 'helm-pushgateway', key: 'team-a/pg' }, async () => {
  // Started, never awaited: the bug this handler is the last line against.
  void Promise.reject(new Error('get Namespace team-a: forbidden'));
  await new Promise((r) => setTimeout(r, 20));
});
await new Promise((r) => setTimeout(r, 20));
console.log(JSON.stringify({ counts: [...handler.counts()], metric: (await registry.metrics()).split('\\n').find((l) => l.startsWith('binnacle_unhandled_rejections_total{')) }));
`;

test('a promise a reconcile left rejecting unhandled is logged with its controller and key, counted, and the process goes on', async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: fileURLToPath(new URL('../..', import.meta.url)) });
  const [logLine, result] = stdout.trim().split('\n');
  const log = JSON.parse(logLine ?? '{}') as Record<string, unknown>;
  assert.deepEqual([log.controller, log.key, log.err], ['helm-pushgateway', 'team-a/pg', 'get Namespace team-a: forbidden']);
  const out = JSON.parse(result ?? '{}') as { counts: [string, number][]; metric: string };
  assert.deepEqual(out.counts, [['helm-pushgateway', 1]], 'the process lived on to say so');
  assert.equal(out.metric, 'binnacle_unhandled_rejections_total{controller="helm-pushgateway"} 1');
});
