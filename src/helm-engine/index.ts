/**
 * Helm's engine: Helm's own chart loader, values coalescing, schema validation, template engine
 * and manifest sorting (the Go module in go/, built by build.sh with `go -overlay`-style patches
 * into .cache/helm-wasm), and its TypeScript host. The host runs the engine natively as child
 * processes (engine-process.ts) or as WebAssembly in worker threads (engine-thread.ts) behind one
 * interface (engine.ts `HelmEngine`: inspect, template, render → Helm's release object or Helm's
 * error), bounded in time, memory and answer size, with `lookup` through a read-only gate
 * (lookup-gate.ts). Talks to `apply` (the release record's types) and `util`; `helm` (charts and
 * their release model), `render`, the controllers and the CLI call it.
 */
export { helmEngine, createHelmEngine, configureHelmEngine, helmWasmDir, helmEngineKind, HelmError, NATIVE_ENGINE_FILE, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_MAX_OUTPUT_BYTES, type HelmEngineOptions, type HelmEngineKind, type HelmPhase, type HelmEngine, type TemplateRequest, type RenderResult, type TemplateResult, type ChartDescription, type LookupTransport } from './engine.js';
export type { HelmRevisionJson, HelmHook, HelmChart, HelmChartFile, HookEvent, HookDeletePolicy } from './release-types.js';
