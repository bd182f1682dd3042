/** Helm's answer for a manifest and its hooks, as the render port gives it: for the Helm release reconciler's tests. */
import { parseManifest } from '../../apply/index.js';
import type { ChartRender } from '../../helm/chart-render.js';

/** Helm's chart object as a record keeps it (a chart with templates: what tells a chart release's record from a bundle's). */
export const CHART = { metadata: { name: 'pg', version: '1.0.0', apiVersion: 'v2' }, templates: [{ name: 'templates/secret.yaml', data: '' }], values: {} };

export interface TestHook {
  name: string;
  manifest: string;
  /** pre-install when not said. */
  events?: string[];
  /** ConfigMap when not said. */
  kind?: string;
}

/** Helm's answer for `manifest`: its objects (as chart-render.ts parses them), its content and notes. */
export function rendered(manifest: string, hooks: readonly TestHook[] = []): ChartRender {
  return {
    objects: parseManifest(manifest, 'test'),
    content: {
      chart: CHART,
      manifest,
      notes: 'hello',
      hooks: hooks.map((h) => ({ name: h.name, manifest: h.manifest, kind: h.kind ?? 'ConfigMap', path: `templates/${h.name}.yaml`, events: h.events ?? ['pre-install'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 })),
    },
    chart: { name: 'pg', version: '1.0.0' },
    inputDigest: 'unused',
    notes: 'hello',
    values: {},
  };
}
