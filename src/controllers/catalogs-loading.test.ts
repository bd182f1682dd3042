import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../kube/types.js';
import { emptyDeclarativeConfig } from '../declcfg/index.js';
import { CatalogRegistry } from './catalog-registry.js';
import { catalogsStillLoading } from './cluster-extension.js';

const catalog = (name: string, labels: Record<string, string> = {}, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'binnacle.dev/v1alpha1',
  kind: 'ClusterCatalog',
  metadata: { name, labels },
  spec: {},
  ...extra,
});

test('an extension waits for every catalog its selector may draw from until each has served once, and names them', () => {
  const registry = new CatalogRegistry();
  /** The catalog serves content now. */
  const serve = (name: string): void => registry.set({ name, priority: 0, labels: {}, digest: `sha256:${name}`, config: emptyDeclarativeConfig(), stored: { file: `/nonexistent/${name}.json`, size: 0, sha256: name, lastModified: new Date(0), metas: [] } });
  serve('community');
  const all = [
    catalog('community', { tier: 'a' }),
    // Served before this manager started (its status says so): waited for until it is loaded again.
    catalog('redhat', { tier: 'a' }, { status: { conditions: [{ type: 'Serving', status: 'True', reason: 'Available', message: 'serving', lastTransitionTime: '2026-01-01T00:00:00Z' }] } }),
    catalog('certified', { tier: 'b' }),
    catalog('going', { tier: 'a' }, { metadata: { name: 'going', labels: { tier: 'a' }, deletionTimestamp: '2026-01-01T00:00:00Z' } }),
    catalog('off', { tier: 'a' }, { spec: { availabilityMode: 'Unavailable' } }),
    // Reported unable to serve (its image cannot be pulled, say): broken, not loading.
    catalog('broken', { tier: 'a' }, { status: { conditions: [{ type: 'Serving', status: 'False', reason: 'UnpackFailed', message: 'pull failed', lastTransitionTime: '2026-01-01T00:00:00Z' }] } }),
  ];
  // No selector: every catalog counts; only the ones not yet served (and not going away) are waited for.
  assert.deepEqual(catalogsStillLoading(all, registry, undefined), ['certified', 'redhat']);
  assert.deepEqual(catalogsStillLoading(all, registry, { matchLabels: { tier: 'a' } }), ['redhat']);
  assert.deepEqual(catalogsStillLoading(all, registry, { matchLabels: { 'olm.operatorframework.io/metadata.name': 'community' } }), []);
  serve('redhat');
  serve('certified');
  assert.deepEqual(catalogsStillLoading(all, registry, undefined), []);
});
