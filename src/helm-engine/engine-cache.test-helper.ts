/** A fake Helm engine for the caching engine's and the renderer's tests. */
import type { HelmEngine, TemplateRequest, RenderResult } from './engine.js';

/** An engine that answers each render with a new serial number in its manifest (as a chart that generates a key would), and records every call. */
export function countingEngine(): HelmEngine & { renders: TemplateRequest[]; templates: TemplateRequest[] } {
  const renders: TemplateRequest[] = [];
  const templates: TemplateRequest[] = [];
  return {
    renders,
    templates,
    render: (req) => {
      renders.push(req);
      const manifest = `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  serial: "${renders.length}"\n`;
      const result: RenderResult = {
        output: manifest,
        crds: [],
        release: {
          name: req.releaseName ?? '',
          namespace: req.namespace ?? '',
          version: req.revision ?? 1,
          manifest,
          chart: { metadata: { name: 'c', version: '1.0.0' }, lock: null, templates: null, values: null, schema: null, files: null },
          config: req.values ?? {},
          info: { first_deployed: '', last_deployed: '', deleted: '', status: 'pending-install' },
          hooks: [],
        },
      };
      return Promise.resolve(result);
    },
    template: (req) => {
      templates.push(req);
      return Promise.resolve({ output: 'templated\n', crds: [] });
    },
    inspect: () => Promise.resolve([]),
    memory: () => ({ bytes: 0, recycled: 0 }),
    threads: () => 0,
    close: () => Promise.resolve(),
  };
}
