/** Tests' in-process CLI: run a command in this process with a silent logger and keep what it printed. */
import { pino } from 'pino';
import type { CliContext } from './context.js';
import { run } from './main.js';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** A context whose logger is silent and whose out and err are kept, to be read back. */
export function captureContext(): { ctx: CliContext; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    ctx: { logger: pino({ level: 'silent' }), out: (t) => (out += t), err: (t) => (err += t) },
    out: () => out,
    err: () => err,
  };
}

/** `binnacle args` run in this process, from the sources: its exit code and what it printed. */
export async function runCli(args: readonly string[]): Promise<CliResult> {
  const c = captureContext();
  const code = await run(args, c.ctx);
  return { code, out: c.out(), err: c.err() };
}
