/**
 * Helm charts as a third bundle format, beside registry+v1 and plain. Helm's own engine
 * (loader, values, schema, templates; compiled to WebAssembly from hack/helm-wasm) renders a
 * chart into Helm's release object; the rest of Binnacle treats the result like any other
 * bundle: the same applier, pruning, CRD safety, health and Helm release records. Talks to
 * `apply` (release types) and `kube` (lookup through the cluster client); nothing below
 * `controllers` and `cli` imports it.
 */
export { helmEngine, createHelmEngine, helmWasmDir, helmEngineKind, HelmError, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_MAX_OUTPUT_BYTES, type HelmEngineOptions, type HelmEngineKind, type HelmPhase, type HelmEngine, type RenderRequest, type RenderResult, type ChartDescription, type LookupTransport } from './engine.js';
export type { HelmRelease, HelmHook, HelmChart, HookEvent, HookDeletePolicy } from './release-types.js';
export { findChart, renderChartRelease, chartInputDigest, inputDigestOf, type ChartRelease, type ChartReleaseInput, type CrdPolicy } from './chart-release.js';
