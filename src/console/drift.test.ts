import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { pino } from 'pino';
import { ConsoleApi } from './api.js';
import type { ExtensionDrift, ReleaseDriftView } from './contract/api-types.js';
import { extensionDrift, resourceDrift } from './drift.js';
import { httpErrorOf, InputError } from './errors.js';
import { consoleCluster } from './fake-cluster.test-helper.js';

const route = async (api: ConsoleApi, client: Parameters<ConsoleApi['route']>[2]['client'], path: string): Promise<{ status: number; json: unknown } | undefined> => {
  const url = new URL(`http://console${path}`);
  const parts = url.pathname.slice('/api/'.length).split('/').map(decodeURIComponent);
  const r = await api.route('GET', parts, { client, req: new IncomingMessage(new Socket()), url });
  return r === undefined || !('json' in r) ? undefined : r;
};

describe('drift in the console', () => {
  it("an extension's releases against the live objects: in sync, then a changed field and a missing object", async () => {
    const { cluster, client } = await consoleCluster();
    const clean = await extensionDrift(client, 'ext');
    assert.deepEqual(clean.releases.map((r) => [r.bundleDeployment, r.package, r.release, r.namespace, r.revision, r.checked, r.drifted.length]), [['ext-p', 'p', 'ext-p', 'ns', 1, 2, 0]]);
    cluster.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'ns', labels: { added: 'by hand' } }, data: { mode: 'slow', extra: 'x' } });
    cluster.objects.delete(cluster.key({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' }));
    const drift = await extensionDrift(client, 'ext');
    assert.deepEqual(drift.releases[0]?.drifted, [
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com', state: 'missing', fields: [] },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', namespace: 'ns', state: 'changed', fields: [{ path: 'data.mode', manifest: 'fast', live: 'slow' }] },
    ]);
  });

  it('the route answers an ExtensionDrift; without list on Secrets (the release records) it is a 403 naming that', async () => {
    const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
    const { client } = await consoleCluster();
    const r = await route(api, client, '/api/extensions/ext/drift');
    assert.equal(r?.status, 200);
    assert.equal((r?.json as ExtensionDrift).releases[0]?.release, 'ext-p');
    const { client: reader } = await consoleCluster((verb, kind) => verb === 'list' && kind === 'Secret');
    await assert.rejects(route(api, reader, '/api/extensions/ext/drift'), (err: unknown) => {
      const mapped = httpErrorOf(err);
      assert.equal(mapped?.status, 403);
      assert.match(mapped.body.error, /^forbidden: list secrets/);
      return true;
    });
  });

  it("a Helm operator's custom resource: its release (named as the resource, in its namespace), with the namespaces Helm leaves out", async () => {
    const { cluster, client } = await consoleCluster();
    cluster.put({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'apps' }, spec: { replicas: 5 } });
    const drift = await resourceDrift(client, 'nginxes.charts.example.com', 'web', 'apps');
    assert.equal(drift.revision, 2);
    assert.equal(drift.chart, 'nginx-1.2.3');
    assert.deepEqual(drift.drifted, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'apps', state: 'changed', fields: [{ path: 'spec.replicas', manifest: 2, live: 5 }] }]);
    const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
    const r = await route(api, client, '/api/crds/nginxes.charts.example.com/resources/web/drift?namespace=apps');
    assert.equal((r?.json as ReleaseDriftView).drifted.length, 1);
    await assert.rejects(resourceDrift(client, 'widgets.example.com', 'w1', 'ns'), (e: unknown) => e instanceof InputError && /not a Helm operator's kind/.test(e.message));
  });
});
