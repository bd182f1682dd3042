/**
 * The foundation against the real local control plane: workloads become Available through the
 * real controller manager, scheduler and kwok; CRDs become Established; the garbage collector
 * removes dependents; the kube layer's informer and controller converge; and kubectl sees it all.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { KubeClient } from '../../src/kube/client.js';
import { Controller, reconcilerFunc } from '../../src/kube/controller.js';
import { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/types.js';
import { KubeApiError } from '../../src/kube/errors.js';
import { e2eClient, eventually, kubectl, uniqueName } from './env.js';

const logger = pino({ level: 'silent' });

describe('local control plane', () => {
  let client: KubeClient;
  const ns = uniqueName('foundation');

  before(async () => {
    client = await e2eClient();
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });

  after(async () => {
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
    client.close();
  });

  test('a Deployment applied server-side becomes Available and kubectl lists it', async () => {
    await client.apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'registry.example/web:1' }] } },
      },
    });
    const available = await eventually('Deployment web Available', async () => {
      const d = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'web' });
      const status = d.status as { availableReplicas?: number; conditions?: { type: string; status: string }[] } | undefined;
      return status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true ? status : undefined;
    });
    assert.equal(available.availableReplicas, 2);

    // The real kubectl, an independent client, sees the same object, with Binnacle as its field manager.
    const listed = JSON.parse(await kubectl('get', 'deployments', '-n', ns, '-o', 'json', '--show-managed-fields')) as { items: KubeObject[] };
    assert.deepEqual(listed.items.map((d) => d.metadata.name), ['web']);
    const managers = (listed.items[0]?.metadata.managedFields ?? []) as { manager: string; operation: string }[];
    assert.ok(managers.some((m) => m.manager === 'binnacle' && m.operation === 'Apply'), 'binnacle owns the applied fields');
    const pods = await kubectl('get', 'pods', '-n', ns, '-l', 'app=web', '-o', 'jsonpath={.items[*].status.phase}');
    assert.deepEqual(pods.trim().split(' '), ['Running', 'Running']);
  });

  test('a CRD becomes Established and a custom resource round-trips', async () => {
    const group = `${ns}.binnacle.dev`;
    const crdName = `widgets.${group}`;
    await client.apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string' } } } } } },
          },
        ],
      },
    });
    try {
      await eventually('CRD Established', async () => {
        const crd = await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crdName });
        const conds = (crd.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
        return conds.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
      });
      const applied = await eventually('Widget created', () =>
        client.apply({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: ns }, spec: { size: 3, color: 'teal' } }),
      );
      assert.ok(applied.metadata.uid);
      const read = await client.get({ apiVersion: `${group}/v1`, kind: 'Widget', namespace: ns, name: 'w1' });
      assert.deepEqual(read.spec, { size: 3, color: 'teal' });
      // Server-side apply checks the structural schema: an undeclared field is refused, by name.
      await assert.rejects(
        client.apply({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: ns }, spec: { size: 4, bogus: true } }),
        (err: unknown) => err instanceof KubeApiError && err.statusCode >= 400 && err.message.includes('.spec.bogus'),
      );
      await client.apply({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: ns }, spec: { size: 4, color: 'teal' } });
      const again = await client.get({ apiVersion: `${group}/v1`, kind: 'Widget', namespace: ns, name: 'w1' });
      assert.deepEqual(again.spec, { size: 4, color: 'teal' });
      assert.match(await kubectl('get', `widgets.${group}`, '-n', ns, '-o', 'name'), /widget\.[^/]+\/w1/);
    } finally {
      await client.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crdName });
    }
  });

  test('deleting an owner garbage-collects its dependents', async () => {
    const owner = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: ns }, data: { a: '1' } });
    const uid = owner.metadata.uid ?? '';
    for (const name of ['dep-1', 'dep-2']) {
      await client.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] },
      });
    }
    const before = await client.list('v1', 'ConfigMap', { namespace: ns });
    assert.deepEqual(before.items.map((c) => c.metadata.name).filter((n) => n?.startsWith('dep-')), ['dep-1', 'dep-2']);
    assert.equal(await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'owner' }, { propagationPolicy: 'Background' }), true);
    await eventually('dependents collected', async () => {
      const left = await client.list('v1', 'ConfigMap', { namespace: ns });
      const names = left.items.map((c) => c.metadata.name).filter((n) => n?.startsWith('dep-'));
      return names.length === 0 ? true : undefined;
    });
  });

  test('an informer-driven controller converges: each labelled ConfigMap gets a mirror Secret', async () => {
    const informer = new Informer(client, 'v1', 'ConfigMap', { namespace: ns, labelSelector: 'mirror=yes', logger });
    const controller = new Controller({
      name: 'mirror',
      logger,
      workers: 2,
      reconciler: reconcilerFunc(async (req) => {
        const cm = informer.get(req.key);
        const secretRef = { apiVersion: 'v1', kind: 'Secret', namespace: req.namespace ?? '', name: `${req.name}-mirror` };
        if (cm === undefined) {
          await client.delete(secretRef);
          return undefined;
        }
        const data = (cm.data ?? {}) as Record<string, string>;
        await client.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: secretRef.name, namespace: secretRef.namespace }, stringData: data });
        return undefined;
      }),
    }).watch(informer);
    const stop = new AbortController();
    const informerRun = informer.run(stop.signal);
    const controllerRun = controller.run(stop.signal);
    try {
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one', namespace: ns, labels: { mirror: 'yes' } }, data: { k: 'v1' } });
      await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ignored', namespace: ns }, data: { k: 'x' } });
      await eventually('mirror of one', async () => {
        const s = await client.find({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'one-mirror' });
        return (s?.data as Record<string, string> | undefined)?.k === Buffer.from('v1').toString('base64') ? true : undefined;
      });
      // Level-triggered: an update is reflected, a delete removes the mirror.
      await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'one' }, { data: { k: 'v2' } });
      await eventually('mirror updated', async () => {
        const s = await client.find({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'one-mirror' });
        return (s?.data as Record<string, string> | undefined)?.k === Buffer.from('v2').toString('base64') ? true : undefined;
      });
      await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'one' });
      await eventually('mirror removed', async () =>
        (await client.find({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'one-mirror' })) === undefined ? true : undefined,
      );
      assert.equal(await client.find({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'ignored-mirror' }), undefined);
    } finally {
      stop.abort();
      await Promise.all([informerRun, controllerRun]);
    }
  });
});
