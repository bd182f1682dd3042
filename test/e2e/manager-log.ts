/**
 * The log of a manager an e2e file runs in its own process, kept after the run under
 * `.cache/test-artifacts/manager-NAME.log` (hack/test.sh leaves that directory alone), so a
 * failed run can be read afterwards; a test that does not converge quotes its last warnings
 * (`managerLogTail`) in its failure message. At `info` unless BINNACLE_E2E_LOG names a level.
 * Each file names its own log; a manager started again in the same process (a restart) appends.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pino, type Logger } from 'pino';
import { cacheDir } from '../../src/cluster/layout.js';

/** The logs this process has started: the first start truncates what an earlier run left, a restart appends. */
const started = new Set<string>();

/** Where the manager named `name` logs. */
export function managerLogFile(name: string): string {
  return join(cacheDir(), 'test-artifacts', `manager-${name}.log`);
}

/** A logger writing to `managerLogFile(name)`. */
export function managerLogger(name: string): Logger {
  const dest = managerLogFile(name);
  mkdirSync(dirname(dest), { recursive: true });
  const append = started.has(name);
  started.add(name);
  return pino({ level: process.env.BINNACLE_E2E_LOG ?? 'info' }, pino.destination({ dest, sync: true, append }));
}

/** The manager's last warnings and errors, to put in a failing test's message. */
export function managerLogTail(name: string, lines = 12): string {
  let text: string;
  try {
    text = readFileSync(managerLogFile(name), 'utf8');
  } catch {
    return '(no manager log)';
  }
  const serious = text.split('\n').filter((l) => /"level":(40|50|60)/.test(l));
  return serious.slice(-lines).map((l) => (l.length > 600 ? `${l.slice(0, 600)}…` : l)).join('\n');
}

/** What a failing test adds to its message: where the manager's log is, and its last warnings. */
export function managerLogNote(name: string): string {
  return `manager log: ${managerLogFile(name)}; its last warnings:\n${managerLogTail(name)}`;
}
