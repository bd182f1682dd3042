/** The native engine's child processes of this process, from /proc (tests of engine-process.ts). */
import { readdirSync, readFileSync } from 'node:fs';

/** The pids of the helm-engine processes that are children of this process. */
export function engineChildren(): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.includes('(helm-engine)') && Number(fields[1]) === process.pid) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Resident bytes of this process and its helm-engine children. */
export function treeRss(): number {
  let bytes = process.memoryUsage().rss;
  for (const pid of engineChildren()) {
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      bytes += Number(kb ?? 0) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return bytes;
}
