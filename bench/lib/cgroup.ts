/**
 * A memory cgroup of its own for one measured process tree, as a container's: the kernel's own
 * count of the tree's memory at its worst moment (`memory.peak` on cgroup v2,
 * `memory.max_usage_in_bytes` on v1), the figure a container's memory limit is enforced on, and
 * optionally that limit itself (`memory.max` / `memory.limit_in_bytes`) with the OOM kills it
 * caused. Summing each process's VmHWM bounds the tree's peak from above (the peaks of a parent
 * and its child need not coincide); sampling their RSS bounds it from below; the cgroup counts it.
 *
 * What the kernel charges: the tree's anonymous memory and the file pages it brought into the page
 * cache (pages already cached by another cgroup, such as a binary run before, stay charged there),
 * as in a container. Needs root and a memory controller; `undefined` where there is none.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  /** v1 or v2, and the folder. */
  version: 1 | 2;
  dir: string;
  /** The limit set, in MiB, or none. */
  limitMib: number | undefined;
  /** The command that runs `cmd args` inside the cgroup: a shell joins it, then execs (same pid). */
  wrap(cmd: string, args: string[]): { cmd: string; args: string[] };
  /** The tree's peak so far, MiB: the kernel's count, page cache included (which a limit would reclaim first). */
  peakMib(): number;
  /**
   * The working set now, MiB: usage less the inactive file cache, as cAdvisor reports it
   * (`container_memory_working_set_bytes`, what `kubectl top` shows and the kubelet evicts on).
   */
  workingSetMib(): number;
  /** Processes the kernel killed for the limit. */
  oomKills(): number;
  /** Kills whatever of the tree is left (a child its parent left behind) and removes the folder; never throws. */
  remove(): void;
}

const V2_ROOT = '/sys/fs/cgroup';
const V1_ROOT = '/sys/fs/cgroup/memory';

function read(file: string): string {
  return readFileSync(file, 'utf8').trim();
}

/** cgroup v2 with the memory controller enabled for the root's children (not merely present). */
function v2HasMemory(): boolean {
  try {
    return read(path.join(V2_ROOT, 'cgroup.subtree_control')).split(/\s+/).includes('memory');
  } catch {
    return false;
  }
}

/** Kills what is left in a cgroup folder and removes it; false when it could not. */
function killAndRemove(dir: string): boolean {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      for (const pid of read(path.join(dir, 'cgroup.procs')).split('\n').filter((x) => x !== '')) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      rmdirSync(dir);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
      spawnSync('sleep', ['0.1']); // the killed need a moment to leave
    }
  }
  return false;
}

/** `oom_kill N` from memory.events (v2) or memory.oom_control (v1, kernel 4.13 and later). */
function oomKillCount(file: string): number {
  try {
    return Number(/^oom_kill (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** A new memory cgroup `name` (a leftover of that name is reused), or undefined where none can be made. */
export function memoryCgroup(name: string, limitMib?: number): MemoryCgroup | undefined {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`cgroup name ${JSON.stringify(name)}: letters, digits, '.', '_' and '-' only, starting with a letter or digit`);
  let version: 1 | 2;
  let dir: string;
  if (v2HasMemory()) {
    version = 2;
    dir = path.join(V2_ROOT, name);
  } else if (existsSync(path.join(V1_ROOT, 'memory.max_usage_in_bytes'))) {
    version = 1;
    dir = path.join(V1_ROOT, name);
  } else return undefined;
  try {
    mkdirSync(dir, { recursive: true });
    // A leftover of the same name starts its peak again (v1 resets on a write; v2's names are fresh).
    if (version === 1) writeFileSync(path.join(dir, 'memory.max_usage_in_bytes'), '0');
    if (limitMib !== undefined) {
      const bytes = String(Math.round(limitMib * 1024 * 1024));
      writeFileSync(path.join(dir, version === 2 ? 'memory.max' : 'memory.limit_in_bytes'), bytes);
      // No swapping past the limit, as the kubelet sets a container (memory+swap = memory).
      const swap = path.join(dir, version === 2 ? 'memory.swap.max' : 'memory.memsw.limit_in_bytes');
      if (existsSync(swap)) writeFileSync(swap, version === 2 ? '0' : bytes);
    }
    // Kernels before 5.19 have no memory.peak: no figure, so no cgroup.
    if (version === 2 && !existsSync(path.join(dir, 'memory.peak'))) {
      killAndRemove(dir);
      return undefined;
    }
  } catch {
    return undefined; // not root, or the controller is not delegated here
  }
  const procs = path.join(dir, 'cgroup.procs');
  return {
    version,
    dir,
    limitMib,
    wrap: (cmd, args) => ({ cmd: '/bin/sh', args: ['-c', 'echo $$ > "$1" && shift && exec "$@"', 'sh', procs, cmd, ...args] }),
    peakMib: () => Number(read(path.join(dir, version === 2 ? 'memory.peak' : 'memory.max_usage_in_bytes'))) / (1024 * 1024),
    workingSetMib: () => {
      const usage = Number(read(path.join(dir, version === 2 ? 'memory.current' : 'memory.usage_in_bytes')));
      const stat = readFileSync(path.join(dir, 'memory.stat'), 'utf8');
      const inactive = Number(new RegExp(`^${version === 2 ? 'inactive_file' : 'total_inactive_file'} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
      return Math.max(0, usage - inactive) / (1024 * 1024);
    },
    oomKills: () => oomKillCount(path.join(dir, version === 2 ? 'memory.events' : 'memory.oom_control')),
    remove: () => {
      killAndRemove(dir);
    },
  };
}

/**
 * Empties the kernel's clean page cache (`vm.drop_caches`, root only): what a process reads next
 * is charged to its own cgroup, as in a container started on a node that never ran its image.
 * Returns whether it could.
 */
export function dropPageCache(): boolean {
  try {
    spawnSync('sync'); // dirty pages are not dropped
    writeFileSync('/proc/sys/vm/drop_caches', '1');
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes the cgroups a killed run left behind (`prefix*`), killing what still runs in them.
 * Returns the names it removed.
 */
export function sweepCgroups(prefix: string): string[] {
  const removed: string[] = [];
  for (const root of [V2_ROOT, V1_ROOT]) {
    let names: string[];
    try {
      names = readdirSync(root).filter((n) => n.startsWith(prefix));
    } catch {
      continue;
    }
    for (const n of names) if (killAndRemove(path.join(root, n))) removed.push(n);
  }
  return removed;
}

/**
 * A copy of `binary` of its own in `dir` (a new file, so pages no other process has mapped): a
 * page the measuring process itself has mapped (the bench runs on the same Node as Binnacle)
 * cannot be dropped from the cache and would stay charged to the bench, not to the side that
 * runs it. Returns the copy's path.
 */
export function privateCopy(binary: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const copy = path.join(dir, path.basename(binary));
  copyFileSync(binary, copy);
  chmodSync(copy, 0o755);
  return copy;
}
