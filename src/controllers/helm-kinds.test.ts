import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { KubeClient } from '../kube/client.js';
import { ResourceCreatedMetric } from '../kube/metrics.js';
import type { KubeObject } from '../kube/types.js';
import { runHelmKind } from './helm-kinds.js';

const cr = (name: string): KubeObject => ({ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name, namespace: 'default', resourceVersion: '1', creationTimestamp: '2026-11-26T10:00:00Z' } });

test("a kind's custom resources carry operator-lib's resource_created_at_seconds while they exist", async () => {
  let deleteNow!: () => void;
  const deleted = new Promise<void>((r) => (deleteNow = r));
  const client = {
    list: () => Promise.resolve({ items: [cr('kept'), cr('gone')], metadata: { resourceVersion: '1' } }),
    watch: async function* (_a: string, _k: string, opts: { signal?: AbortSignal }): AsyncGenerator<{ type: string; object: KubeObject }> {
      await deleted;
      yield { type: 'DELETED', object: { ...cr('gone'), metadata: { ...cr('gone').metadata, resourceVersion: '2' } } };
      await new Promise<void>((resolve) => opts.signal?.addEventListener('abort', () => resolve(), { once: true }));
    },
  } as unknown as KubeClient;
  const registry = new Registry();
  const running = runHelmKind(
    // No chart yet: the reconciles only wait; the gauge follows the informer alone.
    { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached', chart: () => undefined, identity: { type: 'own' }, watchDependentResources: false },
    { client, logger: pino({ level: 'silent' }), createdMetric: new ResourceCreatedMetric(registry) },
  );
  try {
    await running.synced;
    const at = Date.parse('2026-11-26T10:00:00Z') / 1000;
    const line = (name: string) => `resource_created_at_seconds{group="cache.example.com",kind="Memcached",name="${name}",namespace="default",version="v1alpha1"} ${at}`;
    let text = await registry.metrics();
    assert.ok(text.includes(line('kept')) && text.includes(line('gone')), text);
    deleteNow();
    for (let i = 0; i < 200 && text.includes(line('gone')); i++) {
      await new Promise((r) => setTimeout(r, 10));
      text = await registry.metrics();
    }
    assert.ok(!text.includes(line('gone')), 'removed when the CR is deleted');
    assert.ok(text.includes(line('kept')));
  } finally {
    await running.stop();
  }
});
