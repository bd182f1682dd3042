import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type WatchEvent } from './client.js';
import { FakeCluster } from './fake-cluster.test-helper.js';
import { Informer } from './informer.js';
import { KubeApiError } from './errors.js';
import type { KubeObject } from './types.js';
import { MAX_OBJECT_NESTING } from '../util/nesting.js';

/** A value nested `levels` deep: { a: { a: … 'x' } }. */
function nested(levels: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

const thing = (name: string, rv: string, spec: unknown): KubeObject => ({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name, resourceVersion: rv, uid: `uid-${name}`, managedFields: [{ fieldsV1: { 'f:spec': {} } }] }, spec });
// The object itself is a level too: this one is one level past the limit, the other exactly at it.
const deep = thing('deep', '8', nested(MAX_OBJECT_NESTING));
const ok = thing('ok', '7', nested(MAX_OBJECT_NESTING - 1));

let server: Server;
let port: number;

before(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (v: unknown): void => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    if (url.pathname === '/apis/example.com/v1') json({ resources: [{ name: 'things', kind: 'Thing', namespaced: false, verbs: ['get', 'list', 'watch'] }] });
    else if (url.pathname === '/apis/example.com/v1/things' && url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      for (const ev of [
        { type: 'MODIFIED', object: deep },
        { type: 'MODIFIED', object: ok },
        { type: 'DELETED', object: deep },
      ]) res.write(`${JSON.stringify(ev)}\n`);
      res.end();
    } else if (url.pathname === '/apis/example.com/v1/things') json({ apiVersion: 'v1', kind: 'ThingList', metadata: { resourceVersion: '9' }, items: [deep, ok] });
    else if (url.pathname === '/apis/example.com/v1/things/deep') json(deep);
    else if (url.pathname === '/apis/example.com/v1/things/ok') json(ok);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

async function client(): Promise<KubeClient> {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'abc' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return KubeClient.fromKubeConfig(kc);
}

const identity = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'deep', uid: 'uid-deep', resourceVersion: '8' } };

test('an object nested deeper than the client reads is refused by get, left out of a list, and only named in a watch', async () => {
  const c = await client();
  try {
    assert.equal(((await c.get({ apiVersion: 'example.com/v1', kind: 'Thing', name: 'ok' })) as { metadata: { name: string } }).metadata.name, 'ok');
    await assert.rejects(c.get({ apiVersion: 'example.com/v1', kind: 'Thing', name: 'deep' }), {
      code: 'KUBE_OBJECT_TOO_DEEP',
      message: `get Thing deep: the object nests deeper than ${MAX_OBJECT_NESTING} levels, which Binnacle does not read (the API server keeps up to 10,000); make it shallower`,
    });
    const list = await c.list('example.com/v1', 'Thing');
    assert.deepEqual(list.items.map((i) => i.metadata.name), ['ok']);
    assert.deepEqual(list.refused, [identity]);
    const events: WatchEvent[] = [];
    for await (const ev of c.watch('example.com/v1', 'Thing', { resourceVersion: '9' })) events.push(ev);
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name, e.refused === true]), [
      ['MODIFIED', 'deep', true],
      ['MODIFIED', 'ok', false],
      ['DELETED', 'deep', true],
    ]);
    assert.deepEqual(events[0]?.object, identity);
  } finally {
    c.close();
  }
});

test('an informer keeps the version it had of an object that became too deep, and forgets it when it is deleted', async () => {
  const cluster = new FakeCluster({ objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } }] });
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a' };
  const before = cluster.get(ref);
  const informer = new Informer(cluster.client(), 'v1', 'ConfigMap');
  const seen: string[] = [];
  informer.addHandlers({
    add: (o) => seen.push(`add ${o.metadata.resourceVersion ?? ''}`),
    update: (_old, o) => seen.push(`update ${o.metadata.resourceVersion ?? ''}`),
    delete: (o) => seen.push(`delete ${o.metadata.resourceVersion ?? ''} ${JSON.stringify(o.data)}`),
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  // It becomes too deep to read; then what the watch was from is compacted away, which forces a relist.
  const tooDeep = cluster.put({ ...(before ?? { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }), data: { k: nested(MAX_OBJECT_NESTING) } }).metadata.resourceVersion ?? '';
  assert.equal(await informer.waitForResourceVersion(tooDeep, 5_000), true);
  const lists = (): number => cluster.log.filter((r) => r.verb === 'list').length;
  cluster.endWatches({ error: new KubeApiError(410, 'Expired', 'too old resource version') });
  const deadline = Date.now() + 10_000;
  while ((lists() < 2 || !informer.isWatching) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal(lists(), 2, 'relisted');
  assert.deepEqual(informer.get('ns/a'), before, 'kept through the relist');
  cluster.remove(ref);
  while (!seen.some((s) => s.startsWith('delete')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  stop.abort();
  await running;
  // Never an update to the unread version, nor a delete on the relist; the delete hands over the last version read.
  assert.deepEqual(seen, [`add ${before?.metadata.resourceVersion ?? ''}`, `delete ${before?.metadata.resourceVersion ?? ''} {"k":"v"}`]);
  assert.equal(informer.get('ns/a'), undefined);
});
