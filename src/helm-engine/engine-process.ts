/**
 * One native Helm engine process (`helm-engine`, src/helm-engine/go/main_native.go: the same Go source
 * as helm.wasm, compiled natively and statically), run as a child process and spoken to in JSON
 * lines on its stdin/stdout (the frames are described there). Started on its first call, it runs
 * ONE call at a time (engine.ts pools processes for more), as a WebAssembly thread does
 * (engine-thread.ts), and for the same reason: a process stopped for a call's bounds or killed
 * under it takes down that call alone.
 *
 * Bounds: time (`callTimeoutMs`: the process is killed, HELM_TIMEOUT), memory (`--memory-limit`:
 * Go's memory limit and RLIMIT_DATA, so a runaway render makes Go die "out of memory", which is
 * HELM_MEMORY_LIMIT here) and the answer's size (`--max-output`: Go answers an oversized response
 * by its length only, HELM_OUTPUT_LIMIT; a line longer than that anyway kills the process).
 * A process that exits under a call fails that call (HELM_ENGINE_CRASH, or the memory limit);
 * the next call starts a new one. `lookup` frames are answered with the running call's transport
 * only (engine-protocol.ts answerLookup), so the identity and the read-only gate stay here.
 * An idle process exits after `idleExitMs`, and holds no CLI process open meanwhile.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { BinnacleError } from '../util/errors.js';
import { HelmError } from './errors.js';
import type { LookupTransport } from './lookup-gate.js';
import { answerLookup, crashError, GO_FATAL_START, oversizedResponse, timeoutError, type CallLimits, type EngineOp, type EngineSlot, type WireResponse } from './engine-protocol.js';

/** A frame from the process (src/helm-engine/go/main_native.go). */
interface Frame {
  id: number;
  memoryBytes?: number;
  response?: WireResponse;
  oversized?: number;
  host?: { seq: number; method: string; path: string; body: string };
}

interface Running {
  id: number;
  op: EngineOp;
  lookup: LookupTransport | undefined;
  resolve: (res: WireResponse) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

const MiB = 1024 * 1024;
/** Go's dying words kept for the error (the goroutine dump after them is dropped). */
const FATAL_KEEP = 4096;

export class EngineProcess implements EngineSlot {
  private child: ChildProcessWithoutNullStreams | undefined;
  private running: Running | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** The exit of the process last stopped: a new one starts only after it. */
  private ending: Promise<unknown> = Promise.resolve();
  memoryBytes = 0;
  recycled = 0;
  /** How many processes were started (tests: a restart after a crash or an idle exit). */
  started = 0;

  constructor(
    private readonly binary: string,
    private readonly limits: CallLimits,
    private readonly idleExitMs: number,
    /** GOGC for the process when the host sets none. */
    private readonly goGC?: number,
    /** Whether the process keeps a spare RSA key per size (HelmEngineOptions.spareKeys). */
    private readonly spareKeys = true,
  ) {}

  get busy(): boolean {
    return this.running !== undefined;
  }

  /** The running process's id (tests), if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private spawnChild(): ChildProcessWithoutNullStreams {
    if (!existsSync(this.binary)) {
      throw new BinnacleError('terminal', 'HELM_ENGINE_MISSING', `Helm's native engine is not built: ${this.binary} is missing; build it with \`bash hack/build-tools.sh helm-wasm\` (needs Go), or set BINNACLE_HELM_ENGINE=wasm`);
    }
    const args = ['--memory-limit', String(this.limits.memoryBytes), '--max-output', String(this.limits.maxOutputBytes)];
    // Go reads nothing else from the environment that matters to a render; the manager's own (its credentials among it) stays out.
    const goGC = process.env.GOGC ?? (this.goGC === undefined ? undefined : String(this.goGC));
    const env: NodeJS.ProcessEnv = { HOME: homedir(), TMPDIR: tmpdir(), ...(goGC === undefined ? {} : { GOGC: goGC }), ...(this.spareKeys ? {} : { BINNACLE_HELM_SPARE_KEYS: 'off' }) };
    const child = spawn(this.binary, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    this.started++;
    this.child = child;
    const lines = new LineReader(this.limits.maxOutputBytes + MiB);
    let fatal = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const got = lines.push(chunk);
      if (got === undefined) {
        this.stop(child, oversizedError(this.running?.op ?? 'render', this.limits));
        return;
      }
      for (const line of got) this.onLine(child, line);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      // Go's fatal error is kept for the call's error; anything else (Helm's log warnings) goes on as before.
      if (fatal === '' && !GO_FATAL_START.test(chunk.subarray(0, 32).toString())) process.stderr.write(chunk);
      else if (fatal.length < FATAL_KEEP) fatal += chunk.toString().slice(0, FATAL_KEEP - fatal.length);
    });
    child.stdin.on('error', () => undefined); // a write to a process that died: its exit says why
    child.on('error', (err) => this.stop(child, new HelmError('internal', `Helm's native engine failed: ${err.message}`, 'HELM_ENGINE_CRASH')));
    child.on('exit', (code, signal) => {
      const how = signal === null ? `code ${code}` : `signal ${signal}`;
      this.stop(child, crashError(`the process exited (${how})`, fatal, this.running?.op ?? 'render', this.limits));
    });
    this.idle(child);
    return child;
  }

  private onLine(child: ChildProcessWithoutNullStreams, line: string): void {
    let frame: Frame;
    try {
      frame = JSON.parse(line) as Frame;
    } catch (err) {
      this.stop(child, new BinnacleError('internal', 'HELM_ENGINE_PROTOCOL', `Helm's native engine answered something that is not JSON: ${String(err)}`));
      return;
    }
    if (frame.host !== undefined) {
      const { seq, method, path, body } = frame.host;
      void answerLookup(this.running, frame.id, method, path, body).then((r) => {
        if (this.child === child) child.stdin.write(`${JSON.stringify({ hostReply: seq, status: r.status, body: r.body })}\n`);
      });
      return;
    }
    this.settle(child, frame);
  }

  private settle(child: ChildProcessWithoutNullStreams, frame: Frame): void {
    const r = this.running;
    if (r?.id !== frame.id) return;
    this.running = undefined;
    clearTimeout(r.timer);
    this.memoryBytes = frame.memoryBytes ?? 0;
    if (this.memoryBytes > this.limits.recycleAboveBytes) {
      this.recycled++;
      this.retire(child);
    } else this.idle(child);
    if (frame.oversized !== undefined) r.resolve(oversizedResponse(frame.oversized, this.limits.maxOutputBytes));
    else if (frame.response === undefined) r.reject(new BinnacleError('internal', 'HELM_ENGINE_PROTOCOL', "Helm's native engine answered a call without a response"));
    else r.resolve(frame.response);
  }

  /** Idle: holds no CLI process open, and exits after idleExitMs. */
  private idle(child: ChildProcessWithoutNullStreams): void {
    for (const s of [child, child.stdin, child.stdout, child.stderr] as unknown as { unref?: () => void }[]) s.unref?.();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.child === child && this.running === undefined) this.retire(child);
    }, this.idleExitMs);
    this.idleTimer.unref();
  }

  private busyNow(child: ChildProcessWithoutNullStreams): void {
    clearTimeout(this.idleTimer);
    for (const s of [child, child.stdin, child.stdout, child.stderr] as unknown as { ref?: () => void }[]) s.ref?.();
  }

  /** Ends an idle process (closing its stdin ends it); the next call starts another. */
  private retire(child: ChildProcessWithoutNullStreams): void {
    if (this.child !== child) return;
    this.child = undefined;
    child.ref();
    this.ending = ended(child);
    child.stdin.end();
  }

  /** Kills the process and fails the call running on it; events of a process already replaced change nothing. */
  private stop(child: ChildProcessWithoutNullStreams, err: Error): void {
    if (this.child !== child) return;
    this.child = undefined;
    child.ref(); // its exit, which the next start waits for, keeps the event loop alive
    this.ending = ended(child);
    child.kill('SIGKILL');
    const r = this.running;
    if (r === undefined) return;
    this.running = undefined;
    clearTimeout(r.timer);
    r.reject(err);
  }

  async run(id: number, op: EngineOp, payload: Record<string, unknown>, lookup: LookupTransport | undefined): Promise<WireResponse> {
    if (this.running !== undefined) throw new BinnacleError('internal', 'HELM_ENGINE_BUSY', 'internal: a call was given to a busy Helm engine process');
    const frame = `${JSON.stringify({ id, op, request: { ...payload, callId: id } })}\n`;
    // Busy from now, so the pool sends the next call elsewhere while this one starts.
    const placeholder: Running = { id, op, lookup, resolve: () => undefined, reject: () => undefined };
    this.running = placeholder;
    try {
      if (this.child === undefined) await this.ending;
    } finally {
      if (this.running === placeholder) this.running = undefined;
    }
    const child = this.child ?? this.spawnChild();
    return new Promise<WireResponse>((resolve, reject) => {
      const timer = setTimeout(() => this.stop(child, timeoutError(op, this.limits)), this.limits.callTimeoutMs);
      this.running = { id, op, lookup, resolve, reject, timer };
      this.busyNow(child);
      child.stdin.write(frame);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child !== undefined) this.stop(child, new HelmError('internal', "Helm's engine was closed", 'HELM_ENGINE_EXIT'));
    clearTimeout(this.idleTimer);
    await this.ending;
  }
}

function oversizedError(op: EngineOp, limits: CallLimits): HelmError {
  return new HelmError('output', `${op} exceeded the output limit of ${Math.floor(limits.maxOutputBytes / MiB)} MiB; Helm's engine was restarted`, 'HELM_OUTPUT_LIMIT');
}

function ended(child: ChildProcessWithoutNullStreams): Promise<unknown> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', resolve));
}

/** Splits a byte stream into lines; undefined once a line grows past `max` bytes. */
class LineReader {
  private parts: Buffer[] = [];
  private length = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): string[] | undefined {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.parts.push(chunk.subarray(start, nl));
      lines.push(Buffer.concat(this.parts).toString('utf8'));
      this.parts = [];
      this.length = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.parts.push(chunk.subarray(start));
      this.length += chunk.length - start;
    }
    return this.length > this.max ? undefined : lines;
  }
}
