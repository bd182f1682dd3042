/**
 * The errors of chart sources. Every one names the chart reference it is about (`ref`) and has a
 * stable code; callers branch on the class or the code, never on the message.
 */
import { BinnacleError, InputError, type ErrorClass } from '../../util/errors.js';

export type ChartSourceCode =
  | 'HELM_CHART_REF'
  | 'HELM_CHART_NOT_FOUND'
  | 'HELM_CHART_NO_VERSION'
  | 'HELM_CHART_DIGEST_MISMATCH'
  | 'HELM_CHART_UNREACHABLE'
  | 'HELM_CHART_HTTP'
  | 'HELM_CHART_DENIED'
  | 'HELM_CHART_TOO_LARGE'
  | 'HELM_CHART_NOT_A_CHART'
  | 'HELM_CHART_MISMATCH'
  | 'HELM_CHART_HOST_PATH_DENIED'
  | 'HELM_CHART_REGISTRY';

/**
 * A reference that names nothing fetchable is the user's to fix; a registry or server that is
 * down, or refuses credentials a Secret may yet fix, may answer next time; bytes that do not
 * match their digest will not change on retry.
 */
const CLASS_BY_CODE: Record<ChartSourceCode, ErrorClass> = {
  HELM_CHART_REF: 'input',
  HELM_CHART_NOT_FOUND: 'input',
  HELM_CHART_NO_VERSION: 'input',
  HELM_CHART_DIGEST_MISMATCH: 'terminal',
  HELM_CHART_UNREACHABLE: 'transient',
  HELM_CHART_HTTP: 'transient',
  HELM_CHART_DENIED: 'transient',
  HELM_CHART_TOO_LARGE: 'input',
  HELM_CHART_NOT_A_CHART: 'input',
  HELM_CHART_MISMATCH: 'input',
  HELM_CHART_HOST_PATH_DENIED: 'input',
  HELM_CHART_REGISTRY: 'transient',
};

/** A chart could not be resolved or fetched; `ref` is the reference as the user wrote it. */
export class ChartSourceError extends BinnacleError {
  readonly ref: string;
  constructor(code: ChartSourceCode, ref: string, reason: string, options?: { cause?: unknown }) {
    super(CLASS_BY_CODE[code], code, `chart ${ref}: ${reason}`, options);
    this.ref = ref;
  }
}

/** No published version satisfies the range; `available` lists what exists, highest first. */
export class NoMatchingVersionError extends ChartSourceError {
  readonly constraint: string;
  readonly available: readonly string[];
  constructor(ref: string, constraint: string, available: readonly string[]) {
    const shown = available.length > 20 ? `${available.slice(0, 20).join(', ')}, … (${available.length} in all)` : available.join(', ');
    super('HELM_CHART_NO_VERSION', ref, `no version matches "${constraint}"; ${available.length === 0 ? 'no versions are published' : `available: ${shown}`}`);
    this.constraint = constraint;
    this.available = available;
  }
}

/** One thing wrong in a repository's index.yaml, at a field path such as `entries.nginx[2].urls`. */
export interface IndexProblem {
  field: string;
  message: string;
}

/** A repository's index.yaml is not usable: every problem found, each naming its field. */
export class ChartIndexError extends InputError {
  readonly problems: readonly IndexProblem[];
  constructor(indexUrl: string, problems: readonly IndexProblem[]) {
    const first = problems[0];
    const rest = problems.slice(1).map((p) => `; ${p.field}: ${p.message}`).join('');
    super('HELM_CHART_INDEX', `${first?.message ?? 'invalid'}${rest}`, { file: indexUrl, ...(first === undefined ? {} : { field: first.field }) });
    this.problems = problems;
  }
}
