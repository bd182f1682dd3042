/**
 * What the helm-operator benches share: operator-sdk's memcached sample project, the two
 * operators' command lines (operator-sdk's helm-operator built by
 * hack/bench-tools/helm-operator/build.sh, and `binnacle helm-operator run` from the built
 * bundle, as bin/binnacle.js runs in the image), a process started with its whole log kept, waited for
 * over HTTP and stopped, and a process's memory and CPU from /proc.
 * In bench/lib so hack/bench.sh does not run it as a bench of its own.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HELM_OPERATOR_NODE_FLAGS } from '../../src/publish/helm-bundle/operator.js';
import { mallocEnv, NODE_FLAGS } from '../../src/self/image.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

export function run(cmd: string, args: string[], cwd = ROOT): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
  return r.stdout.trim();
}

/** A process started with its output appended to `logFile` and its last `tailChars` kept for errors. */
export function spawnLogged(name: string, cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; logFile: string; tailChars?: number }): { child: ChildProcess; pid: number; exited: () => string | undefined } {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const keepChars = opts.tailChars ?? 4000;
  let tail = '';
  writeFileSync(opts.logFile, '');
  const keep = (b: Buffer): void => {
    appendFileSync(opts.logFile, b);
    tail = (tail + b.toString('utf8')).slice(-keepChars);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = (): string | undefined => (child.exitCode === null && child.signalCode === null ? undefined : `${name} exited (${child.exitCode ?? child.signalCode}); its log ${path.relative(ROOT, opts.logFile)} ends:\n${tail}`);
  return { child, pid: child.pid ?? 0, exited };
}

/**
 * Waits until `url` answers 2xx, failing at once with the process's log tail when it exits
 * (`exited`, from spawnLogged) and with `name` once `timeoutMs` has passed.
 */
export async function waitHttpOk(name: string, url: string, exited: () => string | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const gone = exited();
    if (gone !== undefined) throw new Error(gone);
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    if (Date.now() > deadline) throw new Error(`${name}: ${url} not ready after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** SIGTERM, and SIGKILL if it has not exited `graceMs` later; resolves once it has exited. */
export async function stopChild(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exit;
  clearTimeout(t);
}

/** `--name value` from argv; undefined when absent. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

/** operator-sdk's Helm sample project: test/vendor when there, else the Go module cache. */
export function sampleProject(): string {
  const vendored = path.join(ROOT, 'test', 'vendor', 'operator-sdk-v1.42.3', 'memcached-operator');
  if (existsSync(path.join(vendored, 'watches.yaml'))) return vendored;
  const json = run('go', ['mod', 'download', '-json', 'github.com/operator-framework/operator-sdk'], path.join(ROOT, 'hack', 'bench-tools', 'helm-operator'));
  return path.join((JSON.parse(json) as { Dir: string }).Dir, 'testdata', 'helm', 'memcached-operator');
}

/** Resident memory now and its high-water mark (worker threads and child processes included), in MiB. */
export function procStatus(pid: number): ProcMemory {
  const own = oneProcStatus(pid);
  // The whole process tree: Binnacle's native Helm engine is a child process (helm-engine), whose
  // memory is the operator's too. Each peak is its own process's, so their sum bounds the tree's peak from above.
  for (const child of childPids(pid)) {
    const c = oneProcStatus(child);
    if (Number.isFinite(c.rss)) {
      own.rss += c.rss;
      own.hwm += c.hwm;
      own.anon += c.anon;
      own.file += c.file;
    }
  }
  return own;
}

/** MiB: resident now, its peak, and of what is resident now, the process's own (anonymous) pages and file pages (its binary's, mapped files). */
export interface ProcMemory {
  rss: number;
  hwm: number;
  anon: number;
  file: number;
}

function oneProcStatus(pid: number): ProcMemory {
  let s = '';
  try {
    s = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return { rss: NaN, hwm: NaN, anon: NaN, file: NaN }; // gone
  }
  const kib = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, hwm: kib('VmHWM') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024 };
}

/** The pids whose parent is `pid`, from each /proc/N/stat (the children files of /proc need a kernel option). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * CPU seconds the process tree used so far, user and system, every thread: the process's own, its
 * children it has reaped (cutime, cstime) and its live children's (Binnacle's native Helm engine
 * is a child process whose work is the operator's too). /proc/PID/stat at 100 ticks a second.
 */
export function cpuSeconds(pid: number): number {
  return [pid, ...childPids(pid)].reduce((sum, p) => sum + oneCpuSeconds(p), 0);
}

function oneCpuSeconds(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0; // a child gone meanwhile: its parent's cutime has it once reaped
  }
  // The fields after the command's closing parenthesis: utime, stime, cutime, cstime are the 12th to 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
}

/**
 * The process tree's memory peak, sampled every `everyMs` while it runs: a child (the native Helm
 * engine) may exit when idle, taking its VmHWM with it, so a reading at the end alone would miss it.
 */
export function treePeakSampler(pid: number, everyMs = 500): { peakMib: () => number; stop: () => void } {
  const s = maxSampler(() => procStatus(pid).hwm, everyMs);
  // The caller takes the larger of this and a last reading: nothing read counts as nothing.
  return {
    peakMib: () => {
      const v = s.peakMib();
      return Number.isNaN(v) ? 0 : v;
    },
    stop: s.stop,
  };
}

/**
 * The largest value `read` gave, read now, every `everyMs` and once more when asked; a read that
 * throws or is not finite (what it reads is gone) is left out, and NaN when no read gave one.
 */
export function maxSampler(read: () => number, everyMs: number): { peakMib: () => number; stop: () => void } {
  let peak = NaN;
  const sample = (): void => {
    try {
      const v = read();
      if (Number.isFinite(v)) peak = Number.isNaN(peak) ? v : Math.max(peak, v);
    } catch {
      // gone meanwhile
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    peakMib: () => {
      sample();
      return peak;
    },
    stop: () => clearInterval(timer),
  };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

export interface OperatorCommand {
  label: 'operator-sdk' | 'binnacle' | 'binnacle-before' | 'binnacle-manager';
  cmd: string;
  args: string[];
  /** NODE_OPTIONS for the process (Binnacle's; empty for operator-sdk's). */
  nodeOptions: string;
  /** More environment, as the image sets it (Binnacle's allocator settings; none for operator-sdk's). */
  env: Record<string, string>;
}

/**
 * The two operators, `only` one of them when given; each with its own defaults except what a
 * bench must pin (no metrics or probe ports, so runs do not collide). Builds Binnacle's bundle
 * from this checkout every time (`npm run build`), so the commit a stored result names is the code
 * it measured: a bundle left from an earlier build was measured before and the result still named
 * the checkout's commit. `binnacleEntry`: another build's bin/binnacle.js (say, a copy of the
 * build before a change), measured as it is.
 */
export function operatorCommands(o: { only?: string | undefined; nodeOptions: string; binnacleArgs?: string[]; binnacleEntry?: string | undefined; beforeEntry?: string | undefined; manager?: { dataDir: string; args?: string[] } }): OperatorCommand[] {
  if (o.only !== 'operator-sdk' && o.binnacleEntry === undefined) run('npm', ['run', 'build']);
  const helmOperator = o.only === 'binnacle' || o.only === 'binnacle-manager' ? '' : (run('bash', [path.join(ROOT, 'hack', 'bench-tools', 'helm-operator', 'build.sh')]).split('\n').at(-1) ?? '');
  const all: OperatorCommand[] = [
    { label: 'operator-sdk', cmd: helmOperator, args: ['run', '--watches-file', 'watches.yaml', '--metrics-bind-address', '0', '--health-probe-bind-address', '0'], nodeOptions: '', env: {} },
    {
      label: 'binnacle',
      cmd: process.execPath,
      // Node's flags as Binnacle's image gives them to helm-operator run (src/publish/helm-bundle/operator.ts), then the entry.
      args: [...HELM_OPERATOR_NODE_FLAGS, o.binnacleEntry ?? path.join(ROOT, 'bin', 'binnacle.js'), 'helm-operator', 'run', '--watches', 'watches.yaml', '--metrics-bind-address', '0', '--health-probe-bind-address', '0', ...(o.binnacleArgs ?? [])],
      nodeOptions: o.nodeOptions,
      env: mallocEnv(),
    },
  ];
  // Another build beside this one (say, the one before a change), measured in the same run.
  const binnacle = all[1];
  if (o.beforeEntry !== undefined && binnacle !== undefined) all.push({ ...binnacle, label: 'binnacle-before', args: [...HELM_OPERATOR_NODE_FLAGS, o.beforeEntry, ...binnacle.args.slice(HELM_OPERATOR_NODE_FLAGS.length + 1)] });
  // `binnacle manager` serving the chart's kind through a HelmOperator (issue 29 §1's manager mode).
  if (o.manager !== undefined) {
    all.push({
      label: 'binnacle-manager',
      cmd: process.execPath,
      // The manager's flags as the image gives them (src/self/image.ts).
      args: [...NODE_FLAGS, o.binnacleEntry ?? path.join(ROOT, 'bin', 'binnacle.js'), 'manager', '--metrics-bind-address', '127.0.0.1:0', '--catalog-bind-address', '127.0.0.1:0', '--data-dir', o.manager.dataDir, ...(o.manager.args ?? [])],
      nodeOptions: o.nodeOptions,
      env: mallocEnv(),
    });
  }
  return all.filter((x) => o.only === undefined || x.label === o.only || (o.only === 'binnacle' && x.label === 'binnacle-before'));
}
