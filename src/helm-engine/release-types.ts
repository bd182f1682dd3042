/**
 * Helm's release object as JSON (helm.sh/helm/v4/pkg/release/v1, as v3's pkg/release), the shape Helm stores in
 * its revision records and the engine answers. Only the fields Binnacle reads are typed
 * closely; the rest pass through untouched so a stored release stays Helm's own.
 */
import type { RevisionRecordJson } from '../apply/release.js';
import type { ReleaseHook } from '../apply/types.js';

export type { HookEvent, HookDeletePolicy } from '../apply/types.js';

/** Helm's hook record: declared once, in the applier's types. */
export type HelmHook = ReleaseHook;

export interface HelmChartFile {
  name: string;
  /** base64, as Go marshals []byte. */
  data: string;
}

export interface HelmChart {
  metadata: { name: string; version: string; appVersion?: string; description?: string; apiVersion?: string; [k: string]: unknown };
  lock: unknown;
  templates: HelmChartFile[] | null;
  values: Record<string, unknown> | null;
  schema: string | null;
  files: HelmChartFile[] | null;
}

/**
 * A release as Helm's engine answers it: the applier's record shape (apply/release.ts, the one
 * declaration), with Helm's own chart object and the fields the engine may leave null.
 */
export interface HelmRevisionJson extends Omit<RevisionRecordJson, 'info' | 'chart' | 'config' | 'hooks'> {
  info: Omit<RevisionRecordJson['info'], 'description'> & { description?: string; [k: string]: unknown };
  chart: HelmChart;
  config: Record<string, unknown> | null;
  hooks?: HelmHook[] | null;
  labels?: Record<string, string> | null;
}
