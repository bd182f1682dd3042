/** Errors of Helm's engine: Helm's own refusals, and an engine that gave no answer. */
import { BinnacleError } from '../util/errors.js';

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
