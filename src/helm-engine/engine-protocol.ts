/**
 * What every implementation of Helm's engine shares: the calls (engine.ts builds the request,
 * the Go side's `request` in src/helm-engine/go/engine.go), the answer (`response` there), the
 * bounds on one call, and the errors a bound or a crash becomes. Two implementations run the
 * same Go source: WebAssembly in worker threads (engine-thread.ts) and a native child process
 * (engine-process.ts); engine.ts pools either behind one interface.
 */
import { BinnacleError } from '../util/errors.js';
import type { LookupTransport } from './lookup-gate.js';
import type { HelmRevisionJson } from './release-types.js';
import { HelmError, type HelmPhase, type RenderLimit } from './errors.js';

export type EngineOp = 'render' | 'inspect';

/** The bounds on one call (see HelmEngineOptions in engine.ts). */
export interface CallLimits {
  callTimeoutMs: number;
  /** The ceiling on the engine's memory (WebAssembly memory, or the native process's heap). */
  memoryBytes: number;
  /**
   * Past this much engine memory after a call, the instance is dropped and the next call
   * starts a fresh one: WebAssembly memory never shrinks while an instance lives, so one
   * large render would otherwise keep its peak for the life of the process.
   */
  recycleAboveBytes: number;
  maxOutputBytes: number;
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

/** The engine's answer to one call (`response` in src/helm-engine/go/engine.go). */
export interface WireResponse {
  output?: string;
  release?: HelmRevisionJson;
  charts?: ChartDescription[];
  crds?: { name: string; data: string }[];
  error?: string;
  phase?: HelmPhase;
  /** Phase `limits`: the release limit the render is past, and its size (engine.go limits.go). */
  exceeded?: RenderLimit;
  size?: number;
}

/**
 * One place a call runs: a worker thread with a WebAssembly instance, or a child process. One
 * call at a time, so a call that takes its instance down (a bound, a crash) fails alone.
 */
export interface EngineSlot {
  readonly busy: boolean;
  /** The instance's memory after its last call (0 before the first). */
  readonly memoryBytes: number;
  /** How many instances were dropped for growing past limits.recycleAboveBytes. */
  readonly recycled: number;
  run(id: number, op: EngineOp, payload: Record<string, unknown>, lookup: LookupTransport | undefined): Promise<WireResponse>;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;

export function mib(bytes: number): string {
  return `${Math.round((bytes / MiB) * 10) / 10} MiB`;
}

/** The engine's response JSON. */
export function parseResponse(json: string): WireResponse {
  try {
    return JSON.parse(json) as WireResponse;
  } catch (err) {
    throw new BinnacleError('internal', 'HELM_ENGINE_PROTOCOL', `Helm's engine answered something that is not JSON: ${String(err)}`);
  }
}

/** The answer in place of one longer than the output limit (which is never copied to the caller). */
export function oversizedResponse(length: number, maxOutputBytes: number): WireResponse {
  const size = length >= 10 * MiB ? `${Math.floor(length / MiB)} MiB` : `${(length / MiB).toFixed(1)} MiB`;
  return { phase: 'output', error: `render exceeded the output limit of ${Math.floor(maxOutputBytes / MiB)} MiB: the rendered manifest and release are ${size}` };
}

/** `which`: the engine's memory ceiling unless said. */
export function memoryLimitError(op: EngineOp, limits: CallLimits, which?: string): HelmError {
  const limit = which === undefined ? `the memory limit of ${mib(limits.memoryBytes)}` : `the memory limit of ${which}`;
  return new HelmError('memory', `${op} exceeded ${limit}; Helm's engine was restarted`, 'HELM_MEMORY_LIMIT');
}

export function timeoutError(op: EngineOp, limits: CallLimits): HelmError {
  const seconds = Math.round(limits.callTimeoutMs / 100) / 10;
  return new HelmError('timeout', `${op} exceeded the time limit of ${seconds} s (a template that does not end?); Helm's engine was restarted`);
}

/** Why Go stopped under a call (`fatal`: what its runtime printed as it died), as that call's error. */
export function crashError(error: string, fatal: string | undefined, op: EngineOp, limits: CallLimits): HelmError {
  const text = (fatal ?? '').trim();
  // Go dies "out of memory" (a mapping refused: WebAssembly's maximum, or RLIMIT_DATA natively), or "cannot allocate memory" (ENOMEM).
  if (/out of memory|cannot allocate memory/.test(text)) return memoryLimitError(op, limits);
  const firstLines = text.split('\n').slice(0, 2).join('; ');
  return new HelmError('internal', `Helm's engine stopped: ${error}${firstLines === '' ? '' : ` (${firstLines})`}`, 'HELM_ENGINE_CRASH');
}

/** The start of Go's own dying words (a fatal error and its goroutine dump) on stderr. */
export const GO_FATAL_START = /^(fatal error|runtime: |panic: |SIG[A-Z]+: |unexpected (fault|signal))/;

function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message });
}

/**
 * Answers one `lookup` request of call `callId` with the transport of the call running now,
 * only when it is that call: a request of an earlier call (ended, timed out) reaches no client.
 */
export function answerLookup(running: { id: number; lookup: LookupTransport | undefined } | undefined, callId: number, method: string, path: string, body: string): Promise<{ status: number; body: string }> {
  const lookup = running?.id === callId ? running.lookup : undefined;
  if (lookup === undefined) return Promise.resolve({ status: 404, body: statusBody(404, 'NotFound', 'no cluster for lookup') });
  return lookup(method, path, body).catch((err: unknown) => ({ status: 503, body: statusBody(503, 'ServiceUnavailable', String(err)) }));
}
