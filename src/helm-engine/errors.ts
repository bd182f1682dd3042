/** Errors of Helm's engine: Helm's own refusals, and an engine that gave no answer. */
import { BinnacleError, type ErrorClass } from '../util/errors.js';

/**
 * Where a render failed. The bounds on one render (engine.ts HelmEngineOptions) each have
 * their own: `timeout` (past the time limit, HELM_TIMEOUT), `memory` (past the engine's memory
 * ceiling, HELM_MEMORY_LIMIT), `output` (an answer over the size limit, HELM_OUTPUT_LIMIT).
 * These are the chart's or the values' doing, like `render`; `internal` is the engine's.
 */
export type HelmPhase = 'request' | 'load' | 'values' | 'render' | 'limits' | 'timeout' | 'memory' | 'output' | 'internal';

/**
 * Load, values and render failures are the chart's or the values' fault (fix them); a bound
 * exceeded fails the same way on retry; `request` (Binnacle asked the engine wrongly) and
 * `internal` (the engine gave no answer) are Binnacle's bugs.
 */
const CLASS_BY_PHASE: Record<HelmPhase, ErrorClass> = {
  request: 'internal',
  load: 'input',
  values: 'input',
  render: 'input',
  limits: 'terminal',
  timeout: 'terminal',
  memory: 'terminal',
  output: 'terminal',
  internal: 'internal',
};

const LIMIT_CODES: Partial<Record<HelmPhase, string>> = { memory: 'HELM_MEMORY_LIMIT', output: 'HELM_OUTPUT_LIMIT', limits: 'HELM_RELEASE_LIMIT' };

/**
 * Helm refused the chart or values (`message` is Helm's own error text), a render went past
 * one of its bounds (the message names the limit and its size), or the engine gave no answer
 * (phase `internal`: HELM_ENGINE_CRASH / HELM_ENGINE_EXIT).
 */
export class HelmError extends BinnacleError {
  readonly phase: HelmPhase;
  constructor(phase: HelmPhase, message: string, code = LIMIT_CODES[phase] ?? `HELM_${phase.toUpperCase()}`) {
    super(CLASS_BY_PHASE[phase], code, message);
    this.phase = phase;
  }
}

/** The release limits a render may be asked to keep (the host's apply/limits.ts sets them). */
export type RenderLimit = 'maxObjects' | 'maxManifestBytes';

/**
 * A render past one of the release's limits (TemplateRequest.limits), found by the engine where
 * it rendered: `size` is the bytes, or the objects counted when it stopped counting. The render
 * itself never crosses to the host.
 */
export class HelmLimitError extends HelmError {
  constructor(
    readonly limit: RenderLimit,
    readonly size: number,
  ) {
    super('limits', `the render is past the release's ${limit} (${size} ${limit === 'maxObjects' ? 'objects or more' : 'bytes'})`);
  }
}
