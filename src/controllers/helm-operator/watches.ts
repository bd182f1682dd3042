/**
 * operator-sdk's Helm operator `watches.yaml`: which kinds a chart serves, read unchanged so
 * an existing Helm operator runs on Binnacle as it is. Every entry is checked and every
 * problem reported together, naming the file, the entry and the field.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { ValidationError, ValidationResult, errorMessage, InputError } from '../../util/errors.js';
import { readYaml, YamlError } from '../../util/yaml.js';

/**
 * Reconciles of one Helm kind in flight at once, unless told otherwise. operator-sdk's default is
 * the number of CPUs: there each reconcile holds a goroutine through its API round trips. Here a
 * reconcile is a promise that mostly waits on the API server (a release's reads, applies and
 * records; bench/helm-operator.ts measures it), and renders queue for the one engine thread, so
 * two CPUs' worth of reconciles left the API server and the process mostly idle while CRs
 * waited in the queue. 16 keeps the engine thread busy through those waits; the cluster's API
 * priority and fairness answers 429 past its share, which the reconcile retries with backoff.
 */
export const DEFAULT_HELM_RECONCILES = Math.max(16, availableParallelism());

export interface WatchEntry {
  group: string;
  version: string;
  kind: string;
  /** Absolute path of the chart directory or archive. */
  chart: string;
  watchDependentResources: boolean;
  overrideValues: Record<string, string>;
  reconcilePeriod?: string;
  /** Binnacle's own field; absent: `--max-concurrent-reconciles` (default DEFAULT_HELM_RECONCILES). */
  maxConcurrentReconciles?: number;
  /** A label selector in `kubectl -l` form, from `selector.matchLabels`/`matchExpressions`. */
  selector?: string;
  /** operator-sdk's dry-run mode for its upgrade diff; absent when unset or empty. */
  dryRunOption?: DryRunOption;
}

/**
 * The values Helm's `--dry-run` takes, which operator-sdk passes to the dry-run upgrade that
 * decides whether a CR needs one: `server`, `none` and `false` let that render's `lookup`
 * reach the cluster; `client` and `true` (and operator-sdk's default, unset) answer `lookup`
 * with nothing. The release itself is always rendered with `lookup` against the cluster.
 */
export const DRY_RUN_OPTIONS = ['none', 'false', 'true', 'client', 'server'] as const;
export type DryRunOption = (typeof DRY_RUN_OPTIONS)[number];

/** Whether a dry-run render under `option` lets `lookup` reach the cluster (Helm's `interactWithRemote`). */
export function dryRunLooksUp(option: DryRunOption | undefined): boolean {
  return option === 'server' || option === 'none' || option === 'false';
}

const KNOWN = new Set(['group', 'version', 'kind', 'chart', 'watchDependentResources', 'overrideValues', 'reconcilePeriod', 'maxConcurrentReconciles', 'selector', 'dryRunOption']);

function selectorString(v: unknown, field: string, r: ValidationResult, file: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) {
    r.error('watches.selector', 'must be a label selector (matchLabels, matchExpressions)', { file, field });
    return undefined;
  }
  const sel = v as { matchLabels?: Record<string, unknown>; matchExpressions?: { key?: unknown; operator?: unknown; values?: unknown[] }[] };
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, val]) => `${k}=${String(val)}`);
  for (const [i, e] of (sel.matchExpressions ?? []).entries()) {
    const key = typeof e.key === 'string' ? e.key : '';
    const vals = (e.values ?? []).map(String).join(',');
    switch (e.operator) {
      case 'In':
        parts.push(`${key} in (${vals})`);
        break;
      case 'NotIn':
        parts.push(`${key} notin (${vals})`);
        break;
      case 'Exists':
        parts.push(key);
        break;
      case 'DoesNotExist':
        parts.push(`!${key}`);
        break;
      default:
        r.error('watches.selector', `operator ${String(e.operator)} is not In, NotIn, Exists or DoesNotExist`, { file, field: `${field}.matchExpressions[${i}].operator` });
    }
  }
  return parts.length === 0 ? undefined : parts.join(',');
}

/** Parses watches.yaml; chart paths are resolved against the file's folder. */
export function loadWatches(file: string): WatchEntry[] {
  let doc: unknown;
  try {
    doc = readYaml(readFileSync(file, 'utf8'), file);
  } catch (err) {
    throw new InputError('WATCHES_UNREADABLE', err instanceof YamlError ? err.reason : errorMessage(err), { file, cause: err });
  }
  const r = new ValidationResult(file);
  if (!Array.isArray(doc)) {
    r.error('watches.list', 'must be a list of watches (group, version, kind, chart)', { file });
    throw new ValidationError(r);
  }
  const out: WatchEntry[] = [];
  doc.forEach((raw: unknown, i) => {
    const entry = readWatchEntry(raw, `[${i}]`, r, file);
    if (entry !== undefined) out.push(entry);
  });
  if (!r.ok) throw new ValidationError(r);
  return out;
}

/** Reads the entry of `file` at `f`, reporting every problem to `r`; undefined when it cannot be used. */
function readWatchEntry(raw: unknown, f: string, r: ValidationResult, file: string): WatchEntry | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    r.error('watches.entry', 'must be a map', { file, field: f });
    return undefined;
  }
  const e = raw as Record<string, unknown>;
  for (const k of Object.keys(e)) if (!KNOWN.has(k)) r.warning('watches.unknown-field', `unknown field ${k} is ignored`, { file, field: `${f}.${k}` });
  const str = (k: string, required: boolean): string | undefined => {
    const v = e[k];
    if (v === undefined || v === null) {
      if (required) r.error('watches.required', `${k} is required`, { file, field: `${f}.${k}` });
      return undefined;
    }
    if (typeof v !== 'string') {
      r.error('watches.type', `${k} must be a string`, { file, field: `${f}.${k}` });
      return undefined;
    }
    return v;
  };
  const group = str('group', false) ?? '';
  const version = str('version', true);
  const kind = str('kind', true);
  const chart = str('chart', true);
  const overrides = overrideValues(e.overrideValues, `${f}.overrideValues`, r, file);
  const mcr = maxConcurrentReconcilesOf(e.maxConcurrentReconciles, `${f}.maxConcurrentReconciles`, r, file);
  const wdr = e.watchDependentResources;
  if (wdr !== undefined && typeof wdr !== 'boolean') r.error('watches.type', 'watchDependentResources must be true or false', { file, field: `${f}.watchDependentResources` });
  const period = str('reconcilePeriod', false);
  const selector = selectorString(e.selector, `${f}.selector`, r, file);
  const dryRunOption = dryRunOptionOf(e.dryRunOption, `${f}.dryRunOption`, r, file);
  if (version === undefined || kind === undefined || chart === undefined) return undefined;
  return {
    group,
    version,
    kind,
    chart: isAbsolute(chart) ? chart : resolve(dirname(file), chart),
    watchDependentResources: wdr !== false,
    overrideValues: overrides,
    ...(period === undefined ? {} : { reconcilePeriod: period }),
    ...(mcr === undefined ? {} : { maxConcurrentReconciles: mcr }),
    ...(selector === undefined ? {} : { selector }),
    ...(dryRunOption === undefined ? {} : { dryRunOption }),
  };
}

/** An entry's `maxConcurrentReconciles` (at `field`): a positive integer (any other number is reported, and kept). */
function maxConcurrentReconcilesOf(v: unknown, field: string, r: ValidationResult, file: string): number | undefined {
  if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 1)) r.error('watches.type', 'maxConcurrentReconciles must be a positive integer', { file, field });
  return typeof v === 'number' ? v : undefined;
}

/** An entry's `dryRunOption` (at `field`): one of Helm's `--dry-run` values; unset or empty is operator-sdk's default. */
function dryRunOptionOf(v: unknown, field: string, r: ValidationResult, file: string): DryRunOption | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const known: readonly unknown[] = DRY_RUN_OPTIONS;
  if (typeof v === 'string' && known.includes(v)) return v as DryRunOption;
  // Unquoted true/false are YAML booleans; operator-sdk's watches.yaml refuses them too.
  const why = typeof v === 'string' ? `is ${JSON.stringify(v)}` : `is a ${typeof v}${typeof v === 'boolean' ? ' (quote it: "true", "false")' : ''}`;
  r.error('watches.dryRunOption', `dryRunOption ${why}; it must be one of ${DRY_RUN_OPTIONS.join(', ')} (Helm's --dry-run values)`, { file, field });
  return undefined;
}

/** An entry's `overrideValues` (at `field`): dotted keys to values, non-strings kept as JSON. */
function overrideValues(ov: unknown, field: string, r: ValidationResult, file: string): Record<string, string> {
  const overrides: Record<string, string> = {};
  if (ov !== undefined && ov !== null) {
    if (typeof ov !== 'object' || Array.isArray(ov)) r.error('watches.type', 'overrideValues must be a map of dotted keys to values', { file, field });
    else for (const [k, v] of Object.entries(ov)) overrides[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return overrides;
}
