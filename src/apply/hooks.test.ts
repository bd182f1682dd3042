/**
 * A hook's manifest is read as Helm reads it: many YAML aliases are fine, an alias bomb fails
 * the hook with a message naming it. Hooks run in Helm's order, a weight Helm's JSON left out
 * counting as 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { BinnacleError } from '../util/errors.js';
import { bombObject, BOMB_REASON_IN_OBJECT, manyAliasesObject } from '../util/yaml.test-helper.js';
import { FakeCluster } from '../kube/fake-cluster.test-helper.js';
import { hookObject, hooksFor, runHooks } from './hooks.js';
import { stampOwnership } from './ownership.js';
import type { ReleaseHook } from './types.js';

function hook(name: string, manifest: string): ReleaseHook {
  return { name, kind: 'ConfigMap', path: `chart/templates/${name}.yaml`, manifest, events: ['pre-install'], last_run: { started_at: '', completed_at: '', phase: '' }, weight: 0 };
}

test('hooks of an event run by weight, then name; a weight Helm left out of its JSON (omitempty) is 0', () => {
  const { weight: _zero, ...unweighted } = hook('z-unweighted', 'x');
  const hooks = [{ ...hook('a-late', 'x'), weight: 5 }, unweighted as ReleaseHook, { ...hook('m-early', 'x'), weight: -5 }, { ...hook('b-post', 'x'), events: ['post-install'] }];
  assert.deepEqual(hooksFor(hooks, 'pre-install').map((h) => h.name), ['m-early', 'z-unweighted', 'a-late']);
});

test('a hook with more than 100 YAML aliases is its object', () => {
  const obj = hookObject(hook('many', manyAliasesObject('many', 300)));
  assert.equal(obj.metadata.name, 'many');
  assert.equal((obj as { aliases?: unknown[] }).aliases?.length, 300);
});

test('an alias bomb in a hook is HOOK_INVALID naming the hook, and fails its event', async () => {
  assert.throws(() => hookObject(hook('bomb', bombObject())), (err: unknown) => {
    assert.ok(err instanceof BinnacleError);
    assert.equal(err.code, 'HOOK_INVALID');
    assert.equal(err.message, `hook chart/templates/bomb.yaml (ConfigMap bomb): ${BOMB_REASON_IN_OBJECT}`);
    return true;
  });
  const cluster = new FakeCluster();
  const r = await runHooks([hook('many', manyAliasesObject()), { ...hook('bomb', bombObject()), weight: 1 }], 'pre-install', {
    client: cluster.client(),
    owner: { kind: 'BundleDeployment', name: 'bd' },
    release: { name: 'r', namespace: 'ns' },
    logger: pino({ level: 'silent' }),
    timeoutMs: 1000,
  });
  assert.equal(r.ok, false);
  assert.equal(r.message, `pre-install hook chart/templates/bomb.yaml (ConfigMap bomb) failed: hook chart/templates/bomb.yaml (ConfigMap bomb): ${BOMB_REASON_IN_OBJECT}`);
  assert.deepEqual(cluster.applied.map((a) => a.obj.metadata.name), ['many']);
});

test('before-hook-creation deletes the earlier run with Background propagation (as Helm), waits for the object alone, then creates it', async () => {
  const owner = { kind: 'BundleDeployment', name: 'bd' };
  const release = { name: 'r', namespace: 'ns' };
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'h' };
  const cluster = new FakeCluster();
  // The earlier run's hook, held by a finalizer: still there on the first look after the delete, gone on the second.
  cluster.put(stampOwnership({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h', namespace: 'ns', finalizers: ['example.com/slow'] } }, owner, release));
  let looksAfterDelete = 0;
  cluster.latency = (verb) => {
    if (verb === 'get' && cluster.get(ref)?.metadata.deletionTimestamp !== undefined && ++looksAfterDelete === 2) cluster.remove(ref);
    return Promise.resolve();
  };
  const client = cluster.client();
  const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: h\n';
  const r = await runHooks([hook('h', manifest)], 'pre-install', { client, owner, release, logger: pino({ level: 'silent' }), timeoutMs: 60_000 });
  assert.equal(r.ok, true, r.message);
  // The first look is the ownership check: the earlier run's hook is this release's.
  assert.deepEqual(cluster.log.map((q) => `${q.verb}${q.propagation === undefined ? '' : ` ${q.propagation}`}`), ['get', 'delete Background', 'get', 'get', 'apply']);
});

test("a hook refused for another owner's object never deletes it, whatever its delete policy; a hook's own object is deleted by its uid", async () => {
  const owner = { kind: 'HelmRelease', name: 'evil' };
  const release = { name: 'evil', namespace: 'ns' };
  const opts = { owner, release, logger: pino({ level: 'silent' }), timeoutMs: 1000 };
  const cluster = new FakeCluster();
  // Another release's ConfigMap, and the namespace admin's own (no owner at all).
  cluster.put(stampOwnership({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: 'ns' }, data: { a: '1' } }, { kind: 'HelmRelease', name: 'gw' }, { name: 'gw', namespace: 'ns' }));
  cluster.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'admins', namespace: 'ns' }, data: { b: '2' } });
  for (const name of ['theirs', 'admins']) {
    const h = { ...hook(name, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`), events: ['pre-delete'], delete_policies: ['hook-failed', 'hook-succeeded'] };
    const r = await runHooks([h], 'pre-delete', { ...opts, client: cluster.client() });
    assert.equal(r.ok, false);
    assert.match(r.message, /already exists and belongs to|a hook never takes it over|not owned/);
  }
  assert.deepEqual(cluster.log.filter((q) => q.verb === 'delete').map((q) => q.name), [], 'nothing deleted');
  assert.notEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'theirs' }), undefined);
  assert.notEqual(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'admins' }), undefined);
  // Control: the release's own hook object, succeeded, is deleted (hook-succeeded), pinned to the uid it was applied with.
  const mine = { ...hook('mine', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n'), events: ['pre-delete'], delete_policies: ['hook-succeeded'] };
  const ok = await runHooks([mine], 'pre-delete', { ...opts, client: cluster.client() });
  assert.equal(ok.ok, true, ok.message);
  assert.deepEqual(cluster.log.filter((q) => q.verb === 'delete').map((q) => q.name), ['mine']);
  assert.equal(cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'mine' }), undefined);
});
