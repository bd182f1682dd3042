/** `--kube-api-qps` and `--kube-api-burst` on the long-running commands: the client's limit, per identity, or none. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CommanderError, type Command } from 'commander';
import { pino } from 'pino';
import { buildProgram } from './main.js';
import { rateLimitOf, type KubeFlags } from './kube.js';

/** The client options `binnacle <path…> ARGS` would make its client with. */
async function limitOf(path: string[], args: string[]): Promise<ReturnType<typeof rateLimitOf>> {
  const ctx = { logger: pino({ level: 'silent' }), out: () => undefined, err: () => undefined };
  const program = await buildProgram(ctx, path[0]);
  let cmd: Command = program;
  for (const name of path) cmd = cmd.commands.find((c) => c.name() === name) as Command;
  cmd.exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  let got: ReturnType<typeof rateLimitOf> | undefined;
  cmd.action((flags: KubeFlags) => {
    got = rateLimitOf(flags);
  });
  await program.parseAsync([...path, ...args], { from: 'user' });
  assert.ok(got !== undefined);
  return got;
}

for (const path of [['manager'], ['helm-operator', 'run']]) {
  describe(`binnacle ${path.join(' ')} --kube-api-qps/--kube-api-burst`, () => {
    it("defaults to no client-side limit, as controller-runtime's (the API server's Priority and Fairness bounds it)", async () => {
      assert.deepEqual(await limitOf(path, []), { rateLimit: false });
      assert.deepEqual(await limitOf(path, ['--kube-api-qps', '50']), { rateLimit: { qps: 50, burst: 100 } }, 'a QPS alone has a burst of 100');
    });

    it('takes a rate and a burst, the rate as a decimal', async () => {
      assert.deepEqual(await limitOf(path, ['--kube-api-qps', '12.5', '--kube-api-burst=20']), { rateLimit: { qps: 12.5, burst: 20 } });
    });

    it("turns the limiter off with a negative QPS, as client-go's -1", async () => {
      assert.deepEqual(await limitOf(path, ['--kube-api-qps=-1']), { rateLimit: false });
      assert.deepEqual(await limitOf(path, ['--kube-api-qps', '-1']), { rateLimit: false });
    });

    it('refuses 0, words and a burst below 1 with a message that says what is expected', async () => {
      for (const args of [['--kube-api-qps', '0'], ['--kube-api-qps', 'fast'], ['--kube-api-burst', '0']]) {
        await assert.rejects(limitOf(path, args), (err: CommanderError) => {
          assert.match(err.message, /--kube-api-(qps|burst)/);
          assert.match(err.message, /Expected/);
          return true;
        }, args.join(' '));
      }
    });
  });
}
