/**
 * Helm's own engine, in process: the Go module in hack/helm-wasm (Helm's chart loader, values
 * coalescing, schema validation, template engine and manifest sorting) compiled to
 * WebAssembly, run in one long-lived worker thread that is started on the first Helm call
 * only. `lookup` reaches the cluster through a host callback that each render may supply;
 * without one it answers empty, as `helm template` does.
 *
 * Helm has no bound on a template's work (nested `range`, `include` fanning out, `tpl` calling
 * itself), and the worker renders one thing at a time, so a call that runs past its time bound
 * (HELM_TIMEOUT) or crashes the worker (HELM_ENGINE_CRASH: a JavaScript stack overflow, Go
 * running out of memory) stops the worker and fails every call in flight; the next call starts a
 * fresh one.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { BinnacleError } from '../util/errors.js';
import type { HelmRelease } from './release-types.js';
import { WORKER_SOURCE } from './engine-worker.js';

/** One HTTP exchange with the API server, on behalf of a template's `lookup`. */
export type LookupTransport = (method: string, path: string, body: string) => Promise<{ status: number; body: string }>;

export interface RenderRequest {
  /** A chart directory or `.tgz` archive on local disk. */
  chart: string;
  releaseName?: string;
  namespace?: string;
  /** Values as a map (an operator's CR spec), under the files and --set flags below. */
  values?: Record<string, unknown>;
  valueFiles?: string[];
  set?: string[];
  setString?: string[];
  setFile?: string[];
  setJson?: string[];
  setLiteral?: string[];
  /** `.Capabilities.KubeVersion`; Helm's default when absent. */
  kubeVersion?: string;
  /** Added to Helm's default API versions, as `helm template --api-versions`. */
  apiVersions?: string[];
  /** The cluster's served API versions (from discovery), instead of Helm's defaults. */
  clusterApiVersions?: string[];
  /** Above 1: render revision N of an upgrade (`.Release.IsUpgrade`, `.Release.Revision`). */
  revision?: number;
  isUpgrade?: boolean;
  includeCrds?: boolean;
  skipTests?: boolean;
  disableHooks?: boolean;
  showOnly?: string[];
  skipSchemaValidation?: boolean;
  /** Lets `lookup` read the cluster; offline it answers empty. */
  lookup?: LookupTransport;
  /** Render one subchart on its own (dependency names or aliases, `a/b`). */
  subchart?: string;
}

/** What `helm template` prints, without a release record. */
export interface TemplateResult {
  /** Exactly what `helm template` prints for the same request. */
  output: string;
  /** The crds/ files of the chart and its enabled subcharts, which Helm applies before anything else. */
  crds: { name: string; data: string }[];
}

export interface RenderResult extends TemplateResult {
  /** Helm's release object, as Helm would store it (chart, config, manifest, hooks, notes). */
  release: HelmRelease;
}

/** A loaded chart and each subchart (path like `pelorus/charts/exporters`). */
export interface ChartDescription {
  path: string;
  metadata: {
    name: string;
    version: string;
    appVersion?: string;
    description?: string;
    kubeVersion?: string;
    type?: string;
    annotations?: Record<string, string>;
    dependencies?: { name: string; version?: string; alias?: string; condition?: string; tags?: string[] }[];
    icon?: string;
    keywords?: string[];
    home?: string;
    maintainers?: { name?: string; email?: string; url?: string }[];
  };
  values: Record<string, unknown>;
  /** values.schema.json, when the chart has one. */
  schema?: string;
  /** The raw values.yaml, for its comments. */
  valuesYaml?: string;
  crds?: { name: string; data: string }[];
}

/** `timeout`: the call ran past the engine's time bound (a template that does not end). */
export type HelmPhase = 'request' | 'load' | 'values' | 'render' | 'timeout' | 'internal';

/**
 * Helm refused the chart or values (`message` is Helm's own error text), or the engine gave no
 * answer: past its time bound (HELM_TIMEOUT), or the worker crashed (phase `internal`,
 * HELM_ENGINE_CRASH / HELM_ENGINE_EXIT).
 */
export class HelmError extends BinnacleError {
  readonly phase: HelmPhase;
  constructor(phase: HelmPhase, message: string, code = `HELM_${phase.toUpperCase()}`) {
    super(code, message);
    this.phase = phase;
  }
}

export interface HelmEngineOptions {
  /**
   * The most one render or inspect may take once the engine has it (default 120 s: the corpus's
   * largest charts render in well under 10 s on a loaded 2-core machine). Past it the worker is
   * stopped and the call fails with HELM_TIMEOUT.
   */
  callTimeoutMs?: number;
}

export const DEFAULT_CALL_TIMEOUT_MS = 120_000;

/** The small interface the rest of Binnacle uses. */
export interface HelmEngine {
  /** A render with its release record, for installs and upgrades. */
  render(req: RenderRequest): Promise<RenderResult>;
  /** `helm template`: the output only, without encoding a release record (chart files and all). */
  template(req: RenderRequest): Promise<TemplateResult>;
  inspect(chart: string): Promise<ChartDescription[]>;
  close(): Promise<void>;
}

interface WireResponse {
  output?: string;
  release?: HelmRelease;
  charts?: ChartDescription[];
  crds?: { name: string; data: string }[];
  error?: string;
  phase?: HelmPhase;
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'result'; id: number; json: string }
  | { type: 'lookup'; id: number; lookupId: number; method: string; path: string; body: string };

/** Where the built engine lives: BINNACLE_HELM_WASM_DIR, else the repository's `.cache/helm-wasm`. */
export function helmWasmDir(): string {
  const fromEnv = process.env.BINNACLE_HELM_WASM_DIR;
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  const here = dirname(fileURLToPath(import.meta.url));
  // src/helm or dist/helm → repository root
  return join(here, '..', '..', '.cache', 'helm-wasm');
}

class WasmHelmEngine implements HelmEngine {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: WireResponse) => void; reject: (e: Error) => void; lookup: LookupTransport | undefined; timer: NodeJS.Timeout }>();
  private readonly callTimeoutMs: number;

  constructor(
    private readonly dir: string,
    options: HelmEngineOptions = {},
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  private start(): Promise<void> {
    if (this.ready !== undefined) return this.ready;
    const wasm = join(this.dir, 'helm.wasm');
    const glue = join(this.dir, 'wasm_exec.js');
    if (!existsSync(wasm) || !existsSync(glue)) {
      return Promise.reject(
        new BinnacleError('HELM_ENGINE_MISSING', `Helm's engine is not built: ${wasm} is missing; build it with \`bash hack/build-tools.sh helm-wasm\` (needs Go)`),
      );
    }
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { wasm, glue } });
    // A long-lived helper must not keep a CLI process alive once its work is done.
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolveReady, rejectReady) => {
      let started = false;
      worker.on('message', (m: WorkerMessage) => {
        switch (m.type) {
          case 'ready':
            started = true;
            resolveReady();
            return;
          case 'failed':
            if (!started) {
              rejectReady(new BinnacleError('HELM_ENGINE_START', `Helm's engine failed to start: ${m.error}`));
              this.stop(worker, new BinnacleError('HELM_ENGINE_START', `Helm's engine failed to start: ${m.error}`));
              return;
            }
            // Go exited under a render (out of memory, a fatal error): its calls will never answer.
            this.stop(worker, new HelmError('internal', `Helm's engine stopped: ${m.error}`, 'HELM_ENGINE_CRASH'));
            return;
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
    });
    return this.ready;
  }

  /**
   * Any crash or timeout takes every call in flight with it (the worker renders one at a time);
   * the next call starts a fresh worker. Events of a worker already replaced change nothing: its
   * `exit` arrives after the `error` that replaced it, when a new worker may be running.
   */
  private stop(worker: Worker, err: Error, errFor?: (id: number) => Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.ready = undefined;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(errFor?.(id) ?? err);
    }
    this.pending.clear();
    void worker.terminate().catch(() => undefined);
  }

  private settle(id: number, json: string): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (this.pending.size === 0) this.worker?.unref();
    try {
      p.resolve(JSON.parse(json) as WireResponse);
    } catch (err) {
      p.reject(new BinnacleError('HELM_ENGINE_PROTOCOL', `Helm's engine answered something that is not JSON: ${String(err)}`));
    }
  }

  private answerLookup(m: Extract<WorkerMessage, { type: 'lookup' }>): void {
    const reply = (status: number, body: string): void => this.worker?.postMessage({ type: 'lookup-reply', lookupId: m.lookupId, status, body });
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

  private async call(op: 'render' | 'inspect', payload: Record<string, unknown>, lookup: LookupTransport | undefined): Promise<WireResponse> {
    await this.start();
    const worker = this.worker;
    if (worker === undefined) throw new BinnacleError('HELM_ENGINE_EXIT', "Helm's engine is not running");
    const id = this.nextId++;
    worker.ref();
    return new Promise<WireResponse>((resolveCall, rejectCall) => {
      const timer = setTimeout(() => {
        const over = new HelmError('timeout', `Helm's engine gave no answer within ${this.callTimeoutMs / 1000} s (a template that does not end?); the engine was restarted`);
        const restarted = new HelmError('internal', "Helm's engine was restarted: another call ran past its time bound", 'HELM_ENGINE_RESTARTED');
        this.stop(worker, over, (other) => (other === id ? over : restarted));
      }, this.callTimeoutMs);
      this.pending.set(id, { resolve: resolveCall, reject: rejectCall, lookup, timer });
      worker.postMessage({ type: 'call', id, op, json: JSON.stringify({ ...payload, callId: id }) });
    });
  }

  async render(req: RenderRequest): Promise<RenderResult> {
    const res = await this.renderWire(req, false);
    if (res.release === undefined) throw new HelmError('internal', 'Helm engine answered without a release');
    return { output: res.output, release: res.release, crds: res.crds ?? [] };
  }

  async template(req: RenderRequest): Promise<TemplateResult> {
    const res = await this.renderWire(req, true);
    return { output: res.output, crds: res.crds ?? [] };
  }

  private async renderWire(req: RenderRequest, omitRelease: boolean): Promise<WireResponse & { output: string }> {
    const wire = {
      chart: resolve(req.chart),
      releaseName: req.releaseName ?? 'release-name',
      namespace: req.namespace ?? 'default',
      values: req.values,
      valueFiles: req.valueFiles?.map((f) => resolve(f)),
      set: req.set,
      setString: req.setString,
      setFile: req.setFile,
      setJSON: req.setJson,
      setLiteral: req.setLiteral,
      kubeVersion: req.kubeVersion,
      apiVersions: req.apiVersions,
      clusterAPIVersions: req.clusterApiVersions,
      revision: req.revision,
      isUpgrade: req.isUpgrade,
      includeCRDs: req.includeCrds,
      skipTests: req.skipTests,
      disableHooks: req.disableHooks,
      showOnly: req.showOnly,
      lookup: req.lookup !== undefined,
      skipSchemaValidation: req.skipSchemaValidation,
      subchart: req.subchart,
      omitRelease,
    };
    const res = await this.call('render', wire, req.lookup);
    if (res.error !== undefined) throw new HelmError(res.phase ?? 'render', res.error);
    if (res.output === undefined) throw new HelmError('internal', 'Helm engine answered without output');
    return { ...res, output: res.output };
  }

  async inspect(chart: string): Promise<ChartDescription[]> {
    const res = await this.call('inspect', { chart: resolve(chart) }, undefined);
    if (res.error !== undefined) throw new HelmError(res.phase ?? 'load', res.error);
    return res.charts ?? [];
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new HelmError('internal', "Helm's engine was closed", 'HELM_ENGINE_EXIT'));
    }
    this.pending.clear();
    if (w !== undefined) await w.terminate();
  }
}

let shared: HelmEngine | undefined;

/** The process's one Helm engine (started lazily on the first render). */
export function helmEngine(): HelmEngine {
  shared ??= new WasmHelmEngine(helmWasmDir());
  return shared;
}

/** A separate engine, for tests and benchmarks that measure a cold start. */
export function createHelmEngine(dir = helmWasmDir(), options: HelmEngineOptions = {}): HelmEngine {
  return new WasmHelmEngine(dir, options);
}
