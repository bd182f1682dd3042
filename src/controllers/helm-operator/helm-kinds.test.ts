import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ReleaseRecords } from '../../apply/release-records.js';
import { Registry } from 'prom-client';
import { crdOf } from '../../apply/crd.test-helper.js';
import { FakeCluster } from '../../kube/fake-cluster.test-helper.js';
import { ResourceCreatedMetric } from '../../kube/metrics.js';
import type { KubeObject } from '../../kube/types.js';
import { helmCrChanged, runHelmKind } from './helm-kinds.js';
import { UNINSTALL_FINALIZER } from './helm-release.js';

const cr = (name: string): KubeObject => ({ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name, namespace: 'default', resourceVersion: '1', creationTimestamp: '2026-11-26T10:00:00Z' } });

test("a kind's custom resources carry operator-lib's resource_created_at_seconds while they exist", async () => {
  const cluster = new FakeCluster({ objects: [crdOf({ group: 'cache.example.com', kind: 'Memcached', plural: 'memcacheds' }, {}, { version: 'v1alpha1' }), cr('kept'), cr('gone')] });
  const client = cluster.client();
  const registry = new Registry();
  const running = runHelmKind(
    // No chart yet: the reconciles only wait; the gauge follows the informer alone.
    { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached', chart: () => undefined, identity: { type: 'own' }, watchDependentResources: false },
    { client, logger: pino({ level: 'silent' }), engine: { records: new ReleaseRecords({ client, namespace: 'binnacle-system', logger: pino({ level: 'silent' }) }) }, createdMetric: new ResourceCreatedMetric(registry) },
  );
  try {
    await running.synced;
    const at = Date.parse('2026-11-26T10:00:00Z') / 1000;
    const line = (name: string) => `resource_created_at_seconds{group="cache.example.com",kind="Memcached",name="${name}",namespace="default",version="v1alpha1"} ${at}`;
    let text = await registry.metrics();
    assert.ok(text.includes(line('kept')) && text.includes(line('gone')), text);
    await client.delete({ apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', namespace: 'default', name: 'gone' });
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

test('helmCrChanged: adding the uninstall finalizer alone is no reason to reconcile again; any other change is', () => {
  const base: KubeObject = { ...cr('a'), metadata: { ...cr('a').metadata, generation: 1, finalizers: ['other'] } };
  const withFinalizer = (o: KubeObject, f: string[]): KubeObject => ({ ...o, metadata: { ...o.metadata, resourceVersion: '2', finalizers: f } });
  assert.equal(helmCrChanged(base, withFinalizer(base, ['other', UNINSTALL_FINALIZER])), false, 'the finalizer the reconcile adds');
  assert.equal(helmCrChanged(withFinalizer(base, ['other', UNINSTALL_FINALIZER]), withFinalizer(base, ['other'])), true, 'the finalizer removed: the reconcile puts it back');
  assert.equal(helmCrChanged(base, withFinalizer(base, ['other', 'more'])), true, "someone else's finalizer");
  const bumped = { ...withFinalizer(base, ['other', UNINSTALL_FINALIZER]), metadata: { ...withFinalizer(base, ['other', UNINSTALL_FINALIZER]).metadata, generation: 2 } };
  assert.equal(helmCrChanged(base, bumped), true, 'the finalizer and a spec change together');
  const labelled = { ...withFinalizer(base, ['other', UNINSTALL_FINALIZER]), metadata: { ...withFinalizer(base, ['other', UNINSTALL_FINALIZER]).metadata, labels: { a: 'b' } } };
  assert.equal(helmCrChanged(base, labelled), true, 'the finalizer and a label together');
  assert.equal(helmCrChanged(base, base), true, 'the same object (a requeue) is reconciled');
});
