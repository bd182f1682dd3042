/**
 * Helm v3's release object as JSON (helm.sh/helm/v3/pkg/release), the shape Helm stores in
 * its release Secrets and the engine answers. Only the fields Binnacle reads are typed
 * closely; the rest pass through untouched so a stored release stays Helm's own.
 */
import type { ReleaseStatus } from '../apply/types.js';

export type HookEvent =
  | 'pre-install'
  | 'post-install'
  | 'pre-delete'
  | 'post-delete'
  | 'pre-upgrade'
  | 'post-upgrade'
  | 'pre-rollback'
  | 'post-rollback'
  | 'test';

export type HookDeletePolicy = 'hook-succeeded' | 'hook-failed' | 'before-hook-creation';

export interface HelmHook {
  name: string;
  kind: string;
  path: string;
  manifest: string;
  events: HookEvent[];
  last_run: { started_at: string; completed_at: string; phase: string };
  weight: number;
  delete_policies?: HookDeletePolicy[] | null;
  output_log_policies?: string[] | null;
}

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

export interface HelmRelease {
  name: string;
  info: {
    first_deployed: string;
    last_deployed: string;
    deleted: string;
    description?: string;
    status: ReleaseStatus;
    notes?: string;
    [k: string]: unknown;
  };
  chart: HelmChart;
  config: Record<string, unknown> | null;
  manifest: string;
  hooks?: HelmHook[] | null;
  version: number;
  namespace: string;
  labels?: Record<string, string> | null;
}
