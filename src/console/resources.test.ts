import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsoleClient } from './client.js';
import { isConflict, KubeApiError } from '../kube/errors.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import type { KubeObject } from '../kube/types.js';
import { CatalogCache } from './catalog-view.js';
import { httpErrorOf, InputError } from './errors.js';
import type { ApiView } from './contract/api-types.js';
import { checkAgainst, createResource, crdView, deletePreview, deleteResource, objectFromBody, updateResource, withoutSecretData } from './resources.js';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { pino } from 'pino';
import { ConsoleApi } from './api.js';
import { consoleCluster, PERSON } from './fake-cluster.test-helper.js';
import { BILLION_LAUGHS, bombMessage } from '../util/yaml.test-helper.js';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com', labels: { 'binnacle.dev/helm-operator': 'widgets' } },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets' },
    versions: [
      { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', description: 'old' } } },
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } } },
    ],
  },
};

/** The one fake cluster with the Widget CRD and Widgets `x/b` (Ready) and `x/a`. */
function widgets(): FakeCluster {
  return new FakeCluster({
    objects: [
      crd,
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'b', namespace: 'x', creationTimestamp: 't' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'a', namespace: 'x' } },
    ],
  });
}

const api: ApiView = { crd: 'widgets.example.com', group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };

describe('custom resources', () => {
  it('an API is shown at the version the CRD stores, with its Helm operator and objects', async () => {
    const cluster = widgets();
    const view = await crdView(cluster.client(), new CatalogCache(), 'widgets.example.com');
    assert.equal(view.version, 'v1');
    assert.deepEqual(view.schema, { type: 'object', properties: { spec: { type: 'object' } } });
    assert.equal(view.helmOperator, 'widgets');
    assert.deepEqual(view.items.map((i) => i.name), ['a', 'b']);
    assert.equal(view.items[1]?.conditions[0]?.type, 'Ready');
    assert.ok(cluster.log.some((r) => r.verb === 'list' && r.apiVersion === 'example.com/v1' && r.kind === 'Widget'));
  });

  it('reads the object from the form (JSON) or the editor (YAML), naming the line of a YAML error', () => {
    assert.deepEqual(objectFromBody({ object: { a: 1 } }), { a: 1 });
    assert.deepEqual(objectFromBody({ yaml: 'kind: Widget\nspec:\n  size: 2\n' }), { kind: 'Widget', spec: { size: 2 } });
    assert.throws(() => objectFromBody({ yaml: 'spec:\n  a: [1,\n' }), (e: unknown) => e instanceof InputError && e.field === 'yaml' && /line \d+/.test(e.message));
    assert.throws(() => objectFromBody({ yaml: '- a\n- b\n' }), (e: unknown) => e instanceof InputError && e.field === 'yaml');
    assert.throws(() => objectFromBody({}), (e: unknown) => e instanceof InputError && e.field === 'body');
  });

  it('reads YAML with more than 100 aliases from the editor; an alias bomb is a 400 on the yaml field saying why', () => {
    const v = objectFromBody({ yaml: `kind: Widget\nspec:\n  base: &b {size: 1}\n  more: [${Array.from({ length: 300 }, () => '*b').join(', ')}]\n` });
    assert.equal(((v.spec as { more: unknown[] }).more).length, 300);
    assert.throws(() => objectFromBody({ yaml: `kind: Widget\n${BILLION_LAUGHS}` }), (e: unknown) => e instanceof InputError && e.field === 'yaml' && bombMessage('yaml').test(e.message));
  });

  it('checks the object against the API: group, kind, name and scope, filling what was left out', () => {
    assert.deepEqual(checkAgainst(api, { metadata: { name: ' w ', namespace: 'ns' }, spec: {} }), { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' }, spec: {} });
    const field = (obj: Record<string, unknown>, a: ApiView = api): string => {
      try {
        checkAgainst(a, obj);
      } catch (err) {
        if (err instanceof InputError) return err.field;
        throw err;
      }
      return '';
    };
    assert.equal(field({ apiVersion: 'other.com/v1', metadata: { name: 'w', namespace: 'n' } }), 'apiVersion');
    assert.equal(field({ kind: 'Gadget', metadata: { name: 'w', namespace: 'n' } }), 'kind');
    assert.equal(field({ metadata: { namespace: 'n' } }), 'metadata.name');
    assert.equal(field({ metadata: { name: 'w' } }), 'metadata.namespace');
    assert.equal(field({ metadata: { name: 'w', namespace: 'n' } }, { ...api, namespaced: false }), 'metadata.namespace');
  });

  it('creates without status, and an Invalid from the API server reaches the page as field errors', async () => {
    const invalid = new KubeApiError(422, 'Invalid', 'Widget.example.com "w" is invalid: spec.size: Invalid value: "x"', {
      causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "x": spec.size in body must be of type integer', field: 'spec.size' }, { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template' }],
    });
    const cluster = widgets();
    const body = { object: { metadata: { name: 'w', namespace: 'n' }, spec: { size: 'x' }, status: { x: 1 } } };
    await createResource(cluster.client(), 'widgets.example.com', structuredClone(body));
    const created = cluster.get({ apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'n', name: 'w' });
    assert.equal(created?.status, undefined);
    assert.equal(created?.apiVersion, 'example.com/v1');
    cluster.remove({ apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'n', name: 'w' });
    cluster.inject({ verb: 'create', kind: 'Widget', error: () => invalid });
    await assert.rejects(createResource(cluster.client(), 'widgets.example.com', structuredClone(body)), (err: unknown) => {
      const mapped = httpErrorOf(err);
      assert.equal(mapped?.status, 422);
      assert.deepEqual(mapped.body.fields, [
        { field: 'spec.size', message: 'Invalid value: "x": spec.size in body must be of type integer' },
        { field: 'spec.template', message: 'Required value' },
      ]);
      return true;
    });
  });

  it('replaces an object at the resourceVersion it was read at; name and namespace cannot change', async () => {
    const cluster = widgets();
    const ref = { apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'n', name: 'w' };
    const widget = (size: number): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'n' }, spec: { size } });
    cluster.put(widget(1));
    const client = cluster.client();
    await updateResource(client, 'widgets.example.com', 'w', 'n', { yaml: 'metadata:\n  name: w\n  namespace: n\nspec:\n  size: 3\n' });
    assert.deepEqual(cluster.get(ref)?.spec, { size: 3 });
    // Someone else changes it between the read and the replace: the replace is refused, theirs kept.
    cluster.latency = (verb) => {
      if (verb === 'update') cluster.put(widget(9));
      return Promise.resolve();
    };
    await assert.rejects(updateResource(client, 'widgets.example.com', 'w', 'n', { object: { metadata: { name: 'w', namespace: 'n' }, spec: { size: 4 } } }), isConflict);
    assert.deepEqual(cluster.get(ref)?.spec, { size: 9 });
    cluster.latency = undefined;
    await assert.rejects(updateResource(client, 'widgets.example.com', 'w', 'n', { object: { metadata: { name: 'v', namespace: 'n' } } }), (e: unknown) => e instanceof InputError && e.field === 'metadata.name');
    await assert.rejects(updateResource(client, 'widgets.example.com', 'w', 'n', { object: { metadata: { name: 'w', namespace: 'm' } } }), (e: unknown) => e instanceof InputError && e.field === 'metadata.namespace');
  });
});

describe('deleting a custom resource', () => {
  const NGINX = 'nginxes.charts.example.com';

  it("a Helm operator's resource: the preview names its release and the deployed manifest's objects (with the namespace Helm leaves out)", async () => {
    const { client, calls } = await consoleCluster();
    const p = await deletePreview(client, NGINX, 'web', 'apps');
    assert.deepEqual(p, {
      kind: 'Nginx',
      name: 'web',
      namespace: 'apps',
      finalizers: ['helm.sdk.operatorframework.io/uninstall-release'],
      mayDelete: true,
      release: { name: 'web', namespace: 'apps', revision: 2, chart: 'nginx-1.2.3', objects: ['Service apps/web', 'Deployment apps/web'], from: 'release' },
    });
    assert.ok(calls().some((c) => c.startsWith('get')), 'the preview reads');
    assert.ok(!calls().some((c) => c.startsWith('delete')), 'a preview deletes nothing');
  });

  it('without list on Secrets the objects come from the resource\'s status.deployedRelease, and it says so', async () => {
    const { client } = await consoleCluster((verb, kind) => verb === 'list' && kind === 'Secret');
    const p = await deletePreview(client, NGINX, 'web', 'apps');
    assert.equal(p.release?.from, 'status');
    assert.deepEqual(p.release?.objects, ['Service apps/web', 'Deployment apps/web']);
    assert.match(p.release?.warning ?? '', /release records cannot be read/);
  });

  it("an OLM operator's resource has no release; the preview says whether the person may delete it", async () => {
    const { client } = await consoleCluster((verb, kind) => verb === 'delete' && kind === 'Widget');
    const p = await deletePreview(client, 'widgets.example.com', 'w1', 'ns');
    assert.deepEqual(p, { kind: 'Widget', name: 'w1', namespace: 'ns', finalizers: [], mayDelete: false });
    await assert.rejects(deletePreview(client, 'widgets.example.com', 'w1', undefined), (e: unknown) => e instanceof InputError && e.field === 'namespace');
  });

  it('DELETE runs as the person: deleted, or forbidden as a 403 that reads "forbidden: delete …"; gone is a 404', async () => {
    const api = new ConsoleApi({ cacheDir: '/nonexistent', logger: pino({ level: 'silent' }) });
    const ctx = (client: ConsoleClient, q: string): Parameters<ConsoleApi['route']>[2] => ({ client, req: new IncomingMessage(new Socket()), url: new URL(`http://console/api/x${q}`) });
    const denied = await consoleCluster((verb, kind) => verb === 'delete' && kind === 'Nginx');
    await assert.rejects(api.route('DELETE', ['crds', NGINX, 'resources', 'web'], ctx(denied.client, '?namespace=apps')), (err: unknown) => {
      const mapped = httpErrorOf(err);
      assert.equal(mapped?.status, 403);
      assert.match(mapped.body.error, /^forbidden: delete nginxes\.charts\.example\.com — .*cannot delete resource "nginxes"/);
      return true;
    });
    assert.ok(denied.cluster.get({ apiVersion: 'charts.example.com/v1', kind: 'Nginx', name: 'web', namespace: 'apps' }) !== undefined, 'still there');
    const { client, cluster } = await consoleCluster();
    const preview = await api.route('GET', ['crds', NGINX, 'resources', 'web', 'delete-preview'], ctx(client, '?namespace=apps'));
    assert.equal(preview?.status, 200);
    const res = await api.route('DELETE', ['crds', NGINX, 'resources', 'web'], ctx(client, '?namespace=apps'));
    assert.deepEqual(res, { status: 200, json: { deleted: 'web' } });
    const web = { apiVersion: 'charts.example.com/v1', kind: 'Nginx', name: 'web', namespace: 'apps' };
    assert.notEqual(cluster.get(web)?.metadata.deletionTimestamp, undefined, 'deleted: Terminating while its operator uninstalls the release');
    assert.deepEqual(cluster.log.filter((r) => r.verb === 'delete').map((r) => `${r.identity} ${r.kind} ${r.namespace}/${r.name}`), [`${PERSON} Nginx apps/web`], 'as the person');
    cluster.remove(web); // the operator's finalizer is done
    assert.equal((await api.route('DELETE', ['crds', NGINX, 'resources', 'web'], ctx(client, '?namespace=apps')))?.status, 404);
    assert.equal(await deleteResource(client, NGINX, 'web', 'apps'), false);
  });
});

describe('Secret data in a Helm release resource', () => {
  it('is redacted in the console\'s answer, whoever wrote the status (helm-operator leaves it there)', () => {
    const manifest = '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: hunter2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n';
    const cr: KubeObject = { apiVersion: 'x.example/v1', kind: 'Gateway', metadata: { name: 'g', namespace: 'team-a' }, status: { deployedRelease: { name: 'g', manifest }, conditions: [] } };
    const shown = withoutSecretData(cr);
    const shownManifest = ((shown.status as Record<string, unknown>).deployedRelease as { manifest: string }).manifest;
    assert.doesNotMatch(shownManifest, /hunter2/);
    assert.match(shownManifest, /kind: ConfigMap\nmetadata:\n {2}name: c\ndata:\n {2}a: b/);
    assert.match(JSON.stringify(cr), /hunter2/, 'the object read is not changed');
    const plain: KubeObject = { apiVersion: 'x.example/v1', kind: 'Gateway', metadata: { name: 'g' } };
    assert.equal(withoutSecretData(plain), plain);
  });
});
