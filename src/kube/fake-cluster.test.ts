import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Crash, FakeCluster, faults, type FakeClient } from './fake-cluster.test-helper.js';
import { MAX_OBJECT_NESTING } from '../util/nesting.js';
import { isConflict, isFieldManagerConflict, isNotFound, KubeApiError } from './errors.js';
import type { KubeObject } from './types.js';

const cm = (name: string, data: Record<string, string>, ns = 'a') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });

test('server-side apply: a field another manager holds with another value conflicts unless forced; forced, it changes hands', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  await c.apply(cm('x', { a: '1' }), { fieldManager: 'one' });
  await assert.rejects(c.apply(cm('x', { a: '2' }), { fieldManager: 'two' }), (err: unknown) => isConflict(err) && isFieldManagerConflict(err) && /conflict with "one" using v1: \.data\.a/.test((err as Error).message));
  // The same value is shared, not a conflict.
  await c.apply(cm('x', { a: '1' }), { fieldManager: 'two' });
  await c.apply(cm('x', { a: '3' }), { fieldManager: 'two', force: true });
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' })?.data, { a: '3' });
  // `one` no longer holds data.a: applying without it removes nothing two holds.
  await c.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'a', labels: { l: 'v' } } }, { fieldManager: 'one' });
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' })?.data, { a: '3' });
});

test('server-side apply: a field its manager stops applying is removed; one another manager also holds stays', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  await c.apply(cm('x', { a: '1', b: '2' }));
  await c.apply(cm('x', { a: '1' }));
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' })?.data, { a: '1' });
  // kubectl edit (an Update) takes the field it changes.
  const live = await c.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' });
  await c.impersonate({ user: 'kubectl-edit' }).update({ ...live, data: { a: 'edited' } });
  await assert.rejects(c.apply(cm('x', { a: '1' })), isConflict);
  await c.apply(cm('x', { a: '1' }), { force: true });
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' })?.data, { a: '1' });
});

test('managedFields a patch sets are kept as sent, as the API server honours them; a patch that leaves them alone has its changes owned by its sender', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' };
  await c.apply(cm('x', { a: '1' }), { fieldManager: 'helm' });
  const sent = [{ manager: 'binnacle', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } }];
  await c.patch(ref, { metadata: { managedFields: sent } });
  assert.deepEqual(cluster.get(ref)?.metadata.managedFields, sent);
  await c.impersonate({ user: 'editor' }).patch(ref, { data: { a: '2' } });
  assert.deepEqual((cluster.get(ref)?.metadata.managedFields as { manager: string }[]).map((e) => e.manager), ['editor']);
});

test('resourceVersion makes updates conditional; generation moves with the spec only', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  const created = await c.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'a' }, spec: { replicas: 1 } });
  assert.equal(created.metadata.generation, 1);
  const updated = await c.update({ ...created, spec: { replicas: 2 } });
  assert.equal(updated.metadata.generation, 2);
  await assert.rejects(c.update({ ...created, spec: { replicas: 3 } }), isConflict);
  const labelled = await c.patch({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'a', name: 'd' }, { metadata: { labels: { x: 'y' } } });
  assert.equal(labelled.metadata.generation, 2);
});

test('finalizers hold a deletion; a namespace deleted takes what is in it; owned objects are collected', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
  const owner = await c.create({ ...cm('owner', {}), metadata: { name: 'owner', namespace: 'a', finalizers: ['x/y'] } });
  await c.create({ ...cm('child', {}), metadata: { name: 'child', namespace: 'b', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid ?? '' }] } });
  await c.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'a' });
  const ns = cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'a' });
  assert.notEqual(ns?.metadata.deletionTimestamp, undefined, 'the namespace waits for the held object');
  await assert.rejects(c.create(cm('late', {})), (err: unknown) => err instanceof KubeApiError && err.statusCode === 403);
  await c.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'owner' }, { metadata: { finalizers: null } });
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'owner' }), undefined);
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'b', name: 'child' }), undefined, 'collected with its owner');
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'Namespace', name: 'a' }), undefined, 'gone once empty');
});

test('a CRD serves its kind once Established; deleting it deletes its custom resources', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  await assert.rejects(c.resourceFor('example.com/v1', 'Widget'), isNotFound);
  await c.apply({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true }] } });
  assert.equal((await c.resourceFor('example.com/v1', 'Widget')).name, 'widgets');
  await c.apply({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'a' } });
  await c.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' });
  assert.equal(cluster.all('Widget').length, 0);
});

test('discovery and OpenAPI v3 as kubectl reads them: a kind held out of either is missing only there, until let in', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  await c.apply({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true }] } });
  const get = async (path: string): Promise<unknown> => JSON.parse((await c.rawRequest('GET', path)).body) as unknown;
  const groups = async () => ((await get('/apis')) as { groups: { name: string }[] }).groups.map((g) => g.name);
  const index = async () => (await get('/openapi/v3')) as { paths: Record<string, { serverRelativeURL: string }> };
  const resources = async () => ((await get('/apis/example.com/v1')) as { resources?: { name: string }[] }).resources?.map((r) => r.name);
  cluster.notInDiscovery.add('example.com/v1/Widget');
  cluster.notInOpenApi.add('example.com/v1/Widget');
  assert.ok(!(await groups()).includes('example.com'));
  assert.equal((await c.rawRequest('GET', '/apis/example.com/v1')).status, 404);
  assert.equal((await index()).paths['apis/example.com/v1'], undefined);
  assert.ok((await index()).paths['apis/apps/v1'] !== undefined, 'built-in kinds are published');
  cluster.notInDiscovery.clear();
  assert.ok((await groups()).includes('example.com'));
  assert.deepEqual(await resources(), ['widgets']);
  cluster.notInOpenApi.clear();
  const url = (await index()).paths['apis/example.com/v1']?.serverRelativeURL ?? '';
  assert.match(url, /^\/openapi\/v3\/apis\/example\.com\/v1\?hash=/);
  const doc = (await get(url)) as { components: { schemas: Record<string, { 'x-kubernetes-group-version-kind': unknown }> } };
  assert.deepEqual(Object.values(doc.components.schemas).map((s) => s['x-kubernetes-group-version-kind']), [[{ group: 'example.com', version: 'v1', kind: 'Widget' }]]);
});

test('faults: before a write nothing lands; after it the write lands and the caller sees the error; identities and verbs match', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  cluster.inject({ verb: 'create', kind: 'ConfigMap', error: faults.crash });
  await assert.rejects(c.create(cm('x', {})), Crash);
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }), undefined);
  // The process is dead: nothing more it sends lands, whatever it catches; a restart is a new process.
  await assert.rejects(c.create(cm('y', {})), Crash);
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'y' }), undefined);
  cluster.restart();
  cluster.inject({ verb: 'create', kind: 'ConfigMap', when: 'after', error: faults.tooManyRequests });
  await assert.rejects(c.create(cm('x', {})), (err: unknown) => err instanceof KubeApiError && err.statusCode === 429);
  assert.notEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }), undefined);
  cluster.inject({ verb: 'get', identity: 'tenant', error: faults.forbidden, times: Infinity });
  await assert.rejects(c.impersonate({ user: 'tenant' }).find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }), (err: unknown) => err instanceof KubeApiError && err.statusCode === 403);
  assert.notEqual(await c.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }), undefined);
  assert.deepEqual(cluster.countWrites(), { create: 2 });
});

test('a watch sees what happened after its resourceVersion, then what happens next, until aborted', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  await c.create(cm('before', {}));
  const list = await c.list('v1', 'ConfigMap');
  await c.create(cm('after', {}));
  const abort = new AbortController();
  const seen: string[] = [];
  const done = (async () => {
    for await (const ev of c.watch('v1', 'ConfigMap', { resourceVersion: list.metadata.resourceVersion, signal: abort.signal })) {
      seen.push(`${ev.type} ${ev.object.metadata.name ?? ''}`);
      if (seen.length === 2) abort.abort();
    }
  })();
  await c.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'before' });
  await done;
  assert.deepEqual(seen, ['ADDED after', 'DELETED before']);
});

test('the status subresource: a field its manager stops applying is removed, one another writer set stays, spec is left alone; a field sent as undefined is not applied', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  // Another writer's status (a fixture, put as it is).
  cluster.put({ ...cm('x', { a: '1' }), status: { fromFixture: 'kept' } });
  await c.applyStatus({ ...cm('x', {}), data: { a: 'ignored' }, status: { plan: 'p1', phase: 'Pending' } }, { fieldManager: 'status', force: true });
  await c.applyStatus({ ...cm('x', {}), status: { phase: 'Done', plan: undefined } }, { fieldManager: 'status', force: true });
  const live = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' });
  assert.deepEqual(live?.status, { fromFixture: 'kept', phase: 'Done' });
  assert.ok(!Object.hasOwn(live?.status ?? {}, 'plan'), 'removed, not left as undefined');
  assert.deepEqual(live?.data, { a: '1' }, 'a status write changes no spec or data');
  await assert.rejects(c.applyStatus({ ...cm('missing', {}), status: { phase: 'x' } }), isNotFound);
  assert.deepEqual(cluster.statusApplied.map((a) => [a.obj.status, a.fieldManager, a.identity]), [[{ plan: 'p1', phase: 'Pending' }, 'status', 'admin'], [{ phase: 'Done', plan: undefined }, 'status', 'admin']], 'each status apply that landed, as sent');
  assert.deepEqual(cluster.applied, [], 'apart from the other applies');
});

test('a watch of a kind the server does not serve is NotFound, as its list is', async () => {
  const c = new FakeCluster().client();
  await assert.rejects(c.list('example.com/v1', 'Widget'), isNotFound);
  await assert.rejects(async () => {
    for await (const _ of c.watch('example.com/v1', 'Widget')) break;
  }, isNotFound);
});

test('a CRD reports Established and keeps in status.storedVersions every version it stored; objects given to the constructor are there from the start', async () => {
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' }, spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true }] } };
  const cluster = new FakeCluster({ objects: [crd] });
  const c = cluster.client();
  const ref = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' };
  assert.deepEqual((await c.get(ref)).status, { conditions: [{ type: 'Established', status: 'True' }, { type: 'NamesAccepted', status: 'True' }], storedVersions: ['v1'] });
  await c.apply({ ...crd, spec: { ...crd.spec, versions: [{ name: 'v1', served: true, storage: false }, { name: 'v2', served: true, storage: true }] } });
  const stored = (o: KubeObject | undefined): unknown => (o?.status as { storedVersions?: string[] } | undefined)?.storedVersions;
  assert.deepEqual(stored(await c.get(ref)), ['v1', 'v2']);
  cluster.put({ ...crd, status: { storedVersions: ['v1', 'v0'] } });
  assert.deepEqual(stored(cluster.get(ref)), ['v1', 'v0'], 'as another writer left it, with the storage version');
});

test('a request RBAC refuses reads as the API server says it; requests record the apiVersion, the resource, and the groups impersonated', async () => {
  const cluster = new FakeCluster();
  cluster.authorize = (req) => req.identity !== 'bob';
  const bob = cluster.client().impersonate({ user: 'bob', groups: ['dev', 'ops'] });
  const refused = (message: string) => (err: unknown) => err instanceof KubeApiError && err.statusCode === 403 && err.message === message;
  await assert.rejects(bob.get({ apiVersion: 'v1', kind: 'Secret', namespace: 'a', name: 'creds' }), refused('secrets "creds" is forbidden: User "bob" cannot get resource "secrets" in API group "" in the namespace "a"'));
  await assert.rejects(bob.list('apps/v1', 'Deployment'), refused('deployments.apps is forbidden: User "bob" cannot list resource "deployments" in API group "apps" at the cluster scope'));
  await assert.rejects(bob.apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' } }), refused('clusterroles.rbac.authorization.k8s.io "r" is forbidden: User "bob" cannot patch resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope'));
  await assert.rejects(bob.applyStatus(cm('x', {})), refused('configmaps "x" is forbidden: User "bob" cannot patch resource "configmaps/status" in API group "" in the namespace "a"'));
  assert.deepEqual(cluster.log.map((r) => `${r.verb} ${r.apiVersion} ${r.resource} ${r.identity} ${r.groups?.join('+') ?? '-'}`), ['get v1 secrets bob dev+ops', 'list apps/v1 deployments bob dev+ops', 'apply rbac.authorization.k8s.io/v1 clusterroles bob dev+ops', 'status v1 configmaps bob dev+ops']);
  await cluster.client({ user: 'alice' }).find({ apiVersion: 'v1', kind: 'Secret', namespace: 'a', name: 'creds' });
  assert.equal(cluster.log.at(-1)?.groups, undefined, 'no groups: none recorded');
});

test('a server-side apply that makes an object, dry run or not, needs create as well as patch (as the API server checks it); one that changes it, patch alone', async () => {
  const cluster = new FakeCluster();
  // bob may patch ConfigMaps but not create them.
  cluster.authorize = (req) => !(req.identity === 'bob' && req.verb === 'create');
  const bob = cluster.client().impersonate({ user: 'bob' });
  await assert.rejects(bob.apply(cm('new', { a: '1' })), (err: unknown) => err instanceof KubeApiError && err.statusCode === 403 && err.message === 'configmaps "new" is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "a"');
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'new' }), undefined, 'nothing made');
  await cluster.client().create(cm('old', { a: '1' }));
  await bob.apply(cm('old', { a: '2' }), { force: true });
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'old' })?.data, { a: '2' }, 'a change needs patch only');
  // A dry run of it too: the API server checks create before it decides not to write.
  await assert.rejects(bob.apply(cm('new', { a: '1' }), { dryRun: true }), (err: unknown) => err instanceof KubeApiError && err.statusCode === 403 && /cannot create resource "configmaps"/.test(err.message));
  await bob.apply(cm('old', { a: '3' }), { dryRun: true, force: true });
});

test('patches that land are kept as sent, with who sent them; one refused (a stale resourceVersion) is not', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client({ user: 'alice' });
  const live = await c.create(cm('x', { a: '1' }));
  await c.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }, { metadata: { resourceVersion: live.metadata.resourceVersion, labels: { l: 'v' } } });
  await assert.rejects(c.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }, { metadata: { resourceVersion: live.metadata.resourceVersion }, data: { a: '2' } }), isConflict);
  await c.patchStatus({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }, { status: { s: 1 } });
  assert.deepEqual(cluster.patched, [
    { ref: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }, patch: { metadata: { resourceVersion: live.metadata.resourceVersion, labels: { l: 'v' } } }, type: 'merge', identity: 'alice' },
    { ref: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' }, patch: { status: { s: 1 } }, type: 'merge', subresource: 'status', identity: 'alice' },
  ]);
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' })?.data, { a: '1' });
});

test('reviews are answered and never kept: TokenReview by the tokens it knows, SelfSubjectReview with who asks, access reviews by reviewAccess or else by authorize', async () => {
  const cluster = new FakeCluster();
  cluster.tokens.set('reader-token', { username: 'system:serviceaccount:ns:reader', groups: ['system:serviceaccounts'] });
  cluster.authorize = (req) => !(req.identity === 'bob' && req.verb === 'delete' && req.kind === 'Secret');
  const c = cluster.client();
  const status = async (obj: KubeObject, client = c): Promise<unknown> => (await client.create(obj)).status;
  assert.deepEqual(await status({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token: 'reader-token' } }), { authenticated: true, user: { username: 'system:serviceaccount:ns:reader', groups: ['system:serviceaccounts'] } });
  assert.deepEqual(await status({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token: 'forged' } }), { authenticated: false });
  const bob = c.impersonate({ user: 'bob', groups: ['dev'] });
  assert.deepEqual(await status({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }, bob), { userInfo: { username: 'bob', groups: ['dev'] } });
  const ssar = (verb: string, resource: string): KubeObject => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: { resourceAttributes: { verb, group: '', resource, namespace: 'a' } } });
  assert.deepEqual(await status(ssar('delete', 'secrets'), bob), { allowed: false }, 'as authorize refuses the request');
  assert.deepEqual(await status(ssar('delete', 'configmaps'), bob), { allowed: true });
  assert.deepEqual(await status(ssar('delete', 'secrets')), { allowed: true }, 'asked as admin');
  cluster.reviewAccess = (r) => r.path === '/metrics' && r.user === 'system:serviceaccount:ns:reader';
  const sar = (user: string): KubeObject => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec: { user, groups: ['g'], nonResourceAttributes: { path: '/metrics', verb: 'get' } } });
  assert.deepEqual(await status(sar('system:serviceaccount:ns:reader')), { allowed: true });
  assert.deepEqual(await status(sar('someone')), { allowed: false });
  assert.deepEqual(cluster.reviews.map((r) => `${r.user} ${r.verb} ${r.resource}${r.path}`), ['bob delete secrets', 'bob delete configmaps', 'admin delete secrets', 'system:serviceaccount:ns:reader get /metrics', 'someone get /metrics']);
  assert.equal(cluster.objects.size, 0, 'none kept');
  assert.deepEqual(cluster.reviewed.map((r) => r.kind), ['TokenReview', 'TokenReview', 'SelfSubjectReview', 'SelfSubjectAccessReview', 'SelfSubjectAccessReview', 'SelfSubjectAccessReview', 'SubjectAccessReview', 'SubjectAccessReview']);
  assert.deepEqual(cluster.reviewed[0]?.spec, { token: 'reader-token' }, 'as sent');
  assert.equal(cluster.log.filter((r) => r.verb === 'create').length, 8, 'each one a request');
});

test('discovery is not logged, and fails only where a fault is armed for it; a closed client is counted', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  assert.equal((await c.resourceFor('apps/v1', 'Deployment')).name, 'deployments');
  cluster.inject({ verb: 'discover', kind: 'Deployment', error: faults.unavailable });
  await assert.rejects(c.resourceFor('apps/v1', 'Deployment'), (err: unknown) => err instanceof KubeApiError && err.statusCode === 503);
  assert.equal((await c.resourceFor('apps/v1', 'Deployment')).name, 'deployments', 'once');
  assert.deepEqual(cluster.log, []);
  c.close();
  c.impersonate({ user: 'x' }).close();
  assert.equal(cluster.closed, 2);
});

test('find answers undefined for a kind no one serves, as KubeClient does (get is NotFound); the server version is discovery, which a fault can fail', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  assert.equal(await c.find({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', name: 'version' }), undefined);
  await assert.rejects(c.get({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', name: 'version' }), isNotFound);
  assert.equal(await c.serverVersion(), cluster.version);
  cluster.inject({ verb: 'discover', error: faults.unavailable });
  await assert.rejects(c.serverVersion(), (err: unknown) => err instanceof KubeApiError && err.statusCode === 503);
  assert.ok((await c.apiVersionSet()).includes('apps/v1/Deployment'));
});

test('raw requests (a template lookup) read objects, lists and a group version\'s resources with GET; each is kept, other methods are refused', async () => {
  const cluster = new FakeCluster({ objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system', uid: 'u1' } }] });
  const c = cluster.client();
  const body = async (path: string): Promise<unknown> => JSON.parse((await c.rawRequest('GET', path)).body) as unknown;
  const core = (await body('/api/v1')) as { groupVersion: string; resources: { name: string; kind: string; namespaced: boolean }[] };
  assert.equal(core.groupVersion, 'v1');
  assert.deepEqual(core.resources.find((r) => r.kind === 'ConfigMap'), { name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] });
  assert.ok(((await body('/apis/apps/v1')) as { resources: { kind: string }[] }).resources.some((r) => r.kind === 'Deployment'));
  assert.equal((await c.rawRequest('GET', '/apis/example.com/v1')).status, 404, 'a group no one serves');
  assert.equal(((await body('/api/v1/namespaces/kube-system')) as KubeObject).metadata.uid, 'u1');
  assert.equal((await c.rawRequest('POST', '/api/v1/namespaces')).status, 405);
  assert.deepEqual(cluster.raw.map((r) => `${r.method} ${r.path}`), ['GET /api/v1', 'GET /apis/apps/v1', 'GET /apis/example.com/v1', 'GET /api/v1/namespaces/kube-system', 'POST /api/v1/namespaces']);
});

/** Takes events from a watch of ConfigMaps into `seen` until it ends; answers how it ended. */
function follow(c: FakeClient, seen: string[], opts: { resourceVersion?: string; signal?: AbortSignal } = {}): Promise<string> {
  return (async () => {
    try {
      for await (const ev of c.watch('v1', 'ConfigMap', opts)) seen.push(`${ev.type} ${ev.object.metadata.name ?? ''} ${ev.object.metadata.resourceVersion ?? ''}${ev.refused === true ? ' refused' : ''}`);
      return 'ended';
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  })();
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

test('watches can be ended, normally or with an error, after what was sent; bookmarks carry the resourceVersion; the open ones and their unread events are counted', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  const seen: string[] = [];
  const first = follow(c, seen);
  await settle();
  assert.equal(cluster.watching, 1);
  const a = await c.create(cm('a', {}));
  cluster.bookmark();
  assert.equal(cluster.pendingWatchEvents, 2, 'not read yet');
  cluster.endWatches();
  await c.create(cm('late', {}));
  assert.equal(await first, 'ended');
  assert.deepEqual(seen, [`ADDED a ${a.metadata.resourceVersion ?? ''}`, `BOOKMARK  ${a.metadata.resourceVersion ?? ''}`], 'what was sent before the end, nothing after');
  assert.equal(cluster.watching, 0);
  const second = follow(c, seen, { resourceVersion: a.metadata.resourceVersion ?? '' });
  await settle();
  cluster.endWatches({ error: new KubeApiError(410, 'Expired', 'too old resource version') });
  assert.equal(await second, 'too old resource version');
  assert.equal(seen.at(-1), `ADDED late ${cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'late' })?.metadata.resourceVersion ?? ''}`, 'a new watch goes on from its resourceVersion');
  assert.deepEqual(cluster.log.filter((r) => r.verb === 'watch').map((r) => r.resourceVersion), [undefined, a.metadata.resourceVersion]);
});

test('an object nesting deeper than the client reads: get refuses it, a list names it in refused, a watch sends its stub', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  let deep: unknown = 'bottom';
  for (let i = 0; i < MAX_OBJECT_NESTING + 5; i++) deep = { d: deep };
  cluster.put(cm('ok', { a: '1' }));
  const list = await c.list('v1', 'ConfigMap');
  const seen: string[] = [];
  const abort = new AbortController();
  const watching = follow(c, seen, { resourceVersion: list.metadata.resourceVersion ?? '', signal: abort.signal });
  const put = cluster.put({ ...cm('deep', {}), spec: deep });
  await assert.rejects(c.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'deep' }), { code: 'KUBE_OBJECT_TOO_DEEP' });
  const after = await c.list('v1', 'ConfigMap');
  assert.deepEqual(after.items.map((o) => o.metadata.name), ['ok']);
  assert.deepEqual(after.refused?.map((o) => o.metadata), [{ name: 'deep', namespace: 'a', uid: put.metadata.uid, resourceVersion: put.metadata.resourceVersion, creationTimestamp: put.metadata.creationTimestamp, generation: 1 }]);
  await settle();
  abort.abort();
  await watching;
  assert.deepEqual(seen, [`ADDED deep ${put.metadata.resourceVersion ?? ''} refused`]);
});

test('endWatches can end the watches of one kind only; lists and watches record their label selectors', async () => {
  const cluster = new FakeCluster();
  const c = cluster.client();
  const secrets = (async () => {
    try {
      for await (const _ of c.watch('v1', 'Secret', { labelSelector: 'owner=helm' })) break;
      return 'ended';
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  })();
  const abort = new AbortController();
  const configMaps = follow(c, [], { signal: abort.signal });
  await c.list('v1', 'Secret', { labelSelector: 'owner=helm' });
  await settle();
  cluster.endWatches({ kind: 'Secret', error: new Error('connection reset') });
  assert.equal(await secrets, 'connection reset');
  assert.equal(cluster.watching, 1, 'the ConfigMaps are still watched');
  abort.abort();
  assert.equal(await configMaps, 'ended');
  assert.deepEqual(cluster.log.map((r) => `${r.verb} ${r.kind} ${r.labelSelector ?? '-'}`), ['watch Secret owner=helm', 'watch ConfigMap -', 'list Secret owner=helm']);
});

test('putApplied leaves an object as a manager applied it: applied again without a field, it loses it; the status is kept as given', async () => {
  const cluster = new FakeCluster();
  const fixture = cluster.putApplied({ ...cm('x', { a: '1', b: '2' }), metadata: { name: 'x', namespace: 'a', labels: { keep: 'no' }, uid: 'u-x', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z' }, status: { phase: 'Ready' } });
  assert.deepEqual(cluster.log, [], 'no request');
  assert.deepEqual([fixture.metadata.uid, fixture.metadata.generation, fixture.metadata.creationTimestamp], ['u-x', 3, '2026-01-01T00:00:00Z'], "the server's metadata as given");
  await cluster.client().apply({ ...cm('x', { a: '1' }), metadata: { name: 'x', namespace: 'a' } });
  const live = cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'x' });
  assert.deepEqual(live?.data, { a: '1' });
  assert.equal(live?.metadata.labels, undefined);
  assert.deepEqual(live?.status, { phase: 'Ready' });
  cluster.put({ ...cm('y', { a: '1' }) });
  await cluster.client().apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y', namespace: 'a', labels: { l: 'v' } } });
  assert.deepEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'y' })?.data, { a: '1' }, 'put: owned by no manager, so kept');
});

test("the fake client refuses what the real client refuses before any request: an apiVersion that is not group/version (an empty one too), a name or namespace '.' or '..'; discovery of the server's version asks with none", async () => {
  const cluster = new FakeCluster();
  const client = cluster.client();
  for (const apiVersion of ['', '../../healthz', 'Apps/v1']) {
    await assert.rejects(client.find({ apiVersion, kind: 'ConfigMap', namespace: 'ns', name: 'x' }), /is not a group\/version/, JSON.stringify(apiVersion));
  }
  await assert.rejects(client.list('', 'ConfigMap'), /is not a group\/version/);
  await assert.rejects(client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: '..', name: 'x' }), /is not a Kubernetes name/);
  await assert.rejects(client.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: '.' }), /is not a Kubernetes name/);
  assert.deepEqual(cluster.log, [], 'nothing reached the cluster');
  assert.equal(typeof (await client.serverVersion()), 'string');
});
