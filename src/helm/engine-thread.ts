/**
 * One worker thread running one instance of Helm's WebAssembly engine (engine-worker.ts):
 * started on its first call, answers calls by id, and bridges `lookup` to the caller's transport.
 *
 * Helm has no bound on a template's work (nested `range`, `include` fanning out, `tpl` calling
 * itself), and an instance renders one thing at a time, so a call that runs past its time bound
 * (HELM_TIMEOUT) or crashes the worker (HELM_ENGINE_CRASH: a JavaScript stack overflow, Go
 * running out of memory) stops the worker and fails every call in flight on it; the next call
 * starts a fresh one.
 */
import { Worker } from 'node:worker_threads';
import { BinnacleError } from '../util/errors.js';
import { WORKER_SOURCE } from './engine-worker.js';
import { HelmError } from './errors.js';

/** One HTTP exchange with the API server, on behalf of a template's `lookup`. */
type Transport = (method: string, path: string, body: string) => Promise<{ status: number; body: string }>;

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; json: string }
  | { type: 'lookup'; id: number; lookupId: number; method: string; path: string; body: string };

interface Pending {
  resolve: (json: string) => void;
  reject: (e: Error) => void;
  lookup: Transport | undefined;
  timer?: NodeJS.Timeout;
}

export class EngineThread {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private readonly pending = new Map<number, Pending>();

  /** `module` compiles (or has compiled) helm.wasm; every thread shares the one module. */
  constructor(
    private readonly glue: string,
    private readonly module: () => Promise<WebAssembly.Module>,
    private readonly callTimeoutMs: number,
  ) {}

  /** Calls in flight on this thread. */
  get busy(): number {
    return this.pending.size;
  }

  private start(): Promise<void> {
    if (this.ready !== undefined) return this.ready;
    this.ready = this.module().then(
      (module) =>
        new Promise<void>((resolveReady, rejectReady) => {
          const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, glue: this.glue } });
          // A long-lived helper must not keep a CLI process alive once its work is done.
          if (this.pending.size === 0) worker.unref();
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
                  const e = new BinnacleError('HELM_ENGINE_START', `Helm's engine failed to start: ${m.error}`);
                  rejectReady(e);
                  this.stop(worker, e);
                  return;
                }
                // Go exited under a render (out of memory, a fatal error): its calls will never answer.
                this.stop(worker, new HelmError('internal', `Helm's engine stopped: ${m.error}`, 'HELM_ENGINE_CRASH'));
                return;
              }
              case 'result':
                this.settle(m.id, m.json);
                return;
              case 'lookup':
                this.answerLookup(m);
                return;
            }
          });
          worker.on('error', (err) => {
            const e = new HelmError('internal', `Helm's engine crashed: ${err.message}`, 'HELM_ENGINE_CRASH');
            e.cause = err;
            rejectReady(e);
            this.stop(worker, e);
          });
          worker.on('exit', (code) => {
            const e = new HelmError('internal', `Helm's engine exited (code ${code})`, 'HELM_ENGINE_EXIT');
            rejectReady(e);
            this.stop(worker, e);
          });
        }),
    );
    // A start that failed is tried again on the next call.
    this.ready.catch(() => {
      if (this.worker === undefined) this.ready = undefined;
    });
    return this.ready;
  }

  /**
   * A crash or timeout takes every call in flight on this worker with it; the next call starts a
   * fresh worker. Events of a worker already replaced change nothing: its `exit` arrives after
   * the `error` that replaced it, when a new worker may be running.
   */
  private stop(worker: Worker, err: Error, errFor?: (id: number) => Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.ready = undefined;
    this.rejectAll(err, errFor);
    void worker.terminate().catch(() => undefined);
  }

  private rejectAll(err: Error, errFor?: (id: number) => Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(errFor?.(id) ?? err);
    }
    this.pending.clear();
  }

  private settle(id: number, json: string): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (this.pending.size === 0) this.worker?.unref();
    p.resolve(json);
  }

  private answerLookup(m: Extract<WorkerMessage, { type: 'lookup' }>): void {
    const worker = this.worker;
    const reply = (status: number, body: string): void => worker?.postMessage({ type: 'lookup-reply', lookupId: m.lookupId, status, body });
    const lookup = this.pending.get(m.id)?.lookup;
    if (lookup === undefined) {
      reply(404, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'no cluster for lookup' }));
      return;
    }
    lookup(m.method, m.path, m.body).then(
      (r) => reply(r.status, r.body),
      (err: unknown) => reply(503, JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 503, message: String(err) })),
    );
  }

  /** Sends one call; answers the engine's response JSON. */
  async call(id: number, op: 'render' | 'inspect', payload: Record<string, unknown>, lookup: Transport | undefined): Promise<string> {
    const json = JSON.stringify({ ...payload, callId: id });
    // Counted as busy from now, so the pool sends the next call elsewhere while this one starts.
    const answer = new Promise<string>((resolveCall, rejectCall) => this.pending.set(id, { resolve: resolveCall, reject: rejectCall, lookup }));
    answer.catch(() => undefined); // handled by the caller, or superseded by the error thrown below
    try {
      await this.start();
    } catch (err) {
      this.pending.delete(id);
      throw err;
    }
    const worker = this.worker;
    if (worker === undefined || !this.pending.has(id)) {
      this.pending.delete(id);
      throw new BinnacleError('HELM_ENGINE_EXIT', "Helm's engine is not running");
    }
    worker.ref();
    const p = this.pending.get(id);
    if (p !== undefined) {
      // The bound counts from when the worker has the call, not from its start-up.
      p.timer = setTimeout(() => {
        const over = new HelmError('timeout', `Helm's engine gave no answer within ${this.callTimeoutMs / 1000} s (a template that does not end?); the engine was restarted`);
        const restarted = new HelmError('internal', "Helm's engine was restarted: another call ran past its time bound", 'HELM_ENGINE_RESTARTED');
        this.stop(worker, over, (other) => (other === id ? over : restarted));
      }, this.callTimeoutMs);
    }
    worker.postMessage({ type: 'call', id, op, json });
    return answer;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    this.rejectAll(new HelmError('internal', "Helm's engine was closed", 'HELM_ENGINE_EXIT'));
    if (w !== undefined) await w.terminate();
  }
}
