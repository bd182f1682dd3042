/**
 * One Node process timed from outside, as the benches compare processes: wall time from spawn
 * to exit, CPU (user + sys, 10 ms steps) and peak RSS as /usr/bin/time reports them for the
 * process and the children it waited for. What it printed comes back for the caller to read.
 */
import { spawn } from 'node:child_process';

const TIME = '/usr/bin/time';

export interface TimedNode {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
  exit: number;
  stdout: string;
}

/**
 * Runs `node args` under /usr/bin/time in `cwd` with `env`; `okExits` are the exit codes that
 * are answers (default 0 only), any other rejects with the end of what it wrote to stderr.
 */
export function timedNode(args: readonly string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; okExits?: readonly number[] }): Promise<TimedNode> {
  const okExits = opts.okExits ?? [0];
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(TIME, ['-f', 'BENCH %U %S %M', process.execPath, ...args], { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
      const m = /BENCH ([\d.]+) ([\d.]+) (\d+)/.exec(err);
      if (m === null || code === null || !okExits.includes(code)) {
        reject(new Error(`node ${args.join(' ')} exited ${String(code)}: ${err.slice(-2000)}`));
        return;
      }
      resolve({ wallMs, cpuMs: Math.round((Number(m[1]) + Number(m[2])) * 1000), rssMb: Number(m[3]) / 1024, exit: code, stdout: out });
    });
  });
}
