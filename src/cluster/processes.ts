/**
 * Starting and stopping the control plane's processes. They run detached (their own process
 * group, output to a log file), so they outlive the `binnacle cluster up` that started them.
 * A record of each (pid and command) lets a later command find them again, and check that the
 * pid still belongs to that command before signalling it.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { BinnacleError } from '../util/errors.js';

export interface ProcessRecord {
  name: string;
  pid: number;
  command: string;
  args: string[];
  logFile: string;
}

export function startDetached(name: string, command: string, args: string[], logFile: string, env?: NodeJS.ProcessEnv): ProcessRecord {
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env: env ?? process.env });
    if (child.pid === undefined) throw new BinnacleError('terminal', 'PROCESS_START', `could not start ${command}`);
    child.unref();
    return { name, pid: child.pid, command, args, logFile };
  } finally {
    closeSync(fd);
  }
}

/** True when `rec.pid` is alive and still runs `rec.command` (not a reused pid). */
export function isRunning(rec: ProcessRecord): boolean {
  try {
    process.kill(rec.pid, 0);
  } catch {
    return false;
  }
  try {
    const cmdline = readFileSync(`/proc/${rec.pid}/cmdline`, 'utf8').split('\0');
    if ((cmdline[0] ?? '') !== rec.command) return false;
    const stat = readFileSync(`/proc/${rec.pid}/stat`, 'utf8');
    // A zombie is dead for our purposes.
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return false;
  }
}

/** SIGTERM to the process group, then SIGKILL after `graceMs`. */
export async function stopProcess(rec: ProcessRecord, graceMs = 10_000): Promise<void> {
  if (!isRunning(rec)) return;
  const signalGroup = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-rec.pid, sig);
    } catch {
      try {
        process.kill(rec.pid, sig);
      } catch {
        // already gone
      }
    }
  };
  signalGroup('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isRunning(rec)) return;
    await sleep(100);
  }
  signalGroup('SIGKILL');
  for (let i = 0; i < 50 && isRunning(rec); i++) await sleep(100);
}

/** The last lines of a log file, for error messages. */
export function tailLog(file: string, lines = 15): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '';
  }
}
