/**
 * One worker thread running one instance of Helm's WebAssembly engine (engine-worker.ts):
 * started on its first call, bridges `lookup` to the caller's transport, and runs ONE call at a
 * time (the engine's pool queues the rest, engine.ts).
 *
 * Helm has no bound on a template's work (nested `range`, `include` fanning out, `tpl` calling
 * itself, `repeat`) and Go's WebAssembly cannot be interrupted, so a render is bounded from
 * outside: its time (`callTimeoutMs`, HELM_TIMEOUT), the instance's memory (a maximum set in the
 * module, wasm-memory.ts; Go dies "out of memory": HELM_MEMORY_LIMIT) and its answer's size
 * (HELM_OUTPUT_LIMIT, checked in the worker). Past the time or memory bound, or when the worker
 * crashes (HELM_ENGINE_CRASH: a JavaScript stack overflow, a Go fatal error), the worker is
 * terminated, which gives its memory back (WebAssembly memory never shrinks while the instance
 * lives), and the next call starts a fresh one. One call at a time is what makes that fair: the
 * call that failed is the one that was running, and no other call was inside the instance it
 * took down (two renders inside one Go instance share its heap and its only thread, so either
 * could be blamed for the other's bomb).
 */
import { Worker } from 'node:worker_threads';
import { BinnacleError } from '../util/errors.js';
import { WORKER_SOURCE } from './engine-worker.js';
import { HelmError } from './errors.js';
import type { LookupTransport } from './lookup-gate.js';
import { answerLookup, crashError, memoryLimitError, mib, oversizedResponse, parseResponse, timeoutError, type CallLimits, type EngineOp, type EngineSlot, type WireResponse } from './engine-protocol.js';

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: string; fatal?: string; memoryBytes?: number }
  | { type: 'result'; id: number; json?: string; oversized?: number; memoryBytes: number }
  | { type: 'lookup'; id: number; lookupId: number; method: string; path: string; body: string };

interface Running {
  id: number;
  op: EngineOp;
  resolve: (res: WireResponse) => void;
  reject: (e: Error) => void;
  lookup: LookupTransport | undefined;
  timer?: NodeJS.Timeout;
}

const MiB = 1024 * 1024;

export class EngineThread implements EngineSlot {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private running: Running | undefined;
  /** The termination of the worker last stopped: a new one starts only after it, so a thread never holds two instances' memory. */
  private ending: Promise<unknown> = Promise.resolve();
  /** The instance's linear memory after its last call (0 before the first). */
  memoryBytes = 0;
  /** How many instances were dropped for growing past limits.recycleAboveBytes. */
  recycled = 0;

  /** `module` compiles (or has compiled) helm.wasm; every thread shares the one module. */
  constructor(
    private readonly glue: string,
    private readonly module: () => Promise<WebAssembly.Module>,
    private readonly limits: CallLimits,
    /** Whether the worker keeps a spare RSA key per size (HelmEngineOptions.spareKeys). */
    private readonly spareKeys = true,
  ) {}

  /** A call is running on this thread (or starting it). */
  get busy(): boolean {
    return this.running !== undefined;
  }

  private start(): Promise<void> {
    if (this.ready !== undefined) return this.ready;
    const ended = this.ending;
    this.ready = Promise.all([this.module(), ended]).then(([module]) => new Promise<void>((resolveReady, rejectReady) => this.spawn(module, resolveReady, rejectReady)));
    // A start that failed is tried again on the next call.
    this.ready.catch(() => {
      if (this.worker === undefined) this.ready = undefined;
    });
    return this.ready;
  }

  private spawn(module: WebAssembly.Module, resolveReady: () => void, rejectReady: (e: Error) => void): void {
    const { memoryBytes, maxOutputBytes } = this.limits;
    // The worker's JavaScript heap holds the answer as a string before its size is checked:
    // room for an answer at the output limit, and 64 MiB for the rest. Past it the worker is
    // stopped (ERR_WORKER_OUT_OF_MEMORY), which is a memory limit too.
    const resourceLimits = { maxOldGenerationSizeMb: Math.ceil(maxOutputBytes / MiB) + 64 };
    const worker = new Worker(WORKER_SOURCE, { eval: true, resourceLimits, workerData: { module, glue: this.glue, memoryBytes, maxOutputBytes, spareKeys: this.spareKeys } });
    // A long-lived helper must not keep a CLI process alive once its work is done.
    if (this.running === undefined) worker.unref();
    this.worker = worker;
    let started = false;
    worker.on('message', (m: WorkerMessage) => {
      switch (m.type) {
        case 'ready':
          started = true;
          resolveReady();
          return;
        case 'failed': {
          if (!started) {
            const e = new BinnacleError('terminal', 'HELM_ENGINE_START', `Helm's engine failed to start: ${m.error}`);
            rejectReady(e);
            this.stop(worker, e);
            return;
          }
          // Go exited under a render (out of memory, a fatal error): the call will never answer.
          this.stop(worker, crashError(m.error, m.fatal, this.running?.op ?? 'render', this.limits));
          return;
        }
        case 'result':
          this.settle(m, m.memoryBytes);
          return;
        case 'lookup':
          this.answerLookup(m);
          return;
      }
    });
    worker.on('error', (err) => {
      const heapFull = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      const e = heapFull ? memoryLimitError(this.running?.op ?? 'render', this.limits, `its JavaScript heap of ${mib(resourceLimits.maxOldGenerationSizeMb * MiB)}`) : new HelmError('internal', `Helm's engine crashed: ${err.message}`, 'HELM_ENGINE_CRASH');
      e.cause = err;
      rejectReady(e);
      this.stop(worker, e);
    });
    worker.on('exit', (code) => {
      const e = new HelmError('internal', `Helm's engine exited (code ${code})`, 'HELM_ENGINE_EXIT');
      rejectReady(e);
      this.stop(worker, e);
    });
  }

  /**
   * Ends this worker and fails the call running on it; the next call starts a fresh worker.
   * Events of a worker already replaced change nothing: its `exit` arrives after the `error`
   * that replaced it, when a new worker may be running.
   */
  private stop(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.ready = undefined;
    this.fail(err);
    this.ending = worker.terminate().catch(() => undefined);
  }

  private fail(err: Error): void {
    const r = this.running;
    if (r === undefined) return;
    this.running = undefined;
    clearTimeout(r.timer);
    r.reject(err);
  }

  private settle(m: Extract<WorkerMessage, { type: 'result' }>, memoryBytes: number): void {
    const r = this.running;
    if (r?.id !== m.id) return;
    this.running = undefined;
    clearTimeout(r.timer);
    this.memoryBytes = memoryBytes;
    const worker = this.worker;
    if (worker !== undefined && memoryBytes > this.limits.recycleAboveBytes) this.retire(worker);
    else worker?.unref();
    try {
      r.resolve(m.oversized === undefined ? parseResponse(m.json ?? '') : oversizedResponse(m.oversized, this.limits.maxOutputBytes));
    } catch (err) {
      r.reject(err as Error);
    }
  }

  /** Ends an idle worker whose memory grew past the bound; the next call starts a fresh instance. */
  private retire(worker: Worker): void {
    this.worker = undefined;
    this.ready = undefined;
    this.recycled++;
    this.ending = worker.terminate().catch(() => undefined);
  }

  private answerLookup(m: Extract<WorkerMessage, { type: 'lookup' }>): void {
    const worker = this.worker;
    void answerLookup(this.running, m.id, m.method, m.path, m.body).then((r) => worker?.postMessage({ type: 'lookup-reply', lookupId: m.lookupId, status: r.status, body: r.body }));
  }

  /** Runs one call on an idle thread; answers the engine's response. */
  async run(id: number, op: EngineOp, payload: Record<string, unknown>, lookup: LookupTransport | undefined): Promise<WireResponse> {
    if (this.running !== undefined) throw new BinnacleError('internal', 'HELM_ENGINE_BUSY', "internal: a call was given to a busy Helm engine thread");
    const json = JSON.stringify({ ...payload, callId: id });
    // Busy from now, so the pool sends the next call elsewhere while this one starts.
    let settle: Pick<Running, 'resolve' | 'reject'> = { resolve: () => undefined, reject: () => undefined };
    const answer = new Promise<WireResponse>((resolve, reject) => (settle = { resolve, reject }));
    answer.catch(() => undefined); // handled by the caller, or superseded by the error thrown below
    const running: Running = { id, op, lookup, ...settle };
    this.running = running;
    try {
      await this.start();
    } catch (err) {
      if (this.running === running) this.running = undefined;
      throw err;
    }
    const worker = this.worker;
    if (worker === undefined || this.running !== running) {
      if (this.running === running) this.running = undefined;
      throw new BinnacleError('transient', 'HELM_ENGINE_EXIT', "Helm's engine is not running");
    }
    worker.ref();
    // The bound counts from when the worker has the call, not from its start-up.
    running.timer = setTimeout(() => this.stop(worker, timeoutError(op, this.limits)), this.limits.callTimeoutMs);
    worker.postMessage({ type: 'call', id, op, json });
    return answer;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    this.fail(new HelmError('internal', "Helm's engine was closed", 'HELM_ENGINE_EXIT'));
    if (w !== undefined) await w.terminate();
  }
}
