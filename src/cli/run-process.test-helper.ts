/** Tests' child processes: run one to its end and keep what it printed. */
import { spawn } from 'node:child_process';

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** Runs `cmd args` in `cwd` with `env` added to this process's environment; stdin is closed. */
export function runProcess(cmd: string, args: readonly string[], opts: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}
