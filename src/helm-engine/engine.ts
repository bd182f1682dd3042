/**
 * Helm's own engine: the Go module in src/helm-engine/go (Helm's chart loader, values coalescing,
 * schema validation, template engine and manifest sorting), run one of two ways behind one
 * interface (HelmEngine):
 *   - native: the same Go source compiled natively into a small static program (`helm-engine`),
 *     run as child processes (engine-process.ts). The default when it is built: a Go process
 *     rendering a small chart holds ~20 MiB, against ~90 MiB for the WebAssembly engine inside
 *     Node (the module's bytes, Go's linear memory, compiled code, a worker's isolate), and native
 *     Go renders several times faster than Go compiled to WebAssembly;
 *   - wasm: compiled to WebAssembly, run in worker threads (engine-thread.ts), when the native
 *     program is not there (or BINNACLE_HELM_ENGINE=wasm).
 * Either way the engine starts on the first Helm call only, a further instance only while the
 * others are busy, and each instance runs one call at a time. `lookup` reaches the cluster through
 * a host callback that each render may supply; without one it answers empty, as `helm template`
 * does. Each call is bounded in time, in the engine's memory and in its answer's size; an instance
 * that crashes or runs past a bound is replaced, and only the call that was running on it fails.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { BinnacleError, InputError } from '../util/errors.js';
import type { HelmRevisionJson } from './release-types.js';
import { EngineThread } from './engine-thread.js';
import { EngineProcess } from './engine-process.js';
import type { CallLimits, ChartDescription, EngineOp, EngineSlot, WireResponse } from './engine-protocol.js';
import { readWithMemoryMaximum } from './wasm-memory.js';
import { readOnlyLookup, type LookupTransport } from './lookup-gate.js';
import { HelmError, HelmLimitError } from './errors.js';

export type { ChartDescription } from './engine-protocol.js';
export { HelmError, type HelmPhase } from './errors.js';

export type { LookupTransport } from './lookup-gate.js';

export interface TemplateRequest {
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
  /**
   * The release's limits, checked by the engine on what it rendered (the manifest, the CRD files,
   * the hooks) before it answers: past one, the call fails with HelmLimitError and the render is
   * never sent over, let alone parsed.
   */
  limits?: { maxObjects: number; maxManifestBytes: number };
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
  release: HelmRevisionJson;
}

/** The small interface the rest of Binnacle uses. */
export interface HelmEngine {
  /** A render with its release record, for installs and upgrades. */
  render(req: TemplateRequest): Promise<RenderResult>;
  /** `helm template`: the output only, without encoding a release record (chart files and all). */
  template(req: TemplateRequest): Promise<TemplateResult>;
  inspect(chart: string): Promise<ChartDescription[]>;
  /** How many engine instances (threads or processes) have been started (for metrics and tests). */
  threads(): number;
  /** The engine instances' memory after their last calls, and how many were dropped for its size. */
  memory(): { bytes: number; recycled: number };
  close(): Promise<void>;
}

/** Where the built engine lives: BINNACLE_HELM_WASM_DIR, else the repository's `.cache/helm-wasm`. */
export function helmWasmDir(): string {
  const fromEnv = process.env.BINNACLE_HELM_WASM_DIR;
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  const here = dirname(fileURLToPath(import.meta.url));
  // src/helm-engine or dist/helm-engine → repository root
  return join(here, '..', '..', '.cache', 'helm-wasm');
}

export interface HelmEngineOptions {
  /**
   * Most instances (worker threads, or native processes) to render on (default 1). Each renders
   * one chart at a time; a second one is started only when every running one is busy (WebAssembly
   * threads share the compiled module, and its optimized code, with the first).
   */
  threads?: number;
  /**
   * The most one render or inspect may take once a thread has it (default 120 s: the corpus's
   * largest charts render in well under 10 s on a loaded 2-core machine). Past it that thread is
   * stopped and the call fails with HELM_TIMEOUT; calls waiting for a thread are not touched.
   */
  callTimeoutMs?: number;
  /**
   * The ceiling on each instance's memory (default DEFAULT_MEMORY_LIMIT_BYTES): a thread's
   * WebAssembly memory, which holds Go's whole heap (whole 64 KiB pages; the module starts with
   * 18 MiB), or a native process's Go memory limit, with RLIMIT_DATA one 64 MiB heap arena above
   * it (src/helm-engine/go/main_native.go). A render that needs more fails with HELM_MEMORY_LIMIT
   * and its instance is replaced, which gives the memory back. At least 64 MiB.
   */
  memoryLimitBytes?: number;
  /** The most one answer (manifest and release record) may be (default 64 MiB): HELM_OUTPUT_LIMIT past it. */
  maxOutputBytes?: number;
  /**
   * When an instance's WebAssembly memory has grown past this after a call (default
   * DEFAULT_RECYCLE_ABOVE_BYTES), the instance is dropped and the next call starts a fresh one
   * from the compiled module: that memory never shrinks while the instance lives.
   */
  recycleAboveBytes?: number;
  /**
   * false: compile Helm's engine with V8's baseline compiler (Liftoff) only, never tiering hot
   * functions up to TurboFan (default true). V8's flag, and so the whole process's: set before
   * the engine's first compile. Measured on this 2-core machine: one memcached CR served by
   * `helm-operator run` peaks 65 MiB lower (bench/helm-operator-memory.ts); argo-cd, the charts
   * corpus's largest, peaks 100 MiB lower and its first render takes 10 s instead of 40 s (TurboFan
   * compiling Go's huge functions), but a warm render 9 s instead of 6.6 s. Right for a
   * process that must fit a small memory limit and renders small charts (`helm-operator run`).
   */
  optimizingCompiler?: boolean;
  /**
   * Which engine: `native` (the helm-engine program beside helm.wasm) or `wasm`. Default:
   * BINNACLE_HELM_ENGINE when set, else native when the program is built, else wasm.
   */
  engine?: HelmEngineKind;
  /**
   * A native engine process idle this long exits (default DEFAULT_IDLE_EXIT_MS); the next call
   * starts another (a few milliseconds). WebAssembly threads stay.
   */
  idleExitMs?: number;
  /**
   * Go's GOGC for a native engine process (default Go's 100); the host's GOGC, when set, is taken
   * instead. Lower collects sooner: `helm-operator run` gives 25. Measured (bench/helm-operator.ts,
   * loki-distributed at 10 CRs, the engine's VmHWM): 100 → 50 took it 30 → 22-25 MiB, 50 → 25 to
   * 21-23 MiB, converge time within the runs' noise each time (a render is a few milliseconds of Go).
   */
  goGC?: number;
  /**
   * Keep a spare RSA key per size that templates asked for, searched for between renders (default
   * true: sprig's genCA, genPrivateKey and gen*Cert then take a ready key; see engine-worker.ts and
   * src/helm-engine/go/overlay/sprig_hostkey_native.go.in). False searches each key inline, in the
   * render that asks, as Helm does: bench/helm.ts compares renders with `helm template` so.
   */
  spareKeys?: boolean;
}

export type HelmEngineKind = 'wasm' | 'native';

/** The native engine's program, beside helm.wasm. */
export const NATIVE_ENGINE_FILE = 'helm-engine';

export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/**
 * 256 MiB of WebAssembly memory per engine thread. Measured on the charts corpus (every chart,
 * defaults and ci/ values, kube 1.36.3 with CRDs, release record included): Go starts at 18 MiB (43 before the client-go scheme left the module);
 * the largest render (argo-cd with its CRDs) peaks at 109 MiB in a fresh instance. A long-lived
 * instance needs more (its heap is fragmented by earlier renders): the whole corpus through one
 * instance fails two renders at a 112 MiB ceiling and none at 256 MiB. Two threads at their
 * ceilings, with each worker's JavaScript heap bound (engine-thread.ts), still leave the
 * manager room in its 1 GiB container.
 */
export const DEFAULT_MEMORY_LIMIT_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
export const DEFAULT_RECYCLE_ABOVE_BYTES = 128 * 1024 * 1024;
const MIN_MEMORY_LIMIT_BYTES = 64 * 1024 * 1024;
/** 60 s: a helm-operator reconciles each CR about once a minute; a process starts in ~10 ms. */
export const DEFAULT_IDLE_EXIT_MS = 60_000;

/** Which engine `opts` and the environment ask for (see HelmEngineOptions.engine). */
export function helmEngineKind(dir: string, asked?: HelmEngineKind): HelmEngineKind {
  const fromEnv = process.env.BINNACLE_HELM_ENGINE;
  const kind = asked ?? (fromEnv === '' ? undefined : fromEnv);
  if (kind === undefined) return existsSync(join(dir, NATIVE_ENGINE_FILE)) ? 'native' : 'wasm';
  if (kind !== 'wasm' && kind !== 'native') throw new InputError('HELM_ENGINE_KIND', `BINNACLE_HELM_ENGINE must be wasm or native, got ${JSON.stringify(kind)}`, { field: 'BINNACLE_HELM_ENGINE' });
  return kind;
}

/** Node's WebAssembly global (the DOM lib, which declares its value, is not in this build). */
const wasmRuntime = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }).WebAssembly;

/** A call waiting for a thread or process. */
interface Queued {
  /** Whose call it is (a render's release namespace): calls are taken in turn by tenant. */
  tenant: string;
  op: EngineOp;
  payload: Record<string, unknown>;
  lookup: LookupTransport | undefined;
  resolve: (res: WireResponse) => void;
  reject: (err: unknown) => void;
}

function positive(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < min) throw new BinnacleError('input', 'HELM_ENGINE_OPTIONS', `Helm engine option ${name} must be at least ${min}, got ${value}`);
  return value;
}

/**
 * Helm's engine over a small pool of instances (worker threads or processes), each running one
 * call at a time; calls wait in one queue and go to whichever instance is free first, tenant by
 * tenant in turn (the tenant served longest ago first, each tenant's own calls in order), so
 * twenty heavy renders queued by one namespace delay another namespace's render by one call,
 * not twenty.
 */
class PooledHelmEngine implements HelmEngine {
  private readonly pool: EngineSlot[] = [];
  private readonly queue: Queued[] = [];
  /** When each tenant was last handed an instance (a count of calls dispatched), for fairness. */
  private readonly lastServed = new Map<string, number>();
  private dispatched = 0;
  private module: Promise<WebAssembly.Module> | undefined;
  private nextId = 1;
  private readonly maxThreads: number;
  private readonly limits: CallLimits;
  private readonly optimizingCompiler: boolean;
  private readonly idleExitMs: number;
  private readonly goGC: number | undefined;
  private readonly spareKeys: boolean;
  readonly kind: HelmEngineKind;

  constructor(
    private readonly dir: string,
    opts: HelmEngineOptions = {},
  ) {
    this.maxThreads = Math.max(1, Math.floor(opts.threads ?? 1));
    this.optimizingCompiler = opts.optimizingCompiler ?? true;
    this.limits = {
      callTimeoutMs: positive('callTimeoutMs', opts.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS),
      memoryBytes: positive('memoryLimitBytes', opts.memoryLimitBytes, DEFAULT_MEMORY_LIMIT_BYTES, MIN_MEMORY_LIMIT_BYTES),
      maxOutputBytes: positive('maxOutputBytes', opts.maxOutputBytes, DEFAULT_MAX_OUTPUT_BYTES),
      recycleAboveBytes: positive('recycleAboveBytes', opts.recycleAboveBytes, DEFAULT_RECYCLE_ABOVE_BYTES),
    };
    this.idleExitMs = positive('idleExitMs', opts.idleExitMs, DEFAULT_IDLE_EXIT_MS);
    this.goGC = opts.goGC === undefined ? undefined : positive('goGC', opts.goGC, 100);
    this.spareKeys = opts.spareKeys ?? true;
    this.kind = helmEngineKind(dir, opts.engine);
  }

  /**
   * Compiled once for every thread, with the memory ceiling written into the module (see
   * wasm-memory.ts for why there); a failed compile is tried again on the next call.
   */
  private compiled(wasm: string): Promise<WebAssembly.Module> {
    if (this.module === undefined && !this.optimizingCompiler) setFlagsFromString('--liftoff-only');
    this.module ??= readWithMemoryMaximum(wasm, this.limits.memoryBytes)
      .then(async (read) => {
        try {
          return await wasmRuntime.compile(read.bytes);
        } finally {
          read.release(); // V8 has its own copy
        }
      })
      .catch((err: unknown) => {
        this.module = undefined;
        throw new BinnacleError('terminal', 'HELM_ENGINE_START', `Helm's engine failed to compile (${wasm}): ${err instanceof Error ? err.message : String(err)}`);
      });
    return this.module;
  }

  /** An idle instance, else a new one while under the limit, else none (the call waits). */
  private idleSlot(): EngineSlot | undefined {
    const idle = this.pool.find((t) => !t.busy);
    if (idle !== undefined || this.pool.length >= this.maxThreads) return idle;
    const slot = this.kind === 'native' ? new EngineProcess(join(this.dir, NATIVE_ENGINE_FILE), this.limits, this.idleExitMs, this.goGC, this.spareKeys) : this.newThread();
    this.pool.push(slot);
    return slot;
  }

  private newThread(): EngineThread {
    const wasm = join(this.dir, 'helm.wasm');
    const glue = join(this.dir, 'wasm_exec.js');
    if (!existsSync(wasm) || !existsSync(glue)) {
      throw new BinnacleError('terminal', 'HELM_ENGINE_MISSING', `Helm's engine is not built: ${wasm} is missing; build it with \`bash hack/build-tools.sh helm-wasm\` (needs Go)`);
    }
    return new EngineThread(glue, () => this.compiled(wasm), this.limits, this.spareKeys);
  }

  /** Hands waiting calls to free instances; runs again whenever a call ends. */
  private dispatch(): void {
    for (let next = this.nextJob(); next !== undefined; next = this.nextJob()) {
      const job = next.job;
      let slot: EngineSlot | undefined;
      try {
        slot = this.idleSlot();
      } catch (err) {
        this.queue.splice(next.at, 1);
        job.reject(err);
        continue;
      }
      if (slot === undefined) return;
      this.queue.splice(next.at, 1);
      this.lastServed.set(job.tenant, ++this.dispatched);
      if (this.lastServed.size > 1024) this.forgetTenants();
      slot
        .run(this.nextId++, job.op, job.payload, job.lookup)
        .then(job.resolve, job.reject)
        .finally(() => this.dispatch());
    }
  }

  /** The first waiting call of the tenant served longest ago (never served: first of all). */
  private nextJob(): { job: Queued; at: number } | undefined {
    let best: { job: Queued; at: number; served: number } | undefined;
    const seen = new Set<string>();
    for (let at = 0; at < this.queue.length; at++) {
      const job = this.queue[at] as Queued;
      if (seen.has(job.tenant)) continue;
      seen.add(job.tenant);
      const served = this.lastServed.get(job.tenant) ?? 0;
      if (best === undefined || served < best.served) best = { job, at, served };
    }
    return best;
  }

  /** Tenants with nothing waiting need no turn kept: the map stays as small as the queue. */
  private forgetTenants(): void {
    const waiting = new Set(this.queue.map((j) => j.tenant));
    for (const tenant of this.lastServed.keys()) if (!waiting.has(tenant)) this.lastServed.delete(tenant);
  }

  private call(op: EngineOp, payload: Record<string, unknown>, lookup: LookupTransport | undefined): Promise<WireResponse> {
    return new Promise<WireResponse>((resolveCall, rejectCall) => {
      this.queue.push({ tenant: typeof payload.namespace === 'string' ? payload.namespace : '', op, payload, lookup, resolve: resolveCall, reject: rejectCall });
      this.dispatch();
    });
  }

  async render(req: TemplateRequest): Promise<RenderResult> {
    const res = await this.renderWire(req, false);
    if (res.release === undefined) throw new HelmError('internal', 'Helm engine answered without a release');
    return { output: res.output, release: res.release, crds: res.crds ?? [] };
  }

  async template(req: TemplateRequest): Promise<TemplateResult> {
    const res = await this.renderWire(req, true);
    return { output: res.output, crds: res.crds ?? [] };
  }

  private async renderWire(req: TemplateRequest, omitRelease: boolean): Promise<WireResponse & { output: string }> {
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
      maxObjects: req.limits?.maxObjects,
      maxManifestBytes: req.limits?.maxManifestBytes,
    };
    // Every transport is gated here, whoever built it: `lookup` only reads (lookup-gate.ts).
    const res = await this.call('render', wire, req.lookup === undefined ? undefined : readOnlyLookup(req.lookup));
    if (res.phase === 'limits' && res.exceeded !== undefined) throw new HelmLimitError(res.exceeded, res.size ?? 0);
    if (res.error !== undefined) throw new HelmError(res.phase ?? 'render', res.error);
    if (res.output === undefined) throw new HelmError('internal', 'Helm engine answered without output');
    return { ...res, output: res.output };
  }

  async inspect(chart: string): Promise<ChartDescription[]> {
    const res = await this.call('inspect', { chart: resolve(chart) }, undefined);
    if (res.error !== undefined) throw new HelmError(res.phase ?? 'load', res.error);
    return res.charts ?? [];
  }

  threads(): number {
    return this.pool.length;
  }

  memory(): { bytes: number; recycled: number } {
    return { bytes: this.pool.reduce((s, t) => s + t.memoryBytes, 0), recycled: this.pool.reduce((s, t) => s + t.recycled, 0) };
  }

  async close(): Promise<void> {
    for (const job of this.queue.splice(0)) job.reject(new HelmError('internal', "Helm's engine was closed", 'HELM_ENGINE_EXIT'));
    const slots = this.pool.splice(0);
    await Promise.all(slots.map((t) => t.close()));
  }
}

let shared: HelmEngine | undefined;
let sharedOptions: HelmEngineOptions = {};

/** Options for the process's engine; before its first use (a long-running manager sets threads). */
export function configureHelmEngine(opts: HelmEngineOptions): void {
  if (shared !== undefined) throw new BinnacleError('internal', 'HELM_ENGINE_CONFIGURED', "Helm's engine is configured before its first use");
  sharedOptions = opts;
}

/** The process's one Helm engine (started lazily on the first render). */
export function helmEngine(): HelmEngine {
  shared ??= new PooledHelmEngine(helmWasmDir(), sharedOptions);
  return shared;
}

/** A separate engine, for tests and benchmarks that measure a cold start. */
export function createHelmEngine(dir = helmWasmDir(), opts: HelmEngineOptions = {}): HelmEngine {
  return new PooledHelmEngine(dir, opts);
}
